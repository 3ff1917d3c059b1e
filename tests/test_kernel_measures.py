"""The measures of a kernel matrix (mkl.metrics): the centred alignment
against a recomputation from centred matrices, the minimum enclosing ball's
squared radius and the SVM's margin against CVXPY's primal problems."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import mkl.metrics
from mkl.banks.algebra import centred_products
from mkl.kernels.functions import center

from .reference import enclosing_ball, svm_primal_margin

banks = st.tuples(st.integers(3, 12), st.integers(1, 4), st.integers(1, 4)).flatmap(
    lambda s: arrays(np.float64, (s[2], s[0], s[1]), elements=st.floats(-3, 3, width=64))
)


def gaussian(X, width):
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-sq / (2 * width**2))


@settings(max_examples=60, deadline=None)
@given(Z=banks, signs=st.lists(st.booleans(), min_size=12, max_size=12))
def test_centred_products_are_those_of_the_centred_matrices(Z, signs):
    K = np.einsum("mid,mjd->mij", Z, Z)
    n = K.shape[1]
    y = np.where(np.array(signs[:n]), 1.0, -1.0)
    F, a = centred_products(K, y)
    Kc = center(K)
    scale = max(1.0, float(np.abs(K).max())) ** 2 * n * n
    np.testing.assert_allclose(F, np.einsum("kij,lij->kl", Kc, Kc), rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(a, np.einsum("kij,i,j->k", Kc, y, y), rtol=0, atol=1e-12 * scale)
    assert np.array_equal(F, F.T)


def test_centred_products_read_the_bank_a_block_of_rows_at_a_time(rng, monkeypatch):
    import mkl.banks.algebra as algebra

    K = np.stack([gaussian(rng.normal(size=(30, 2)), w) for w in (0.5, 2.0, 8.0)])
    y = np.where(rng.normal(size=30) > 0, 1.0, -1.0)
    whole = centred_products(K, y)
    monkeypatch.setattr(algebra, "CENTRED_BLOCK_BYTES", 8 * 3 * 30 * 7)  # blocks of 7 rows
    for got, want in zip(centred_products(K, y), whole, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_kernel_alignment_is_the_cosine_of_the_centred_matrices(rng):
    X = rng.normal(size=(25, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    K1, K2 = gaussian(X, 1.0), X @ X.T + 1.0
    C1, C2 = center(K1), center(K2)
    want = np.sum(C1 * C2) / np.sqrt(np.sum(C1 * C1) * np.sum(C2 * C2))
    assert mkl.metrics.kernel_alignment(K1, K2) == pytest.approx(want, rel=1e-12)
    plain = np.sum(K1 * K2) / np.sqrt(np.sum(K1 * K1) * np.sum(K2 * K2))
    assert mkl.metrics.kernel_alignment(K1, K2, centered=False) == pytest.approx(plain, rel=1e-12)
    assert mkl.metrics.kernel_alignment(K1, 7.0 * K1) == pytest.approx(1.0)
    # a constant added to a kernel moves its plain alignment, not its centred one
    assert mkl.metrics.kernel_alignment(K1 + 5.0, np.outer(y, y)) == pytest.approx(
        mkl.metrics.kernel_alignment(K1, np.outer(y, y)), rel=1e-10
    )
    assert -1.0 <= mkl.metrics.kernel_alignment(K1, -K2) <= 0.0


@pytest.mark.parametrize(
    "K1, K2, message",
    [
        (np.ones((3, 4)), np.eye(3), r"K1 must be a square kernel matrix \(n, n\)"),
        (np.eye(3), np.eye(4), "kernels on the same points"),
        (np.eye(3), np.full((3, 3), np.nan), "K2 contains NaN"),
        (np.ones((3, 3)), np.eye(3), "K1 is constant .zero once centred.: its alignment"),
    ],
)
def test_bad_alignment_input_is_named(K1, K2, message):
    with pytest.raises(ValueError, match=message):
        mkl.metrics.kernel_alignment(K1, K2)


@pytest.mark.parametrize("seed", range(4))
def test_radius_is_the_minimum_enclosing_ball_of_cvxpy(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 3)) * [1.0, 2.0, 0.3]
    for K in (X @ X.T, gaussian(X, 1.5), (X @ X.T + 1.0) ** 2 / 50.0):
        assert mkl.metrics.radius(K) == pytest.approx(enclosing_ball(K), rel=1e-5)


def test_radius_of_known_balls():
    # the corners of a square of side 2 (centre at the middle): R^2 = 2
    X = np.array([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0], [0.2, -0.3]])
    assert mkl.metrics.radius(X @ X.T) == pytest.approx(2.0, rel=1e-9)
    assert mkl.metrics.radius(np.eye(4)) == pytest.approx(0.75, rel=1e-9)  # a regular simplex
    assert mkl.metrics.radius(np.ones((3, 3))) == 0.0  # one point, three times
    assert mkl.metrics.radius([[2.0]]) == 0.0


@pytest.mark.parametrize("C", [None, 0.1, 1.0, 100.0])
def test_margin_is_the_svm_primal_s_of_cvxpy(rng, C):
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, 1.0, -1.0)  # separable by a hyperplane
    for K in (X @ X.T, gaussian(X, 1.0)):
        got = mkl.metrics.margin(K, y, C)
        assert got == pytest.approx(svm_primal_margin(K, y, C), rel=1e-5)


def test_hard_margin_where_the_hulls_nearly_touch_matches_cvxpy():
    """Classes a little noisy along the separating direction: the hulls
    nearly touch, where the fits' margin solve stops at its cap."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.2 * rng.normal(size=40) > 0, 1.0, -1.0)
    K = X @ X.T
    assert mkl.metrics.margin(K, y) == pytest.approx(svm_primal_margin(K, y), rel=1e-5)


def test_margin_of_classes_whose_hulls_meet_is_zero_and_labels_are_any_two_classes():
    X = np.array([[0.0], [2.0], [1.0], [3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert mkl.metrics.margin(X @ X.T + 1.0, ["a", "a", "b", "b"]) == pytest.approx(
            0.0, abs=1e-6
        )
    # two points at distance 2 in feature space: margin 1, whatever the labels' names
    K = np.array([[1.0, -1.0], [-1.0, 1.0]])
    assert mkl.metrics.margin(K, ["yes", "no"]) == pytest.approx(1.0, rel=1e-7)
    assert mkl.metrics.margin(K, [3, 7], C=1e6) == pytest.approx(1.0, rel=1e-5)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: mkl.metrics.radius(np.ones((2, 3))), r"square kernel matrix \(n, n\)"),
        (lambda: mkl.metrics.radius([[1.0, 0.5], [0.0, 1.0]]), "K is not symmetric"),
        (lambda: mkl.metrics.radius([[1.0, np.inf], [np.inf, 1.0]]), "K contains NaN or inf"),
        (lambda: mkl.metrics.margin(np.eye(3), [1, 1, 1]), "labels of two classes, got 1"),
        (lambda: mkl.metrics.margin(np.eye(3), [1, -1]), "one label per point of K .3."),
        (lambda: mkl.metrics.margin(np.eye(3), [1, -1, 1], C=-1.0), "C must be a positive"),
        (lambda: mkl.metrics.margin(np.eye(3), [1, -1, 1], C="1"), "C must be a positive"),
    ],
)
def test_bad_measure_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_measures_load_on_first_use_and_the_metrics_module_stays_light():
    """The workflow's table and fidelity stages import mkl.metrics for its
    metric names: neither scikit-learn nor the solvers come with it."""
    probe = (
        "import sys, mkl.metrics\n"
        "print(sorted(m for m in sys.modules if m.startswith(('sklearn', 'mkl.solvers'))))\n"
        "mkl.metrics.radius\n"
        "print('mkl.solvers.geometry' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True"]
    assert mkl.metrics.spectral_ratio(np.eye(4)) == pytest.approx(2.0)
    with pytest.raises(AttributeError, match="no attribute 'alignment'"):
        mkl.metrics.alignment  # noqa: B018

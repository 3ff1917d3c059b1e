"""The alignment family and MKLpy's heuristics (mkl/algorithms/alignment.py)
and the fixed combination (mkl/algorithms/baselines.py): each weight vector
against a recomputation of its closed form from centred matrices formed
explicitly, alignf's QP against CVXPY's second-order cone form of the
paper's maximisation, then the SVM on the combination."""

import warnings

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

import mkl
from mkl.banks.algebra import centred_products, combine, kernel_alignment
from mkl.kernels.functions import center

from .conftest import random_problem, single_feature_bank
from .reference import max_alignment_weights


def _svm_agrees(est, K, y, K_test, C):
    """The estimator's decision values are the SVM's on its combination."""
    svc = SVC(C=C, kernel="precomputed", tol=1e-3).fit(combine(K, est.weights_), y)
    np.testing.assert_allclose(
        est.decision_function(K_test),
        svc.decision_function(combine(K_test, est.weights_)),
        atol=1e-3,
    )


def banks():
    """A small bank of four Gaussian widths, and Yang et al.'s single-feature
    bank (36 kernels, many nearly collinear)."""
    _, y, K = random_problem(np.random.default_rng(3))
    K2, y2 = single_feature_bank(4)
    return [(K, y), (K2, y2)]


@pytest.mark.parametrize("case", [0, 1])
def test_align_weights_are_the_centred_alignments_on_the_simplex(case):
    K, y = banks()[case]
    est = mkl.make_estimator("align", C=1.0).fit(K, y)
    yy = np.outer(y, y).astype(float)
    rho = np.array([kernel_alignment(k, yy) for k in K])
    np.testing.assert_allclose(est.weights_, rho / rho.sum(), rtol=1e-10)
    assert est.history_[0]["alignment"] == pytest.approx(
        kernel_alignment(combine(K, est.weights_), yy), rel=1e-10
    )
    _svm_agrees(est, K, y, K, 1.0)


@pytest.mark.parametrize("case", [0, 1])
def test_alignf_maximises_the_centred_alignment_as_cvxpy(case):
    K, y = banks()[case]
    est = mkl.make_estimator("alignf", C=1.0).fit(K, y)
    want = max_alignment_weights(K, y.astype(float))
    yy = np.outer(y, y).astype(float)
    got_alignment = kernel_alignment(combine(K, est.weights_), yy)
    assert got_alignment == pytest.approx(kernel_alignment(combine(K, want), yy), rel=1e-6)
    assert est.history_[0]["alignment"] == pytest.approx(got_alignment, rel=1e-10)
    if case == 0:  # well conditioned: the weights themselves are unique
        # (1e-3 in weights as every formulation's test: CVXPY's interior point
        # leaves the small weight 1.6e-5 off where the box QP meets the KKT
        # conditions to 1e-13, below)
        np.testing.assert_allclose(est.weights_, want, rtol=1e-3, atol=1e-6)
    # KKT of min v'Fv - 2a'v over v >= 0 at v = t theta, t = a'theta / theta'F theta
    F, a = centred_products(K, y.astype(float))
    theta = est.weights_
    grad = 2.0 * F @ theta * (a @ theta) / (theta @ F @ theta) - 2.0 * a
    assert np.abs(grad[theta > 0]).max() <= 1e-9 * np.abs(a).max()
    assert grad[theta == 0].min() >= -1e-9 * np.abs(a).max()
    assert est.converged_ and est.weights_.sum() == pytest.approx(1.0)
    # no single kernel and no other weighting of the family aligns better
    for other in ("align", "fheuristic", "uniform"):
        w = mkl.make_estimator(other).fit(K, y).weights_
        assert kernel_alignment(combine(K, w), yy) <= got_alignment + 1e-12
    assert all(kernel_alignment(k, yy) <= got_alignment + 1e-12 for k in K)


def test_alignf_combination_does_not_depend_on_each_kernel_s_scale():
    """Normalising the kernels first (unit trace, say) changes alignf's weights,
    not its combination: for K_k -> c_k K_k the weights become theta_k / c_k
    (on the simplex) and the combination is the same up to one global factor
    t, which the SVM's C absorbs (C / t on the rescaled bank gives the same
    decision function). So whether Cortes et al. normalised their kernels
    decides only the unit of C, which their experiments and ours select by
    cross-validation."""
    K, y = banks()[0]
    c = np.geomspace(0.1, 10.0, len(K))
    plain = mkl.make_estimator("alignf", C=1.0, tol=1e-8).fit(K, y)
    scaled_bank = K * c[:, None, None]
    expected = plain.weights_ / c
    scaled = mkl.make_estimator("alignf", C=1.0).fit(scaled_bank, y)
    np.testing.assert_allclose(scaled.weights_, expected / expected.sum(), rtol=1e-6, atol=1e-9)
    combined, combined_scaled = combine(K, plain.weights_), combine(scaled_bank, scaled.weights_)
    t = np.trace(combined_scaled) / np.trace(combined)
    np.testing.assert_allclose(combined_scaled, t * combined, rtol=1e-6, atol=1e-9)
    same_svm = mkl.make_estimator("alignf", C=1.0 / t, tol=1e-8).fit(scaled_bank, y)
    np.testing.assert_allclose(
        same_svm.decision_function(scaled_bank), plain.decision_function(K), atol=1e-5
    )


@pytest.mark.parametrize("case", [0, 1])
def test_cka_is_mklpy_s_closed_form_and_may_have_negative_weights(case):
    K, y = banks()[case]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = mkl.make_estimator("cka", C=1.0).fit(K, y)
    said = [w for w in caught if issubclass(w.category, mkl.NegativeWeightsWarning)]
    # warned exactly when a reported weight is negative, naming those kernels
    negative = np.flatnonzero(est.weights_ < 0).tolist()
    assert len(said) == (1 if negative else 0)
    if negative:
        assert str(negative) in str(said[0].message) and said[0].filename == __file__
    Kc = center(K).reshape(len(K), -1)
    F, a = Kc @ Kc.T, Kc @ np.outer(y, y).ravel()
    v = np.linalg.lstsq(F, a, rcond=None)[0]
    np.testing.assert_allclose(est.weights_, v / np.linalg.norm(v), rtol=1e-6, atol=1e-9)
    # the unconstrained maximum: CVXPY's cone program without theta >= 0
    free = max_alignment_weights(K, y.astype(float), nonnegative=False)
    yy = np.outer(y, y).astype(float)
    assert kernel_alignment(combine(K, est.weights_), yy) == pytest.approx(
        kernel_alignment(combine(K, free), yy), rel=1e-6
    )
    assert est.signed_weights and est.n_selected_ == np.count_nonzero(est.weights_)
    if case == 1:
        assert (est.weights_ < 0).any()  # collinear kernels: the closed form goes negative
    _svm_agrees(est, K, y, K, 1.0)


def test_fheuristic_weights_are_the_uncentred_alignments_on_the_simplex():
    K, y = banks()[1]
    est = mkl.make_estimator("fheuristic", C=1.0).fit(K, y)
    yy = np.outer(y, y).astype(float)
    A = np.array([kernel_alignment(k, yy, centered=False) for k in K])
    np.testing.assert_allclose(est.weights_, A / A.sum(), rtol=1e-10)
    np.testing.assert_allclose(est.history_[0]["kernel_alignment"], A, rtol=1e-10)
    _svm_agrees(est, K, y, K, 1.0)


@pytest.mark.parametrize("delta", [0.0, 0.5, 1.0])
def test_pwmk_weights_are_the_cross_validated_accuracies_less_delta_the_worst(delta):
    K, y = banks()[0]
    est = mkl.make_estimator("pwmk", C=2.0, delta=delta, cv=4, random_state=7).fit(K, y)
    accuracy = np.zeros(len(K))
    for tr, va in StratifiedKFold(4, shuffle=True, random_state=7).split(K[0], y):
        for m, k in enumerate(K):
            svc = SVC(C=2.0, kernel="precomputed").fit(k[np.ix_(tr, tr)], y[tr])
            accuracy[m] += (svc.predict(k[np.ix_(va, tr)]) == y[va]).sum()
    accuracy /= len(y)
    np.testing.assert_allclose(est.history_[0]["cv_accuracy"], accuracy)
    scores = accuracy - delta * accuracy.min()
    np.testing.assert_allclose(est.weights_, scores / scores.sum(), rtol=1e-12)
    _svm_agrees(est, K, y, K, 2.0)


def test_one_vs_rest_weights_per_class(rng):
    X = rng.normal(size=(45, 2))
    y = np.repeat(["a", "b", "c"], 15)
    X[y == "b"] += 2.0
    sq = ((X[:, None] - X[None]) ** 2).sum(-1)
    K = np.stack([np.exp(-sq / (2 * w**2)) for w in (0.3, 1.0, 3.0)] + [X @ X.T])
    for name in ("align", "alignf", "cka", "fheuristic", "pwmk"):
        est = mkl.make_estimator(name).fit(K, y)
        assert est.weights_.shape == (3, 4)
        for c, label in enumerate(est.classes_):
            binary = mkl.make_estimator(name).fit(K, np.where(y == label, 1, -1))
            np.testing.assert_allclose(est.weights_[c], binary.weights_, rtol=1e-9, atol=1e-12)


def test_kernels_blind_to_the_labels_are_refused_by_name():
    K = np.stack([np.ones((6, 6)), 2.0 * np.ones((6, 6))])  # constant: zero once centred
    y = np.array([1, -1, 1, -1, 1, -1])
    for name in ("align", "alignf", "cka"):
        with pytest.raises(ValueError, match=f"{name}: every kernel's centred alignment is 0"):
            mkl.make_estimator(name).fit(K, y)
    with pytest.raises(ValueError, match="The 'delta' parameter of PWMK must be a float"):
        mkl.make_estimator("pwmk", delta=1.5).fit(K, y)
    with pytest.raises(ValueError, match="AlignFMKL cannot use a FactorBank"):
        mkl.make_estimator("alignf").fit(mkl.FactorBank([np.ones((6, 1))]), y)


def test_a_combination_on_nearly_constant_kernels_is_warned_about(rng):
    """alignf's weights are blind to each kernel's scale: on a bank with a very
    wide Gaussian (nearly constant on the rows, its centred part tiny) beside
    narrower ones, they sit on the wide one, and the SVM at C = 1 sees a kernel
    hundreds of times smaller than the uniform combination: warned about with
    the factor; the uniform-like weights of align are not."""
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, 1, -1)
    sq = ((X[:, None] - X[None]) ** 2).sum(-1)
    K = np.stack([np.exp(-sq / (2 * w**2)) for w in (0.5, 1.0, 200.0)])
    with pytest.warns(mkl.SmallCombinationWarning, match=r"about \d+ times smaller") as caught:
        est = mkl.make_estimator("alignf").fit(K, y)
    small = [w for w in caught if issubclass(w.category, mkl.SmallCombinationWarning)]
    assert est.weights_[2] > 0.9 and len(small) == 1
    assert small[0].filename == __file__  # the user's line, not the library's
    scale = est.history_[-1]["centred_scale"]
    F, _ = centred_products(K)
    uniform = np.full(3, 1 / 3)
    expected = np.sqrt(est.weights_ @ F @ est.weights_ / (uniform @ F @ uniform))
    assert scale == pytest.approx(expected, rel=1e-9) and scale < 1e-2
    with warnings.catch_warnings():
        warnings.simplefilter("error", mkl.SmallCombinationWarning)
        assert mkl.make_estimator("align").fit(K, y).history_[-1]["centred_scale"] > 0.1


# ------------------------------------------------------------------ fixed weights
def test_fixed_weights_are_the_svm_on_the_given_combination(problem):
    _, y, K = problem
    theta = np.array([0.5, 0.0, 2.0, 1.0])
    est = mkl.make_estimator("fixed", weights=theta, C=3.0).fit(K[:, :30, :30], y[:30])
    np.testing.assert_array_equal(est.weights_, theta)
    assert est.n_selected_ == 3
    _svm_agrees(est, K[:, :30, :30], y[:30], K[:, 30:, :30], 3.0)
    # a fit's weights reused: the same model as the fit's own SVM
    level = mkl.make_estimator("level", C=3.0).fit(K, y)
    again = mkl.make_estimator("fixed", weights=level.weights_, C=3.0, tol=1e-6).fit(K, y)
    np.testing.assert_allclose(again.decision_function(K), level.decision_function(K), atol=1e-2)


def test_fixed_weights_one_row_per_class_and_bad_weights_named(rng):
    X = rng.normal(size=(30, 2))
    y = np.repeat([0, 1, 2], 10)
    K = np.stack([X @ X.T, np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))])
    rows = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    est = mkl.make_estimator("fixed", weights=rows).fit(K, y)
    np.testing.assert_array_equal(est.weights_, rows)
    shared = mkl.make_estimator("fixed", weights=[1.0, 2.0]).fit(K, y)
    np.testing.assert_array_equal(shared.weights_, [[1.0, 2.0]] * 3)
    for weights, message in [
        (None, "algorithm 'fixed' needs its weights"),
        ([1.0, 2.0, 3.0], r"weights must have shape \(2,\) or \(3, 2\), a row per class"),
        ([1.0, -1.0], "weights must be >= 0"),
        ([1.0, np.nan], "weights contain NaN or inf"),
        ([0.0, 0.0], "weights are all zero"),
        (["a", "b"], "weights must be numbers"),
    ]:
        with pytest.raises(ValueError, match=message):
            mkl.make_estimator("fixed", weights=weights).fit(K, y)

"""Factor constructors (mkl.banks.factor_builders): exactness where they are exact,
convergence where they approximate, and normalisations acting on factors exactly
as on the dense kernel Z Z' they represent (property tests)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mkl.banks.factor_builders import (
    linear_group_bank,
    normalise_factors,
    nystroem_bank,
    random_fourier_bank,
    rank_one_bank,
)
from mkl.kernels.dense import compute_bank
from mkl.kernels.functions import normalise_blocks
from mkl.kernels.specs import KernelSpec

# multiples of 1/8: the dense and factored computations are then exact, so a
# degenerate kernel (zero variance) is degenerate on both paths, not on one by rounding
finite = st.integers(-24, 24).map(lambda i: i / 8)


@given(
    Z=arrays(np.float64, (7, 3), elements=finite),
    T=arrays(np.float64, (4, 3), elements=finite),
    how=st.sampled_from(["none", "unit_trace", "unit_diagonal", "unit_variance", "center"]),
)
def test_normalising_factors_normalises_the_kernel_they_represent(Z, T, how):
    K, K_test = Z @ Z.T, T @ Z.T
    try:
        want_train, want_test, want_f = normalise_blocks(
            how, K.copy(), K_test.copy(), (np.diag(K), (T * T).sum(1))
        )
    except ValueError:  # a degenerate kernel: the factors must be refused too
        with pytest.raises(ValueError):
            normalise_factors(Z, T, how)
        return
    Zn, Tn, f = normalise_factors(Z, T, how)
    np.testing.assert_allclose(Zn @ Zn.T, want_train, atol=1e-9)
    np.testing.assert_allclose(Tn @ Zn.T, want_test, atol=1e-9)
    assert f == pytest.approx(want_f)


def test_nystroem_with_every_point_as_landmark_is_exact():
    rng = np.random.default_rng(0)
    X, X_test = rng.normal(size=(40, 3)), rng.normal(size=(9, 3))
    specs = [
        KernelSpec("gaussian", 1.0, normalise="unit_trace"),
        KernelSpec("polynomial", 2, normalise="unit_diagonal"),
        KernelSpec("gaussian", 2.0, feature=1),
        KernelSpec("polynomial", 2, normalise="center"),
    ]
    bank = nystroem_bank(specs, X, X_test, rank=40)
    train, test, _ = compute_bank(specs, X, X_test)
    # the polynomial kernel of degree 2 in 3 features has rank 10: exact from 40 landmarks
    np.testing.assert_allclose(bank.dense(), train, atol=1e-6)
    np.testing.assert_allclose(bank.dense("test"), test, atol=1e-6)
    assert bank.names == [s.label() for s in specs]
    assert bank.ranks[1] == 10


def test_nystroem_error_shrinks_with_the_rank_and_landmarks_are_seeded():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    spec = [KernelSpec("gaussian", 2.0)]
    K = compute_bank(spec, X)[0][0]
    errors = [np.linalg.norm(nystroem_bank(spec, X, rank=r).dense()[0] - K) for r in (10, 50, 150)]
    assert errors[0] > errors[1] > errors[2]
    a = nystroem_bank(spec, X, rank=20, random_state=3)
    b = nystroem_bank(spec, X, rank=20, random_state=3)
    np.testing.assert_array_equal(a.train, b.train)


def test_random_fourier_features_approximate_the_gaussian_kernel():
    rng = np.random.default_rng(2)
    X, X_test = rng.normal(size=(60, 3)), rng.normal(size=(10, 3))
    specs = [KernelSpec("gaussian", 1.0), KernelSpec("gaussian", 3.0, feature=0)]
    train, test, _ = compute_bank(specs, X, X_test)
    bank = random_fourier_bank(specs, X, X_test, n_components=20000, random_state=0)
    # Monte Carlo error ~ 1/sqrt(D) = 0.007 per entry
    assert np.abs(bank.dense() - train).max() < 0.05
    assert np.abs(bank.dense("test") - test).max() < 0.05
    with pytest.raises(ValueError, match="Gaussian kernels only"):
        random_fourier_bank([KernelSpec("linear")], X)


@pytest.mark.parametrize("how", ["none", "unit_trace", "unit_variance", "unit_diagonal"])
def test_rank_one_kernels_are_the_feature_columns_and_stay_sparse(how):
    X = sp.random(30, 12, density=0.4, random_state=4, format="csr") + sp.csr_matrix(
        np.r_[np.ones((1, 12)), np.zeros((29, 12))]
    )  # every column nonzero somewhere, and not constant
    X_test = sp.random(5, 12, density=0.4, random_state=5, format="csr")
    bank = rank_one_bank(X, X_test, normalise=how)
    assert bank.is_sparse and bank.n_kernels == 12 and (bank.ranks == 1).all()
    Xd, Td = X.toarray(), X_test.toarray()
    specs = [KernelSpec("linear", feature=j, normalise=how) for j in range(12)]
    train, test, _ = compute_bank(specs, Xd, Td)
    np.testing.assert_allclose(bank.dense(), train, atol=1e-12)
    np.testing.assert_allclose(bank.dense("test"), test, atol=1e-12)


def test_centred_rank_one_kernels_are_the_centred_columns_and_sparse_ones_are_refused():
    rng = np.random.default_rng(8)
    X, X_test = rng.normal(size=(20, 5)), rng.normal(size=(4, 5))
    bank = rank_one_bank(X, X_test, normalise="center")
    specs = [KernelSpec("linear", feature=j, normalise="center") for j in range(5)]
    train, test, _ = compute_bank(specs, X, X_test)
    np.testing.assert_allclose(bank.dense(), train, atol=1e-12)
    np.testing.assert_allclose(bank.dense("test"), test, atol=1e-12)
    with pytest.raises(ValueError, match="cannot center sparse factors"):
        rank_one_bank(sp.csr_matrix(X), normalise="center")
    with pytest.raises(ValueError, match="cannot center sparse factors"):
        linear_group_bank(sp.csr_matrix(X), [[0, 1]], normalise="center")


def test_linear_kernels_on_feature_groups_are_exact():
    rng = np.random.default_rng(6)
    X, X_test = rng.normal(size=(20, 6)), rng.normal(size=(4, 6))
    groups = [[0, 1], [2, 3, 4], [5]]
    bank = linear_group_bank(X, groups, X_test, normalise="unit_trace")
    for m, g in enumerate(groups):
        K = X[:, g] @ X[:, g].T
        np.testing.assert_allclose(bank.dense()[m], K / np.trace(K), atol=1e-12)
        np.testing.assert_allclose(bank.dense("test")[m], X_test[:, g] @ X[:, g].T / np.trace(K))
    with pytest.raises(ValueError, match="group 1 must be a non-empty list"):
        linear_group_bank(X, [[0], [7]])


def test_bad_ranks_and_inputs_are_named():
    X = np.random.default_rng(7).normal(size=(10, 2))
    with pytest.raises(ValueError, match=r"rank must be an integer in \[1, 10\]"):
        nystroem_bank([KernelSpec("gaussian", 1.0)], X, rank=11)
    with pytest.raises(ValueError, match="no low-rank approximation"):
        nystroem_bank([KernelSpec("identity")], X, rank=5)
    with pytest.raises(ValueError, match="X_test has 3 features"):
        nystroem_bank([KernelSpec("gaussian", 1.0)], X, np.ones((2, 3)), rank=5)
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="X_train contains NaN or inf"):
        nystroem_bank([KernelSpec("gaussian", 1.0)], bad, rank=5)
    with pytest.raises(ValueError, match="unknown normalisation"):
        normalise_factors(X, None, "unit_norm")

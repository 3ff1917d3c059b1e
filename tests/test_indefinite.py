"""Kernels from indefinite similarities.

mkl/kernels/similarity.py, mkl/kernels/spectra.py, mkl/algorithms/eigen_transforms.py,
mkl/algorithms/indefinite.py, mkl/algorithms/nonsparse.py.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import mkl
from mkl.algorithms.indefinite import (
    ESKL,
    entropic_kernel,
    loss_and_subgradient,
    project_svm_set,
)
from mkl.algorithms.nonsparse import nonsparse_mkl
from mkl.banks.kernel_bank import KernelBank
from mkl.kernels import similarity, spectra
from mkl.kernels.specs import KernelSpec

from .reference import (
    nonsparse_mkl as nonsparse_mkl_reference,
)
from .reference import similarity_kernel, similarity_kernel_l3, svm_dual_value, svm_value_sdp


def indefinite_problem(seed, n=24, m=1, noise=0.3):
    """Labels and m perturbed-Gaussian similarities (indefinite) over n points."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    S = np.stack(
        [
            similarity.generate_similarity(X, "perturbed_gaussian", width=w, noise=noise, seed=i)
            for i, w in enumerate(np.linspace(1.0, 2.0, m))
        ]
    )
    return y, S


def quiet_fit(est, K, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(K, y)


# --------------------------------------------------------------------- transforms
symmetric = arrays(
    np.float64,
    st.integers(2, 8).map(lambda n: (n, n)),
    elements=st.floats(-10, 10, allow_nan=False, allow_subnormal=False),
).map(lambda A: (A + A.T) / 2)


@given(symmetric)
def test_transforms_follow_their_eigen_identities(S):
    sp = spectra.eigendecompose(S)
    lam, V = sp.values[0], sp.vectors[0]
    tol = 1e-9 * max(1.0, np.abs(S).max())
    for how in spectra.TRANSFORMS:
        mu = spectra.transform_spectrum(lam, how)
        K = spectra.from_spectrum(V, mu)
        assert np.allclose(K, K.T, atol=tol)
        assert np.linalg.eigvalsh((K + K.T) / 2).min() >= -tol * len(S)  # PSD
    denoise = spectra.from_spectrum(V, spectra.transform_spectrum(lam, "denoise"))
    flip = spectra.from_spectrum(V, spectra.transform_spectrum(lam, "flip"))
    shift = spectra.from_spectrum(V, spectra.transform_spectrum(lam, "shift"))
    assert np.allclose(flip @ flip, S @ S, atol=tol * np.abs(S).max() * len(S))  # |S|^2 = S^2
    # denoise - S is the negative part of S: PSD, so denoise >= S in the Loewner order
    assert np.linalg.eigvalsh(denoise - S).min() >= -tol * len(S)
    assert np.allclose(2 * denoise - flip, S, atol=tol * len(S))  # S_+ - S_- = S
    assert np.allclose(shift, S - min(lam.min(), 0) * np.eye(len(S)), atol=tol * len(S))
    if lam.min() >= 0:  # PSD input: every transform is the identity
        assert np.allclose(denoise, S, atol=tol * len(S))


@given(symmetric)
def test_test_map_reproduces_the_training_block(S):
    sp = spectra.eigendecompose(S)
    lam, V = sp.values[0], sp.vectors[0]
    for how in ("denoise", "flip"):
        mu = spectra.transform_spectrum(lam, how)
        P = spectra.test_map(V, lam, mu)
        K = spectra.from_spectrum(V, mu)
        scale = max(1.0, np.abs(S).max()) * len(S)
        # S P = K up to the eigenvalues below the rank tolerance
        small = np.abs(lam) <= spectra.RANK_TOL * np.abs(lam).max()
        expected = K - spectra.from_spectrum(V, np.where(small, mu, 0.0))
        assert np.allclose(S @ P, expected, atol=1e-8 * scale)


def test_generators_are_seeded_symmetric_and_indefinite(rng):
    X = rng.normal(size=(40, 4))
    a = similarity.generate_similarity(X, "perturbed_gaussian", width=1.0, noise=0.2, seed=3)
    b = similarity.generate_similarity(X, "perturbed_gaussian", width=1.0, noise=0.2, seed=3)
    assert np.array_equal(a, b) and np.array_equal(a, a.T)
    assert np.linalg.eigvalsh(a).min() < 0
    assert np.allclose(np.diag(a), 1.0)  # the perturbation has a zero diagonal
    sig = similarity.generate_similarity(X, "sigmoid", a=2.0, c=-1.0)
    assert np.array_equal(sig, sig.T) and np.linalg.eigvalsh(sig).min() < 0
    with pytest.raises(ValueError, match="unknown similarity generator"):
        similarity.generate_similarity(X, "cosine")
    with pytest.raises(ValueError, match="width > 0"):
        similarity.generate_similarity(X, "perturbed_gaussian", width=0.0)


def test_median_width_puts_the_median_similarity_at_exp_minus_half(rng):
    """width="median": the Gaussian part's median over the pairs is exp(-1/2)
    whatever the scale of the features (odd number of pairs: the median is one)."""
    for scale, d in ((1.0, 3), (100.0, 60)):
        X = scale * rng.normal(size=(39, d))  # 741 pairs
        S = similarity.generate_similarity(X, "perturbed_gaussian", width="median", noise=0.0)
        pairs = S[np.triu_indices(len(X), 1)]
        assert np.median(pairs) == pytest.approx(np.exp(-0.5), rel=1e-12)
    with pytest.raises(ValueError, match="median distance is 0"):
        similarity.generate_similarity(np.ones((5, 2)), "perturbed_gaussian", width="median")
    with pytest.raises(ValueError, match="a number or 'median'"):
        similarity.generate_similarity(X, "perturbed_gaussian", width="mean")


def test_spectra_are_computed_once_per_block_and_read_from_the_bank(monkeypatch):
    y, S = indefinite_problem(0, n=20, m=2)
    calls = []
    real = spectra.eigendecompose
    monkeypatch.setattr(spectra, "eigendecompose", lambda A: calls.append(1) or real(A))
    block = S.copy()
    for name in ("denoise", "flip", "rekl"):
        quiet_fit(
            mkl.make_estimator(name, max_iter=3) if name == "rekl" else mkl.make_estimator(name),
            block,
            y,
        )
    assert len(calls) == 1  # one eigendecomposition of the block for all three methods
    sp = real(S)
    specs = [KernelSpec("similarity", float(i)) for i in range(2)]
    bank = KernelBank(
        train=S, specs=specs, y_train=y, eigenvalues=sp.values, eigenvectors=sp.vectors
    )
    mkl.make_estimator("denoise").fit(bank, y)
    assert len(calls) == 1  # stored with the bank: none computed


# --------------------------------------------------------------------- baselines
def test_eigen_transform_svm_predicts_through_the_training_eigenvectors():
    y, S = indefinite_problem(1, n=30)
    train, test = np.arange(20), np.arange(20, 30)
    K_tr, K_te = S[:, train][:, :, train], S[:, test][:, :, train]
    for name in ("denoise", "flip"):
        est = mkl.make_estimator(name, C=1.0, tol=1e-8).fit(K_tr, y[train])
        sp = spectra.eigendecompose(K_tr[0])
        mu = spectra.transform_spectrum(sp.values[0], name)
        K_psd = spectra.from_spectrum(sp.vectors[0], mu)
        P = spectra.test_map(sp.vectors[0], sp.values[0], mu)
        ref, _ = svm_dual_value(K_psd, y[train], 1.0)
        assert est.objective_ == pytest.approx(ref, rel=1e-5)
        expected = (K_te[0] @ P) @ est.dual_coef_ + est.intercept_
        assert np.allclose(est.decision_function(K_te), expected)
        # on the training rows the map reproduces the transformed kernel
        assert np.allclose(est.decision_function(K_tr), K_psd @ est.dual_coef_ + est.intercept_)
    shift = mkl.make_estimator("shift", C=1.0).fit(K_tr, y[train])
    assert np.allclose(shift.decision_function(K_te), K_te[0] @ shift.dual_coef_ + shift.intercept_)


def test_similarity_features_is_a_linear_svm_on_similarity_rows():
    y, S = indefinite_problem(2, n=30, m=2)
    train, test = np.arange(20), np.arange(20, 30)
    K_tr, K_te = S[:, train][:, :, train], S[:, test][:, :, train]
    est = mkl.make_estimator("similarity_features", C=1.0, tol=1e-8).fit(K_tr, y[train])
    feats_tr = np.hstack(list(K_tr)) / np.sqrt(2)  # rows: similarities to the training points
    feats_te = np.hstack(list(K_te)) / np.sqrt(2)
    from sklearn.svm import SVC

    svc = SVC(C=1.0, kernel="linear", tol=1e-8).fit(feats_tr, y[train])
    assert np.allclose(est.decision_function(K_te), svc.decision_function(feats_te), atol=1e-5)


# --------------------------------------------------------------------- IndSVM
def test_project_svm_set_is_the_euclidean_projection(rng):
    y = np.where(rng.random(15) > 0.4, 1.0, -1.0)
    for _ in range(5):
        z = rng.normal(scale=3, size=15)
        p = project_svm_set(z, y, 2.0)
        assert abs(y @ p) < 1e-9 and p.min() >= 0 and p.max() <= 2.0
        # variational inequality: (z - p)'(q - p) <= 0 for feasible q
        for _ in range(20):
            q = project_svm_set(rng.normal(scale=3, size=15), y, 2.0)
            assert (z - p) @ (q - p) <= 1e-8


@pytest.mark.parametrize("seed, rho", [(0, 1.0), (1, 0.1)])
def test_indsvm_closes_its_duality_gap_at_the_sdp_optimum(seed, rho):
    y, S = indefinite_problem(seed, n=20)
    est = mkl.make_estimator("indsvm", C=1.0, rho=rho, tol=1e-4, max_iter=500).fit(S, y)
    assert est.converged_ and est.gap_ <= 1e-4
    lower = [h["lower_bound"] for h in est.history_]
    upper = [h["objective"] for h in est.history_]
    assert all(lo <= up * (1 + 1e-9) for lo, up in zip(lower, upper, strict=True))
    ref, _ = similarity_kernel_l3(S, y, 1.0, rho)  # min_{K psd} omega(K) + rho ||K - S||^2
    assert est.objective_ == pytest.approx(ref, rel=2e-4)


# --------------------------------------------------------------------- ESKL / EMKL / REKL
def test_denoise_objective_is_the_sdp_value_of_the_clipped_similarity():
    """The library's Denoise SVM value equals omega(S_+) computed independently
    (numpy's eigh, then the SDP of Lanckriet et al. that the ESKL and IndSVM
    references below are built on)."""
    y, S = indefinite_problem(3, n=15)
    lam, V = np.linalg.eigh(S[0])
    assert lam.min() < -0.1
    K = (V * np.maximum(lam, 0.0)) @ V.T
    est = mkl.make_estimator("denoise", C=1.0, tol=1e-10).fit(S, y)
    assert est.objective_ == pytest.approx(svm_value_sdp(K, y, 1.0), rel=1e-6)
    assert est.spectral_ratio_ == pytest.approx(np.trace(K) / np.linalg.norm(K), rel=1e-9)


@pytest.mark.parametrize("loss", ["l1", "l2", "l3"])
def test_eskl_reported_gap_bounds_its_distance_to_the_sdp_optimum(loss):
    """ESKL's gap_ is certified (a lower bound from its subgradients, an upper one
    from the SVM primal): at the experiment's setting (max_iter=100) the optimum
    of problem (4), solved as an SDP, must lie within gap_ of objective_:
    (objective_ - opt) / objective_ <= gap_."""
    y, S = indefinite_problem(4, n=15, m=2)
    tau = float(np.trace(S.mean(0)))
    est = quiet_fit(mkl.make_estimator("eskl", C=1.0, rho=1.0, loss=loss, max_iter=100), S, y)
    opt, _ = similarity_kernel(S, y, 1.0, 1.0, loss, trace=tau)
    assert 0 < est.gap_ < 1
    assert est.objective_ >= opt * (1 - 1e-6)  # a feasible kernel, up to the SVM precision
    assert (est.objective_ - opt) / est.objective_ <= est.gap_ + 1e-6
    gaps = [h["gap"] for h in est.history_]
    assert gaps[-1] == est.gap_ and min(gaps) == est.gap_  # the best bounds so far


def test_eskl_l3_reaches_the_sdp_optimum_within_one_percent():
    y, S = indefinite_problem(4, n=20, m=2)
    tau = float(np.trace(S.mean(0)))
    # within 1% after 200 steps, 0.5% after 300 (0.1% after 1155, in 10 s)
    est = quiet_fit(ESKL(C=1.0, rho=0.1, loss="l3", max_iter=300, tol=1e-7), S, y)
    ref, _ = similarity_kernel_l3(S, y, 1.0, 0.1, trace=tau)
    best = [h["best_objective"] for h in est.history_]
    assert all(b <= a for a, b in zip(best[:-1], best[1:], strict=True))
    assert est.objective_ >= ref * (1 - 1e-6)  # the reference is the optimum
    assert est.objective_ <= ref * 1.01


@pytest.mark.parametrize("loss", ["l1", "l2", "l3"])
def test_loss_subgradients(loss, rng):
    D = rng.normal(size=(6, 6))
    D = D + D.T
    value, sub = loss_and_subgradient(D, loss)
    E = rng.normal(size=(6, 6))
    E = 1e-3 * (E + E.T)
    # convexity: L(D + E) >= L(D) + <sub, E>
    assert loss_and_subgradient(D + E, loss)[0] >= value + np.sum(sub * E) - 1e-12


def record_moves(monkeypatch, cls, key):
    """Collect state[key] after every mirror step of ``cls``."""
    seen = []
    real_move = cls._move

    def move(self, state, grads, eta, tau):
        new = real_move(self, state, grads, eta, tau)
        seen.append(new[key])
        return new

    monkeypatch.setattr(cls, "_move", move)
    return seen


def test_entropic_iterates_stay_psd_with_the_trace(rng, monkeypatch):
    y, S = indefinite_problem(5, n=18, m=2)
    tau = 7.5
    for name in ("eskl", "emkl"):
        est = mkl.make_estimator(name, tau=tau, max_iter=15)
        seen = record_moves(monkeypatch, type(est), "K")
        quiet_fit(est, S, y)
        assert len(seen) == 14
        for K in seen:
            for Ki in K.reshape(-1, 18, 18):
                assert np.allclose(Ki, Ki.T, atol=1e-10)
                assert np.trace(Ki) == pytest.approx(tau, rel=1e-8)
                assert np.linalg.eigvalsh(Ki).min() >= -1e-8 * tau
    H = rng.normal(size=(10, 10))
    K = entropic_kernel(H + H.T, 3.0)
    assert np.trace(K) == pytest.approx(3.0) and np.linalg.eigvalsh(K).min() > 0


def test_rekl_weights_stay_on_their_simplices(monkeypatch):
    y, S = indefinite_problem(6, n=20, m=2)
    est = mkl.make_estimator("rekl", tau=20.0, max_iter=30)
    states = record_moves(monkeypatch, type(est), "mu")
    quiet_fit(est, S, y)
    for mu in states:
        assert np.all(mu > 0)
        assert np.allclose(mu.sum(axis=1), 20.0)
    assert np.all(est.weights_ >= 0) and est.weights_.sum() == pytest.approx(1)
    objective = [h["objective"] for h in est.history_]
    assert min(objective) == est.objective_


def denoised(S):
    """PSD kernels from similarities: negative eigenvalues set to zero."""
    out = []
    for S_i in S:
        w, V = np.linalg.eigh(S_i)
        out.append((V * np.clip(w, 0, None)) @ V.T)
    return np.stack(out)


@pytest.mark.parametrize("seed, C", [(0, 1.0), (1, 10.0), (2, 0.1)])
def test_nonsparse_mkl_reaches_eq_10_and_certifies_its_gap(seed, C):
    """Omega of eq. (10) against CVXPY's SOCP to 1e-5; its lower bound, the
    combination and the rescaled coefficients make the SVM it reports."""
    y, S = indefinite_problem(seed, n=22, m=3)
    kernels = denoised(S)
    kernels[1] *= 3.0  # kernels of different scales: the weights must differ
    expected = nonsparse_mkl_reference(kernels, y, C)
    # (the upper bound's precision is the SVM's own: libsvm's bias, about 1e-6 relative)
    weights, sol, K_w, info = nonsparse_mkl(kernels, y, C, svm_tol=1e-10, tol=1e-5)
    assert info["converged"]
    assert sol.objective == pytest.approx(expected, rel=1e-5)
    assert sol.objective <= expected + 1e-7 * abs(expected)  # a lower bound
    assert weights.sum() == pytest.approx(1.0) and np.all(weights > 0)  # non-sparse
    gamma = info["gamma"]
    assert gamma.sum() == pytest.approx(1.0)
    # the coefficients are those of the SVM on sum_i K_i / gamma_i, written on sum_i w_i K_i
    v = sol.dual_coef / (1.0 / gamma).sum()
    K_gamma = np.tensordot(1.0 / gamma, kernels, axes=1)
    np.testing.assert_allclose(K_w @ sol.dual_coef, K_gamma @ v)
    # every block gets the same norm at the optimum: q_i / gamma_i^2 equal
    norms = np.einsum("i,mij,j->m", v, kernels, v) / gamma**2
    np.testing.assert_allclose(norms, norms.mean(), rtol=1e-3)


def test_nonsparse_mkl_subgradient_of_eq_12_supports_omega(rng):
    """Omega is convex in (K_1..K_m) (a max of affine functions), and
    -1/(2 gamma_i) v v' (eq. 12) is a subgradient: Omega(K + E) >= Omega(K) + <G, E>."""
    y, S = indefinite_problem(8, n=18, m=2)
    kernels = denoised(S)
    solve = lambda K: nonsparse_mkl(K, y, 1.0, svm_tol=1e-10, tol=1e-7)  # noqa: E731
    _, sol, _, info = solve(kernels)
    gamma = info["gamma"]
    v = sol.dual_coef / (1.0 / gamma).sum()
    for _ in range(3):
        A = rng.normal(size=(2, 18, 18))
        E = 0.05 * np.einsum("mij,mkj->mik", A, A) / 18  # PSD perturbations
        E[1] = -0.1 * kernels[1]  # and a shrinking one (K_2 + E_2 stays PSD)
        linear = -sum(0.5 / gamma[i] * v @ E[i] @ v for i in range(2))
        assert solve(kernels + E)[1].objective >= sol.objective + linear - 1e-6


def test_nonsparse_mkl_stops_at_its_cap_unconverged():
    y, S = indefinite_problem(4, n=20, m=3)
    kernels = denoised(S)
    kernels[0] *= 5.0
    _, _, _, info = nonsparse_mkl(kernels, y, 1.0, svm_tol=1e-8, tol=1e-12, max_iter=2)
    assert info["svm_solves"] == 2 and not info["converged"]


def test_emkl_beats_its_start_and_reports_mkl_weights():
    y, S = indefinite_problem(7, n=20, m=3)
    est = quiet_fit(mkl.make_estimator("emkl", max_iter=40), S, y)
    assert est.objective_ < est.history_[0]["objective"]
    assert est.weights_.shape == (3,) and est.weights_.sum() == pytest.approx(1)


@pytest.mark.parametrize(
    "name, params, message",
    [
        ("eskl", {"loss": "l4"}, r"'loss' parameter of ESKL must be a str among"),
        ("eskl", {"rho": -1.0}, r"'rho' parameter of ESKL must be"),
        ("emkl", {"tau": 0.0}, r"'tau' parameter of EMKL must be"),
        ("indsvm", {"rho": 0.0}, r"'rho' parameter of IndSVM must be"),
        ("indsvm", {"C": None}, "needs a finite C"),
        ("rekl", {"C": None}, "needs a finite C"),
    ],
)
def test_bad_parameters_are_named(name, params, message):
    y, S = indefinite_problem(0, n=12)
    with pytest.raises(ValueError, match=message):
        mkl.make_estimator(name, **params).fit(S, y)

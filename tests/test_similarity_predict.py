"""The predict path of the indefinite-similarity methods, recomputed independently.

Training similarities S_train (M, n, n), test rows S_test (M, n_test, n) (the
estimator contract, docs/design.md). After a fit on a small problem the decision
values are recomputed here from numpy.linalg.eigh and sklearn's
SVC(kernel="precomputed"), without the library's helpers (mkl.kernels.spectra), by
the rules documented in mkl/kernels/spectra.py, mkl/algorithms/eigen_transforms.py
and mkl/algorithms/indefinite.py (Kundu et al. 2010 say nothing of test points):

* denoise / flip: K~ = 1/M sum_m V_m diag(mu_m) V_m' with mu = max(lambda, 0) or
  |lambda|; a test row s_m is mapped through the same eigenbasis,
  k~(x) = 1/M sum_m s_m V_m diag(mu_m / lambda_m) V_m' (Chen et al. 2009), so
  f(x) = sum_i alpha_i y_i k~(x)_i + b with (alpha, b) the SVM on K~;
* shift: K~ = 1/M sum_m (S_m - delta_m I), test rows as given;
* IndSVM, ESKL, EMKL, REKL: the SVM on the learned kernel (the best iterate's),
  test rows as given, combined with ``weights_``:
  f(x) = sum_m weights_m s_m(x)'(alpha y) + b.

The learned kernels of the last four are not fitted attributes: they are
recorded on their way into the library's SVM / MKL solver, and the reference
SVM is solved on them again here.
"""

import warnings

import numpy as np
import pytest
from sklearn.svm import SVC

import mkl
from mkl.algorithms import indefinite
from mkl.kernels.specs import KernelSpec

SVM_TOL = 1e-12  # both the library's SVMs and the reference ones: decision values to ~1e-9
ATOL = 1e-6


def similarity_data(seed, n=24, n_test=10, m=2, classes=2, noise=0.3):
    """Training and test blocks of m perturbed Gaussian similarities (indefinite)."""
    rng = np.random.default_rng(seed)
    N = n + n_test
    X = rng.normal(size=(N, 3))
    score = X[:, 0] + 0.3 * rng.normal(size=N)
    if classes == 2:
        y = np.where(score > 0, 1, -1)
    else:  # labels that are not 0..k-1, to exercise the label encoding
        y = np.array(["low", "mid", "high"])[np.digitize(score, [-0.4, 0.4])]
    sq = ((X[:, None] - X[None]) ** 2).sum(-1)
    S = []
    for width in np.linspace(1.0, 2.0, m):
        E = np.triu(rng.normal(size=(N, N)), 1)
        S.append(np.exp(-sq / (2 * width**2)) + noise * (E + E.T))
    S = np.stack(S)
    assert all(np.linalg.eigvalsh(S_i).min() < -0.1 for S_i in S)  # clearly indefinite
    train, test = np.arange(n), np.arange(n, N)
    return S[:, train][:, :, train], S[:, test][:, :, train], y[train], y[test]


def reference_svm(K, y_pm, C):
    return SVC(C=C, kernel="precomputed", tol=SVM_TOL, shrinking=False).fit(K, y_pm)


def svm_coef(svc, n):
    """(alpha * y) over all n training points, and b, of a binary SVC."""
    coef = np.zeros(n)
    coef[svc.support_] = svc.dual_coef_[0]
    return coef, float(svc.intercept_[0])


def one_vs_rest(y):
    """The binary tasks of the estimator contract: classes[1] against classes[0]
    for two classes, each class against the rest otherwise."""
    classes = np.unique(y)
    if len(classes) == 2:
        return classes, [np.where(y == classes[1], 1, -1)]
    return classes, [np.where(y == c, 1, -1) for c in classes]


def quiet_fit(est, K, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(K, y)


# --------------------------------------------------------------------- eigen transforms
def eigen_transform(S_train, S_test, how):
    """K~ on the training block and k~ on the test rows, by numpy.linalg.eigh."""
    M, n, _ = S_train.shape
    K = np.zeros((n, n))
    rows = np.zeros((S_test.shape[1], n))
    for S, T in zip(S_train, S_test, strict=True):
        lam, V = np.linalg.eigh(S)
        if how == "denoise":
            mu = np.maximum(lam, 0.0)
        elif how == "flip":
            mu = np.abs(lam)
        else:  # shift
            mu = lam - min(lam.min(), 0.0)
        K += (V * mu) @ V.T / M
        if how == "shift":
            rows += T / M
        else:  # no eigenvalue is near 0 here, so mu / lambda needs no pseudo-inverse
            assert np.abs(lam).min() > 1e-6 * np.abs(lam).max()
            rows += T @ ((V * (mu / lam)) @ V.T) / M
    return (K + K.T) / 2, rows


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("how", ["denoise", "flip", "shift"])
def test_eigen_transform_predictions_match_an_svm_on_the_transformed_spectrum(how, classes):
    S_tr, S_te, y_tr, _ = similarity_data(1, classes=classes)
    C = 2.0
    est = mkl.make_estimator(how, C=C, tol=SVM_TOL).fit(S_tr, y_tr)
    K, rows = eigen_transform(S_tr, S_te, how)
    classes_, tasks = one_vs_rest(y_tr)
    svcs = [reference_svm(K, t, C) for t in tasks]
    expected = np.column_stack([svc.decision_function(rows) for svc in svcs])
    got = est.decision_function(S_te)
    if classes == 2:
        expected = expected[:, 0]
        assert got.shape == (len(S_te[0]),)
    else:
        assert got.shape == (len(S_te[0]), 3)
    np.testing.assert_allclose(got, expected, atol=ATOL)
    labels = classes_[(expected > 0).astype(int)] if classes == 2 else classes_[expected.argmax(1)]
    np.testing.assert_array_equal(est.predict(S_te), labels)
    # the fitted SVM is the reference one (alpha * y and b)
    for fit, svc in zip(est.fits_, svcs, strict=True):
        coef, b = svm_coef(svc, len(y_tr))
        np.testing.assert_allclose(fit.dual_coef, coef, atol=ATOL * max(1.0, C))
        assert fit.intercept == pytest.approx(b, abs=ATOL)
    if how != "shift":
        # the test map reproduces K~ on the training rows (Chen et al. 2009)
        train_expected = np.column_stack([svc.decision_function(K) for svc in svcs])
        np.testing.assert_allclose(
            est.decision_function(S_tr),
            train_expected[:, 0] if classes == 2 else train_expected,
            atol=ATOL,
        )


def test_eigen_transforms_predict_the_same_from_a_bank_with_stored_spectra():
    """Spectra stored with the bank (eigenvector signs chosen by another LAPACK
    call, here numpy's) give the same predictions as spectra computed at fit."""
    S_tr, S_te, y_tr, y_te = similarity_data(2)
    lam, V = np.linalg.eigh(S_tr)
    V = V * np.where(np.arange(V.shape[-1]) % 2 == 0, 1.0, -1.0)  # flip every other sign
    specs = [KernelSpec("similarity", float(i)) for i in range(len(S_tr))]
    for how in ("denoise", "flip"):
        bank = mkl.KernelBank(
            train=S_tr.copy(),
            test=S_te,
            specs=specs,
            y_train=y_tr,
            y_test=y_te,
            eigenvalues=lam,
            eigenvectors=V,
        )
        from_bank = mkl.make_estimator(how, C=1.0, tol=SVM_TOL).fit(bank, y_tr)
        K, rows = eigen_transform(S_tr, S_te, how)
        expected = reference_svm(K, one_vs_rest(y_tr)[1][0], 1.0).decision_function(rows)
        np.testing.assert_allclose(from_bank.decision_function(bank), expected, atol=ATOL)


# --------------------------------------------------------------------- learned kernels
def record_svm_kernels(monkeypatch):
    """Every kernel the indefinite module hands to its SVM solver, in order."""
    seen = []
    real = indefinite.solve_svm_dual

    def solve(K, y, *args, **kwargs):
        seen.append(np.array(K, dtype=np.float64))
        return real(K, y, *args, **kwargs)

    monkeypatch.setattr(indefinite, "solve_svm_dual", solve)
    return seen


def record_mkl_kernels(monkeypatch):
    """Every bank of learned kernels EMKL / REKL hand to their inner MKL, and its weights."""
    seen = []
    real = indefinite.nonsparse_mkl

    def mkl_solve(kernels, *args, **kwargs):
        out = real(kernels, *args, **kwargs)
        seen.append((np.array(kernels, dtype=np.float64), np.array(out[0]), out[3]["gamma"]))
        return out

    monkeypatch.setattr(indefinite, "nonsparse_mkl", mkl_solve)
    return seen


def best_row(est):
    """Index of the history row whose iterate the classifier uses (the first best)."""
    return int(np.argmin([h["objective"] for h in est.history_]))


def spoil_last_mirror_step(monkeypatch, cls, max_iter):
    """Make the last mirror step go back to the start point: the last iterate is
    then not the best one, and the classifier must be the best one's."""
    real = cls._move
    states = []

    def move(self, state, grads, eta, tau):
        states.append(state)
        if len(states) == max_iter - 1:
            return states[0]
        return real(self, state, grads, eta, tau)

    monkeypatch.setattr(cls, "_move", move)


def check_raw_similarity_predictions(est, S_te, K_learned, y_pm, C, coef_scale=1.0):
    """The SVM on ``K_learned`` is the fitted one, and the decision values are
    sum_m weights_m s_m(x)'(alpha y) + b on the raw test rows. ``coef_scale``:
    K_learned is coef_scale sum_m weights_m K_m (EMKL/REKL's sum_m K_m / gamma_m
    with weights normalised to sum 1), so the coefficients on the weights'
    combination are coef_scale times the SVM's."""
    svc = reference_svm(K_learned, y_pm, C)
    coef, b = svm_coef(svc, len(y_pm))
    coef = coef * coef_scale
    np.testing.assert_allclose(est.dual_coef_, coef, atol=ATOL * max(1.0, C))
    assert est.intercept_ == pytest.approx(b, abs=ATOL)
    rows = np.tensordot(est.weights_, S_te, axes=1)
    expected = rows @ coef + b
    np.testing.assert_allclose(est.decision_function(S_te), expected, atol=ATOL)
    np.testing.assert_array_equal(est.predict(S_te), np.where(expected > 0, 1, -1))
    return expected


def test_indsvm_predicts_with_the_svm_on_its_best_kernel_and_the_raw_rows(monkeypatch):
    S_tr, S_te, y, _ = similarity_data(3)
    max_iter, C = 25, 1.0
    seen = []
    real = indefinite.solve_svm_dual

    def solve(K, y_, C_, tol, *args):
        seen.append(np.array(K, dtype=np.float64))
        # the last solve is loose, so that the last upper bound is not the best one
        return real(K, y_, C_, 1e-1 if len(seen) == max_iter + 1 else tol, *args)

    monkeypatch.setattr(indefinite, "solve_svm_dual", solve)
    est = quiet_fit(
        mkl.make_estimator("indsvm", C=C, rho=0.5, tol=1e-12, max_iter=max_iter, svm_tol=SVM_TOL),
        S_tr,
        y,
    )
    assert len(seen) == len(est.history_) + 1 == max_iter + 1
    assert best_row(est) < max_iter - 1
    K_best = seen[best_row(est) + 1]  # solve 0 is the start, on the denoised S
    assert np.linalg.eigvalsh(K_best).min() > -1e-9  # K* = (S + vv'/(4 rho))_+
    np.testing.assert_allclose(est.weights_, [0.5, 0.5])
    check_raw_similarity_predictions(est, S_te, K_best, y, C)


@pytest.mark.parametrize("loss", ["l1", "l3"])
def test_eskl_predicts_with_the_svm_on_its_best_kernel_and_the_raw_rows(monkeypatch, loss):
    S_tr, S_te, y, _ = similarity_data(4)
    seen = record_svm_kernels(monkeypatch)
    max_iter, C = 30, 10.0
    est = mkl.make_estimator(
        "eskl", C=C, rho=0.1, loss=loss, max_iter=max_iter, tol=1e-12, svm_tol=SVM_TOL
    )
    spoil_last_mirror_step(monkeypatch, type(est), max_iter)
    quiet_fit(est, S_tr, y)
    assert len(seen) == len(est.history_) == max_iter  # one SVM per mirror step
    assert best_row(est) < max_iter - 1
    K_best = seen[best_row(est)]
    tau = np.trace(S_tr.mean(0))
    assert np.trace(K_best) == pytest.approx(tau) and np.linalg.eigvalsh(K_best).min() > -1e-9
    check_raw_similarity_predictions(est, S_te, K_best, y, C)


@pytest.mark.parametrize("name", ["emkl", "rekl"])
def test_emkl_and_rekl_predict_with_the_svm_on_the_mkl_combination(monkeypatch, name):
    S_tr, S_te, y, _ = similarity_data(5, m=3)
    seen = record_mkl_kernels(monkeypatch)  # (kernels, weights, gamma) of every inner MKL
    max_iter, C = 12, 1.0
    est = mkl.make_estimator(name, C=C, max_iter=max_iter, tol=1e-12, svm_tol=SVM_TOL, mkl_tol=1e-6)
    spoil_last_mirror_step(monkeypatch, type(est), max_iter)
    quiet_fit(est, S_tr, y)
    assert len(seen) == len(est.history_) == max_iter
    assert best_row(est) < max_iter - 1
    kernels, beta, gamma = seen[best_row(est)]
    np.testing.assert_allclose(est.fits_[0].weights, beta)
    assert beta.sum() == pytest.approx(1.0) and np.all(beta > 0)  # eq. (10): non-sparse
    np.testing.assert_allclose(beta, (1.0 / gamma) / (1.0 / gamma).sum())
    tau = np.trace(S_tr.mean(0))
    for S_i, K_i in zip(S_tr, kernels, strict=True):
        assert np.trace(K_i) == pytest.approx(tau)
        assert np.linalg.eigvalsh(K_i).min() > -1e-9
        if name == "rekl":  # restricted to the eigenvectors of S_i (eq. 7)
            _, V = np.linalg.eigh(S_i)
            D = V.T @ K_i @ V
            np.testing.assert_allclose(D, np.diag(np.diag(D)), atol=1e-9 * tau)
    # the SVM is the one on sum_i K_i / gamma_i (eq. 10)
    scale = float((1.0 / gamma).sum())
    K_gamma = np.tensordot(1.0 / gamma, kernels, axes=1)
    check_raw_similarity_predictions(est, S_te, K_gamma, y, C, coef_scale=scale)

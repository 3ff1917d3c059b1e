"""MKL for regression (epsilon-SVR) and novelty detection (one-class SVM):
each wrapper method's objective against CVXPY + Clarabel's solution of the
same convex problem written from its definition (tests/reference.py,
``_dual``), the single-kernel cases against scikit-learn's SVR and
OneClassSVM, the gap closing, and bad input."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVR, OneClassSVM

import mkl
from mkl.algorithms.registry import algorithms_for_task
from mkl.estimators.task_estimators import MKLNoveltyDetector, MKLRegressor

from . import reference

PRECISE = {"tol": 1e-9, "svm_tol": 1e-9, "max_iter": 3000}
REGRESSION = [
    "simplemkl",
    "silp",
    "level",
    "lp_analytic",
    "lp_newton",
    "lp_cutting_plane",
    "gmkl",
    "spg",
]


def regression_problem(seed, n=40, M=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    widths = np.geomspace(0.3, 3.0, M)
    return np.stack([np.exp(-sq / (2 * w**2)) for w in widths]), y


def _params(name):
    return {"p": 2.0} if name.startswith("lp") else {"v": 0.5} if name == "gmkl" else {}


def _reference(name, K, y, C, task):
    if name.startswith("lp"):
        return reference.lp_mkl(K, y, C, 2.0, task=task)
    if name == "gmkl":
        return reference.gmkl(K, y, C, 0.5, task=task)
    return reference.l1_mkl(K, y, C, task=task)


def _fit(est, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(*args)


@pytest.mark.parametrize("name", REGRESSION)
@pytest.mark.parametrize("seed, C, epsilon", [(1, 1.0, 0.1), (2, 10.0, 0.05)])
def test_regression_mkl_matches_cvxpy(name, seed, C, epsilon):
    K, y = regression_problem(seed)
    value, weights = _reference(name, K, y, C, ("regression", epsilon))
    est = _fit(
        mkl.make_estimator(
            name, task="regression", C=C, epsilon=epsilon, **_params(name), **PRECISE
        ),
        K,
        y,
    )
    assert est.objective_ == pytest.approx(value, rel=1e-5)
    np.testing.assert_allclose(est.weights_, weights, atol=2e-3)
    assert est.gap_ <= 1e-6


@pytest.mark.parametrize("name", ["simplemkl", "level", "lp_analytic", "gmkl"])
@pytest.mark.parametrize("seed, nu", [(2, 0.2), (3, 0.5)])
def test_novelty_mkl_matches_cvxpy(name, seed, nu):
    K, _ = regression_problem(seed)
    # the one-class MKL of the papers' widths puts all weight on the widest
    # kernel; a bank of differently shaped kernels makes the weights interior
    K = np.stack([K[0], K[1], 0.5 * K[2] + 0.5 * np.eye(K.shape[1])])
    value, weights = _reference(name, K, np.zeros(K.shape[1]), None, ("novelty", nu))
    est = _fit(mkl.make_estimator(name, task="novelty", nu=nu, **_params(name), **PRECISE), K)
    assert est.objective_ == pytest.approx(value, rel=1e-5)
    assert est.objective_ <= 0  # J = -(the one-class dual value)
    np.testing.assert_allclose(est.weights_, weights, atol=2e-3)


def test_one_kernel_is_scikit_learns_svr_and_one_class_svm():
    K, y = regression_problem(4)
    reg = mkl.make_estimator("linear", task="regression", C=3.0, epsilon=0.2, kernel_index=2).fit(
        K, y
    )
    svr = SVR(kernel="precomputed", C=3.0, epsilon=0.2).fit(K[2], y)
    np.testing.assert_allclose(reg.predict(K), svr.predict(K[2]), atol=1e-10)
    uniform = mkl.make_estimator("uniform", task="regression", C=3.0, epsilon=0.2).fit(K, y)
    svr = SVR(kernel="precomputed", C=3.0, epsilon=0.2).fit(K.mean(0), y)
    np.testing.assert_allclose(uniform.predict(K), svr.predict(K.mean(0)), atol=1e-10)
    nov = mkl.make_estimator("linear", task="novelty", nu=0.3, kernel_index=1).fit(K)
    ocs = OneClassSVM(kernel="precomputed", nu=0.3).fit(K[1])
    n = K.shape[1]
    # our alpha sums to 1, libsvm's to nu n: the scores are libsvm's / (nu n)
    np.testing.assert_allclose(
        nov.decision_function(K) * 0.3 * n, ocs.decision_function(K[1]), atol=1e-9
    )
    np.testing.assert_allclose(nov.score_samples(K) * 0.3 * n, ocs.score_samples(K[1]), atol=1e-9)
    np.testing.assert_array_equal(nov.predict(K), ocs.predict(K[1]))


@pytest.mark.parametrize("name", ["simplemkl", "level", "lp_analytic", "gmkl"])
def test_gap_closes_and_history_is_recorded(name):
    K, y = regression_problem(5, n=60)
    est = mkl.make_estimator(name, task="regression", C=1.0, **_params(name)).fit(K, y)
    assert est.converged_ and est.gap_ <= 0.01
    assert len(est.history_) == est.n_iter_ and est.history_[-1]["gap"] == est.gap_
    nov = mkl.make_estimator(name, task="novelty", nu=0.3, **_params(name)).fit(K)
    assert nov.converged_ and nov.gap_ <= 0.01


def test_held_out_regression_and_outliers():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(200, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=200)
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.stack([np.exp(-sq / (2 * w**2)) for w in (0.3, 1.0, 3.0)])
    train, test = np.arange(150), np.arange(150, 200)
    reg = mkl.make_estimator("simplemkl", task="regression", C=10.0).fit(
        K[:, train][:, :, train], y[train]
    )
    assert reg.score(K[:, test][:, :, train], y[test]) > 0.9  # R^2
    # outliers far from the training cloud score lower than inliers
    X_out = rng.normal(size=(50, 2)) * 0.3 + 4.0
    Z = np.vstack([X[test], X_out])
    sq_te = ((Z[:, None, :] - X[train][None, :, :]) ** 2).sum(-1)
    K_te = np.stack([np.exp(-sq_te / (2 * w**2)) for w in (0.3, 1.0, 3.0)])
    det = mkl.make_estimator("level", task="novelty", nu=0.1).fit(K[:, train][:, :, train])
    scores = det.score_samples(K_te)
    assert scores[:50].min() > scores[50:].max()
    assert (det.predict(K_te)[50:] == -1).all()


def test_clone_pickle_and_the_algorithms_that_carry_over():
    K, y = regression_problem(7)
    est = mkl.make_estimator("lp_analytic", task="regression", p=1.5, C=2.0, epsilon=0.05, tol=1e-3)
    assert est.get_params()["algorithm_params"] == {"tol": 1e-3}
    fitted = clone(est).fit(K, y)
    assert fitted.estimator_.p == 1.5 and fitted.estimator_.task.epsilon == 0.05
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.predict(K), fitted.predict(K))
    carry = algorithms_for_task("regression")
    assert set(REGRESSION) | {"uniform", "linear", "single_best"} == set(carry)
    assert set(algorithms_for_task("novelty")) == set(carry) - {"single_best"}


def test_single_best_kernel_by_cross_validated_squared_error():
    """The kernel whose 3-fold SVR has the least squared error, computed here
    with scikit-learn's SVR on the same folds, then an SVR on it."""
    from sklearn.model_selection import KFold

    K, y = regression_problem(10, n=60, M=4)
    est = mkl.make_estimator(
        "single_best", task="regression", C=3.0, epsilon=0.1, cv=3, random_state=2
    ).fit(K, y)
    mse = np.zeros(4)
    for tr, va in KFold(3, shuffle=True, random_state=2).split(K[0]):
        for m in range(4):
            svr = SVR(kernel="precomputed", C=3.0, epsilon=0.1).fit(K[m][np.ix_(tr, tr)], y[tr])
            mse[m] += ((svr.predict(K[m][np.ix_(va, tr)]) - y[va]) ** 2).sum() / len(y)
    np.testing.assert_allclose(est.history_[0]["cv_mse"], mse, rtol=1e-6)
    best = int(np.argmin(mse))
    np.testing.assert_array_equal(est.weights_, np.eye(4)[best])
    svr = SVR(kernel="precomputed", C=3.0, epsilon=0.1).fit(K[best], y)
    np.testing.assert_allclose(est.predict(K), svr.predict(K[best]), atol=1e-9)
    with pytest.raises(ValueError, match="does not do novelty"):
        mkl.make_estimator("single_best", task="novelty").fit(K)


@pytest.mark.parametrize(
    "make, params, match",
    [
        (MKLRegressor, {"algorithm": "easymkl"}, "does not do regression"),
        (MKLRegressor, {"algorithm": "smkl"}, "does not do regression"),
        (MKLNoveltyDetector, {"algorithm": "memo"}, "does not do novelty"),
        (MKLRegressor, {"algorithm": "nope"}, "unknown algorithm 'nope'"),
        (MKLRegressor, {"epsilon": -0.1}, "epsilon must be >= 0"),
        (MKLRegressor, {"epsilon": float("nan")}, "epsilon must be a finite number"),
        (MKLRegressor, {"C": None}, "finite C"),
        (MKLRegressor, {"C": -1.0}, r"'C' parameter of \w+ must be"),
        (MKLNoveltyDetector, {"nu": 0.0}, r"nu must be a number in \(0, 1\]"),
        (MKLNoveltyDetector, {"nu": 1.5}, r"nu must be a number in \(0, 1\]"),
        (MKLRegressor, {"algorithm_params": {"C": 2.0}}, "estimator's own parameters"),
        (MKLRegressor, {"p": 2.0}, "no parameter"),
    ],
)
def test_bad_parameters_are_named(make, params, match):
    K, y = regression_problem(8, n=20)
    with pytest.raises(ValueError, match=match):
        make(**params).fit(K, y)


def test_bad_targets_are_named():
    K, y = regression_problem(9, n=20)
    reg = MKLRegressor()
    with pytest.raises(ValueError, match="NaN or inf"):
        reg.fit(K, np.where(np.arange(20) == 3, np.nan, y))
    with pytest.raises(ValueError, match="must be numbers"):
        reg.fit(K, np.array(["a"] * 20))
    with pytest.raises(ValueError, match="19 targets but the kernels have 20"):
        reg.fit(K, y[:19])
    with pytest.warns(UserWarning, match="like class labels"):
        reg.fit(K, (y > 0).astype(int))
    bank, _, _ = factored_regression_problem(9, n=20)
    with pytest.raises(ValueError, match="NaN or inf"):
        reg.fit(bank, np.full(20, np.nan))
    with pytest.raises(ValueError, match="finite C"):
        MKLRegressor(C=None).fit(bank, y)


# ------------------------------------------------------------ factor banks
def factored_regression_problem(seed, n=40, M=4, n_test=15):
    """Exact factors of Gaussian kernels (training and test rows), the dense
    training and test blocks they represent, and real targets."""
    from .test_factor_banks import exact_factors

    K_all, y = regression_problem(seed, n=n + n_test, M=M)
    K, K_test = K_all[:, :n, :n], K_all[:, n:, :n]
    train = exact_factors(K)
    test = [K_test[m] @ np.linalg.pinv(train[m]).T for m in range(M)]
    return mkl.FactorBank(train, test), (K, K_test), y[:n]


def _mean_diagonal(K):
    return float(np.mean(np.einsum("mii->mi", K)))


@pytest.mark.parametrize("method", ["factors", "gram"])
@pytest.mark.parametrize("C, epsilon", [(1.0, 0.1), (10.0, 0.0)])
def test_factored_svr_matches_cvxpy(method, C, epsilon):
    """The SVR with a regularised intercept (liblinear's L1-loss SVR dual)."""
    import scipy.sparse as sp

    from mkl.solvers.coordinate_descent import solve_factored_svr

    bank, (K, _), y = factored_regression_problem(11)
    theta = np.array([0.5, 0.0, 0.3, 0.2])
    value, _ = reference.dual_value(
        np.tensordot(theta, K, 1), y, C, intercept_sq=1.0, task=("regression", epsilon)
    )
    for Z in (bank.train, sp.csr_matrix(bank.train)):
        sol = solve_factored_svr(Z, bank.offsets, theta, y, C, epsilon, tol=1e-10, method=method)
        assert sol.converged and sol.objective == pytest.approx(value, rel=1e-7)
        assert np.all(np.abs(sol.dual_coef) <= C) and sol.bias == pytest.approx(sol.dual_coef.sum())
        q = bank.quadratic_forms(sol.dual_coef)
        assert sol.linear_term - 0.5 * theta @ q == pytest.approx(sol.objective, rel=1e-9)


@pytest.mark.parametrize("method", ["factors", "gram"])
@pytest.mark.parametrize("nu", [0.1, 0.5, 1.0])
def test_factored_one_class_matches_cvxpy_and_libsvm(method, nu):
    """The one-class SVM keeps 1'alpha = 1 on factors: its value and offset are
    those of the dense problem, solved by CVXPY and by libsvm."""
    from mkl.solvers.coordinate_descent import solve_factored_one_class
    from mkl.solvers.libsvm import solve_one_class_dual

    bank, (K, _), _ = factored_regression_problem(12, n=60)
    theta = np.array([0.1, 0.4, 0.0, 0.5])
    K_theta = np.tensordot(theta, K, 1)
    value, _ = reference.dual_value(K_theta, np.zeros(60), None, task=("novelty", nu))
    sol = solve_factored_one_class(bank.train, bank.offsets, theta, nu, tol=1e-8, method=method)
    assert sol.converged and sol.objective == pytest.approx(value, rel=1e-7)
    assert sol.alpha.sum() == pytest.approx(1.0, abs=1e-14)
    assert sol.alpha.min() >= 0 and sol.alpha.max() <= 1 / (nu * 60)
    dense = solve_one_class_dual(K_theta, nu, tol=1e-10)  # libsvm, but nu = 1
    assert sol.bias == pytest.approx(dense.bias, abs=1e-6)
    assert sol.objective == pytest.approx(dense.objective, rel=1e-7)
    # a warm start from the solution needs no multiplier step beyond the first
    again = solve_factored_one_class(
        bank.train, bank.offsets, theta, nu, tol=1e-8, alpha0=sol.alpha, rho0=-sol.bias
    )
    assert again.epochs <= 3 and again.objective == pytest.approx(sol.objective, rel=1e-10)


@pytest.mark.parametrize("name", ["simplemkl", "level", "lp_analytic", "gmkl"])
def test_regression_mkl_on_factors_matches_cvxpy(name):
    bank, (K, _), y = factored_regression_problem(13)
    task = ("regression", 0.1)
    b2 = _mean_diagonal(K)
    if name.startswith("lp"):
        value, weights = reference.lp_mkl(K, y, 1.0, 2.0, intercept_sq=b2, task=task)
    elif name == "gmkl":
        value, weights = reference.gmkl(K, y, 1.0, 0.5, intercept_sq=b2, task=task)
    else:
        value, weights = reference.l1_mkl(K, y, 1.0, intercept_sq=b2, task=task)
    est = _fit(
        mkl.make_estimator(name, task="regression", C=1.0, epsilon=0.1, **_params(name), **PRECISE),
        bank,
        y,
    )
    assert est.objective_ == pytest.approx(value, rel=1e-5)
    np.testing.assert_allclose(est.weights_, weights, atol=2e-3)
    assert est.gap_ <= 1e-6


@pytest.mark.parametrize("name", ["simplemkl", "level", "lp_analytic"])
def test_novelty_mkl_on_factors_matches_the_dense_problem(name):
    """On factors the one-class dual is the dense one: the same value as CVXPY's."""
    from .test_factor_banks import exact_factors

    K, _ = regression_problem(14)
    K = np.stack([K[0], K[1], 0.5 * K[2] + 0.5 * np.eye(K.shape[1])])
    value, weights = _reference(name, K, np.zeros(K.shape[1]), None, ("novelty", 0.3))
    est = _fit(
        mkl.make_estimator(name, task="novelty", nu=0.3, **_params(name), **PRECISE),
        mkl.FactorBank(exact_factors(K)),
    )
    assert est.objective_ == pytest.approx(value, rel=1e-5)
    np.testing.assert_allclose(est.weights_, weights, atol=2e-3)


def test_factored_task_estimators_predict_as_the_kernels_they_represent():
    bank, (K, K_test), y = factored_regression_problem(15)
    reg = mkl.make_estimator("level", task="regression", C=3.0, epsilon=0.05).fit(bank, y)
    dense = np.tensordot(reg.weights_, K_test, 1) @ reg.dual_coef_ + reg.intercept_
    np.testing.assert_allclose(reg.predict(bank), dense, atol=1e-8)
    det = mkl.make_estimator("lp_analytic", task="novelty", nu=0.2, p=2.0).fit(bank)
    scores = np.tensordot(det.weights_, K_test, 1) @ det.dual_coef_
    np.testing.assert_allclose(det.score_samples(bank), scores, atol=1e-8)
    np.testing.assert_array_equal(det.predict(bank), np.where(scores - det.offset_ >= 0, 1, -1))
    # single best kernel by cross-validated squared error on the factors' rows
    best = mkl.make_estimator(
        "single_best", task="regression", C=3.0, epsilon=0.05, cv=3, random_state=0
    )
    assert best.fit(bank, y).weights_.sum() == 1.0


def test_multiple_kernel_regressor_on_nystroem_factors():
    rng = np.random.default_rng(16)
    X = rng.normal(size=(300, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=300)
    est = mkl.MultipleKernelRegressor(
        kernels={"families": [{"family": "gaussian", "widths": [0.3, 1.0, 3.0]}]},
        algorithm="level",
        C=10.0,
        representation={"kind": "nystroem", "rank": 60},
        random_state=0,
    ).fit(X[:200], y[:200])
    assert est.estimator_.estimator_.factor_ranks_ is not None  # fitted on factors
    assert est.score(X[200:], y[200:]) > 0.9


def test_the_task_is_a_parameter_that_clone_keeps():
    """The regressor's bank-level estimator solves the SVR because of its
    ``task`` parameter, so get_params shows it and a clone fits the same task."""
    from sklearn.base import clone

    from mkl.solvers.task_duals import Regression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    K = np.stack([X[:, [j]] @ X[:, [j]].T for j in range(3)])
    y = X @ np.array([1.0, -2.0, 0.5])
    reg = mkl.make_estimator("simplemkl", task="regression", C=10.0, epsilon=0.05).fit(K, y)
    inner = reg.estimator_
    assert inner.get_params()["task"] == Regression(0.05)
    again = clone(inner).fit(K, y)
    np.testing.assert_allclose(again.predict(K), reg.predict(K), rtol=1e-8, atol=1e-10)
    assert again.objective_ == pytest.approx(reg.objective_, rel=1e-10)


def test_make_regressor_and_make_novelty_detector_are_deprecated_aliases():
    with pytest.warns(FutureWarning, match="make_estimator"):
        reg = mkl.make_regressor("level", epsilon=0.2)
    assert (
        reg.get_params() == mkl.make_estimator("level", task="regression", epsilon=0.2).get_params()
    )
    with pytest.warns(FutureWarning, match="make_estimator"):
        det = mkl.make_novelty_detector("level", nu=0.2)
    assert det.get_params() == mkl.make_estimator("level", task="novelty", nu=0.2).get_params()
    with pytest.raises(ValueError, match="unknown task 'ranking'"):
        mkl.make_estimator("level", task="ranking")
    with pytest.raises(ValueError, match="SingleBestKernel does not do novelty"):
        from mkl.solvers.task_duals import Novelty

        mkl.ALGORITHMS["single_best"](task=Novelty(0.5)).fit(np.eye(3)[None])

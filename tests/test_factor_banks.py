"""Factor banks (K_m = Z_m Z_m'): the factored inner SVM and every method that takes
them, against independent CVXPY solutions of the problem the factored path
solves (the bias-free SVM whose intercept is a constant feature b, b^2 = the mean
diagonal of the average kernel), on exact factors from eigendecompositions."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

import mkl
from mkl import FactorBank
from mkl.solvers.coordinate_descent import (
    _active_ranges,
    _arrays,
    _cd_start,
    _coming_back,
    _dual_cd,
    solve_factored_svm,
)
from mkl.solvers.komd import komd_margin

from . import reference
from .conftest import random_problem

PRECISE = {"tol": 1e-9, "svm_tol": 1e-9, "max_iter": 3000}


def exact_factors(K):
    """Z_m with Z_m Z_m' = K_m (the eigenvectors of positive eigenvalues)."""
    out = []
    for Km in K:
        lam, V = np.linalg.eigh(Km)
        keep = lam > 1e-12 * lam[-1]
        out.append(V[:, keep] * np.sqrt(lam[keep]))
    return out


def factored_problem(seed, n=50, M=5, n_test=20):
    rng = np.random.default_rng(seed)
    X, y, _ = random_problem(rng, n=n + n_test, d=4, M=M)
    widths = np.geomspace(0.5, 4.0, M)
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    full = np.stack([np.exp(-sq / (2 * w**2)) for w in widths])
    K = full[:, :n, :n]
    # exact factors of the training block; test factors T_m = K_m(test, train) Z_m^+'
    train = exact_factors(K)
    test = [full[m, n:, :n] @ np.linalg.pinv(train[m]).T for m in range(M)]
    bank = FactorBank(train, test, y_train=y[:n], y_test=y[n:])
    return bank, K, full[:, n:, :n], y[:n]


def intercept_sq(K):
    return float(np.mean(np.einsum("mii->mi", K)))


def fit(name, bank, y, **params):
    accepted = mkl.make_estimator(name).get_params()
    precise = {k: v for k, v in PRECISE.items() if k in accepted}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return mkl.make_estimator(name, **{**precise, **params}).fit(bank, y)


# ------------------------------------------------------------ the inner SVM
@pytest.mark.parametrize("method", ["factors", "gram"])
@pytest.mark.parametrize("C", [0.3, 1.0, 10.0])
@pytest.mark.parametrize("kind", ["dense", "sparse", "float32"])
def test_factored_svm_matches_cvxpy(C, kind, method):
    bank, K, _, y = factored_problem(0)
    theta = np.array([0.4, 0.1, 0.0, 0.3, 0.2])
    Z = bank.train
    if kind == "sparse":
        Z = sp.csr_matrix(Z)
    elif kind == "float32":
        Z = Z.astype(np.float32)
    b2 = 1.0
    sol = solve_factored_svm(Z, bank.offsets, theta, y, C, tol=1e-9, intercept_sq=b2, method=method)
    value, _ = reference.svm_dual_value(np.tensordot(theta, K, 1), y, C, intercept_sq=b2)
    rel = 1e-5 if kind == "float32" else 1e-7
    assert sol.objective == pytest.approx(value, rel=rel)
    assert sol.converged and np.all((sol.alpha >= 0) & (sol.alpha <= C))
    # the decision function's bias is b^2 y'alpha, and J = S(alpha) - 1/2 theta'q
    assert sol.bias == pytest.approx(b2 * float(y @ sol.alpha))
    q = bank.quadratic_forms(sol.dual_coef)
    assert sol.linear_term - 0.5 * theta @ q == pytest.approx(sol.objective, rel=1e-6)


@pytest.mark.parametrize("C", [0.3, 3.0])
def test_factored_svm_warm_from_other_weights_matches_cvxpy(C):
    """Warm starts from the solution at other weights, as the wrapper methods
    make them: the descent shrinks, checks the shrunk coordinates when the
    active ones meet tol and brings back those that break it; each solve
    still reaches the independent optimum."""
    rng = np.random.default_rng(7)
    n, M = 120, 4
    Z = rng.standard_normal((n, 3 * M))
    y = np.where(Z[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    offsets = np.arange(0, 3 * M + 1, 3)
    alpha = None
    for theta in (np.full(M, 1 / M), np.array([0.7, 0.1, 0.1, 0.1]), np.array([0, 0, 0.5, 0.5])):
        sol = solve_factored_svm(
            Z, offsets, theta, y, C, tol=1e-9, intercept_sq=1.0, alpha0=alpha, method="factors"
        )
        alpha = sol.alpha
        K = (Z * np.repeat(theta, 3)) @ Z.T
        value, _ = reference.svm_dual_value(K, y, C, intercept_sq=1.0)
        assert sol.converged and sol.objective == pytest.approx(value, rel=1e-7)


def test_factored_descent_stops_on_the_shrunk_set_only_where_every_coordinate_meets_tol():
    """Warm solves at a loose tol, where shrinking leaves coordinates out: when
    the active set meets tol, the projected gradients of every coordinate are
    read at the current iterate. A solve that ends there has them within tol at
    the point it returns (recomputed here from scratch); one that does not
    brings back the shrunk coordinates that break it. Both branches are met."""
    rng = np.random.default_rng(3)
    ended_on_check = brought_back = 0
    for _ in range(12):
        n, R, b2, tol = 300, 12, 1.0, 1e-2
        Z = rng.standard_normal((n, R))
        y = np.where(Z[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
        offsets = np.arange(R + 1)
        start = solve_factored_svm(Z, offsets, rng.dirichlet(np.ones(R)), y, 1.0, tol=1e-6)
        s = rng.dirichlet(np.ones(R))
        x, ranges = start.alpha.copy(), _active_ranges(s, offsets)
        lo, hi, p = np.zeros(n), np.ones(n), -np.ones(n)
        qd, w, v = _cd_start(*_arrays(Z), s, ranges, y, x, b2)
        _, converged, v, _, _, back, exact_end, _ = _dual_cd(
            *_arrays(Z), s, ranges, ranges, y, p, lo, hi, 0.0, x, w, v, qd, b2, tol, 1000, 0
        )  # fmt: skip
        assert converged and v == pytest.approx(y @ x)
        g = y * ((Z * s) @ (Z.T @ (y * x)) + b2 * (y @ x)) + p
        pg = np.where(x < hi, np.minimum(g, 0), 0) + np.where(x > lo, np.maximum(g, 0), 0)
        if exact_end:
            assert pg.max() - pg.min() <= tol * (1 + 1e-9)
        ended_on_check += exact_end
        brought_back += back
    assert ended_on_check > 0 and brought_back > 0


def test_the_hessian_tail_ends_where_the_factor_loop_does():
    """Once shrinking leaves few coordinates active (at most half the columns a
    dot reads), the descent goes on on their Hessian (``_gram_tail``) and then
    to the check at the current iterate: the point returned there meets tol exactly
    (its projected gradients recomputed from scratch), and at a tight tol it is
    the factor loop's solution."""
    tails = 0
    for seed, C, tol in [(0, 10.0, 1e-3), (1, 1.0, 1e-3), (2, 10.0, 1e-8), (0, 1.0, 1e-8)]:
        rng = np.random.default_rng(seed)
        n, R, b2 = 400, 120, 1.0
        Z = rng.standard_normal((n, R)) / np.sqrt(R)
        y = np.where(Z[:, 0] + 0.3 * Z[:, 1] + 0.05 * rng.standard_normal(n) > 0, 1.0, -1.0)
        offsets = np.arange(0, R + 1, 20)
        s = np.repeat(rng.dirichlet(np.ones(len(offsets) - 1)), 20)
        ranges = _active_ranges(s, offsets)
        lo, hi, p = np.zeros(n), np.full(n, C), -np.ones(n)
        objectives = []
        for tail_max in (0, 2000):
            x = np.zeros(n)
            qd, w, v = _cd_start(*_arrays(Z), s, ranges, y, x, b2)
            _, converged, v, _, _, _, exact_end, tail_epochs = _dual_cd(
                *_arrays(Z), s, ranges, ranges, y, p, lo, hi, 0.0, x, w, v, qd, b2, tol,
                100_000, 0, tail_max, 1e12,
            )  # fmt: skip
            assert converged and v == pytest.approx(y @ x)
            assert np.allclose(w, Z.T @ (y * x), atol=1e-10)  # w took the tail's moves
            g = y * ((Z * s) @ (Z.T @ (y * x)) + b2 * (y @ x)) + p
            pg = np.where(x < hi, np.minimum(g, 0), 0) + np.where(x > lo, np.maximum(g, 0), 0)
            if tail_max and exact_end:
                tails += tail_epochs > 0
                assert pg.max() - pg.min() <= tol * (1 + 1e-6)
            objectives.append(0.5 * (y * x) @ (g - p) - x.sum())
        assert objectives[1] == pytest.approx(objectives[0], rel=10 * tol)
    assert tails >= 3


def test_the_shrunk_coordinates_that_come_back_after_a_failed_check():
    """Outside the active set's band [max - tol, min + tol] they come back; when
    none is outside yet they spread past tol (active in [0, 0.1 tol], shrunk
    at -0.85 tol and 0.95 tol), every one of nonzero projected gradient does,
    so the check cannot repeat unchanged until the epoch cap."""
    tol = 1e-3
    top, bottom = 0.1 * tol, 0.0
    back = _coming_back(np.array([0.0, 1.2 * tol, -0.5 * tol, -0.95 * tol]), top, bottom, tol)
    assert back.tolist() == [False, True, False, True]
    back = _coming_back(np.array([0.0, -0.85 * tol, 0.95 * tol]), top, bottom, tol)
    assert back.tolist() == [False, True, True]


@pytest.mark.parametrize("method", ["factors", "gram"])
def test_factored_svm_warm_start_from_the_optimum_needs_one_epoch_and_clips_infeasible_starts(
    method,
):
    bank, _, _, y = factored_problem(1)
    theta = np.full(5, 0.2)
    solve = lambda **kw: solve_factored_svm(  # noqa: E731
        bank.train, bank.offsets, theta, y, 1.0, tol=1e-8, method=method, **kw
    )
    cold = solve()
    warm = solve(alpha0=cold.alpha)
    assert warm.epochs == 1 and warm.objective == pytest.approx(cold.objective, rel=1e-10)
    assert cold.epochs > 5
    # a start from a larger C is clipped into the new box, not used as is
    outside = np.full(len(y), 5.0)
    clipped = solve(alpha0=outside)
    assert clipped.alpha.max() <= 1.0
    assert clipped.objective == pytest.approx(cold.objective, rel=1e-7)


def test_auto_takes_the_hessian_path_with_more_active_columns_than_points():
    """``"auto"`` forms the n x n Hessian when the active columns outnumber
    the points (n = 200 and 2,000 rank-one kernels: 20-70x faster in
    benchmarks/bench_factored_svm.py), within GRAM_MAX_N points for sparse
    factors and DENSE_GRAM_MAX_N for dense ones; never for factors on disk."""
    from mkl.banks.row_blocks import RowBlocks
    from mkl.solvers.coordinate_descent import DENSE_GRAM_MAX_N, GRAM_MAX_N, _gram_pays

    dense = np.zeros((200, 10))
    assert _gram_pays(dense, 200, width=2000)
    assert not _gram_pays(dense, 200, width=199)  # more points than columns
    big = np.zeros((DENSE_GRAM_MAX_N + 1, 1))
    assert not _gram_pays(big, DENSE_GRAM_MAX_N + 1, width=10**6)
    assert not _gram_pays(dense, 1000, width=10**5)  # 10^11 multiply-adds to form it
    sparse = sp.csr_matrix((GRAM_MAX_N, 1))
    assert _gram_pays(sparse, GRAM_MAX_N, width=10**6)
    assert not _gram_pays(sp.csr_matrix((GRAM_MAX_N + 1, 1)), GRAM_MAX_N + 1, width=10**6)
    on_disk = RowBlocks.__new__(RowBlocks)  # only its type is read
    assert not _gram_pays(on_disk, 200, width=2000)
    # the same solution either way, on factors whose columns outnumber the points
    bank, _, _, y = factored_problem(3)
    theta = np.full(5, 0.2)
    auto, factors = (
        solve_factored_svm(bank.train, bank.offsets, theta, y, 1.0, tol=1e-9, method=m)
        for m in ("auto", "factors")
    )
    assert bank.train.shape[1] >= len(y)
    assert auto.objective == pytest.approx(factors.objective, rel=1e-8)


# ------------------------------------------------------------ wrapper methods
@pytest.mark.parametrize("name", ["simplemkl", "silp", "level"])
@pytest.mark.parametrize("seed, C", [(0, 1.0), (1, 3.0)])
def test_l1_mkl_on_factors_matches_cvxpy(name, seed, C):
    bank, K, _, y = factored_problem(seed)
    value, weights = reference.l1_mkl(K, y, C, intercept_sq=intercept_sq(K))
    extra = {"silp": {"tol": 2e-8, "max_iter": 300}, "simplemkl": {"tol": 1e-8, "max_iter": 300}}
    est = fit(name, bank, y, C=C, **extra.get(name, {}))
    assert est.objective_ == pytest.approx(value, rel=1e-5)
    np.testing.assert_allclose(est.weights_, weights, atol=1e-3)


@pytest.mark.parametrize("name", ["lp_analytic", "lp_newton", "lp_cutting_plane"])
@pytest.mark.parametrize("p", [4 / 3, 2.0])
def test_lp_mkl_on_factors_matches_cvxpy(name, p):
    bank, K, _, y = factored_problem(2)
    value, weights = reference.lp_mkl(K, y, 1.0, p, intercept_sq=intercept_sq(K))
    est = fit(name, bank, y, C=1.0, p=p)
    assert est.objective_ == pytest.approx(value, rel=1e-5)
    np.testing.assert_allclose(est.weights_, weights, atol=1e-3)


def test_gmkl_on_factors_matches_cvxpy():
    bank, K, _, y = factored_problem(3)
    value, weights = reference.gmkl(K, y, 1.0, 0.5, intercept_sq=intercept_sq(K))
    est = fit("gmkl", bank, y, C=1.0, v=0.5)
    assert est.objective_ == pytest.approx(value, rel=1e-5)
    np.testing.assert_allclose(est.weights_, weights, atol=1e-3)


def test_uniform_on_factors_is_the_bias_free_svm_on_the_average_kernel():
    bank, K, _, y = factored_problem(4)
    value, _ = reference.svm_dual_value(K.mean(0), y, 2.0, intercept_sq=intercept_sq(K))
    est = fit("uniform", bank, y, C=2.0, tol=1e-9)
    assert est.objective_ == pytest.approx(value, rel=1e-6)


def test_smkl_on_factors_matches_cvxpy():
    """SMKL is bias-free on both paths: the same f_lambda as on the dense bank."""
    bank, K, _, y = factored_problem(5, n=30, M=4)
    scale = 30 / np.trace(K, axis1=1, axis2=2)  # unit mean diagonal, as the dense test
    K = K * scale[:, None, None]
    bank = FactorBank([Z * np.sqrt(c) for Z, c in zip(exact_factors(K), scale, strict=True)])
    value, weights = reference.smkl_f_lambda(K, y, 1.0, 1.0)
    est = fit("smkl", bank, y, C=1.0, smoothing=1.0, tol=1e-9, max_iter=10000)
    assert est.objective_ == pytest.approx(value, rel=1e-4)
    assert (est.objective_ - value) / abs(est.objective_) <= est.gap_ + 1e-8
    # the theory step of Algorithm 2 converges slowly (issue 15): weights within 2e-3
    np.testing.assert_allclose(est.weights_, weights, atol=2e-3)


@pytest.mark.parametrize("trace_normalise", [True, False])
def test_easymkl_on_factors_solves_the_same_margin_problem_as_on_the_dense_bank(trace_normalise):
    bank, K, K_test, y = factored_problem(6)
    lam = 0.2
    scales = 1 / np.trace(K, axis1=1, axis2=2) if trace_normalise else np.ones(len(K))
    ref_value, _ = reference.komd((1 - lam) * np.tensordot(scales, K, 1) + lam * np.eye(len(y)), y)
    # the Frank-Wolfe gap is a loose certificate (first order in the distance to
    # gamma*, while the value error is second order): 1e-6 leaves the value at 1e-12
    options = dict(lam=lam, C=1.0, trace_normalise=trace_normalise)
    factored = fit("easymkl", bank, y, tol=1e-6, **options)
    dense = fit("easymkl", K, y, tol=1e-8, **options)
    assert factored.objective_ == pytest.approx(ref_value, rel=1e-7)
    assert factored.gap_ <= 1e-6 and factored.converged_
    np.testing.assert_allclose(factored.weights_, dense.weights_, atol=1e-4)


def test_komd_by_projected_gradient_matches_libsvm():
    bank, K, _, y = factored_problem(7)
    Km = K.mean(0) + 0.1 * np.eye(len(y))
    from mkl.solvers.komd import komd_margin_factored

    got = komd_margin_factored(lambda v: Km @ v, y, tol=1e-7)
    want = komd_margin(Km, y, tol=1e-9)
    assert got.converged and got.gap <= 1e-7
    assert got.value == pytest.approx(want.value, rel=1e-9)
    assert np.all(got.gamma >= 0)
    assert got.gamma[y > 0].sum() == pytest.approx(1) and got.gamma[y < 0].sum() == pytest.approx(1)


# ------------------------------------------------------------ prediction
@pytest.mark.parametrize("name", ["uniform", "level", "lp_analytic", "easymkl", "single_best"])
def test_factored_predictions_equal_the_dense_kernels_they_represent(name):
    bank, K, K_test, y = factored_problem(8)
    est = fit(name, bank, y, C=1.0)
    scores = est.decision_function(bank)
    theta = est.weights_
    beta = est.dual_coef_
    dense_scores = np.tensordot(theta, K_test, 1) @ beta + est.intercept_
    np.testing.assert_allclose(scores, dense_scores, rtol=1e-8, atol=1e-8)
    assert set(est.predict(bank)) <= set(y)


def test_sparse_and_dense_factors_give_the_same_model():
    bank, _, _, y = factored_problem(9)
    sparse = FactorBank(
        [sp.csr_matrix(bank.factor(m)) for m in range(5)],
        [sp.csr_matrix(bank.factor(m, "test")) for m in range(5)],
    )
    a = fit("level", bank, y, C=1.0, tol=1e-6)
    b = fit("level", sparse, y, C=1.0, tol=1e-6)
    assert b.objective_ == pytest.approx(a.objective_, rel=1e-7)
    np.testing.assert_allclose(a.decision_function(bank), b.decision_function(sparse), atol=1e-6)


def test_one_vs_rest_on_factors():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 3))
    y = np.argmax(X, axis=1)
    bank = FactorBank([X[:, [j]] for j in range(3)] + [X], [X[:, [j]] for j in range(3)] + [X])
    est = mkl.make_estimator("level", C=10.0).fit(bank, y)
    assert est.weights_.shape == (3, 4)
    assert (est.predict(bank) == y).mean() > 0.9


def test_rank_one_kernels_from_a_sparse_term_matrix():
    rng = np.random.default_rng(0)
    X = sp.random(200, 300, density=0.05, random_state=1, format="csr")
    w = rng.normal(size=300)
    y = np.where(X @ w > 0, 1, -1)
    bank = FactorBank.from_matrix(X[:150], 1, test=X[150:])
    assert bank.n_kernels == 300 and bank.is_sparse
    est = mkl.make_estimator("lp_analytic", C=10.0, p=2.0).fit(bank, y[:150])
    assert est.converged_
    assert (est.predict(bank) == y[150:]).mean() > 0.6


# ------------------------------------------------------------ bad input
def test_bad_factor_banks_are_named():
    Z = np.ones((10, 2))
    with pytest.raises(ValueError, match=r"train\[1\] has 9 rows but train\[0\] has 10"):
        FactorBank([Z, np.ones((9, 1))])
    with pytest.raises(ValueError, match=r"test\[0\] has rank 3 but train\[0\] has rank 2"):
        FactorBank([Z], [np.ones((4, 3))])
    bad = Z.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"train\[0\] contains NaN or inf"):
        FactorBank([bad])
    with pytest.raises(ValueError, match=r"train\[0\] must be 2-D.*z\[:, None\]"):
        FactorBank([np.ones(10)])
    # entries whose squares summed over the points overflow: once scipy's linprog's
    # "A_ub must not contain values inf" deep inside SILP
    with pytest.raises(ValueError, match=r"Z has entries up to 1e\+200: .* overflow float64"):
        FactorBank.from_matrix(Z * 1e200, 1)
    with pytest.raises(ValueError, match="overflow float32"):
        FactorBank.from_matrix(Z.astype(np.float32) * 1e17, 1)
    FactorBank.from_matrix(Z * 1e100, 1)  # large but summable: kept
    y = np.array([0, 1] * 5)
    with pytest.raises(ValueError, match="every kernel of the FactorBank is zero"):
        mkl.make_estimator("level").fit(FactorBank.from_matrix(np.zeros((10, 2)), 1), y)
    with pytest.raises(ValueError, match="list of M factors"):
        FactorBank(Z)
    with pytest.raises(ValueError, match="does not divide"):
        FactorBank.from_matrix(np.ones((5, 7)), 2)
    with pytest.raises(ValueError, match=r"test\[0\] contains NaN"):
        FactorBank([Z], [np.full((3, 2), np.inf)])


@pytest.mark.parametrize("name", ["memo", "eskl", "indsvm", "flip"])
def test_methods_needing_kernel_matrices_refuse_a_factor_bank(name):
    bank, _, _, y = factored_problem(0)
    with pytest.raises(ValueError, match="cannot use a FactorBank.*KernelBank"):
        mkl.make_estimator(name).fit(bank, y)


def test_predicting_across_representations_is_refused():
    bank, K, K_test, y = factored_problem(0)
    est = mkl.make_estimator("uniform").fit(bank, y)
    with pytest.raises(ValueError, match="fitted on a FactorBank"):
        est.predict(K_test)
    other = FactorBank(
        [bank.factor(m)[:, :1] for m in range(5)], [bank.factor(m, "test")[:, :1] for m in range(5)]
    )
    with pytest.raises(ValueError, match="ranks"):
        est.predict(other)
    dense = mkl.make_estimator("uniform").fit(K, y)
    with pytest.raises(ValueError, match="fitted on kernel matrices"):
        dense.predict(bank)

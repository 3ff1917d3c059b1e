"""Every convex MKL formulation against an independent CVXPY + Clarabel solution
of the same problem: optimal value to 1e-5 relative, weights to 1e-3."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import mkl
from mkl.algorithms.domains import ElasticNetBall, LpBall, Simplex

from . import reference
from .conftest import random_problem, single_feature_bank

PRECISE = {"tol": 1e-9, "svm_tol": 1e-8, "max_iter": 3000}
# The level method's (and SILP's) lower bound comes from the multipliers of the
# cutting-plane LP; at HiGHS's default 1e-7 tolerances it stalled near 6e-8
# relative and the method wandered for 1500 iterations when asked for 1e-9
# (test_l1_cutting_plane_methods_certify_a_1e9_gap); domains.Simplex now asks
# HiGHS for 1e-10.
CUTTING_PLANE_TOL = PRECISE["tol"]
PRECISE_BY_METHOD: dict = {}


def problem(seed, n=50, M=6, d=4):
    _, y, K = random_problem(np.random.default_rng(seed), n=n, d=d, M=M)
    return K, y


def fit(name, K, y, **params):
    """Fit at high precision (the PRECISE settings the estimator takes)."""
    accepted = mkl.make_estimator(name).get_params()
    precise = {k: v for k, v in PRECISE.items() if k in accepted}
    precise.update(PRECISE_BY_METHOD.get(name, {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return mkl.make_estimator(name, **{**precise, **params}).fit(K, y)


def assert_matches(est, ref_value, ref_weights, rel=1e-5, weights_atol=1e-3):
    assert est.objective_ == pytest.approx(ref_value, rel=rel)
    np.testing.assert_allclose(est.weights_, ref_weights, atol=weights_atol)


@pytest.mark.parametrize("name", ["simplemkl", "silp", "level"])
@pytest.mark.parametrize("seed, C", [(0, 1.0), (1, 10.0), (2, 0.3)])
def test_l1_mkl_matches_cvxpy(name, seed, C):
    K, y = problem(seed)
    value, weights = reference.l1_mkl(K, y, C)
    # SimpleMKL's gap stalls near 1e-8, the precision of the J evaluations; SILP's
    # near 4e-8-8e-8 (the HiGHS tolerance, see CUTTING_PLANE_TOL): at 2e-8 it runs
    # to max_iter on seeds 1 and 2 (2 s), for weights within 3e-4 (1e-3 at 1e-7)
    extra = {"silp": {"tol": 2e-8, "max_iter": 300}, "simplemkl": {"tol": 1e-8, "max_iter": 300}}
    extra = extra.get(name, {})
    est = fit(name, K, y, C=C, **extra)
    assert_matches(est, value, weights)
    assert est.weights_.sum() == pytest.approx(1.0)
    if name == "level":
        assert est.converged_ and est.gap_ <= CUTTING_PLANE_TOL


@pytest.mark.parametrize("name", ["lp_analytic", "lp_newton", "lp_cutting_plane"])
@pytest.mark.parametrize("p", [4 / 3, 2.0, 4.0])
@pytest.mark.parametrize("seed, C", [(3, 1.0), (4, 5.0)])
def test_lp_mkl_matches_cvxpy(name, p, seed, C):
    K, y = problem(seed, M=5)
    value, weights = reference.lp_mkl(K, y, C, p)
    est = fit(name, K, y, C=C, p=p)
    assert_matches(est, value, weights)
    assert np.linalg.norm(est.weights_, p) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("v", [0.0, 0.5, 0.9])
@pytest.mark.parametrize("seed, C", [(5, 1.0), (6, 10.0)])
def test_gmkl_matches_cvxpy(v, seed, C):
    K, y = problem(seed, M=5)
    if v == 0.0:
        value, weights = reference.lp_mkl(K, y, C, 2.0)
    else:
        value, weights = reference.gmkl(K, y, C, v)
    est = fit("gmkl", K, y, C=C, v=v)
    assert_matches(est, value, weights)
    assert ElasticNetBall(v).value(est.weights_) <= 1 + 1e-9


def test_larger_problem_l1_and_lp(rng):
    _, y, K = random_problem(rng, n=80, d=6, M=10)
    value, weights = reference.l1_mkl(K, y, 2.0)
    level = fit("level", K, y, C=2.0)
    assert_matches(level, value, weights)
    assert level.converged_ and level.gap_ <= CUTTING_PLANE_TOL
    value, weights = reference.lp_mkl(K, y, 2.0, 2.0)
    lp = fit("lp_newton", K, y, C=2.0, p=2.0)
    assert_matches(lp, value, weights)
    assert lp.converged_ and lp.gap_ <= PRECISE["tol"]


@pytest.mark.parametrize("name", ["level", "silp"])
def test_l1_cutting_plane_methods_certify_a_1e9_gap(name):
    K, y = problem(9)
    est = fit(name, K, y, C=1.0, tol=1e-9, max_iter=60)
    assert est.converged_ and est.gap_ <= 1e-9


# ------------------------------------------------------------- cross-checks
def test_lp_approaches_l1_as_p_goes_to_one():
    K, y = problem(7)
    l1 = fit("level", K, y, C=1.0).objective_
    gaps = [
        abs(fit("lp_analytic", K, y, C=1.0, p=p).objective_ - l1) / l1 for p in (2.0, 1.2, 1.02)
    ]
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] < 0.02


def test_gmkl_with_v_zero_is_lp_with_p_two():
    K, y = problem(8)
    a = fit("gmkl", K, y, C=1.0, v=0.0)
    b = fit("lp_analytic", K, y, C=1.0, p=2.0)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-5)
    np.testing.assert_allclose(a.weights_, b.weights_, atol=1e-3)


def test_gmkl_with_v_one_is_l1():
    K, y = problem(9)
    a = fit("gmkl", K, y, C=1.0, v=1.0, max_iter=60)
    b = fit("level", K, y, C=1.0)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-5)
    # the level method over the simplex written as an elastic-net ball, its
    # subproblems solved by Clarabel, certifies 1e-9, as the level method does
    assert a.converged_ and a.gap_ <= PRECISE["tol"]


@pytest.mark.parametrize("seed, C", [(0, 1.0), (1, 10.0), (2, 0.3)])
def test_spg_on_the_simplex_matches_cvxpy(seed, C):
    """SPG-GMKL at v = 1 solves L1-MKL, its gap certified to 1e-9."""
    K, y = problem(seed)
    value, weights = reference.l1_mkl(K, y, C)
    est = fit("spg", K, y, C=C)
    assert_matches(est, value, weights)
    assert est.converged_ and est.gap_ <= PRECISE["tol"]
    assert est.weights_.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("v", [0.0, 0.5, 0.9])
@pytest.mark.parametrize("seed, C", [(5, 1.0), (6, 10.0)])
def test_spg_on_the_elastic_net_matches_cvxpy(v, seed, C):
    K, y = problem(seed, M=5)
    if v == 0.0:
        value, weights = reference.lp_mkl(K, y, C, 2.0)
    else:
        value, weights = reference.gmkl(K, y, C, v)
    est = fit("spg", K, y, C=C, v=v)
    assert_matches(est, value, weights)
    assert est.converged_ and est.gap_ <= PRECISE["tol"]
    assert ElasticNetBall(v).value(est.weights_) <= 1 + 1e-9


@pytest.mark.parametrize("v", [1.0, 0.5])
@pytest.mark.parametrize("seed, C", [(11, 1.0), (12, 10.0)])
def test_spg_gap_bounds_the_distance_to_the_cvxpy_optimum(v, seed, C):
    """At the default tol the SVMs before the last are solved loosely (libsvm's
    tolerance at the gap so far): the gap the fit reports must still bound its
    objective's distance to the true optimum, and close below tol."""
    K, y = problem(seed, M=5)
    value = reference.l1_mkl(K, y, C)[0] if v == 1.0 else reference.gmkl(K, y, C, v)[0]
    est = mkl.make_estimator("spg", C=C, v=v, tol=1e-2, svm_tol=1e-6).fit(K, y)
    assert est.converged_ and est.gap_ <= 1e-2
    assert est.objective_ >= value * (1 - 1e-7)
    assert (est.objective_ - value) / est.objective_ <= est.gap_ + 1e-7
    assert est.history_[-1]["svm_solves"] > 1


@pytest.mark.parametrize(
    "name, params",
    [("level", {}), ("level", {"interleaved": True}), ("gmkl", {"v": 0.5}), ("gmkl", {"v": 0.0})],
)
@pytest.mark.parametrize("seed, C", [(0, 1.0), (1, 10.0)])
def test_inexact_level_and_gmkl_match_cvxpy(monkeypatch, name, params, seed, C):
    """``inexact=True``: the points solved warm to the gap's precision, the fit
    still certifies 1e-9 and meets the independent optimum. Without
    interleaving some points were solved loosely (above svm_tol); interleaved,
    these problems converge in the chunks and their confirming solve."""
    asked = record_refine_tolerances(monkeypatch)
    K, y = problem(seed, M=5)
    v = params.get("v", 1.0)
    if v == 1.0:
        value, weights = reference.l1_mkl(K, y, C)
    elif v == 0.0:
        value, weights = reference.lp_mkl(K, y, C, 2.0)
    else:
        value, weights = reference.gmkl(K, y, C, v)
    est = fit(name, K, y, C=C, inexact=True, **params)
    assert_matches(est, value, weights)
    assert est.converged_ and est.gap_ <= PRECISE["tol"]
    if not params.get("interleaved"):
        assert max(asked) > PRECISE["svm_tol"]


def record_refine_tolerances(monkeypatch) -> list[float]:
    """The SVM tolerances the fit's inexact points ask ``Oracle.refine`` for."""
    from mkl.algorithms.wrapper import Oracle

    asked = []
    refine = Oracle.refine

    def recording(self, theta, tol):
        asked.append(tol)
        return refine(self, theta, tol)

    monkeypatch.setattr(Oracle, "refine", recording)
    return asked


@pytest.mark.parametrize("name, v", [("level", 1.0), ("gmkl", 0.5)])
@pytest.mark.parametrize("seed, C", [(11, 1.0), (12, 10.0)])
def test_inexact_level_gap_bounds_the_distance_to_the_cvxpy_optimum(monkeypatch, name, v, seed, C):
    """At the default tol the points are solved loosely (libsvm's tolerance at
    the gap so far, above svm_tol): the reported gap still bounds the distance
    of the objective to the true optimum, and closes below tol."""
    asked = record_refine_tolerances(monkeypatch)
    K, y = problem(seed, M=5)
    value = reference.l1_mkl(K, y, C)[0] if v == 1.0 else reference.gmkl(K, y, C, v)[0]
    params = {"v": v} if name == "gmkl" else {}
    est = mkl.make_estimator(name, C=C, tol=1e-2, svm_tol=1e-6, inexact=True, **params)
    est.fit(K, y)
    assert est.converged_ and est.gap_ <= 1e-2
    assert est.objective_ >= value * (1 - 1e-7)
    assert (est.objective_ - value) / est.objective_ <= est.gap_ + 1e-7
    assert asked and max(asked) > 1e-6  # at least one point was solved loosely


def test_inexact_level_on_factors_matches_cvxpy(monkeypatch):
    from mkl.banks.factor_bank import FactorBank

    from .test_factor_banks import exact_factors

    asked = record_refine_tolerances(monkeypatch)
    K, y = problem(14, n=30, M=3)
    b2 = float(np.mean(np.einsum("mii->mi", K)))
    value, _ = reference.l1_mkl(K, y, 1.0, intercept_sq=b2)
    est = fit("level", FactorBank(exact_factors(K)), y, C=1.0, inexact=True)
    assert est.objective_ == pytest.approx(value, rel=1e-5)
    assert est.converged_ and max(asked) > PRECISE["svm_tol"]


def test_inexact_is_a_parameter_of_level_and_gmkl_off_by_default():
    for name in ("level", "gmkl"):
        assert mkl.make_estimator(name).get_params()["inexact"] is False
        assert mkl.make_estimator(name, inexact=True).inexact is True
    K, y = problem(15)
    with pytest.raises(ValueError, match="'inexact' parameter"):
        mkl.make_estimator("level", inexact="yes").fit(K, y)


def test_inexact_point_carries_an_upper_bound_on_j():
    """Oracle.refine with a loose tolerance returns an inexact point whose J
    (the SVM primal at its multipliers) is at least the exact J(theta), and
    whose dual bound is at most min J; at svm_tol the point is exact."""
    from mkl.algorithms.wrapper import Oracle, dual_bound
    from mkl.solvers.inner import inner_problem

    K, y = problem(13, M=4)
    y = np.where(y == y.max(), 1, -1)
    domain = Simplex()
    oracle = Oracle(inner_problem(K), y, 1.0, 1e-8, domain=domain, inexact=True)
    oracle.evaluate(domain.initial(4), K.mean(axis=0))
    theta = np.array([0.7, 0.1, 0.1, 0.1])
    loose = oracle.refine(theta, 0.5)
    assert not loose.exact
    exact_value = reference.svm_dual_value(np.tensordot(theta, K, axes=1), y, 1.0)[0]
    assert loose.J >= exact_value * (1 - 1e-9)
    assert dual_bound(loose, oracle.q(loose), domain) <= reference.l1_mkl(K, y, 1.0)[0] + 1e-7
    tight = oracle.refine(theta, 0.0)
    assert tight.exact and tight.J == pytest.approx(exact_value, rel=1e-6)


@pytest.mark.parametrize(
    "bad, message",
    [({"v": 1.5}, "'v' parameter"), ({"v": -0.1}, "'v' parameter"), ({"memory": 0}, "'memory'")],
)
def test_spg_bad_parameters_are_named(bad, message):
    K, y = problem(0)
    with pytest.raises(ValueError, match=message):
        mkl.make_estimator("spg", **bad).fit(K, y)


@pytest.mark.parametrize("v", [0.0, 0.3, 0.9, 1.0])
def test_elastic_net_projection_matches_cvxpy(v):
    """The Euclidean projection SPG uses, against CVXPY's on random points
    inside and outside the set."""
    import cvxpy as cp

    rng = np.random.default_rng(int(10 * v))
    domain = ElasticNetBall(v)
    for scale in (0.1, 2.0, 50.0):
        z = scale * rng.normal(size=7)
        theta = cp.Variable(7)
        constraint = v * cp.sum(theta) + (1 - v) * cp.sum_squares(theta) <= 1
        cp.Problem(cp.Minimize(cp.sum_squares(theta - z)), [theta >= 0, constraint]).solve(
            solver="CLARABEL"
        )
        np.testing.assert_allclose(domain.project(z), theta.value, atol=1e-4 * max(1, scale))
        assert domain.value(domain.project(z)) <= 1 + 1e-12


def test_simplex_projection_is_exact_for_large_shifts():
    """A common shift leaves the projection unchanged, however large (the
    spectral steps of SPG reach 1e10 / spread)."""
    z = np.array([0.3, -0.2, 0.9, 0.1])
    expected = Simplex().project(z)
    np.testing.assert_allclose(Simplex().project(z + 1e12), expected, atol=1e-3)
    np.testing.assert_allclose(Simplex().project(z * 1e-12 + 5.0), np.full(4, 0.25), atol=1e-9)


@pytest.mark.parametrize(
    "name, params",
    [
        ("spg", {}),
        ("spg", {"v": 0.5}),
        ("simplemkl", {}),
        ("silp", {}),
        ("level", {}),
        ("lp_newton", {"p": 2}),
        ("lp_analytic", {"p": 2}),
        ("lp_cutting_plane", {"p": 2}),
        ("gmkl", {"v": 0.5}),
    ],
)
def test_gap_in_history_shrinks_and_bounds_the_objective(name, params):
    K, y = problem(10)
    est = fit(name, K, y, C=1.0, tol=1e-4, max_iter=300, **params)
    gaps = [h["gap"] for h in est.history_]
    assert gaps[-1] <= 1e-4 and est.converged_
    assert gaps[-1] < gaps[0]
    best = [h["best_objective"] for h in est.history_]
    assert all(b2 <= b1 + 1e-12 for b1, b2 in zip(best, best[1:], strict=False))
    for h in est.history_:
        assert {"objective", "gap", "weights_change", "svm_solves", "seconds"} <= set(h)


def test_max_iter_stops_with_a_warning_and_converged_false():
    K, y = problem(11)
    with pytest.warns(ConvergenceWarning, match="stopped at max_iter=2"):
        est = mkl.make_estimator("simplemkl", tol=1e-9, max_iter=2).fit(K, y)
    assert not est.converged_ and est.n_iter_ == 2


@pytest.mark.parametrize(
    "name, params", [("level", {"tau": 0.9}), ("gmkl", {"tau": 0.9, "v": 0.5})]
)
def test_weight_change_rule_stops_where_no_weight_moves_by_weight_tol(name, params):
    """Yang et al. 2011's rule (sec. VI): with ``tol=0`` the gap plays no part;
    the loop stops at the first iterate whose weights moved by less than
    ``weight_tol`` times the largest weight since the previous one, and not before."""
    K, y = problem(13)
    est = mkl.make_estimator(name, C=10.0, tol=0.0, weight_tol=1e-3, **params).fit(K, y)
    changes = [h["relative_weights_change"] for h in est.history_]
    assert est.converged_ and changes[-1] < 1e-3
    assert all(c >= 1e-3 for c in changes[1:-1])  # the first iterate has no change (NaN)
    assert est.history_[-1]["gap"] > 0  # stopped by the rule, not by a closed gap
    # without the rule the same fit runs on, through the same iterates
    longer = mkl.make_estimator(name, C=10.0, tol=1e-9, max_iter=len(changes) + 5, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        longer.fit(K, y)
    assert longer.n_iter_ > est.n_iter_
    np.testing.assert_allclose(
        [h["objective"] for h in longer.history_[: len(changes)]],
        [h["objective"] for h in est.history_],
        rtol=1e-12,
    )


def test_papers_rule_tests_nothing_before_the_first_step():
    """At a small C the relative gap is within 1% at the uniform start (J is
    mostly 1'alpha there), while the optimum keeps 2 of 36 kernels. With
    ``weight_tol`` (the papers' rule, Algorithm 1's repeat ... until) the loop
    takes a step before any test, so the uniform start is never the answer."""
    K, y = single_feature_bank(1)
    est = mkl.make_estimator("level", C=0.1, tau=0.9, tol=1e-2, weight_tol=1e-3).fit(K, y)
    assert est.history_[0]["gap"] <= 1e-2  # the gap rule alone stops at the start
    assert est.n_iter_ >= 2
    without = mkl.make_estimator("level", C=0.1, tau=0.9, tol=1e-2).fit(K, y)
    assert without.n_iter_ == 1 and without.n_selected_ == K.shape[0]


@pytest.mark.parametrize("name, params", [("level", {}), ("gmkl", {"v": 0.5})])
def test_papers_rule_counts_kernels_at_the_converged_solution(name, params):
    """The rule of the yang2011_gmkl experiment (level parameter 0.3, weights
    relative 1e-3, no gap) stops where the count is that of a 1e-9 gap, on a
    problem whose uniform start meets the 1% gap with every kernel kept."""
    K, y = single_feature_bank(1)
    est = mkl.make_estimator(name, C=0.1, tau=0.3, tol=0, weight_tol=1e-3, **params).fit(K, y)
    optimum = fit(name, K, y, C=0.1, **params)
    assert est.history_[0]["gap"] <= 1e-2
    assert est.converged_ and optimum.gap_ <= PRECISE["tol"]
    assert est.n_selected_ == optimum.n_selected_ <= 4


def test_weight_tol_is_relative_to_the_largest_weight():
    """With the level parameter 0.9 -> 0.99 (the gap is within 1% from the
    start at this C) the steps are short: an absolute max |theta change| <
    1e-3 holds about 70 iterations before the change is 1e-3 of the largest
    weight, where the rule stops."""
    K, y = single_feature_bank(1)
    est = mkl.make_estimator("gmkl", C=1.0, v=0.5, tau=0.9, tol=0, weight_tol=1e-3).fit(K, y)
    rows = est.history_
    assert est.converged_ and rows[-1]["relative_weights_change"] < 1e-3
    assert all(r["relative_weights_change"] >= 1e-3 for r in rows[1:-1])
    absolute_stop = next(r["iteration"] for r in rows[1:] if r["weights_change"] < 1e-3)
    assert absolute_stop < est.n_iter_ - 20


def test_weight_tol_is_validated():
    K, y = problem(13)
    with pytest.raises(ValueError, match="weight_tol"):
        mkl.make_estimator("level", weight_tol=-1.0).fit(K, y)


def test_sparse_l1_weights_are_reported_as_zero_and_counted():
    rng = np.random.default_rng(12)
    n = 60
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    noise = [np.outer(v, v) for v in rng.normal(size=(4, n))]
    K = np.stack([np.outer(X[:, 0], X[:, 0]) + 1e-3 * np.eye(n), *noise])
    est = fit("silp", K, y, C=1.0, tol=1e-6, max_iter=300)
    assert est.weights_[0] > 0.5
    assert est.n_selected_ == int((est.weights_ > 0).sum()) < 5


def test_support_functions_are_the_maxima_over_the_sets(rng):
    q = rng.uniform(0, 3, size=7)
    assert Simplex().support(q) == q.max()
    lp = LpBall(3.0)
    theta = (q / np.linalg.norm(q, 1.5)) ** (1 / 2)
    assert lp.support(q) == pytest.approx(theta @ q)
    assert np.linalg.norm(theta, 3.0) == pytest.approx(1.0)
    for v in (0.2, 0.7):
        en = ElasticNetBall(v)
        best = max((s := rng.dirichlet(np.ones(7))) @ q / _scale_onto(en, s) for _ in range(4000))
        assert en.support(q) >= best - 1e-9
        assert en.support(q) <= best * 1.05


def _scale_onto(domain, theta):
    from mkl.algorithms.domains import _elastic_scale

    return _elastic_scale(domain.v, theta)


@pytest.mark.parametrize("bad", [{"p": 1.0}, {"p": -2}, {"p": float("inf")}])
def test_bad_p_is_named(bad):
    K, y = problem(0)
    with pytest.raises(ValueError, match="p must be a finite number > 1"):
        mkl.make_estimator("lp_analytic", **bad).fit(K, y)


def test_bad_v_is_named():
    K, y = problem(0)
    with pytest.raises(ValueError, match=r"v must be in \[0, 1\]"):
        mkl.make_estimator("gmkl", v=1.5).fit(K, y)


# ------------------------------------------------------------- SMKL
def smkl_problem(seed):
    _, y, K = random_problem(np.random.default_rng(seed), n=30, M=4)
    return K / np.trace(K, axis1=1, axis2=2)[:, None, None] * 30, y  # unit mean diagonal


@pytest.mark.parametrize("seed, C, smoothing", [(1, 1.0, 1.0), (2, 0.5, 0.5)])
def test_smkl_f_lambda_matches_cvxpy(seed, C, smoothing):
    K, y = smkl_problem(seed)
    value, weights = reference.smkl_f_lambda(K, y, C, smoothing)
    # 10000 steps (3 s): f_lambda within 2e-6 and the weights within 3e-4 on both
    # problems; 20000 (7 s) gain nothing checked here (gap 2e-4 and 5e-7 at the end)
    est = fit("smkl", K, y, C=C, smoothing=smoothing, tol=1e-9, max_iter=10000)
    assert est.objective_ == pytest.approx(value, rel=1e-4)
    assert (est.objective_ - value) / abs(est.objective_) <= est.gap_ + 1e-8  # certified
    np.testing.assert_allclose(est.weights_, weights, atol=1e-3)
    assert est.weights_.sum() == pytest.approx(1.0)
    assert est.smoothing_ == smoothing


@pytest.mark.parametrize("step", ["adaptive", "theory"])
def test_smkl_gap_shrinks_and_defaults_follow_the_paper(step):
    K, y = smkl_problem(3)
    est = fit("smkl", K, y, C=1.0, tol=1e-9, max_iter=300, step=step)
    gaps = [h["gap"] for h in est.history_]
    assert gaps[-1] < 0.5 * gaps[0]
    best = [h["best_objective"] for h in est.history_]
    assert all(b2 <= b1 for b1, b2 in zip(best, best[1:], strict=False))
    # default smoothing: balances Theorem 4's two terms after max_iter steps
    lam_max = max(np.linalg.eigvalsh(Km)[-1] for Km in K)
    expected = 2 * np.sqrt(2) * 30 * lam_max / (301 * np.sqrt(np.log(4)))
    assert est.smoothing_ == pytest.approx(expected)
    corollary_3 = lam_max + 2 * 30 * lam_max**2 / expected
    if step == "theory":
        assert est.lipschitz_ == pytest.approx(corollary_3)
    else:  # backtracked: never above twice the worst case, far below it in practice
        assert 0 < est.lipschitz_ <= 2 * corollary_3
    assert set(est.predict(K)) <= {-1, 1}
    scaled = fit("smkl", K, y, C=1.0, tol=1e-9, max_iter=300, step=step, smoothing_scale=0.1)
    assert scaled.smoothing_ == pytest.approx(0.1 * expected)
    # an explicit lambda wins over the scale
    assert (
        fit("smkl", K, y, C=1.0, max_iter=5, smoothing=2.0, smoothing_scale=0.1).smoothing_ == 2.0
    )


def smkl_problem_larger(seed, n=60, M=8):
    _, y, K = random_problem(np.random.default_rng(seed), n=n, M=M)
    return K / np.trace(K, axis1=1, axis2=2)[:, None, None] * n, y


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("C, smoothing", [(0.3, 0.1), (1.0, 0.1), (1.0, 1.0), (10.0, 1.0)])
def test_smkl_adaptive_step_reaches_the_minimum_of_f_lambda(seed, C, smoothing):
    """Issue 15: within 1e-4 of the minimum of f_lambda in at most 5,000 steps,
    against an independent minimiser (L-BFGS-B), with the gap certifying it."""
    K, y = smkl_problem_larger(seed)
    value, _ = reference.smkl_f_lambda_lbfgs(K, y, C, smoothing)
    est = fit("smkl", K, y, C=C, smoothing=smoothing, tol=1e-6, max_iter=5000)
    assert est.n_iter_ <= 5001
    assert (est.objective_ - value) / abs(value) <= 1e-4
    assert est.objective_ >= value - 1e-9 * abs(value)  # a minimum cannot be beaten
    assert (est.objective_ - value) / abs(est.objective_) <= est.gap_ + 1e-9  # certified


def test_smkl_theory_step_is_algorithm_2_and_slow_where_the_bound_is_loose():
    """The paper's step 1/L (Corollary 3's L) stays above the minimum after
    5,000 steps where the adaptive step converges in far fewer."""
    K, y = smkl_problem_larger(0)
    value, _ = reference.smkl_f_lambda_lbfgs(K, y, 10.0, 1.0)
    theory = fit("smkl", K, y, C=10.0, smoothing=1.0, tol=1e-6, max_iter=5000, step="theory")
    adaptive = fit("smkl", K, y, C=10.0, smoothing=1.0, tol=1e-6, max_iter=5000)
    assert not theory.converged_ and (theory.objective_ - value) / abs(value) > 0.1
    assert adaptive.converged_ and adaptive.n_iter_ < 1000
    assert theory.lipschitz_ > 1e4 * adaptive.lipschitz_


def test_smkl_needs_finite_c():
    K, y = smkl_problem(4)
    with pytest.raises(
        ValueError,
        match=r"'C' parameter of SMKL must be a float in the range \(0\.0, inf\)\. Got None",
    ):
        mkl.make_estimator("smkl", C=None).fit(K, y)
    with pytest.raises(ValueError, match=r"'smoothing' parameter of SMKL must be"):
        mkl.make_estimator("smkl", smoothing=-1).fit(K, y)
    for bad in (0, -1.0, float("nan"), "small", True):
        with pytest.raises(ValueError, match=r"'smoothing_scale' parameter of SMKL must be"):
            mkl.make_estimator("smkl", smoothing_scale=bad).fit(K, y)
    with pytest.raises(ValueError, match=r"'step' parameter of SMKL must be a str among"):
        mkl.make_estimator("smkl", step="fast").fit(K, y)


def test_simplemkl_line_search_survives_inexact_svm_solves(monkeypatch):
    """Inexact SVM solves can make the derivative along the direction
    non-monotone (seen on sonar folds): the search must bisect, not divide by zero."""
    from mkl.algorithms.l1 import SimpleMKL

    K, y = problem(13)
    est = mkl.make_estimator("simplemkl", C=1.0)
    est.fit(K, y)
    from mkl.algorithms.wrapper import Oracle
    from mkl.solvers.inner import DenseKernels

    oracle = Oracle(DenseKernels(K), y, 1.0, 1e-3)
    base = oracle.evaluate(np.full(6, 1 / 6))
    D = np.array([0.1, -0.1, 0.0, 0.0, 0.0, 0.0])
    K_D = oracle.combine(D)
    calls = []

    def fake_trial(oracle_, base_, D_, K_D_, gamma):
        calls.append(gamma)
        return base_, -1.0  # derivative never changes sign

    monkeypatch.setattr(SimpleMKL, "_trial", staticmethod(fake_trial))
    out = est._line_search(oracle, base, D, K_D, 1.0, -1.0, -1.0, base)
    assert out is base and 0 < len(calls) <= 20
    assert all(0 < g < 1 for g in calls)


# --------------------------------------------------------------------------- #
# The simplex's level-method subproblems (dual Newton projection, column generation)


def _cuts(rng, K, M):
    """Cuts S_k - 1/2 q_k'theta as the wrapper methods make them (q >= 0, sparse-ish)."""
    Q = rng.gamma(0.5, 1.0, size=(K, M)) * rng.uniform(0.1, 10.0, size=(K, 1))
    S = rng.uniform(1.0, 5.0, K)
    return S, Q


@pytest.mark.parametrize("seed", range(4))
def test_simplex_projection_matches_cvxpy(seed):
    from mkl.algorithms.domains import project_simplex

    v = np.random.default_rng(seed).normal(size=30) * 0.3
    value, theta = reference._minimise(*_simplex_projection_problem(v))
    got = project_simplex(v)
    assert got.min() >= 0 and got.sum() == pytest.approx(1.0)
    assert np.sum((got - v) ** 2) == pytest.approx(value, rel=1e-7)


def _simplex_projection_problem(v):
    import cvxpy as cp

    theta = cp.Variable(len(v))
    return cp.sum_squares(theta - v), [theta >= 0, cp.sum(theta) == 1], theta


@pytest.mark.parametrize("seed, K, M", [(0, 1, 5), (1, 8, 40), (2, 30, 200), (3, 60, 500)])
def test_level_projection_matches_cvxpy(seed, K, M):
    from mkl.algorithms.domains import project_level_simplex

    rng = np.random.default_rng(seed)
    S, Q = _cuts(rng, K, M)
    lower, _ = Simplex().minimise_model(S, Q)
    theta0 = rng.dirichlet(np.full(M, 0.3))
    upper = float(np.max(S - 0.5 * Q @ theta0))
    level = lower + 0.3 * (upper - lower)
    value, _ = reference.level_projection(theta0, S, Q, level)
    theta = project_level_simplex(theta0, S, Q, level)
    assert theta is not None  # solved by the dual Newton method, not the fallback
    assert theta.min() >= 0 and theta.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.max(S - 0.5 * Q @ theta) <= level + 1e-9 * abs(level)
    assert np.sum((theta - theta0) ** 2) == pytest.approx(value, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("seed, K, M", [(0, 1, 5), (1, 10, 300), (2, 60, 2000)])
def test_cutting_plane_model_by_column_generation_matches_cvxpy(seed, K, M):
    rng = np.random.default_rng(seed)
    S, Q = _cuts(rng, K, M)
    domain = Simplex()
    # the working set carries over as cuts are added: solve the growing models
    for k in range(1, K + 1):
        lower, theta = domain.minimise_model(S[:k], Q[:k])
    value, _ = reference.cutting_plane_minimum(S, Q)
    assert lower == pytest.approx(value, rel=1e-7)
    assert np.max(S - 0.5 * Q @ theta) == pytest.approx(value, rel=1e-7)
    assert theta.min() >= 0 and theta.sum() == pytest.approx(1.0)
    # a fresh domain (no working set) reaches the same minimum
    assert Simplex().minimise_model(S, Q)[0] == pytest.approx(value, rel=1e-7)
    # over FULL_MODEL_MAX_KERNELS kernels the model holds a working set of them,
    # priced in; below, every kernel
    from mkl.algorithms.cut_model import FULL_MODEL_MAX_KERNELS

    held = len(domain._model._columns)
    assert held < M if M > FULL_MODEL_MAX_KERNELS else held == M


@pytest.mark.parametrize(
    "seed, K, M, p", [(0, 1, 5, 4 / 3), (1, 6, 30, 4 / 3), (2, 12, 50, 2.0), (3, 4, 20, 8.0)]
)
def test_lp_ball_subproblems_match_cvxpy(seed, K, M, p):
    """The cutting-plane model and the level projection over the lp ball, its
    norm constraint exact (power cones), against CVXPY's p-norm constraint."""
    rng = np.random.default_rng(seed)
    S, Q = _cuts(rng, K, M)
    domain = LpBall(p)
    lower, theta = domain.minimise_model(S, Q)
    value, _ = reference.lp_ball_model_minimum(S, Q, p)
    assert lower == pytest.approx(value, rel=1e-7)
    # the minimiser, scaled onto the sphere (where J is smallest), attains the model's minimum
    assert np.linalg.norm(theta, p) == pytest.approx(1.0) and theta.min() >= 0
    assert np.max(S - 0.5 * Q @ theta) == pytest.approx(value, rel=1e-6)
    theta0 = domain.initial(M)
    level = value + 0.3 * (np.max(S - 0.5 * Q @ theta0) - value)
    _, projected = reference.lp_ball_level_projection(theta0, S, Q, level, p)
    ours = domain.project_level(theta0, S, Q, level)
    # project_level's point is scaled back onto the sphere; CVXPY's may lie inside
    assert np.max(S - 0.5 * Q @ ours) <= level + 1e-7 * abs(level)
    assert ours == pytest.approx(domain.normalise(np.maximum(projected, 0)), abs=1e-5)


def test_smkl_adaptive_step_ends_on_a_float32_bank():
    """The extrapolated point's value comes from combined products, the trial's
    from a pass: on a float32 bank they differ by rounding, and backtracking must
    neither take that for curvature forever nor stop short of the gap."""
    from mkl.kernels.dense import compute_bank
    from mkl.kernels.specs import KernelSpec

    rng = np.random.default_rng(11)
    X = rng.normal(size=(70, 12))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.5 * rng.normal(size=70) > 0, 1, -1)
    specs = [KernelSpec("gaussian", float(w), normalise="unit_trace") for w in (0.5, 2.0, 8.0)]
    K32, _, _ = compute_bank(specs, X, dtype=np.float32)
    for scale in (1.0, 0.3):
        est = fit("smkl", K32, y, C=100.0, smoothing_scale=scale, tol=0.01, max_iter=500)
        assert np.isfinite(est.objective_)
        assert len(est.history_) <= 501

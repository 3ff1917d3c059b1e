"""The interleaved engine (Kloft et al. 2009, sec. 2.4): weight steps between
chunks of SVM working-set steps (mkl/algorithms/wrapper.py's schedule,
mkl/solvers/smo.py's BankSMO on dense banks, mkl/solvers/coordinate_descent.py's
FactorCD on factors). Checked against CVXPY + Clarabel (tests/reference.py) for
every lp method at the papers' p, SILP, both representations and the three
tasks; the engine's incremental state against fresh computations; its bounds
against exact solves; and the schedule's bookkeeping."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import mkl
from mkl.banks.algebra import combine, quadratic_forms
from mkl.banks.factor_bank import FactorBank
from mkl.solvers.libsvm import solve_one_class_dual, solve_svm_dual, solve_svr_dual
from mkl.solvers.smo import BankSMO
from mkl.solvers.task_duals import CLASSIFICATION, Novelty, Regression

from . import reference
from .conftest import random_problem
from .test_factor_banks import exact_factors

PRECISE = {"tol": 1e-8, "svm_tol": 1e-8, "max_iter": 5000}
LP_METHODS = ["lp_newton", "lp_analytic", "lp_cutting_plane"]


def problem(seed, n=40, M=4):
    _, y, K = random_problem(np.random.default_rng(seed), n=n, d=4, M=M)
    return K, y


def fit(name, data, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return mkl.make_estimator(name, **{**PRECISE, **params}).fit(data, y)


def _mean_diagonal(K):
    return float(np.mean(np.einsum("mii->mi", K)))


# ------------------------------------------------------------ against CVXPY
@pytest.mark.parametrize("name", LP_METHODS)
@pytest.mark.parametrize("p", [32 / 31, 16 / 15, 8 / 7, 4 / 3, 2.0, 4.0])
def test_interleaved_lp_mkl_matches_cvxpy_at_the_papers_p(name, p):
    K, y = problem(1)
    value, weights = reference.lp_mkl(K, y, 1.0, p)
    est = fit(name, K, y, C=1.0, p=p)
    assert est.interleaved and est.history_[-2]["chunks"] > 0
    assert est.objective_ == pytest.approx(value, rel=1e-5)
    np.testing.assert_allclose(est.weights_, weights, atol=2e-3)
    assert est.converged_ and est.gap_ <= PRECISE["tol"]


@pytest.mark.parametrize("name", ["silp", "level"])
def test_interleaved_l1_mkl_matches_cvxpy(name):
    K, y = problem(2)
    value, weights = reference.l1_mkl(K, y, 10.0)
    est = fit(name, K, y, C=10.0, interleaved=True)
    assert est.history_[-2]["chunks"] > 0
    assert est.objective_ == pytest.approx(value, rel=1e-5)
    np.testing.assert_allclose(est.weights_, weights, atol=2e-3)


@pytest.mark.parametrize("name, params", [("lp_newton", {"p": 4 / 3}), ("silp", {})])
@pytest.mark.parametrize("task", ["regression", "novelty"])
def test_interleaved_tasks_match_cvxpy_on_dense_banks(name, params, task):
    K, y = problem(3, n=30, M=3)
    if task == "regression":
        y = np.sin(np.arange(len(y)) / 4.0)
        spec, extra = ("regression", 0.1), {"epsilon": 0.1, "C": 1.0}
    else:
        K = np.stack([K[0], K[1], 0.5 * K[2] + 0.5 * np.eye(K.shape[1])])
        spec, extra = ("novelty", 0.3), {"nu": 0.3}
    C = extra.get("C")
    if name == "silp":
        value, _ = reference.l1_mkl(K, y, C, task=spec)
    else:
        value, _ = reference.lp_mkl(K, y, C, params["p"], task=spec)
    est = fit(name, K, y, task=task, **params, **extra)
    assert est.history_[-2]["chunks"] > 0
    assert est.objective_ == pytest.approx(value, rel=1e-5)


@pytest.mark.parametrize(
    "name, params",
    [("lp_newton", {"p": 8 / 7}), ("silp", {}), ("level", {"interleaved": True})],
)
@pytest.mark.parametrize("task", ["classification", "regression", "novelty"])
def test_interleaved_on_factors_matches_cvxpy(name, params, task):
    """Factors: the bias-free duals of the C-SVM and the SVR (intercept b^2 the
    mean diagonal) by coordinate-descent chunks; the one-class SVM keeps its
    equality by an outer loop and is solved point by point (no chunks)."""
    K, y = problem(4, n=30, M=3)
    bank = FactorBank(exact_factors(K))
    b2 = _mean_diagonal(K)
    extra = {}
    if task == "regression":
        y = np.sin(np.arange(len(y)) / 4.0)
        spec, extra = ("regression", 0.1), {"epsilon": 0.1}
    elif task == "novelty":
        K = np.stack([K[0], K[1], 0.5 * K[2] + 0.5 * np.eye(K.shape[1])])
        bank, b2 = FactorBank(exact_factors(K)), None
        spec, extra = ("novelty", 0.3), {"nu": 0.3}
    else:
        spec = None
    C = None if task == "novelty" else 1.0
    if name in ("silp", "level"):
        value, _ = reference.l1_mkl(K, y, C, intercept_sq=b2, task=spec)
    else:
        value, _ = reference.lp_mkl(K, y, C, params["p"], intercept_sq=b2, task=spec)
    est = fit(name, bank, y, task=task, **({"C": C} if C else {}), **params, **extra)
    chunks = max(row["chunks"] for row in est.history_)
    assert (chunks > 0) == (task != "novelty")
    assert est.objective_ == pytest.approx(value, rel=1e-5)


# ------------------------------------------------------------ the engine's state
@pytest.mark.parametrize(
    "task, exact",
    [
        (CLASSIFICATION, lambda K, y: solve_svm_dual(K, y, 1.0, 1e-10)),
        (Regression(0.1), lambda K, y: solve_svr_dual(K, np.tanh(y * 0.7), 1.0, 0.1, 1e-10)),
        (Novelty(0.3), lambda K, y: solve_one_class_dual(K, 0.3, 1e-10)),
    ],
    ids=["classification", "regression", "novelty"],
)
def test_bank_smo_state_bounds_and_solution(task, exact):
    """After every chunk at changing weights: q_m equals the quadratic forms of
    the chunk's coefficients computed afresh; the primal bound is above J(theta)
    (libsvm's exact value) and the chunk's dual value below it; the final solve
    is libsvm's solution (value and decision values)."""
    K, y = problem(5, n=60, M=4)
    targets = np.tanh(y * 0.7) if task.name == "regression" else y
    engine = BankSMO(K, task.dual_form(targets, 1.0, 60), task, targets, 1.0)
    rng = np.random.default_rng(0)
    for _ in range(6):
        theta = rng.dirichlet(np.ones(4))
        sol, q = engine.advance(theta, 15, 1e-10)
        np.testing.assert_allclose(q, quadratic_forms(K, sol.dual_coef), rtol=1e-9, atol=1e-12)
        J = exact(combine(K, theta), y).objective
        assert sol.objective <= J + 1e-9 <= sol.primal + 2e-9
    K_theta = combine(K, theta)
    sol, _ = engine.solve(theta, 1e-10, track=False)
    ref = exact(K_theta, y)
    assert sol.converged and sol.objective == pytest.approx(ref.objective, rel=1e-8)
    assert sol.primal == pytest.approx(ref.objective, rel=1e-6)
    np.testing.assert_allclose(
        K_theta @ sol.dual_coef + sol.bias, K_theta @ ref.dual_coef + ref.bias, atol=1e-5
    )


def test_an_interleaved_fit_reads_less_of_the_bank_than_the_wrapper():
    """The work counted in the history (passes over the bank, the engine's rows
    read as fractions of one): interleaving needs no pass per weight step."""
    K, y = problem(6, n=120, M=10)
    for p in (32 / 31, 4 / 3):
        interleaved = mkl.make_estimator("lp_newton", p=p, C=1.0, tol=1e-3).fit(K, y)
        wrapper = mkl.make_estimator("lp_newton", p=p, C=1.0, tol=1e-3, interleaved=False)
        wrapper.fit(K, y)
        assert interleaved.converged_ and wrapper.converged_
        assert interleaved.objective_ == pytest.approx(wrapper.objective_, rel=3e-3)
        assert interleaved.history_[-1]["passes"] < wrapper.history_[-1]["passes"]
        assert wrapper.history_[-1]["chunks"] == 0


def test_the_schedule_is_a_parameter_and_hard_margin_is_solved_point_by_point():
    K, y = problem(7)
    for name in [*LP_METHODS, "silp"]:
        est = mkl.make_estimator(name)
        assert est.get_params()["interleaved"] is True
        assert mkl.make_estimator(name, interleaved=False).interleaved is False
    # the level method takes the schedule, off by default (not faster everywhere)
    assert mkl.make_estimator("level").get_params()["interleaved"] is False
    for name in ("simplemkl", "gmkl"):  # wrapper methods without the schedule
        assert "interleaved" not in mkl.make_estimator(name).get_params()
    with pytest.raises(ValueError, match="'interleaved' parameter"):
        mkl.make_estimator("lp_newton", interleaved="yes").fit(K, y)
    hard = fit("lp_analytic", K, y, C=None, p=2.0, tol=1e-4)
    assert all(row["chunks"] == 0 for row in hard.history_)


def test_the_fit_returns_an_exact_svm_even_when_stopped_short():
    """Stopped by max_iter mid-interleaving, the returned coefficients are the
    SVM solved at the best weights (libsvm's decision values there)."""
    K, y = problem(8, n=50)
    with pytest.warns(ConvergenceWarning, match="max_iter=3") as caught:
        est = mkl.make_estimator("lp_newton", p=4 / 3, C=1.0, tol=1e-9, max_iter=3).fit(K, y)
    # the warning names the user's line (here this test's), not the library's
    assert {w.filename for w in caught if w.category is ConvergenceWarning} == {__file__}
    K_theta = combine(K, est.weights_)
    ref = solve_svm_dual(K_theta, y, 1.0, 1e-3)
    assert est.objective_ == pytest.approx(ref.objective, rel=1e-3)
    last = est.history_[-1]
    assert last["objective"] == est.objective_ and last["svm_solves"] >= 2


def test_chunks_hand_over_to_solved_svms_once_the_weights_are_within_tolerance(monkeypatch):
    """The schedule interleaves while a weight step could still gain more than
    WEIGHTS_SHARE * tol at the chunk's multipliers (wrapper.weights_gap, never
    negative) and solves the SVM at the first chunk where it could not; the
    fit then converges on solved SVMs with the gap within tol."""
    from mkl.algorithms import wrapper

    K, y = problem(9, n=300, M=8)
    seen, handed_over = [], []
    measure, confirm = wrapper.weights_gap, wrapper.Oracle.confirm

    def spy_gap(pt, q, domain):
        seen.append(measure(pt, q, domain))
        return seen[-1]

    def spy_confirm(self, pt, track=False):
        handed_over.append((len(seen), track))
        return confirm(self, pt, track)

    monkeypatch.setattr(wrapper, "weights_gap", spy_gap)
    monkeypatch.setattr(wrapper.Oracle, "confirm", spy_confirm)
    tol = 1e-2
    est = mkl.make_estimator("lp_newton", p=4 / 3, C=1.0, tol=tol).fit(K, y)
    assert seen and min(seen) >= 0
    assert handed_over[0] == (len(seen), True)  # right after the last chunk measured
    assert seen[-1] <= wrapper.WEIGHTS_SHARE * tol < min(seen[:-1], default=np.inf)
    assert est.converged_ and est.gap_ <= tol
    chunks = [row["chunks"] for row in est.history_]
    assert chunks[-1] == len(seen) and chunks[-2] == chunks[-1]  # no chunk after the switch


def test_bank_smo_with_a_box_per_sample():
    """The interleaved engine on the C-SVM with per-sample C (sample weights):
    after chunks at changing weights the dual value stays below J(theta) and
    the primal (hinge terms weighted by C_i) above it; the final solve is
    SMO's on the formed combination."""
    from mkl.solvers.smo import solve_svm_smo

    K, y = problem(8, n=60, M=4)
    C = np.random.default_rng(8).choice([0.0, 0.5, 1.0, 4.0], size=60)
    engine = BankSMO(K, CLASSIFICATION.dual_form(y, C, 60), CLASSIFICATION, y, C)
    rng = np.random.default_rng(1)
    for _ in range(5):
        theta = rng.dirichlet(np.ones(4))
        sol, q = engine.advance(theta, 15, 1e-10)
        assert (sol.alpha <= C + 1e-12).all() and (sol.alpha[C == 0] == 0).all()
        J = solve_svm_smo(combine(K, theta), y, C, tol=1e-10).objective
        assert sol.objective <= J + 1e-9 <= sol.primal + 2e-9
    sol, _ = engine.solve(theta, 1e-10, track=False)
    ref = solve_svm_smo(combine(K, theta), y, C, tol=1e-10)
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)
    assert sol.primal == pytest.approx(ref.objective, rel=1e-6)

"""The warm-startable SMO solver (mkl.solvers.smo) against CVXPY and libsvm: the same
dual value, the same decision values, warm starts converging to the same
solution in fewer iterations, and infeasible starts projected."""

import numpy as np
import pytest

from mkl.solvers.libsvm import solve_svm_dual
from mkl.solvers.smo import feasible_start, solve_svm_smo

from . import reference
from .conftest import random_problem


def kernel(seed, n=60, m=1):
    _, y, K = random_problem(np.random.default_rng(seed), n=n, M=3)
    return K[m], y.astype(float)


@pytest.mark.parametrize("seed, C", [(0, 0.5), (1, 1.0), (2, 10.0), (3, 100.0)])
def test_smo_matches_cvxpy_and_libsvm(seed, C):
    K, y = kernel(seed)
    value, _ = reference.svm_dual_value(K, y, C)
    sol = solve_svm_smo(K, y, C, tol=1e-8)
    assert sol.converged and sol.objective == pytest.approx(value, rel=1e-6)
    assert sol.alpha.min() >= 0 and sol.alpha.max() <= C and abs(y @ sol.alpha) < 1e-10
    lib = solve_svm_dual(K, y, C, tol=1e-8)
    assert sol.objective == pytest.approx(lib.objective, rel=1e-8)
    np.testing.assert_allclose(
        K @ sol.dual_coef + sol.bias, K @ lib.dual_coef + lib.bias, atol=1e-5
    )


@pytest.mark.parametrize("shrinking", [True, False])
def test_smo_at_libsvm_tolerance_gives_libsvm_dual_value(shrinking):
    K, y = kernel(4, n=300)
    for C in (1.0, 100.0):
        sol = solve_svm_smo(K, y, C, tol=1e-6, shrinking=shrinking)
        lib = solve_svm_dual(K, y, C, tol=1e-6)
        assert sol.objective == pytest.approx(lib.objective, rel=1e-6)


def test_warm_start_reaches_the_same_solution_in_fewer_iterations():
    K, y = kernel(5, n=200)
    first = solve_svm_smo(K, y, 10.0, tol=1e-6)
    K_near = 0.99 * K + 0.01 * kernel(5, n=200, m=2)[0]  # the next weights' kernel
    cold = solve_svm_smo(K_near, y, 10.0, tol=1e-6)
    warm = solve_svm_smo(K_near, y, 10.0, tol=1e-6, alpha0=first.alpha)
    assert warm.objective == pytest.approx(cold.objective, rel=1e-9)
    assert warm.iterations < 0.8 * cold.iterations  # measured: 556 against 814


def test_infeasible_starts_are_projected_and_bad_inputs_named():
    K, y = kernel(6)
    start = np.abs(np.random.default_rng(0).normal(size=len(y))) * 3  # above C, y'a != 0
    projected = feasible_start(start, y, 1.0)
    assert projected.min() >= 0 and projected.max() <= 1.0 and abs(y @ projected) < 1e-12
    sol = solve_svm_smo(K, y, 1.0, tol=1e-8, alpha0=start)
    assert sol.objective == pytest.approx(solve_svm_smo(K, y, 1.0, tol=1e-8).objective, rel=1e-9)
    with pytest.raises(ValueError, match="alpha0 must have shape"):
        solve_svm_smo(K, y, 1.0, alpha0=np.zeros(3))
    with pytest.raises(ValueError, match="C must be a positive finite number"):
        solve_svm_smo(K, y, 0.0)
    with pytest.raises(ValueError, match="labels must be -1 or"):
        solve_svm_smo(K, np.where(y > 0, 1.0, 0.0), 1.0)
    with pytest.raises(ValueError, match=r"K must be \(60, 60\)"):
        solve_svm_smo(K[:10], y, 1.0)


def weighted_problem(seed, n=60):
    """A kernel, labels and a per-sample box C_i = C s_i with some weights 0."""
    K, y = kernel(seed, n=n)
    s = np.random.default_rng(seed).choice([0.0, 0.5, 1.0, 2.0, 3.0], size=n)
    return K, y, 2.0 * s


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_box_per_sample_matches_cvxpy_in_smo_and_libsvm(seed):
    """Per-sample C (sample weights): 0 <= alpha_i <= C_i. SMO and libsvm
    (C = max C_i, weights C_i / max C_i) reach CVXPY's optimum; a point of
    weight 0 stays out; the primal at the solution closes the gap."""
    from mkl.solvers.libsvm import primal_objective

    K, y, C = weighted_problem(seed)
    value, _ = reference.svm_dual_value(K, y, C)
    for sol in (solve_svm_smo(K, y, C, tol=1e-8), solve_svm_dual(K, y, C, tol=1e-8)):
        assert sol.objective == pytest.approx(value, rel=1e-6)
        assert (sol.alpha >= 0).all() and (sol.alpha <= C + 1e-12).all()
        assert (sol.alpha[C == 0] == 0).all() and abs(y @ sol.alpha) < 1e-8
        assert primal_objective(K, y, C, sol) == pytest.approx(value, rel=1e-5)
    warm = solve_svm_smo(K, y, C, tol=1e-8, alpha0=np.full(len(y), 5.0))  # projected start
    assert warm.objective == pytest.approx(value, rel=1e-6)


def test_an_integer_weight_is_the_point_repeated():
    """Weight 2 on a point is the same SVM as the point twice (C on each copy):
    the same optimal value and decision values."""
    K, y = kernel(7, n=40)
    s = np.ones(40)
    s[:5] = 2.0
    weighted = solve_svm_smo(K, y, 3.0 * s, tol=1e-10)
    rep = np.concatenate([np.arange(40), np.arange(5)])
    repeated = solve_svm_smo(K[np.ix_(rep, rep)], y[rep], 3.0, tol=1e-10)
    assert weighted.objective == pytest.approx(repeated.objective, rel=1e-8)
    f_weighted = K @ weighted.dual_coef + weighted.bias
    f_repeated = K[:, rep] @ repeated.dual_coef + repeated.bias
    np.testing.assert_allclose(f_weighted, f_repeated, atol=1e-6)


def test_a_bad_per_sample_box_is_refused():
    K, y = kernel(0, n=10)
    for C, match in [
        (np.ones(9), "shape"),
        (np.r_[np.ones(9), -1.0], "nonnegative"),
        (np.zeros(10), "not all zero"),
        (np.r_[np.ones(9), np.nan], "finite"),
    ]:
        with pytest.raises(ValueError, match=match):
            solve_svm_smo(K, y, C)
        with pytest.raises(ValueError, match=match):
            solve_svm_dual(K, y, C)


def test_the_weighted_least_hinge_sum_is_the_minimum_over_the_breakpoints():
    """mkl.solvers.task_duals.least_hinge_sum with per-term weights against the
    function evaluated at every breakpoint directly (its minimum is at one)."""
    from mkl.solvers.task_duals import least_hinge_sum

    rng = np.random.default_rng(3)
    rising, falling = rng.normal(size=7), rng.normal(size=9)
    w_up, w_down = rng.uniform(0, 2, 7), rng.uniform(0, 2, 9)
    for slope in (0.0, 0.7, -0.4):

        def h(b, slope=slope):
            return (
                slope * b
                + (w_down * np.maximum(0, falling - b)).sum()
                + (w_up * np.maximum(0, b - rising)).sum()
            )

        brute = min(h(b) for b in np.concatenate([rising, falling]))
        value = least_hinge_sum(rising, falling, weight=(w_up, w_down), slope=slope)
        assert value == pytest.approx(brute, rel=1e-12)
        unweighted = least_hinge_sum(rising, falling, weight=1.5, slope=slope)
        assert unweighted == pytest.approx(
            least_hinge_sum(rising, falling, (np.full(7, 1.5), np.full(9, 1.5)), slope),
            rel=1e-12,
        )

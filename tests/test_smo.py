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

import numpy as np
import pytest

from mkl.svm import solve_svm_dual

from .conftest import random_problem
from .reference import svm_dual_value


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_soft_margin_dual_value_matches_cvxpy(C, seed):
    _, y, K = random_problem(np.random.default_rng(seed), n=50)
    Km = K[1]
    sol = solve_svm_dual(Km, y, C=C, tol=1e-8)
    ref, _ = svm_dual_value(Km, y, C)
    assert sol.objective == pytest.approx(ref, rel=1e-5)
    assert np.all(sol.alpha >= 0) and np.all(sol.alpha <= C)
    assert abs(y @ sol.alpha) < 1e-6 * max(1, sol.alpha.sum())
    assert np.allclose(sol.dual_coef, sol.alpha * y)
    # the bias makes the free support vectors sit on the margin
    free = (sol.alpha > 1e-6 * C) & (sol.alpha < C * (1 - 1e-6))
    f = Km @ sol.dual_coef + sol.bias
    assert np.allclose(y[free] * f[free], 1.0, atol=1e-3)
    assert sol.converged


def test_hard_margin_on_separable_data_matches_cvxpy(rng):
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    X[:, 0] += 0.5 * y  # a clear margin
    K = X @ X.T
    sol = solve_svm_dual(K, y, C=None, tol=1e-8)
    ref, _ = svm_dual_value(K, y, None)
    assert sol.objective == pytest.approx(ref, rel=1e-5)
    assert not sol.at_bound
    assert np.all(y * (K @ sol.dual_coef + sol.bias) >= 1 - 1e-3)


def test_hard_margin_reports_non_separable_data(rng):
    X = rng.normal(size=(40, 1))
    y = rng.choice([-1, 1], size=40)
    sol = solve_svm_dual(X @ X.T, y, C=None)
    assert sol.at_bound


def test_quadratic_terms_of_the_oracle(problem):
    from mkl.algorithms.inner import DenseKernels
    from mkl.algorithms.wrapper import Oracle

    _, y, K = problem
    oracle = Oracle(DenseKernels(K), y, 1.0, 1e-3)
    pt = oracle.evaluate(np.array([1.0, 0.0, 0.0, 0.0]))
    expected = [pt.sol.dual_coef @ Km @ pt.sol.dual_coef for Km in K]
    assert np.allclose(oracle.q(pt), expected)
    assert oracle.passes == 2 and oracle.svm_solves == 1
    oracle.q(pt)  # cached: no second pass
    assert oracle.passes == 2

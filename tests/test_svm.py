import numpy as np
import pytest

from mkl.solvers.libsvm import solve_svm_dual

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
    from mkl.algorithms.wrapper import Oracle
    from mkl.solvers.inner import DenseKernels

    _, y, K = problem
    oracle = Oracle(DenseKernels(K), y, 1.0, 1e-3)
    pt = oracle.evaluate(np.array([1.0, 0.0, 0.0, 0.0]))
    expected = [pt.sol.dual_coef @ Km @ pt.sol.dual_coef for Km in K]
    assert np.allclose(oracle.q(pt), expected)
    assert oracle.passes == 2 and oracle.svm_solves == 1
    oracle.q(pt)  # cached: no second pass
    assert oracle.passes == 2


def test_dense_inner_problem_warm_starts_later_solves(problem):
    """The first solve is libsvm's; later ones start from the previous alpha in
    our SMO, and reach the same dual value as a cold libsvm solve."""
    from mkl.solvers.inner import DenseKernels

    _, y, K = problem
    inner = DenseKernels(K)
    thetas = [np.full(4, 0.25), np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])]
    for C in (1.0, 10.0):
        for theta in thetas:
            combo = inner.combine(theta)
            warm = inner.solve(combo, theta, y, C, 1e-8)
            cold = solve_svm_dual(combo, y, C, 1e-8)
            assert warm.objective == pytest.approx(cold.objective, rel=1e-7)
            assert np.all(warm.alpha >= 0) and np.all(warm.alpha <= C)
            assert abs(y @ warm.alpha) < 1e-8 * max(1.0, warm.alpha.sum())
            f_warm = combo @ warm.dual_coef + warm.bias
            f_cold = combo @ cold.dual_coef + cold.bias
            assert np.allclose(f_warm, f_cold, atol=1e-3)
    # 5 of the 6 solves were warm (the first C = 10 solve starts from the last
    # C = 1 solution, feasible for the larger box)
    assert len(inner.smo_iterations) == 5


def test_dense_inner_problem_solves_hard_margin_by_libsvm(rng):
    from mkl.solvers.inner import DenseKernels

    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    X[:, 0] += 0.5 * y
    K = np.stack([X @ X.T, (X @ X.T + 1.0) ** 2 / 10.0])
    inner = DenseKernels(K)
    for theta in (np.array([1.0, 0.0]), np.array([0.5, 0.5])):
        sol = inner.solve(inner.combine(theta), theta, y, None, 1e-6)
        assert not sol.at_bound
    assert inner.smo_iterations == []  # C = None: never the warm solver


def test_each_task_is_solved_by_the_solver_the_dispatch_names(rng):
    """mkl.solvers.dispatch chooses the solver of a task's dual on a dense
    kernel and on factors: the same numbers as calling that solver directly."""
    from mkl.banks.factor_bank import FactorBank
    from mkl.solvers import coordinate_descent as cd
    from mkl.solvers import dispatch, libsvm
    from mkl.solvers.task_duals import CLASSIFICATION, Novelty, Regression

    X = rng.normal(size=(30, 3))
    y, t = np.where(X[:, 0] > 0, 1.0, -1.0), np.sin(X[:, 1])
    K, bank = X @ X.T, FactorBank.from_matrix(X, [1, 2])
    theta = np.array([0.3, 0.7])
    Z, offsets = bank.train, bank.offsets
    dense = [
        (CLASSIFICATION, y, libsvm.solve_svm_dual(K, y, 1.0, 1e-6)),
        (Regression(0.1), t, libsvm.solve_svr_dual(K, t, 1.0, 0.1, 1e-6)),
        (Novelty(0.3), y, libsvm.solve_one_class_dual(K, 0.3, 1e-6)),
    ]
    factored = [
        (CLASSIFICATION, y, cd.solve_factored_svm(Z, offsets, theta, y, 1.0, 1e-6, 2.0)),
        (Regression(0.1), t, cd.solve_factored_svr(Z, offsets, theta, t, 1.0, 0.1, 1e-6, 2.0)),
        (Novelty(0.3), y, cd.solve_factored_one_class(Z, offsets, theta, 0.3, 1e-6)),
    ]
    for task, target, direct in dense:
        sol = dispatch.solve_dense_dual(task, K, target, 1.0, 1e-6, None)
        assert np.array_equal(sol.dual_coef, direct.dual_coef) and sol.bias == direct.bias
    for task, target, direct in factored:
        sol = dispatch.solve_factored_dual(task, Z, offsets, theta, target, 1.0, 1e-6, 2.0, None)
        assert np.array_equal(sol.dual_coef, direct.dual_coef) and sol.bias == direct.bias
    # warm on a dense kernel: the SMO; hard margin: libsvm whatever the start
    warm = dispatch.solve_dense_dual(CLASSIFICATION, K, y, 1.0, 1e-6, dense[0][2].alpha)
    hard = dispatch.solve_dense_dual(CLASSIFICATION, K, y, None, 1e-6, warm.alpha)
    assert hasattr(warm, "iterations") and not hasattr(hard, "iterations")
    # the one-class SVM has no interleaved engine on factors
    assert dispatch.factored_interleaved_engine(Novelty(0.3), bank, 1.0, y, 1.0) is None
    assert dispatch.factored_interleaved_engine(CLASSIFICATION, bank, 1.0, y, 1.0) is not None

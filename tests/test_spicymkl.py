"""SpicyMKL (Suzuki & Tomioka 2011): the proximal minimisation of the
hinge-loss, elastic-net block-norm MKL problem, against CVXPY + Clarabel on
its own formulation, with its certified duality gap."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import mkl
from mkl.algorithms.spicy import _InnerProblem
from mkl.solvers.box_qp import box_qp

from . import reference
from .reference import block_norm_mkl


@pytest.fixture(scope="module")
def problem():
    """40 points, three Gaussian kernels and a linear one, unit mean diagonal;
    the labels depend on the first feature only."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1, -1)
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    K = [np.exp(-D / (2 * w * w)) for w in (0.5, 1.0, 2.0)] + [X @ X.T]
    return np.array([k / np.trace(k) * 40 for k in K]), y


@pytest.mark.parametrize(
    "C, C1, C2",
    [(1.0, 1.0, 0.0), (10.0, 1.0, 0.0), (1.0, 1.0, 1.0), (1.0, 0.05, 0.5)],
)
def test_spicymkl_reaches_the_cvxpy_optimum_of_its_problem(problem, C, C1, C2):
    K, y = problem
    est = mkl.make_estimator("spicymkl", C=C, C1=C1, C2=C2, tol=1e-7, max_iter=80)
    with warnings.catch_warnings():  # a gap floor near 1e-7 may stop it at max_iter
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(K, y)
    value, f = block_norm_mkl(K, y, C, C1, C2)
    assert est.objective_ == pytest.approx(value, rel=1e-5)
    # the certified gap bounds the true relative error
    assert (est.objective_ - value) / value <= est.gap_ + 1e-8
    if C2 > 0:  # strongly convex in f: the decision values are the optimum's
        np.testing.assert_allclose(est.decision_function(K), f, atol=1e-3)


def test_the_certified_gap_closes_and_the_default_tolerance_converges(problem):
    K, y = problem
    est = mkl.make_estimator("spicymkl", C1=0.5).fit(K, y)
    gaps = [row["gap"] for row in est.history_]
    assert est.converged_ and gaps[-1] <= est.tol and gaps[0] > gaps[-1]
    assert est.gap_ == gaps[-1] and est.n_iter_ == len(gaps)


def test_the_l1_part_drops_kernels_and_the_l2_part_keeps_them(problem):
    """C2 = 0 is block-L1 MKL: kernels whose ||f_m|| is thresholded to 0 get
    weight 0; an elastic net spreads the weights (the paper's observation
    that SpicyMKL selects more kernels than L1-MKL comes from the L2 part)."""
    K, y = problem
    sparse = mkl.make_estimator("spicymkl", C1=1.0, C2=0.0, tol=1e-4).fit(K, y)
    dense = mkl.make_estimator("spicymkl", C1=0.05, C2=0.5, tol=1e-4).fit(K, y)
    assert sparse.n_selected_ < 4 and dense.n_selected_ == 4
    for est in (sparse, dense):
        assert est.weights_.sum() == pytest.approx(1.0) and est.weights_.min() >= 0
        assert est.score(K, y) > 0.8


def test_multiclass_and_test_block(problem):
    K, y = problem
    labels = np.where(y > 0, 2, 0)
    labels[:8] = 1
    est = mkl.make_estimator("spicymkl", C1=0.2, C2=0.1, tol=1e-4).fit(K, labels)
    assert est.weights_.shape == (3, 4)
    scores = est.decision_function(K[:, :5, :])
    assert scores.shape == (5, 3) and np.isfinite(scores).all()
    # one-vs-rest: each row is the binary problem of its class against the rest
    for k in range(3):
        binary = mkl.make_estimator("spicymkl", C1=0.2, C2=0.1, tol=1e-4)
        binary.fit(K, np.where(labels == k, 1, -1))
        np.testing.assert_allclose(est.weights_[k], binary.weights_, atol=1e-12)
        np.testing.assert_allclose(scores[:, k], binary.decision_function(K[:, :5, :]), atol=1e-10)


@pytest.mark.parametrize("C1, C2, gamma", [(1.0, 0.0, 1.0), (0.2, 0.5, 8.0), (0.05, 0.0, 16.0)])
def test_the_inner_newton_solve_reaches_the_box_minimum_of_phi(problem, C1, C2, gamma):
    """Each proximal step's inner problem phi over the box [0, C]^n (module
    docstring), minimised by inexact proximal Newton, against CVXPY; the returned
    point meets the box's optimality conditions (projected gradient ~ 0)."""
    K, y = problem
    rng = np.random.default_rng(1)
    alpha, b, C = 0.05 * rng.normal(size=(K.shape[0], len(y))), 0.3, 2.0
    inner = _InnerProblem(K, y.astype(float), alpha, b, gamma, C1, C2)
    a, point, passes = inner.minimise(np.zeros(len(y)), C)
    assert np.all((a >= 0) & (a <= C)) and passes == inner.passes
    projected = a - np.clip(a - point.grad, 0.0, C)
    assert np.abs(projected).max() <= 1e-7
    value = reference.spicy_inner_value(K, y.astype(float), alpha, b, gamma, C, C1, C2)
    assert point.value == pytest.approx(value, rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1])
def test_box_qp_matches_cvxpy(seed):
    """The dense box QP (the Newton model's solver) against CVXPY on a
    rank-deficient Hessian with a stiff rank-one part, as SpicyMKL's models have;
    coordinate descent took 10,000 epochs here without converging."""
    rng = np.random.default_rng(seed)
    n = 30
    A = rng.normal(size=(n, 5))
    s = rng.choice([-1.0, 1.0], size=n)
    H = (A @ A.T + 50.0) * np.outer(s, s)
    p = rng.normal(size=n)
    x, iterations, converged = box_qp(H, p, 0.0, 1.5, np.zeros(n), tol=1e-10)
    assert converged and np.all((x >= 0) & (x <= 1.5))
    value = 0.5 * x @ H @ x + p @ x
    assert value == pytest.approx(reference.box_qp(H, p, 0.0, 1.5), rel=1e-7)

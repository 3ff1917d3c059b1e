"""Radius-margin MKL (mkl/algorithms/radius_margin.py): R-MKL (Do et al. 2009)
and GRAM (Lauriola et al. 2017). Their convex pieces against CVXPY + Clarabel:
the enclosing ball and the margin of a combination, R-MKL's objective at
fixed weights against its primal with squared slacks. The ratio they minimise
is not convex: the loop's objective only decreases, its certified gap closes,
and on two kernels a grid over the simplex finds no better weights."""

import numpy as np
import pytest
from sklearn.svm import SVC

import mkl
from mkl.banks.algebra import combine
from mkl.banks.factor_bank import FactorBank
from mkl.metrics import margin, radius
from mkl.solvers.geometry import minimum_enclosing_ball
from mkl.solvers.komd import komd_margin

from .conftest import random_problem, single_feature_bank
from .reference import enclosing_ball, komd, radius_margin_primal


def two_kernel_bank(seed=3, n=30):
    """Gaussian kernels on the two informative features, of different widths
    and scales: both ratios' optima lie inside the segment."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + X[:, 1] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    k0 = np.exp(-((X[:, [0]] - X[:, [0]].T) ** 2) / 2.0)
    k1 = np.exp(-((X[:, [1]] - X[:, [1]].T) ** 2) / 8.0)
    return np.stack([k0, 0.5 * k1]), y


def radii(K):
    return np.array([minimum_enclosing_ball(k).squared_radius for k in K])


@pytest.mark.parametrize("seed", [0, 1])
def test_gram_s_first_ratio_is_cvxpy_s_ball_over_cvxpy_s_margin(seed):
    _, y, K = random_problem(np.random.default_rng(seed))
    est = mkl.make_estimator("gram").fit(K, y)
    first = est.history_[0]  # beta = 0: the uniform combination
    K_mean = K.mean(0)
    R2, (rho, _) = enclosing_ball(K_mean), komd(K_mean, y.astype(float))
    assert first["radius"] == pytest.approx(R2, rel=1e-5)
    assert first["margin"] == pytest.approx(rho, rel=1e-5)
    assert first["objective"] == pytest.approx(R2 / rho, rel=1e-5)
    # and at the learned weights
    K_w = combine(K, est.weights_)
    assert est.objective_ == pytest.approx(
        enclosing_ball(K_w) / komd(K_w, y.astype(float))[0], rel=1e-4
    )


@pytest.mark.parametrize("C", [0.5, 10.0, None])
def test_rmkl_s_objective_is_its_primal_with_squared_slacks_as_cvxpy(C):
    _, y, K = random_problem(np.random.default_rng(2))
    yf = y.astype(float)
    est = mkl.make_estimator("rmkl", C=C).fit(K, y)
    R = radii(K)
    for weights, value in [
        (np.full(len(K), 1 / len(K)), est.history_[0]["objective"]),
        (est.weights_, est.objective_),
    ]:
        R_mu = float(weights @ R)
        K_w = combine(K, weights)
        # the soft margin's KOMD problem: rho(K_mu + (R_mu / C) I)
        ridge = 0.0 if C is None else R_mu / C
        rho_cvx, _ = komd(K_w + ridge * np.eye(len(y)), yf)
        rho = komd_margin(K_w + ridge * np.eye(len(y)), yf, 1e-10).value
        assert rho == pytest.approx(rho_cvx, rel=1e-5)
        # P(mu) = 2 R_mu / rho = min 1/2 R_mu ||w||^2 + C/2 sum xi^2
        primal = radius_margin_primal(K_w, yf, C, R_mu)
        assert 2 * R_mu / rho_cvx == pytest.approx(primal, rel=1e-5)
        assert value == pytest.approx(primal, rel=1e-4)  # the fit's, at its inner tol


@pytest.mark.parametrize("name", ["gram", "rmkl"])
@pytest.mark.parametrize("case", [0, 1])
def test_objective_decreases_and_the_certified_gap_closes(name, case):
    if case == 0:
        _, y, K = random_problem(np.random.default_rng(5))
    else:  # 36 kernels, many nearly collinear
        K, y = single_feature_bank(4)
    est = mkl.make_estimator(name, tol=1e-4, max_iter=3000).fit(K, y)
    objective = np.array([row["objective"] for row in est.history_])
    assert np.all(np.diff(objective) <= 1e-12 * objective[:-1])
    assert est.converged_ and est.gap_ <= 1e-4
    bound = est.history_[-1]["lower_bound"]
    assert bound <= est.objective_ and (est.objective_ - bound) / est.objective_ <= 1e-4
    assert est.weights_.sum() == pytest.approx(1.0) and np.all(est.weights_ >= 0)


@pytest.mark.filterwarnings("ignore:the hard margin's QP stopped")  # the grid's ends
@pytest.mark.parametrize("name", ["gram", "rmkl"])
def test_two_kernels_the_grid_over_the_simplex_finds_no_better_weights(name):
    """The ratio on M = 2 by brute force: 801 weights mu = (t, 1 - t), each
    ratio from mkl.metrics' radius and margin (tested against CVXPY in
    test_kernel_measures.py)."""
    K, y = two_kernel_bank()
    est = mkl.make_estimator(name, tol=1e-5, max_iter=3000, inner_tol=1e-10).fit(K, y)
    R = radii(K)
    grid = np.linspace(0.0, 1.0, 801)
    values = []
    for t in grid:
        mu = np.array([t, 1 - t])
        K_mu = combine(K, mu)
        if name == "gram":  # R^2 / rho, rho = (2 margin)^2
            value = radius(K_mu) / (2 * margin(K_mu, y)) ** 2
        else:  # 2 R_mu / rho(K_mu + R_mu I) at C = 1
            R_mu = float(mu @ R)
            value = 2 * R_mu / (2 * margin(K_mu + R_mu * np.eye(len(y)), y)) ** 2
        values.append(value)
    values = np.array(values)
    best = int(np.argmin(values))
    assert 0 < best < len(grid) - 1  # an interior optimum: a real test of the weights
    assert est.converged_ and est.gap_ <= 1e-5
    # certified: the bound is below every ratio, the fit within its gap of the best
    assert est.history_[-1]["lower_bound"] <= values.min()
    assert est.objective_ <= values.min() * (1 + est.gap_)
    assert est.weights_[0] == pytest.approx(grid[best], abs=2 * (grid[1] - grid[0]))


def test_rmkl_is_invariant_to_the_kernels_scales():
    """Do et al.'s point: scaling a kernel scales its radius with it, so R-MKL
    learns the same combined kernel (the margin alone prefers the larger)."""
    _, y, K = random_problem(np.random.default_rng(7))
    est = mkl.make_estimator("rmkl", tol=1e-6, max_iter=3000).fit(K, y)
    scales = np.array([10.0, 1.0, 0.1, 3.0])
    scaled = mkl.make_estimator("rmkl", tol=1e-6, max_iter=3000).fit(K * scales[:, None, None], y)
    assert scaled.objective_ == pytest.approx(est.objective_, rel=1e-5)
    same = scaled.weights_ * scales
    np.testing.assert_allclose(same / same.sum(), est.weights_, atol=1e-3)
    np.testing.assert_allclose(scaled.decision_function(K * scales[:, None, None]),
                               est.decision_function(K), atol=1e-3)  # fmt: skip


def test_rmkl_s_classifier_is_the_squared_slack_svm_of_its_problem():
    """The hard-margin SVM on K_mu + (R_mu / C) I, tested on K_mu."""
    X, y, K = random_problem(np.random.default_rng(8))
    C = 2.0
    est = mkl.make_estimator("rmkl", C=C).fit(K[:, :30, :30], y[:30])
    R_mu = float(est.weights_ @ radii(K[:, :30, :30]))
    K_w = combine(K[:, :30, :30], est.weights_)
    svc = SVC(C=1e10, kernel="precomputed", tol=1e-10).fit(K_w + R_mu / C * np.eye(30), y[:30])
    K_test = combine(K[:, 30:, :30], est.weights_)
    np.testing.assert_allclose(
        est.decision_function(K[:, 30:, :30]), svc.decision_function(K_test), atol=1e-4
    )


def test_gram_takes_a_soft_margin_base_learner():
    _, y, K = random_problem(np.random.default_rng(9))
    est = mkl.make_estimator("gram", C=3.0).fit(K, y)
    svc = SVC(C=3.0, kernel="precomputed").fit(combine(K, est.weights_), y)
    np.testing.assert_allclose(
        est.decision_function(K), svc.decision_function(combine(K, est.weights_)), atol=1e-3
    )


def _inseparable_bank(seed=0, n=40):
    """Three rank-one kernels and random labels: no kernel, and no
    combination, separates the classes."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(3, n))
    y = np.where(rng.random(n) > 0.5, 1, -1)
    return np.stack([np.outer(z, z) for z in Z]), y


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("gram", {}, "GRAM: the classes' convex hulls meet in every combination"),
        ("rmkl", {"C": None}, r"RMKL: the classes' convex hulls meet .*\(or a soft margin"),
    ],
)
def test_a_hard_margin_on_inseparable_classes_is_refused_by_name(name, params, message):
    K, y = _inseparable_bank()
    with pytest.raises(ValueError, match=message):
        mkl.make_estimator(name, **params).fit(K, y)


def test_rmkl_s_soft_margin_fits_inseparable_classes():
    K, y = _inseparable_bank()
    est = mkl.make_estimator("rmkl", C=1.0).fit(K, y)
    assert est.converged_ and np.isfinite(est.objective_)


@pytest.mark.parametrize("name", ["gram", "rmkl"])
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"C": -1.0}, "The 'C' parameter of"),
        ({"tol": 0.0}, "The 'tol' parameter of"),
        ({"max_iter": 0}, "The 'max_iter' parameter of"),
        ({"inner_tol": -1e-3}, "The 'inner_tol' parameter of"),
    ],
)
def test_bad_parameters_are_named(name, params, message):
    _, y, K = random_problem(np.random.default_rng(0))
    with pytest.raises(ValueError, match=message):
        mkl.make_estimator(name, **params).fit(K, y)


@pytest.mark.parametrize("name", ["gram", "rmkl"])
def test_a_factor_bank_and_sample_weights_are_refused_by_name(name):
    rng = np.random.default_rng(0)
    Z = [rng.normal(size=(30, 3)) for _ in range(2)]
    y = np.where(rng.random(30) > 0.5, 1, -1)
    est = mkl.make_estimator(name)
    with pytest.raises(ValueError, match=f"{est.__class__.__name__} cannot use a FactorBank"):
        est.fit(FactorBank(Z), y)
    K = np.stack([z @ z.T for z in Z])
    with pytest.raises(ValueError, match="does not take sample_weight"):
        est.fit(K, y, sample_weight=np.ones(30))

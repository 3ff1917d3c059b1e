"""Every convex solver at its default tolerance and at the tolerances the
experiments use (config/experiments/*.yaml): the gap it reports must bound its
true distance to the optimum, computed independently by CVXPY + Clarabel
(tests/reference.py), and ``converged_`` must agree with it.
tests/test_convex_mkl.py checks the optima at tight tolerances; this file checks
what a run at the experiments' settings reports about itself.

Each method's gap is relative to its own objective_ (mkl/algorithms/*.py), so
the true gap is measured the same way:

* wrapper methods (simplemkl, silp, level, lp_newton, lp_cutting_plane,
  lp_analytic, gmkl): (UB - LB) / UB with UB the best J seen, which is objective_
  (a minimum): true gap (objective_ - J*) / objective_, and likewise for J at the
  returned weights_, computed here by an exact SVM solve;
* smkl: (UB - LB) / |UB| on f_lambda (a minimum, usually negative);
* easymkl: the relative Frank-Wolfe gap of its margin problem (a minimum);
* memo with theta = 0: (max_r g_r - mu'g) / Psi, Psi = objective_ the squared
  margin, a maximum of a concave function. For theta > 0 Psi is not concave and
  MEMO's gap bounds nothing (its docstring says so): not tested.

SLACK covers the references' precision (1e-8) and the weights below 1e-6 of
the largest that weights_ reports as zero.
"""

import functools
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import mkl
from mkl.algorithms.domains import ElasticNetBall

from . import reference
from .conftest import random_problem

SLACK = 2e-6


# --------------------------------------------------------------------- problems
@functools.cache
def bank(kind):
    """``gaussian``: test_convex_mkl's Gaussian bank (n = 50, M = 6), float64.
    ``mixed``: Gaussian widths 0.25-16, a quadratic, a linear and a rank-one
    kernel at unit mean diagonal, overlapping (XOR-like) classes, float32 as the
    experiments' banks (the references see the same float32 numbers)."""
    if kind == "gaussian":
        _, y, K = random_problem(np.random.default_rng(0), n=50, d=4, M=6)
        return K, y
    rng = np.random.default_rng(1)
    n = 60
    X = rng.normal(size=(n, 5))
    y = np.where(X[:, 0] * X[:, 1] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    sq = ((X[:, None] - X[None]) ** 2).sum(-1)
    K = np.stack(
        [np.exp(-sq / (2 * w**2)) for w in (0.25, 1.0, 4.0, 16.0)]
        + [(X @ X.T + 1) ** 2, X @ X.T, np.outer(X[:, 0], X[:, 0])]
    )
    K = K / np.trace(K, axis1=1, axis2=2)[:, None, None] * n
    return K.astype(np.float32), y


def as64(K):
    return np.asarray(K, dtype=np.float64)


@functools.cache
def optimum(kind, formulation, C):
    """J* of a wrapper formulation: ("l1",), ("lp", p) or ("gmkl", v)."""
    K, y = bank(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # CVXPY's pnorm approximation note
        if formulation[0] == "l1":
            return reference.l1_mkl(as64(K), y, C)[0]
        if formulation[0] == "lp":
            return reference.lp_mkl(as64(K), y, C, formulation[1])[0]
        return reference.gmkl(as64(K), y, C, formulation[1])[0]


def fit(name, K, y, **params):
    """Fit as a run would; the ConvergenceWarning is checked through converged_."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return mkl.make_estimator(name, **params).fit(K, y)


# --------------------------------------------------------------------- wrapper methods
# (estimator, params): the defaults, and each setting an experiment file uses
WRAPPER_SETTINGS = [
    ("simplemkl", {}),
    ("simplemkl", {"tol": 1e-3}),  # kloft2009 Figure 1
    ("silp", {}),
    ("silp", {"tol": 1e-3}),  # kloft2009 l1
    ("level", {}),  # quick, yang2011, xu2010
    ("lp_newton", {"p": 32 / 31, "tol": 1e-3}),  # kloft2009 lp_32_31 (also 16/15, 8/7)
    ("lp_newton", {"p": 4 / 3, "tol": 1e-3}),  # kloft2009 lp_4_3
    ("lp_newton", {"p": 4.0, "tol": 1e-3}),  # kloft2009 lp_4
    ("lp_newton", {"p": 2.0}),
    ("lp_cutting_plane", {"p": 4 / 3, "tol": 1e-3}),  # kloft2009 Figure 1
    ("lp_cutting_plane", {"p": 2.0}),
    ("lp_analytic", {"p": 2.0}),  # quick, yang2011, xu2010 L2-MKL
    ("gmkl", {"v": 0.5}),  # quick, yang2011
    ("gmkl", {"v": 0.1}),  # yang2011 Figure 2 sweep
    ("gmkl", {"v": 0.9}),
]
PROBLEMS = [("gaussian", 1.0), ("mixed", 1.0), ("mixed", 1000.0)]


def formulation(name, params):
    if name in ("simplemkl", "silp", "level"):
        return ("l1",)
    if name == "gmkl":
        return ("gmkl", params["v"])
    return ("lp", params["p"])


def in_domain(name, params, w):
    if name in ("simplemkl", "silp", "level"):
        return abs(w.sum() - 1) < 1e-9
    if name == "gmkl":
        return ElasticNetBall(params["v"]).value(w) <= 1 + 1e-9
    return np.linalg.norm(w, params["p"]) <= 1 + 1e-9


def setting_id(setting):
    name, params = setting
    return name + "".join(f"-{k}={v:.4g}" for k, v in params.items())


@pytest.mark.parametrize("kind, C", PROBLEMS, ids=[f"{k}-C={c:g}" for k, c in PROBLEMS])
@pytest.mark.parametrize("name, params", WRAPPER_SETTINGS, ids=map(setting_id, WRAPPER_SETTINGS))
def test_wrapper_gap_bounds_the_true_gap(name, params, kind, C):
    K, y = bank(kind)
    est = fit(name, K, y, C=C, **params)
    opt = optimum(kind, formulation(name, params), C)
    tol = est.get_params()["tol"]
    assert np.isfinite(est.gap_) and est.gap_ >= 0
    w = est.weights_
    assert np.all(w >= 0) and in_domain(name, params, w)
    # J at the weights as returned, by an exact SVM solve (objective_ is J from
    # libsvm's alpha at svm_tol, which can lie a little below the true J)
    J_w = reference.svm_dual_value(np.tensordot(w, as64(K), axes=1), y, C)[0]
    assert J_w >= opt * (1 - SLACK)  # no weights beat the optimum
    assert (est.objective_ - opt) / est.objective_ <= est.gap_ + SLACK
    assert (J_w - opt) / J_w <= est.gap_ + SLACK
    # the wrapper methods stop on the gap, and only on it
    if est.gap_ <= tol:
        assert est.converged_
    if est.converged_:
        assert est.gap_ <= tol


# --------------------------------------------------------------------- SMKL
def unit_trace(K):
    return K / np.trace(K, axis1=1, axis2=2)[:, None, None]


@pytest.mark.parametrize("C", [1.0, 10.0, 100.0])
@pytest.mark.parametrize("kind", ["gaussian", "mixed"])
def test_smkl_gap_bounds_the_true_gap(kind, C):
    """xu2010: unit-trace kernels, C in {1, 10, 100}, smoothing=None (the default
    lambda), tol=0.01, max_iter=500, which are also SMKL's defaults."""
    K, y = bank(kind)
    K = unit_trace(as64(K)).astype(K.dtype)
    est = fit("smkl", K, y, C=C, smoothing=None, tol=0.01, max_iter=500)
    opt, _ = reference.smkl_f_lambda_expcone(as64(K), y, C, est.smoothing_)
    assert np.isfinite(est.gap_) and est.gap_ >= 0
    assert est.objective_ >= opt - SLACK * abs(opt)  # objective_ is f_lambda at a feasible alpha
    assert (est.objective_ - opt) / abs(est.objective_) <= est.gap_ + SLACK
    assert est.converged_ == (est.gap_ <= 0.01)  # stops on the gap (the final SVM converges)
    assert est.weights_.sum() == pytest.approx(1.0)


# --------------------------------------------------------------------- EasyMKL, MEMO
@pytest.mark.parametrize("lam", [0.0, 0.1, 0.9])
@pytest.mark.parametrize("kind", ["gaussian", "mixed"])
def test_easymkl_gap_bounds_the_true_gap(kind, lam):
    """lauriola2018: C = 1000, lam from the grid, default tol."""
    K, y = bank(kind)
    est = fit("easymkl", K, y, C=1000.0, lam=lam)
    K64 = unit_trace(as64(K))
    opt, _ = reference.komd((1 - lam) * K64.sum(0) + lam * np.eye(len(y)), y)
    assert np.isfinite(est.gap_) and est.gap_ >= 0
    assert est.objective_ >= opt * (1 - SLACK)
    assert (est.objective_ - opt) / est.objective_ <= est.gap_ + SLACK
    if est.gap_ <= est.tol:
        assert est.converged_


@pytest.mark.parametrize("C", [None, 1000.0])
@pytest.mark.parametrize("kind", ["gaussian", "mixed"])
def test_memo_theta_zero_gap_bounds_the_true_gap(kind, C):
    """lauriola2018: theta = 0 (the grid's concave end), C = 1000 and the default
    hard margin, default tol; the bank gets the identity kernel, as MEMO's does."""
    K, y = bank(kind)
    K = np.concatenate([K, np.eye(len(y), dtype=K.dtype)[None]])
    est = fit("memo", K, y, theta=0.0, C=C)
    opt, _ = reference.max_margin_mkl_default_tol(as64(K), y)
    assert np.isfinite(est.gap_) and est.gap_ >= 0
    # Psi comes from an inexact margin solve (an upper estimate): margin_tol's slack
    assert est.objective_ <= opt * (1 + 1e-5)
    assert (opt - est.objective_) / est.objective_ <= est.gap_ + SLACK
    if est.gap_ <= est.tol:
        assert est.converged_

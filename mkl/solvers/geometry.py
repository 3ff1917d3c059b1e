"""The geometry of a kernel's points in feature space, the two quantities of
the radius-margin bound R^2 ||w||^2 (Vapnik 1998; Chapelle, Vapnik, Bousquet
& Mukherjee 2002) that MKL users measure a kernel by (:func:`radius` and
:func:`margin`, also ``mkl.metrics.radius`` and ``mkl.metrics.margin``):

* the squared radius of the minimum enclosing ball of the points
  (:func:`minimum_enclosing_ball`), the dual of the smallest ball
  min_{c, R} R^2 s.t. ||phi(x_i) - c||^2 <= R^2 (Tax & Duin 2004's support
  vector data description with C >= 1; Tsang, Kwok & Cheung 2005):

      R^2 = max_{beta in S}  beta'd - beta'K beta,     d = diag K,
      S = {beta >= 0, 1'beta = 1},   c = sum_i beta_i phi(x_i);

* the margin of the SVM on K (:func:`margin`): 1/||w|| of the hard-margin
  SVM, half the distance between the two classes' convex hulls (the KOMD
  problem of :mod:`mkl.solvers.komd`: ||w||^2 = 4 / rho), or of the
  soft-margin C-SVM at C (||w||^2 = beta'K beta at its dual solution,
  :func:`mkl.solvers.libsvm.solve_svm_dual`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..exceptions import InputError, warn_at_caller
from .komd import komd_margin
from .libsvm import solve_one_class_dual, solve_svm_dual

# the relative gap (P - D) / P the ball is solved to (P, D: the primal and dual
# values at the returned beta), and the soft-margin SVM's libsvm tolerance
BALL_TOL = 1e-6
MARGIN_SVM_TOL = 1e-8
# the hard margin's KOMD problem: libsvm's tolerance (relative to the squared
# distance between the class centroids) and iterations per point; the fits'
# cap (mkl.solvers.komd.MAX_ITER_PER_POINT, 20) stops early where the hulls
# nearly touch, which a fit can afford (rho is about 0) and a measurement not
MARGIN_KOMD_TOL = 1e-9
MARGIN_MAX_ITER_PER_POINT = 10_000


@dataclass
class Ball:
    """The minimum enclosing ball of a kernel's points (its dual solution)."""

    squared_radius: float  # the dual value D(beta) = beta'd - beta'K beta <= R^2
    coef: np.ndarray  # (n,) beta in the simplex: the centre is sum_i beta_i phi(x_i)
    gap: float  # (P - D) / P, P = max_i ||phi(x_i) - c||^2 >= R^2: certified
    converged: bool  # the gap is within the tolerance asked for


def checked_kernel(K, name: str = "K") -> np.ndarray:
    """One kernel matrix as float64: square, finite and symmetric (up to
    rounding), each problem named."""
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
        raise InputError(f"{name} must be a square kernel matrix (n, n), got shape {K.shape}")
    if not np.isfinite(K).all():
        raise InputError(f"{name} contains NaN or inf")
    scale = max(float(np.abs(K).max()), np.finfo(np.float64).tiny)
    if float(np.abs(K - K.T).max()) > 1e-10 * scale:
        raise InputError(f"{name} is not symmetric")
    return K


def minimum_enclosing_ball(K, tol: float = BALL_TOL) -> Ball:
    """The minimum enclosing ball of the points of kernel ``K`` (n, n) in
    feature space: R^2 = max_{beta in S} beta'd - beta'K beta (module
    docstring).

    On the simplex beta'd = beta'(d 1' + 1 d')/2 beta, so the dual is
    min_{beta in S} beta'K~beta with K~ = K - (d 1' + 1 d')/2: libsvm's
    one-class dual with nu = 1/n (its box, 1, is then redundant). K~ is not
    PSD, but along the directions SMO moves (e_i - e_j, keeping 1'beta) its
    curvature is K_ii + K_jj - 2 K_ij = ||phi(x_i) - phi(x_j)||^2 >= 0, as
    K's. libsvm's tolerance is set from the squared diameter (at most 4 R^2),
    and the result is certified by the gap of the two bounds at beta,

        D(beta) = sum_i beta_i ||phi(x_i) - c||^2  <=  R^2  <=  P(beta) = max_i ||phi(x_i) - c||^2,

    ``converged`` saying whether (P - D) / P <= ``tol``."""
    K = checked_kernel(K)
    n = K.shape[0]
    d = np.diag(K).copy()
    diameter = float(np.max(d[:, None] + d[None, :] - 2.0 * K))
    if n == 1 or not diameter > 0:  # one point (or all at one place): R = 0
        return Ball(0.0, np.full(n, 1.0 / n), 0.0, True)
    K_tilde = K - 0.5 * (d[:, None] + d[None, :])
    sol = solve_one_class_dual(K_tilde, nu=1.0 / n, tol=0.01 * tol * diameter)
    beta = np.maximum(sol.alpha, 0.0)
    beta /= beta.sum()
    Kb = K @ beta
    centre_sq = float(beta @ Kb)
    distances = d - 2.0 * Kb + centre_sq  # ||phi(x_i) - c||^2
    dual = max(float(beta @ distances), 0.0)
    primal = float(distances.max())
    gap = (primal - dual) / primal if primal > 0 else 0.0
    return Ball(dual, beta, max(gap, 0.0), gap <= tol)


def radius(K) -> float:
    """The squared radius R^2 of the minimum enclosing ball of the points of
    kernel ``K`` (n, n) in feature space (:func:`minimum_enclosing_ball`;
    MKLpy's ``radius`` is R). A ``ConvergenceWarning`` says when the
    certified relative gap is above :data:`BALL_TOL`."""
    ball = minimum_enclosing_ball(K)
    if not ball.converged:
        warnings.warn(
            f"the minimum enclosing ball's relative gap is {ball.gap:.2g} (asked: {BALL_TOL:g})",
            ConvergenceWarning,
            stacklevel=2,
        )
    return ball.squared_radius


def margin(K, y, C: float | None = None) -> float:
    """1/||w|| of the SVM on kernel ``K`` (n, n) with labels ``y`` of two
    classes: the hard-margin SVM's (``C`` None), sqrt(rho)/2 with rho the
    squared distance between the classes' convex hulls (KOMD,
    :func:`mkl.solvers.komd.komd_margin`; 0 when the hulls meet: no
    separating hyperplane), or the soft-margin C-SVM's at ``C``,
    1/sqrt(beta'K beta) at its dual solution beta = alpha * y (libsvm to
    :data:`MARGIN_SVM_TOL`). MKLpy's ``margin`` is the distance between the
    hulls, twice the hard margin here; R^2 / margin^2 = R^2 ||w||^2 is the
    radius-margin ratio."""
    K = checked_kernel(K)
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != K.shape[0]:
        raise InputError(
            f"y must be 1-D with one label per point of K ({K.shape[0]}), got shape {y.shape}"
        )
    classes = np.unique(y)
    if classes.size != 2:
        raise InputError(f"the margin needs labels of two classes, got {classes.size}")
    signs = np.where(y == classes[1], 1.0, -1.0)
    if C is None:
        margin = komd_margin(K, signs, MARGIN_KOMD_TOL, MARGIN_MAX_ITER_PER_POINT)
        if not margin.converged:
            warn_at_caller(
                "the hard margin's QP stopped at its iteration cap (the classes' hulls "
                "nearly touch): the margin is about 0",
                ConvergenceWarning,
            )
        return 0.5 * float(np.sqrt(max(margin.value, 0.0)))
    if not (isinstance(C, Real) and not isinstance(C, bool) and np.isfinite(C) and C > 0):
        raise InputError(f"C must be a positive finite number or None, got {C!r}")
    sol = solve_svm_dual(K, signs, float(C), tol=MARGIN_SVM_TOL)
    norm_sq = float(sol.dual_coef @ K @ sol.dual_coef)
    if not norm_sq > 0:
        raise InputError("the SVM's w is 0 on this kernel (a zero or constant kernel?)")
    return 1.0 / float(np.sqrt(norm_sq))

"""The learning task of an inner problem: which SVM dual is solved for fixed
kernel weights theta. Every task's dual has the wrapper framework's form

    J(theta) = max_{beta in B}  S(beta) - 1/2 sum_m theta_m beta' K_m beta,

a maximum of functions affine in theta, so J is convex and every wrapper
method (SimpleMKL, the level method, lp-norm MKL, GMKL) minimises it over its
weight set unchanged: a task is a new inner problem behind the one oracle
(``mkl/solvers/inner.py``), not a new loop.

* :data:`CLASSIFICATION`: the C-SVM, beta = alpha * y, 0 <= alpha <= C,
  y'alpha = 0, S = 1'alpha.
* :class:`Regression` (epsilon-SVR): -C <= beta <= C, 1'beta = 0,
  S = y'beta - epsilon ||beta||_1.
* :class:`Novelty` (one-class SVM, Schoelkopf et al. 2001): 0 <= beta <= 1/(nu n),
  1'beta = 1, S = 0, so J(theta) = -min_beta 1/2 beta'K(theta)beta: learning
  the weights maximises the one-class dual value.
  ``objective_`` is J, at most 0; Schoelkopf's dual value is -J.

A task describes its dual and solves nothing: its form in libsvm's terms
(``dual_form``, a :class:`DualForm`, for the SMO of ``mkl.solvers.smo``), its
form as the box QP (Q) of ``mkl.solvers.coordinate_descent`` on factors
(``factor_form``), and the :class:`~mkl.solvers.solution.SVMSolution` with
its primal bound at a point of either (``solution``, ``factor_solution``).
Which solver solves it on which representation (libsvm, the warm-started
SMO, the coordinate descent) is chosen in one place, ``mkl.solvers.dispatch``.
On factors the intercept of the C-SVM and the SVR is a regularised constant
feature b (no 1'beta = 0 constraint; S gains -b^2/2 (1'beta)^2), while the
one-class SVM keeps 1'alpha = 1 exactly.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from .._validation import check_target_vector
from ..exceptions import InputError, warn_at_caller
from .solution import FactoredSolution, SVMSolution, box_bounds, box_of


@dataclass(frozen=True)
class DualForm:
    """A task's dual in libsvm's form (``mkl.solvers.smo``):

        min_a  1/2 a'Q a + p'a,  Q_st = sign_s sign_t K(idx_s, idx_t),
        s.t.   0 <= a_t <= upper (or upper_t),  sign'a = sign'start,

    whose coefficients are beta_i = sum_{idx_t = i} sign_t a_t; ``tol_scale``
    brings libsvm's tolerance to this scaling of a."""

    sign: np.ndarray
    idx: np.ndarray
    p: np.ndarray
    upper: float | np.ndarray  # the box: one bound for all, or each variable's
    start: np.ndarray
    tol_scale: float = 1.0

    def coefficients(self, a: np.ndarray, n: int) -> np.ndarray:
        beta = np.zeros(n)
        np.add.at(beta, self.idx, self.sign * a)
        return beta


def least_hinge_sum(rising=(), falling=(), weight=1.0, slope: float = 0.0) -> float:
    """min over b of  slope b + sum_k w_k max(0, falling_k - b) + sum_k w'_k max(0, b - rising_k),
    a convex piecewise-linear function whose minimum lies at a breakpoint: its
    value at every breakpoint from sorted prefix sums, O(N log N). ``weight``:
    one number for every term, or a pair (w' of ``rising``, w of ``falling``) of
    per-term arrays (per-sample C)."""
    rising, falling = np.asarray(rising, float), np.asarray(falling, float)
    if isinstance(weight, tuple):
        w_up, w_down = (np.broadcast_to(np.asarray(w, float), v.shape) for w, v in
                        zip(weight, (rising, falling), strict=True))  # fmt: skip
    else:
        w_up, w_down = np.full(rising.shape, float(weight)), np.full(falling.shape, float(weight))
    order_up, order_down = np.argsort(rising), np.argsort(falling)
    up, down = rising[order_up], falling[order_down]
    w_up, w_down = w_up[order_up], w_down[order_down]
    points = np.concatenate([up, down])
    if points.size == 0:
        return 0.0

    def suffix(v):  # sums of v[k:] for k = 0..len(v)
        return np.concatenate([np.cumsum(v[::-1])[::-1], [0.0]])

    def prefix(v):  # sums of v[:k] for k = 0..len(v)
        return np.concatenate([[0.0], np.cumsum(v)])

    k_down = np.searchsorted(down, points, side="right")
    k_up = np.searchsorted(up, points, side="left")
    falling_part = suffix(w_down * down)[k_down] - suffix(w_down)[k_down] * points
    rising_part = prefix(w_up)[k_up] * points - prefix(w_up * up)[k_up]
    return float(np.min(slope * points + falling_part + rising_part))


@dataclass(frozen=True)
class Classification:
    """The C-SVM."""

    name = "classification"

    def dual_form(self, y, C, n: int) -> DualForm:
        """sign = y, p = -1, box C (or C_i per point), from alpha = 0."""
        return DualForm(np.asarray(y, float), np.arange(n), np.full(n, -1.0), box_bounds(C, n),
                        np.zeros(n))  # fmt: skip

    def solution(self, a, beta, rho, quad, y, C, f, converged) -> SVMSolution:
        """The SVMSolution at alpha = a with ``quad`` = beta'K(theta)beta and
        ``f`` = K(theta)beta; ``primal`` = 1/2 quad + sum_i C_i max(0, 1 - y_i (f_i + b))
        at the best b, an upper bound on J(theta) (weak duality)."""
        C = _kept_box(C)
        weight = C if np.ndim(C) == 0 else (C[y < 0], C[y > 0])
        hinge = least_hinge_sum(falling=1.0 - f[y > 0], rising=-1.0 - f[y < 0], weight=weight)
        return SVMSolution(
            alpha=a, dual_coef=beta, bias=-rho, objective=float(a.sum() - 0.5 * quad),
            C=C, at_bound=False, converged=converged, primal=0.5 * quad + hinge,
        )  # fmt: skip

    def factor_form(self, y, C, n: int):
        """(sign, p, lo, hi, eps) of the bias-free C-SVM as the box QP (Q) of
        ``mkl.solvers.coordinate_descent`` (the box [0, C], or [0, C_i] per point)."""
        return np.asarray(y, float), np.full(n, -1.0), 0.0, box_of(C, n), 0.0

    def factor_solution(self, x, q, quad, f, v, b2, y, C, converged, epochs) -> SVMSolution:
        """The factored C-SVM's solution at alpha = x: bias b^2 y'alpha, S =
        1'alpha - b^2/2 v^2, and ``primal`` = 1/2 (quad + b^2 v^2) + sum_i C_i
        max(0, 1 - y_i f_i) with f = K(theta)beta + b^2 v (the intercept a feature)."""
        penalty = 0.5 * b2 * v * v
        C = _kept_box(C)
        hinge = float(np.sum(C * np.maximum(0.0, 1.0 - y * f)))
        return FactoredSolution(
            alpha=x, dual_coef=x * y, bias=float(b2 * v),
            objective=float(x.sum() - 0.5 * quad) - penalty, C=C, at_bound=False,
            converged=converged, bias_penalty=penalty,
            primal=0.5 * quad + penalty + hinge, epochs=epochs,
        )  # fmt: skip


@dataclass(frozen=True)
class Regression:
    """epsilon-SVR with tube half-width ``epsilon`` >= 0."""

    epsilon: float = 0.1
    name = "regression"

    def __post_init__(self):
        e = self.epsilon
        if not (isinstance(e, numbers.Real) and not isinstance(e, bool) and np.isfinite(e)):
            raise InputError(f"epsilon must be a finite number >= 0, got epsilon={e!r}")
        if e < 0:
            raise InputError(f"epsilon must be >= 0, got epsilon={e!r}")

    def targets(self, y, n: int) -> np.ndarray:
        """The real targets y as the dual takes them (:func:`check_regression_targets`)."""
        return check_regression_targets(y, n)

    def dual_form(self, y, C, n: int) -> DualForm:
        """libsvm's SVR: a = (alpha, alpha*), sign = (1, -1), p = (epsilon - y,
        epsilon + y), box C, beta = alpha - alpha*."""
        y = np.asarray(y, float)
        return DualForm(
            np.concatenate([np.ones(n), -np.ones(n)]), np.concatenate([np.arange(n)] * 2),
            np.concatenate([self.epsilon - y, self.epsilon + y]), _both_boxes(finite_C(C), n),
            np.zeros(2 * n),
        )  # fmt: skip

    def solution(self, a, beta, rho, quad, y, C, f, converged) -> SVMSolution:
        """S = y'beta - epsilon ||beta||_1; ``primal`` = 1/2 quad +
        C sum_i max(0, |y_i - f_i - b| - epsilon) at the best b."""
        linear = float(y @ beta - self.epsilon * np.abs(beta).sum())
        r = y - f
        C = _kept_box(C)
        weight = C if np.ndim(C) == 0 else (C, C)
        loss = least_hinge_sum(falling=r - self.epsilon, rising=r + self.epsilon, weight=weight)
        return SVMSolution(
            alpha=np.abs(beta), dual_coef=beta, bias=-rho, objective=linear - 0.5 * quad,
            C=C, at_bound=False, converged=converged, linear=linear,
            primal=0.5 * quad + loss,
        )  # fmt: skip

    def factor_form(self, y, C, n: int):
        """(sign, p, lo, hi, eps) of the factored SVR (R) as the box QP (Q)."""
        C = box_of(finite_C(C), n)
        return np.ones(n), -np.asarray(y, float), -C, C, float(self.epsilon)

    def factor_solution(self, x, q, quad, f, v, b2, y, C, converged, epochs) -> SVMSolution:
        """At beta = x: S = y'beta - epsilon ||beta||_1 - b^2/2 v^2, ``primal`` =
        1/2 (quad + b^2 v^2) + C sum_i max(0, |y_i - f_i| - epsilon)."""
        penalty = 0.5 * b2 * v * v
        fit = float(y @ x - self.epsilon * np.abs(x).sum())
        C = _kept_box(C)
        loss = float(np.sum(C * np.maximum(0.0, np.abs(y - f) - self.epsilon)))
        return FactoredSolution(
            alpha=np.abs(x), dual_coef=x, bias=float(b2 * v), objective=fit - penalty - 0.5 * quad,
            C=C, at_bound=False, converged=converged, linear=fit - penalty,
            primal=0.5 * quad + penalty + loss, epochs=epochs,
        )  # fmt: skip


@dataclass(frozen=True)
class Novelty:
    """The one-class SVM with ``nu`` in (0, 1]: an upper bound on the fraction
    of training points outside the estimated support, a lower bound on the
    fraction of support vectors."""

    nu: float = 0.5
    name = "novelty"

    def __post_init__(self):
        nu = self.nu
        if not (
            isinstance(nu, numbers.Real)
            and not isinstance(nu, bool)
            and np.isfinite(nu)
            and 0 < nu <= 1
        ):
            raise InputError(f"nu must be a number in (0, 1], got nu={nu!r}")

    def targets(self, y, n: int) -> np.ndarray:
        """Ones: every training point is normal (``y`` is ignored)."""
        return np.ones(n)

    def dual_form(self, y, C, n: int) -> DualForm:
        """sign = 1, p = 0, box 1/(nu n), 1'alpha = 1; libsvm's alpha is nu n
        times this one, and so is its tolerance."""
        upper = 1.0 / (self.nu * n)
        start = np.zeros(n)  # libsvm's start: the first points at the box, one part-filled
        full = min(int(1.0 / upper), n)
        start[:full] = upper
        if full < n:
            start[full] = max(1.0 - full * upper, 0.0)
        return DualForm(np.ones(n), np.arange(n), np.zeros(n), upper, start, upper)

    def solution(self, a, beta, rho, quad, y, C, f, converged) -> SVMSolution:
        """S = 0; ``primal`` = 1/2 quad - rho + 1/(nu n) sum_i max(0, rho - f_i) at
        the best rho (Schoelkopf et al. 2001, eq. 3)."""
        upper = 1.0 / (self.nu * len(beta))
        loss = least_hinge_sum(rising=f, weight=upper, slope=-1.0)
        return SVMSolution(
            alpha=beta, dual_coef=beta, bias=-rho, objective=-0.5 * quad, C=upper,
            at_bound=False, converged=converged, linear=0.0, primal=0.5 * quad + loss,
        )  # fmt: skip


def _both_boxes(C, n: int):
    """The SVR's bound on (alpha, alpha*): C, or (C_i, C_i) per point."""
    U = box_of(C, n)
    return U if np.ndim(U) == 0 else np.concatenate([U, U])


def _kept_box(C) -> float | np.ndarray:
    """The box a solution keeps: C as a float, or C_i per point as floats."""
    return float(C) if np.ndim(C) == 0 else np.asarray(C, float)


def finite_C(C):
    """``C`` itself, refused when it is None (hard margin): the SVR's box."""
    if C is None:
        raise InputError("regression needs a finite C (there is no hard-margin SVR)")
    return C


CLASSIFICATION = Classification()

# y with at most this many distinct integer values looks like class labels
CLASS_LIKE_VALUES = 10


def check_regression_targets(y, n: int) -> np.ndarray:
    """Real targets: 1-D, n of them, numeric and finite. Targets that look like
    class labels (at most CLASS_LIKE_VALUES distinct integers) are fitted, with
    a warning."""
    y = check_target_vector(y, n, "targets", "a regressor needs targets y")
    if y.dtype.kind not in "biuf":
        raise InputError(f"regression targets must be numbers, got dtype {y.dtype}")
    y = y.astype(np.float64)
    if not np.isfinite(y).all():
        raise InputError("y contains NaN or inf")
    values = np.unique(y)
    if values.size <= CLASS_LIKE_VALUES and np.all(values == np.round(values)):
        warn_at_caller(
            f"y has only {values.size} distinct integer values, like class labels; "
            "fitting a regression (for classification use mkl.make_estimator(name))",
            UserWarning,
        )
    return y

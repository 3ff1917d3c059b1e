"""SpicyMKL (Suzuki & Tomioka, Machine Learning 85, 2011): the proximal
minimisation (dual augmented Lagrangian) of block-norm regularised MKL.

The problem, with f_m = K_m alpha_m, ||f_m|| = sqrt(alpha_m' K_m alpha_m) and
the hinge loss:

    min_{alpha, b}  C sum_i max(0, 1 - y_i (sum_m K_m alpha_m + b)_i)
                    + sum_m psi(||f_m||),     psi(x) = C1 x + C2/2 x^2

(``C``: the loss weight, the soft margin as in every method of the library;
``C1``: the block-L1 part, sparse kernels; ``C2``: the elastic net's L2 part.
The paper's two parameters are C1 and C2 at C = 1; only the ratios matter,
P(C, C1, C2) = C P(1, C1 / C, C2 / C). C2 = 0 is block-L1 MKL, whose
regularisation path is L1-MKL's (SimpleMKL penalises (sum_m ||f_m||)^2: the
same solutions under a data-dependent map between the two Cs, not C = 1/C1).)
Each outer step t is a proximal
step with parameter gamma_t:

    (alpha, b)^{t+1} = argmin  P(alpha, b) + 1/(2 gamma_t) (sum_m ||f_m - f_m^t||^2 + (b - b^t)^2)

solved through its dual, a smooth problem in the loss's dual variable only
(the paper's inner problem). With a_i = y_i beta_i the hinge
conjugate's domain, w_m = alpha_m^t + gamma y*a and r_m = ||K_m^{1/2} w_m||,

    phi(a) = -1'a + sum_m max(0, r_m - gamma C1)^2 / (2 gamma (1 + gamma C2))
             + gamma/2 (y'a)^2 + b^t y'a,

whose gradient is -1 + y * (sum_m c_m K_m w_m) + (gamma y'a + b^t) y with
c_m = max(0, r_m - gamma C1) / ((1 + gamma C2) r_m). Then

    alpha_m^{t+1} = c_m w_m      (the block soft-threshold: kernels with r_m <= gamma C1 drop out)
    b^{t+1} = b^t + gamma y'a

and gamma grows geometrically (``gamma`` start, doubled each step), which
makes the method converge super-linearly (the paper's Theorem 2). The paper
minimises phi by Newton's method; the hinge conjugate's domain is a box, so
here each Newton model is minimised over the box (inexact proximal Newton,
``_InnerProblem``): each evaluation of phi is one pass over the bank (K_m w_m
for all m), each Hessian one pass over the kernels still active.

Stopping: the relative duality gap of the problem itself. The primal value P
at (alpha, b); the dual D(a) = 1'a - sum_m psi*(||K_m^{1/2}(y*a)||) on the
box [0, C]^n with y'a = 0, psi*(s) = max(0, s - C1)^2 / (2 C2) (C2 > 0) or the
indicator of s <= C1 (C2 = 0): the inner solution made feasible (the larger
class's a scaled down to balance; for C2 = 0 scaled into the ball, for C2 > 0
the best scaling along the ray), so every reported gap is certified.

The kernel weights: at the optimum alpha_m = eta_m beta with one vector beta
and eta_m = ||f_m|| / (C1 + C2 ||f_m||) (the stationarity of psi), so the
classifier is an SVM-like sum_m eta_m K_m beta + b; ``weights_`` are eta
normalised to sum 1 and the test scores use each kernel's own alpha_m.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.optimize import minimize_scalar
from sklearn.utils._param_validation import Interval

from ..banks.algebra import combine, quadratic_forms, spectral_ratio
from ..solvers.box_qp import box_qp
from .base import BaseMKL, BinaryFit
from .iterations import IterationLog

# the inner problem's budget: at most INNER_NEWTON_STEPS Newton steps
# per outer step, stopped once the projected gradient is below INNER_TOL in every
# coordinate (phi's gradient is -1 + ..., of order one); a step stopped by the
# budget is still a valid proximal step's approximation, and the certified
# outer gap tells how good
INNER_NEWTON_STEPS = 100
INNER_TOL = 1e-10
# Armijo's sufficient decrease along the projected path, and its backtracking
ARMIJO = 1e-4
BACKTRACKS = 40
# below a predicted decrease of this share of |phi| no line search: phi, a sum
# of n terms, is evaluated only to about 1e-13 of itself, and line searches
# below that fail on rounding (measured); the projected gradient judges instead
FLOOR = 1e-12

# gamma_{t+1} = GAMMA_GROWTH gamma_t, at most GAMMA_MAX: past it the inner
# problem's conditioning, not the proximal term, limits the precision (on
# 40-point problems the certified gap reaches 1e-8 - 5e-7 whatever the cap
# from 1e2 to 1e8; the inner solves' precision is the floor)
GAMMA_GROWTH = 2.0
GAMMA_MAX = 1e4


class _Point:
    """phi and what it is made of at one box point a (one pass over the bank):
    W (M, n) with w_m = alpha_m^t + gamma y*a, KW = K_m w_m, r_m = ||K_m^{1/2} w_m||,
    c_m the soft-threshold factors, phi's value and gradient."""

    __slots__ = ("a", "W", "KW", "r", "c", "value", "grad")


def _violation(pt: _Point, upper: float) -> float:
    """The largest projected gradient of phi over the box [0, upper]^n at pt."""
    return float(np.abs(pt.a - np.clip(pt.a - pt.grad, 0.0, upper)).max())


class _InnerProblem:
    """The proximal step's dual phi (module docstring) at fixed alpha^t, b^t,
    gamma, minimised over the box [0, C]^n by inexact proximal Newton (Lee,
    Sun & Saunders, SIAM J. Optim. 24, 2014): at each iterate the quadratic
    model g'd + 1/2 d'Hd is minimised over the box (``box_qp``, to a share of
    the current violation), and the step to that point is backtracked
    (Armijo). Suzuki & Tomioka minimise phi by Newton's method; the hinge
    conjugate's box is what the model's constraints add.

    phi's Hessian in a (with u_m = K_m w_m, the kernels with r_m > gamma C1):

        D_y [ gamma/(1 + gamma C2) sum_m ((1 - gamma C1/r_m) K_m
              + gamma C1/r_m^3 u_m u_m') + gamma 11' ] D_y

    (the derivative of y*(c_m K_m w_m) through w = alpha + gamma y*a); forming
    it reads the active kernels once, as an evaluation does."""

    def __init__(self, K, y, alpha, b, gamma, C1, C2):
        self.K, self.y, self.alpha, self.b = K, y, alpha, b
        self.gamma, self.C1, self.C2 = gamma, C1, C2
        self.passes = 0

    def evaluate(self, a) -> _Point:
        K, y, gamma = self.K, self.y, self.gamma
        pt = _Point()
        pt.a = a
        pt.W = self.alpha + gamma * (y * a)
        pt.KW = np.einsum("mij,mj->mi", K, pt.W)
        self.passes += 1
        pt.r = np.sqrt(np.maximum(np.einsum("mi,mi->m", pt.W, pt.KW), 0.0))
        excess = np.maximum(0.0, pt.r - gamma * self.C1)
        scale = 1.0 + gamma * self.C2
        pt.c = np.divide(excess, scale * pt.r, out=np.zeros(len(pt.r)), where=pt.r > 0)
        ya = float(y @ a)
        pt.value = -a.sum() + float(excess @ excess) / (2.0 * gamma * scale)
        pt.value += 0.5 * gamma * ya * ya + self.b * ya
        pt.grad = -1.0 + y * (pt.c @ pt.KW) + (gamma * ya + self.b) * y
        return pt

    def hessian(self, pt: _Point) -> np.ndarray:
        gamma, C1, y = self.gamma, self.C1, self.y
        active = np.flatnonzero(pt.c > 0)
        scale = gamma / (1.0 + gamma * self.C2)
        r = pt.r[active]
        coef = np.zeros(len(pt.r))
        coef[active] = scale * (1.0 - gamma * C1 / r)
        H = combine(self.K, coef)  # reads the active kernels only
        self.passes += active.size / len(pt.r)
        U = pt.KW[active]
        H += U.T @ ((scale * gamma * C1 / r**3)[:, None] * U)
        H += gamma
        return H * np.outer(y, y)

    def minimise(self, a, upper: float):
        """The minimiser over [0, upper]^n from a; returns (a, its _Point, passes)."""
        pt = self.evaluate(a)
        for _ in range(INNER_NEWTON_STEPS):
            size = _violation(pt, upper)
            if size <= INNER_TOL:
                break
            # Newton's model over the box, solved to a share of the violation that
            # shrinks with it (inexact proximal Newton: superlinear near the end)
            H = self.hessian(pt)
            a, g = pt.a, pt.grad
            target, _, _ = box_qp(H, g - H @ a, 0.0, upper, a, tol=min(0.1, size) * size)
            step = target - a
            if -float(g @ step) <= FLOOR * (1.0 + abs(pt.value)):
                # below phi's rounding a line search cannot judge the step: the
                # full step, kept while it lowers the violation
                trial = self.evaluate(target)
                if _violation(trial, upper) >= size:
                    break
            else:  # Newton's step, else a projected gradient step (Armijo)
                trial = self._descend(pt, step, upper) or self._descend(pt, -g, upper)
                if trial is None:  # no decrease at the precision of floating point
                    break
            pt = trial
        return pt.a, pt, self.passes

    def _descend(self, pt: _Point, direction, upper: float) -> _Point | None:
        """Armijo backtracking along a(t) = P(a + t direction) (for Newton's step,
        which stays in the box, the segment to the model's minimiser), from the
        step that spans the box at most: the first a(t) with
        phi(a(t)) <= phi(a) + ARMIJO g'(a(t) - a) < phi(a) (in floating point), or None."""
        a, g = pt.a, pt.grad
        longest = float(np.abs(direction).max())
        if longest == 0.0:
            return None
        t = min(1.0, upper / longest)
        for _ in range(BACKTRACKS):
            trial = self.evaluate(np.clip(a + t * direction, 0.0, upper))
            slope = float(g @ (trial.a - a))
            if slope < 0.0 and trial.value <= pt.value + ARMIJO * slope < pt.value:
                return trial
            t *= 0.5
        return None


class SpicyMKL(BaseMKL):
    """SpicyMKL (Suzuki & Tomioka 2011) with the hinge loss of weight ``C`` and
    the elastic-net block regulariser C1 ||f_m|| + C2/2 ||f_m||^2 (module docstring).

    ``objective_`` is the primal value P at the returned solution, ``gap_`` its
    certified relative duality gap; ``weights_`` the kernel weights
    eta_m / sum eta (eta_m = ||f_m|| / (C1 + C2 ||f_m||)). Dense banks only.

    Registered as ``spicymkl``; Yang et al. 2011 (Table IV) ran it with C1
    and C2 in {1e-3, ..., 1e3}."""

    _parameter_constraints: dict = {
        **BaseMKL._parameter_constraints,
        # finite: the hinge conjugate's box [0, C]^n (no hard margin)
        "C": [Interval(Real, 0, np.inf, closed="neither")],
        "C1": [Interval(Real, 0, np.inf, closed="neither")],
        "C2": [Interval(Real, 0, np.inf, closed="left")],
        "gamma": [Interval(Real, 0, np.inf, closed="neither")],
    }

    def __init__(self, C=1.0, C1=1.0, C2=0.0, gamma=1.0, tol=1e-3, max_iter=100, verbose=0):
        self.C = C
        self.C1 = C1
        self.C2 = C2
        self.gamma = gamma
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose

    # ------------------------------------------------------------ the problem's values
    def _psi(self, norms):
        return float(np.sum(self.C1 * norms + 0.5 * self.C2 * norms**2))

    def _primal(self, y, alpha, K_alpha, b):
        """P(alpha, b) and the norms ||f_m||, from the products K_m alpha_m (M, n)."""
        f = K_alpha.sum(axis=0) + b
        norms = np.sqrt(np.maximum(np.einsum("mi,mi->m", alpha, K_alpha), 0.0))
        hinge = float(np.maximum(0.0, 1.0 - y * f).sum())
        return float(self.C) * hinge + self._psi(norms), norms

    def _dual(self, K, y, a):
        """A certified lower bound D from the box point a (module docstring)."""
        a = np.clip(a, 0.0, float(self.C))
        pos, neg = a[y > 0].sum(), a[y < 0].sum()  # y'a = 0: the larger side scaled down
        if pos > neg:
            a = np.where(y > 0, a * (neg / pos), a)
        elif neg > pos:
            a = np.where(y < 0, a * (pos / neg), a)
        s = np.sqrt(np.maximum(quadratic_forms(K, y * a), 0.0))  # ||K_m^{1/2} beta||
        total = float(a.sum())
        C1, C2 = float(self.C1), float(self.C2)
        if C2 == 0.0:  # the ball s <= C1: scaled into it
            top = float(s.max())
            return total * (min(1.0, C1 / top) if top > 0 else 1.0)

        def negative_dual(t):
            return -(t * total - float(np.sum(np.maximum(0.0, t * s - C1) ** 2)) / (2.0 * C2))

        best = minimize_scalar(negative_dual, bounds=(0.0, 1.0), method="bounded")
        return max(-float(best.fun), -negative_dual(1.0), 0.0)

    # ------------------------------------------------------------ the method
    def _prepare(self, K, K_mean):
        """The bank in float64, once for all one-vs-rest tasks."""
        return np.asarray(K, dtype=np.float64)

    def _fit_binary(self, K, y, K_mean):
        K = self._shared
        M, n = K.shape[0], K.shape[1]
        C1, C2 = float(self.C1), float(self.C2)
        alpha, b = np.zeros((M, n)), 0.0
        a = np.zeros(n)
        gamma = float(self.gamma)
        log = IterationLog("SpicyMKL", self.tol, self.max_iter, verbose=self.verbose)
        passes = 0
        best_dual = -np.inf

        for _ in range(self.max_iter):
            inner = _InnerProblem(K, y, alpha, b, gamma, C1, C2)
            a, point, inner_passes = inner.minimise(a, float(self.C))
            passes += inner_passes
            W, KW, c = point.W, point.KW, point.c  # at the returned point
            alpha = c[:, None] * W  # the block soft-threshold
            b = b + gamma * float(y @ a)
            primal, norms = self._primal(y, alpha, c[:, None] * KW, b)  # K_m alpha_m = c_m K_m w_m
            best_dual = max(best_dual, self._dual(K, y, a))  # every D(a) is a lower bound
            passes += 1
            log.consider(primal, (alpha, b, norms))
            gap = (log.best_objective - best_dual) / max(abs(log.best_objective), 1e-300)
            eta = norms / (C1 + C2 * norms)
            log.record(
                primal, gap=gap, weights=eta / eta.sum() if eta.sum() > 0 else eta, passes=passes
            )
            if gap <= self.tol:
                log.stop("gap", converged=True)
                break
            gamma = min(GAMMA_GROWTH * gamma, GAMMA_MAX)
        log.finish()
        alpha, b, norms = log.best
        eta = norms / (C1 + C2 * norms)
        total = float(eta.sum())
        weights = eta / total if total > 0 else eta
        # each kernel's own alpha_m at test time: weights_m * test_coef_m = alpha_m
        test_coef = np.divide(
            alpha, weights[:, None], out=np.zeros_like(alpha), where=weights[:, None] > 0
        )
        dual_coef = test_coef[weights > 0].mean(axis=0) if total > 0 else np.zeros(n)
        return BinaryFit(
            weights=weights,
            dual_coef=dual_coef,
            intercept=float(b),
            objective=log.best_objective,
            test_coef=test_coef,
            spectral_ratio=spectral_ratio(combine(K, weights)) if total > 0 else float("nan"),
            **log.fit_fields(),
        )

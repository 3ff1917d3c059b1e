"""Spectral projected gradient MKL (Jain, Vishwanathan & Varma, "SPF-GMKL:
Generalized Multiple Kernel Learning with a Million Kernels", KDD 2012,
SPG-GMKL) on the simplex (L1-MKL) and the elastic-net ball (GMKL's Theta).

The method minimises J(theta) = max_alpha 1'alpha - 1/2 sum_m theta_m q_m(alpha)
over Theta by the spectral projected gradient method of Birgin, Martinez &
Raydan (SIAM J. Optim. 2000, Algorithm SPG2), as SPG-GMKL does (its
Algorithm 1: the SVM solved to a precision epsilon, the spectral step
length, the projected direction, the non-monotone step, the precision
updated). With g_k = -1/2 q(alpha_k), the gradient of J at theta_k (Danskin):

  1. d_k = P(theta_k - a_k g_k) - theta_k,  P the Euclidean projection onto
     Theta (``domains.py``: the sort-based projection onto the simplex, and
     onto the elastic-net ball theta(mu) = max(0, z - mu v) / (1 + 2 mu (1 - v))
     with the multiplier mu of the tight constraint a monotone 1-D root),
     a_k the spectral (Barzilai-Borwein) step length;
  2. a non-monotone Armijo search (Grippo, Lampariello & Lucidi 1986) along
     d_k: the first lambda in 1, and then safeguarded quadratic interpolation,
     with J(theta_k + lambda d_k) <= max_{j < memory} J(theta_{k-j}) + gamma lambda g_k'd_k
     (gamma = 1e-4); each trial one warm SVM solve, usually one a step;
  3. s = theta_{k+1} - theta_k, y = g_{k+1} - g_k, and
     a_{k+1} = s's / s'y (BB1), clipped to [a_min, a_max] (a_max when s'y <= 0)
     and to at most twice a_k (:data:`STEP_GROWTH`, ours: Birgin et al.'s
     convergence holds for any step in [a_min, a_max]; uncapped, a long BB
     step after a short one threw the iterates across the set, where the
     non-monotone test, still referenced to the uniform start's J, accepted
     them: ``benchmarks/solver_quality.md``, spg's step growth).

Warm, inexact SVM solves (SPG-GMKL's precision epsilon, loose far from the
optimum and tightened near it): every SVM after the first is solved on the
wrapper's engine (``Oracle.refine``: ``mkl.solvers.smo.BankSMO`` on a dense
bank, coordinate descent on factors) from the previous multipliers, to
libsvm's tolerance equal to the relative gap certified so far (0.2 after the
uniform start here, then falling with the gap; never below ``svm_tol``). The
engine forms only the kernel rows its working sets read and keeps the
per-kernel products K_m beta, so q, the gradient, needs no pass over the
bank. A loosely solved SVM's dual value is no bound on J(theta), but its
primal value at the same multipliers is an upper bound (weak duality), and
that is the J such a point carries, in the Armijo test and in the gap; its
cut J >= S(alpha) - 1/2 q(alpha)'theta and its dual bound hold for any
feasible alpha. The gap is the level method's (``l1._CuttingPlaneMKL``):
the best J against the larger of the cutting-plane model's minimum and the
best dual bound D(alpha) = S(alpha) - 1/2 sigma_Theta(q(alpha)). Once it is
within ``tol`` the SVM at the best weights is solved to ``svm_tol``
(``WrapperMKL._confirm``), whose J is at most the bound it replaces: the
fit returns that exact point, with its certified gap.

Every iterate lies in Theta (theta_k + lambda d_k is a convex combination of
two points of it). Without an engine (hard margin; the one-class SVM on
factors) every point is an SVM solved to ``svm_tol`` on its formed
combination.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from .domains import ElasticNetBall, Simplex
from .l1 import _CuttingPlaneMKL
from .wrapper import LoopState, Oracle, Point, WrapperMKL, inexact_precision

ARMIJO = 1e-4  # gamma: the sufficient decrease (Birgin et al. 2000)
# [a_min, a_max] of the spectral step, in units of 1 / (max_m g_m - min_m g_m):
# Birgin et al.'s 1e-30 and 1e30 assume a scaled problem; beyond these a step
# moves theta across the whole set or not at all
STEP_BOUNDS = (1e-10, 1e10)
INTERPOLATION = (0.1, 0.9)  # sigma_1, sigma_2: the safeguards of the quadratic interpolation
STEP_GROWTH = 2.0  # a spectral step is at most this multiple of the previous one (step 3)
MAX_TRIALS = 40


@dataclass
class SPGState(LoopState):
    """The loop state (``wrapper.LoopState``) and what SPG keeps between steps:
    the previous iterate's weights and gradient, the spectral step length, the
    objective values of the last ``memory`` accepted iterates, and the point
    where a search of exact solves found none (rounding near the optimum): the
    loop then runs out its iterations without solving again, and the fit
    reports the gap it reached as not converged. ``exact`` (``LoopState``) is
    set once a search finds no decrease among loosely solved trials."""

    previous_theta: np.ndarray | None = None
    previous_gradient: np.ndarray | None = None
    step_length: float | None = None
    recent: list[float] = field(default_factory=list)
    stuck_at: Point | None = None  # where the search found no decrease


class SPGMKL(_CuttingPlaneMKL):
    """SPG-GMKL (Jain, Vishwanathan & Varma, KDD 2012): the spectral projected
    gradient method with warm, inexact SVM solves (module docstring) over the
    simplex (``v=1``, L1-MKL, the default) or the elastic-net ball
    {theta >= 0 : v 1'theta + (1 - v)||theta||^2 <= 1} (``0 <= v < 1``,
    GMKL's Theta; v = 0 is L2-MKL).

    ``memory``: how many accepted iterates the non-monotone Armijo test looks
    back over (M = 10 in Birgin et al. 2000; 1 makes it monotone).
    """

    _parameter_constraints: dict = {
        **WrapperMKL._parameter_constraints,
        "v": [Interval(Real, 0, 1, closed="both")],
        "memory": [Interval(Integral, 1, None, closed="left")],
    }

    inexact = True

    def __init__(
        self,
        C=1.0,
        v=1.0,
        tol=1e-2,
        max_iter=500,
        svm_tol=1e-3,
        memory=10,
        verbose=0,
        task="classification",
        multiclass="ovr",
    ):
        super().__init__(
            C=C, tol=tol, max_iter=max_iter, svm_tol=svm_tol, verbose=verbose, task=task,
            multiclass=multiclass,
        )  # fmt: skip
        self.v = v
        self.memory = memory

    def _domain(self):
        return Simplex() if self.v == 1.0 else ElasticNetBall(self.v)

    def _loop_state(self, domain) -> SPGState:
        return SPGState(domain)

    def _step(self, oracle: Oracle, state: SPGState, pt: Point) -> Point:
        if state.stuck_at is pt:
            return pt
        theta, domain = pt.theta, state.domain
        gradient = -0.5 * oracle.q(pt)  # dJ/dtheta (Danskin); q is the gap's
        spread = float(np.ptp(gradient)) or float(np.abs(gradient).max()) or 1.0
        a_min, a_max = STEP_BOUNDS[0] / spread, STEP_BOUNDS[1] / spread
        if state.step_length is None:  # Birgin et al.: 1 / ||P(theta - g) - theta||_inf
            first = float(np.abs(domain.project(theta - gradient) - theta).max())
            state.step_length = 1.0 / first if first > 0 else a_max
        else:  # step 3: the spectral step from the last move
            s = theta - state.previous_theta
            y = gradient - state.previous_gradient
            sy = float(s @ y)
            ratio = float(s @ s) / sy if sy > 0 else a_max
            longest = max(a_min, min(a_max, STEP_GROWTH * state.step_length))
            state.step_length = float(np.clip(ratio, a_min, longest))
        state.previous_theta, state.previous_gradient = theta, gradient
        state.recent = [*state.recent, pt.J][-self.memory :]

        d = domain.project(theta - state.step_length * gradient) - theta  # step 1
        slope = float(gradient @ d)  # g'd < 0 unless theta is stationary
        if not slope < 0:  # stationary at these multipliers: the gap left is the
            # SVM's own (none for an exact point: the gap test ends the loop)
            return pt if pt.exact else oracle.refine(theta, 0.0)
        # the SVM's precision: libsvm's tolerance at the relative gap so far
        precision = inexact_precision(state)
        reference = max(state.recent)
        lam = 1.0
        for _ in range(MAX_TRIALS):  # step 2: non-monotone Armijo
            trial = oracle.refine(np.maximum(theta + lam * d, 0.0), precision)
            if trial.J <= reference + ARMIJO * lam * slope:
                return trial
            # the minimiser of the quadratic through J(theta), its slope and J(trial),
            # kept within [sigma_1, sigma_2] lam
            curvature = trial.J - pt.J - lam * slope
            low, high = INTERPOLATION[0] * lam, INTERPOLATION[1] * lam
            guess = -0.5 * lam * lam * slope / curvature if curvature > 0 else high
            lam = guess if low <= guess <= high else 0.5 * lam
        if trial.exact:
            state.stuck_at = pt  # no decrease along d within the trials
        else:  # the loose solves' upper bounds hid the decrease: solve exactly from here
            state.exact = True
        return pt

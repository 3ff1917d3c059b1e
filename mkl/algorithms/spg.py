"""Spectral projected gradient MKL (Jain, Vishwanathan & Varma, "SPF-GMKL:
Generalized Multiple Kernel Learning with a Million Kernels", KDD 2012,
SPG-GMKL) on the simplex (L1-MKL) and the elastic-net ball (GMKL's Theta).

The method minimises J(theta) = max_alpha 1'alpha - 1/2 sum_m theta_m q_m(alpha)
over Theta by the spectral projected gradient method of Birgin, Martinez &
Raydan (SIAM J. Optim. 2000, Algorithm SPG2), as SPG-GMKL does (its
Algorithm 1). With g_k = -1/2 q(alpha_k), the gradient of J at theta_k
(Danskin):

  1. d_k = P(theta_k - a_k g_k) - theta_k,  P the Euclidean projection onto
     Theta, a_k the spectral (Barzilai-Borwein) step length;
  2. a non-monotone Armijo search (Grippo, Lampariello & Lucidi 1986) along
     d_k: the first lambda in 1, and then safeguarded quadratic interpolation,
     with J(theta_k + lambda d_k) <= max_{j < memory} J(theta_{k-j}) + gamma lambda g_k'd_k
     (gamma = 1e-4); each trial is one SVM solve on K(theta_k) + lambda K(d_k),
     warm-started at the previous alpha, and no pass over the bank;
  3. s = theta_{k+1} - theta_k, y = g_{k+1} - g_k, and
     a_{k+1} = s's / s'y (BB1), clipped to [a_min, a_max] (a_max when s'y <= 0).

Every iterate lies in Theta (theta_k + lambda d_k is a convex combination of
two points of it), so the duality gap of the wrapper framework
(``wrapper.py``: J(theta) against D(alpha) = 1'alpha - 1/2 sigma_Theta(q))
certifies the stop. An iteration costs one pass for q (the gradient, which
the gap needs anyway), the combination K(P(theta_k - a_k g_k)), which reads
only the kernels the projection keeps (few, on the simplex), and one SVM
solve per trial, usually one. SPG-GMKL's further device, SVMs solved loosely at first, is not used:
a loosely solved SVM's dual value is no upper bound on J, and the gap here
stays a certificate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from .domains import ElasticNetBall, Simplex
from .wrapper import LoopState, Oracle, Point, WrapperMKL, along

ARMIJO = 1e-4  # gamma: the sufficient decrease (Birgin et al. 2000)
# [a_min, a_max] of the spectral step, in units of 1 / (max_m g_m - min_m g_m):
# Birgin et al.'s 1e-30 and 1e30 assume a scaled problem; beyond these a step
# moves theta across the whole set or not at all
STEP_BOUNDS = (1e-10, 1e10)
INTERPOLATION = (0.1, 0.9)  # sigma_1, sigma_2: the safeguards of the quadratic interpolation
MAX_TRIALS = 40


@dataclass
class SPGState(LoopState):
    """The loop state (``wrapper.LoopState``) and what SPG keeps between steps:
    the previous iterate's weights and gradient, the spectral step length and
    the objective values of the last ``memory`` accepted iterates, and the
    point where a search found no decrease (rounding in the SVM solves near
    the optimum): the loop then runs out its iterations without solving
    again, and the fit reports the gap it reached as not converged."""

    previous_theta: np.ndarray | None = None
    previous_gradient: np.ndarray | None = None
    step_length: float | None = None
    recent: list[float] = field(default_factory=list)
    stuck_at: Point | None = None  # where the search found no decrease


class SPGMKL(WrapperMKL):
    """SPG-GMKL (Jain, Vishwanathan & Varma, KDD 2012): the spectral projected
    gradient method (module docstring) over the simplex (``v=1``, L1-MKL, the
    default) or the elastic-net ball {theta >= 0 : v 1'theta + (1 - v)||theta||^2 <= 1}
    (``0 <= v < 1``, GMKL's Theta; v = 0 is L2-MKL).

    ``memory``: how many accepted iterates the non-monotone Armijo test looks
    back over (M = 10 in Birgin et al. 2000; 1 makes it monotone).
    """

    _parameter_constraints: dict = {
        **WrapperMKL._parameter_constraints,
        "v": [Interval(Real, 0, 1, closed="both")],
        "memory": [Interval(Integral, 1, None, closed="left")],
    }

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
        gradient = -0.5 * oracle.q(pt)  # dJ/dtheta (Danskin); q is the gap's pass
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
            state.step_length = float(np.clip(ratio, a_min, a_max))
        state.previous_theta, state.previous_gradient = theta, gradient
        state.recent = [*state.recent, pt.J][-self.memory :]

        target = domain.project(theta - state.step_length * gradient)  # step 1
        d = target - theta
        slope = float(gradient @ d)  # g'd < 0 unless theta is stationary
        if not slope < 0:
            return pt  # stationary: the gap test ends the loop
        # K(d) = K(P(...)) - K(theta): the projection is sparse on the simplex,
        # and a combination reads only the kernels of nonzero weight
        K_d = oracle.combine(target)
        K_d -= pt.K
        reference = max(state.recent)
        lam = 1.0
        for _ in range(MAX_TRIALS):  # step 2: non-monotone Armijo
            trial = oracle.evaluate(np.maximum(theta + lam * d, 0.0), along(pt.K, lam, K_d))
            if trial.J <= reference + ARMIJO * lam * slope:
                return trial
            # the minimiser of the quadratic through J(theta), its slope and J(trial),
            # kept within [sigma_1, sigma_2] lam
            curvature = trial.J - pt.J - lam * slope
            low, high = INTERPOLATION[0] * lam, INTERPOLATION[1] * lam
            guess = -0.5 * lam * lam * slope / curvature if curvature > 0 else high
            lam = guess if low <= guess <= high else 0.5 * lam
        state.stuck_at = pt  # no decrease along d within the trials
        return pt

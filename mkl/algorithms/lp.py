"""lp-norm MKL (Kloft, Brefeld, Sonnenburg, Laskov, Mueller, Zien, NIPS 2009):
min J(theta) over {theta >= 0, ||theta||_p <= 1}, p > 1, by three weight
updates in the shared wrapper framework. All stop on the relative duality gap
with the norm's dual objective D(alpha) = 1'alpha - 1/2 ||q(alpha)||_{p*}
(eq. 9, 1/p + 1/p* = 1).

For fixed alpha the primal weights are w_m = theta_m sum_i alpha_i y_i psi_m(x_i),
so ||w_m||^2 = theta_m^2 q_m, and the theta-subproblem
min sum_m ||w_m||^2 / (2 theta_m) s.t. ||theta||_p <= 1 has the closed form
theta_m = ||w_m||^{2/(p+1)} / (sum_k ||w_k||^{2p/(p+1)})^{1/p}.

* :class:`LpAnalytic` -- that closed form each iteration.
* :class:`LpNewton` -- sec. 2.4.1: a Newton step on log(theta) for the
  Lagrangian L = sum ||w_m||^2/(2 theta_m) + delta/p (||theta||_p^p - 1), with
  a backtracking line search on L, interleaved with SVM solves whose precision
  tightens as the gap closes.
* :class:`LpCuttingPlane` -- sec. 2.4.2: the semi-infinite program (12) by
  cutting planes over the exact constraint ||theta||_p^p <= 1 (power cones),
  whose model minimiser is the limit of the paper's re-expanded second-order
  Taylor models.
"""

from __future__ import annotations

import numpy as np

from .domains import LpBall
from .wrapper import Oracle, Point, WrapperMKL, record_cut, relative_gap


class _LpMKL(WrapperMKL):
    """``interleaved`` (default True): weight steps between chunks of SVM
    working-set steps, the paper's optimisation (sec. 2.4; ``wrapper.py``);
    False solves the SVM to ``svm_tol`` before every weight step."""

    _parameter_constraints: dict = {**WrapperMKL._parameter_constraints, "interleaved": ["boolean"]}

    def __init__(
        self,
        C=1.0,
        p=2.0,
        tol=1e-2,
        max_iter=500,
        svm_tol=1e-3,
        verbose=0,
        task="classification",
        multiclass="ovr",
        interleaved=True,
    ):
        super().__init__(
            C=C, tol=tol, max_iter=max_iter, svm_tol=svm_tol, verbose=verbose, task=task,
            multiclass=multiclass,
        )  # fmt: skip
        self.p = p
        self.interleaved = interleaved

    def _domain(self):
        return LpBall(self.p)

    @staticmethod
    def _w_norms_sq(oracle: Oracle, pt: Point) -> np.ndarray:
        return pt.theta**2 * oracle.q(pt)


class LpAnalytic(_LpMKL):
    """theta_m proportional to ||w_m||^{2/(p+1)}, normalised to ||theta||_p = 1."""

    def _step(self, oracle, state, pt):
        w2 = self._w_norms_sq(oracle, pt)
        if not np.any(w2 > 0):
            return pt
        theta = w2 ** (1.0 / (self.p + 1.0))
        return oracle.evaluate(state.domain.normalise(theta))


class LpNewton(_LpMKL):
    """Newton descent on u = log(theta) (Kloft et al. 2009, eqs. 10-11).

    With a_m = ||w_m||^2 / (2 theta_m) and b_m = delta theta_m^p,
    dL/du_m = b_m - a_m and d2L/du_m^2 = a_m + p b_m > 0, so the step is
    du_m = (a_m - b_m) / (a_m + p b_m); delta is the multiplier of the norm
    constraint at the subproblem's optimum (eq. 8 in terms of w). Backtracking
    halves the step until L decreases (Armijo). The SVM of the next point is
    solved with tolerance min(gap, 0.1) while the gap exceeds 10 x tol, with
    ``svm_tol`` after that.
    """

    def _step(self, oracle, state, pt):
        p = self.p
        theta = pt.theta
        w2 = self._w_norms_sq(oracle, pt)
        if not np.any(w2 > 0):
            return pt
        delta = 0.5 * np.sum(w2 ** (p / (p + 1.0))) ** ((p + 1.0) / p)

        def lagrangian(th):
            return float(np.sum(w2 / (2.0 * th)) + delta / p * (np.sum(th**p) - 1.0))

        a, b = w2 / (2.0 * theta), delta * theta**p
        du = (a - b) / (a + p * b)
        slope = float((b - a) @ du)
        L0, step = lagrangian(theta), 1.0
        for _ in range(30):
            cand = theta * np.exp(step * du)
            if lagrangian(cand) <= L0 + 1e-4 * step * slope:
                break
            step *= 0.5
        if oracle.engine is None:
            gap = relative_gap(state.best.J, state.lower)
            # the wrapper's approximation of interleaving: coarse SVM solves while
            # far from the optimum, full precision once the gap is within 10 x tol
            # (only those gaps count)
            oracle.svm_tol = self.svm_tol if gap <= 10 * self.tol else float(min(gap, 1e-1))
        return oracle.evaluate(state.domain.normalise(cand))


class LpCuttingPlane(_LpMKL):
    """Cutting planes for the SIP (12) (Kloft et al. 2009, sec. 2.4.2).

    Each iteration adds the cut eta >= 1'alpha - 1/2 q(alpha)'theta and solves
    min eta over the cuts and ||theta||_p^p <= 1, theta >= 0; the minimiser,
    scaled onto ||theta||_p = 1, is the next theta. The paper replaces the
    norm constraint by its second-order Taylor expansion around the current
    theta (a quadratic constraint its QCQP solver takes) and expands again at
    the minimiser until it settles: that limit is the minimiser of the model
    with the exact constraint, which one power-cone program gives
    (``LpBall``; one Clarabel call a step, where re-centring took up to 10).
    """

    def _gap(self, oracle, state, pt):
        # the stopping test is the duality gap, as the paper's (the cuts are
        # recorded for the next model)
        record_cut(oracle, state, pt)
        return super()._gap(oracle, state, pt)

    def _step(self, oracle, state, pt):
        S, Q = np.array(state.cut_offsets), np.array(state.cut_slopes)
        _, theta = state.domain.minimise_model(S, Q)
        return oracle.evaluate(theta)

"""L1-MKL: min J(theta) over the simplex, by three updates in the shared wrapper
framework (``wrapper.py``).

* :class:`SimpleMKL` -- reduced gradient descent with the descent direction of
  Rakotomamonjy et al. (JMLR 2008, eqs. 12-13) and a line search along it.
* :class:`SILP` -- the semi-infinite linear program of Sonnenburg et al. (JMLR
  2006): each SVM solution adds the cut J(theta) >= 1'alpha - 1/2 q(alpha)'theta;
  the next theta minimises the cuts (an LP, solved by HiGHS).
* :class:`LevelMKL` -- the extended level method of Xu et al. (NIPS 2009):
  bounds from the cuts, the level l = LB + tau (UB - LB), and the next theta
  the projection of the current one onto the level set. Over other weight sets
  it is GMKL's Algorithm 1 (``gmkl.py``).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from ..exceptions import SubproblemError
from .domains import Simplex
from .wrapper import LoopState, Oracle, Point, WrapperMKL, along, inexact_precision, record_cut

# level with ``inexact``: loose points in a row that leave the upper bound
# where it was before every later point is solved to ``svm_tol``
INEXACT_STALLED = 3


class SimpleMKL(WrapperMKL):
    """SimpleMKL (Rakotomamonjy, Bach, Canu, Grandvalet, JMLR 2008).

    Each iteration: gradient dJ/dtheta_m = -1/2 q_m; reduced gradient w.r.t. the
    largest weight mu (eq. 12); descent direction D (eq. 13): D_m = -red_m,
    except D_m = 0 where theta_m = 0 and red_m > 0, and D_mu = -sum_{m != mu} D_m.
    While J keeps decreasing up to the point where a weight vanishes, SimpleMKL
    moves there, drops that kernel from D and goes on (its "descent direction
    update"); here each such breakpoint costs one SVM solve and O(n^2) work
    (K(D) changes by two kernels), not a pass over the bank. Along a segment
    J is convex with derivative -1/2 beta' K_D beta (Danskin), so the final line
    search brackets the root of that derivative by safeguarded secant steps,
    each trial one SVM solve on K(theta) + gamma K(D), not a pass over the bank.
    Stops on the relative duality gap (J(theta) - D(alpha)) / J(theta) <= tol,
    as SimpleMKL does.
    """

    def __init__(
        self,
        C=1.0,
        tol=1e-2,
        max_iter=200,
        svm_tol=1e-3,
        line_search_tol=0.1,
        verbose=0,
        task="classification",
        multiclass="ovr",
    ):
        super().__init__(
            C=C, tol=tol, max_iter=max_iter, svm_tol=svm_tol, verbose=verbose, task=task,
            multiclass=multiclass,
        )  # fmt: skip
        self.line_search_tol = line_search_tol

    def _domain(self):
        return Simplex()

    @staticmethod
    def descent_direction(theta: np.ndarray, grad: np.ndarray) -> np.ndarray:
        mu = int(np.argmax(theta))
        red = grad - grad[mu]  # eq. (12), m != mu
        D = -red
        D[(theta <= 0) & (red > 0)] = 0.0  # eq. (13)
        D[mu] = 0.0
        D[mu] = -D.sum()
        return D

    def _step(self, oracle: Oracle, state: LoopState, pt: Point) -> Point:
        grad = -0.5 * oracle.q(pt)
        D = self.descent_direction(pt.theta, grad)
        mu = int(np.argmax(pt.theta))
        if float(grad @ D) >= 0 or not np.any(D < 0):
            return pt  # stationary: the gap test ends the loop
        K_D = oracle.combine(D)  # reads the kernels of nonzero D_m only
        cur = pt
        for _ in range(len(D)):  # each pass drops one kernel
            slope0 = -0.5 * oracle.curvature(K_D, cur)
            if slope0 >= 0 or not np.any(D < 0):
                return cur
            gamma_max, v = self._breakpoint(cur.theta, D)
            if gamma_max <= 0:  # degenerate: no room along this direction
                return cur
            theta = np.maximum(cur.theta + gamma_max * D, 0.0)
            theta[v] = 0.0
            end = oracle.evaluate(theta, along(cur.K, gamma_max, K_D))
            slope = -0.5 * oracle.curvature(K_D, end)  # dJ/dgamma at the breakpoint
            if slope > 0 or end.J > cur.J:  # the minimum lies before the breakpoint
                return self._line_search(oracle, cur, D, K_D, gamma_max, slope0, slope, end)
            if theta[mu] == 0:  # the reference kernel left: recompute the direction
                return end
            # SimpleMKL's descent-direction update: kernel v leaves D, D_mu keeps
            # 1'D = 0, and K(D) changes by two kernels, in place (no pass)
            d_v = D[v]
            D[v] = 0.0
            D[mu] += d_v
            oracle.shift_weight(K_D, v, mu, d_v)
            cur = end
        return cur

    @staticmethod
    def _breakpoint(theta: np.ndarray, D: np.ndarray) -> tuple[float, int]:
        """The step gamma along D at which the first weight vanishes, and its kernel."""
        neg = np.flatnonzero(D < 0)
        ratios = -theta[neg] / D[neg]
        return float(ratios.min()), int(neg[np.argmin(ratios)])

    @staticmethod
    def _trial(oracle, base, D, K_D, gamma):
        theta = np.maximum(base.theta + gamma * D, 0.0)
        new = oracle.evaluate(theta, along(base.K, gamma, K_D))
        return new, -0.5 * oracle.curvature(K_D, new)  # dJ/dgamma (Danskin)

    def _line_search(self, oracle, base, D, K_D, gamma_max, slope0, slope_max, end):
        """Minimise the convex J(base + gamma D) on [0, gamma_max], bracketing the
        root of its derivative by safeguarded secant steps."""
        best = end if end.J < base.J else base
        lo, s_lo, hi, s_hi = 0.0, slope0, gamma_max, slope_max
        for _ in range(20):
            if s_hi > s_lo:  # secant on the derivative, kept inside the bracket
                g = hi - s_hi * (hi - lo) / (s_hi - s_lo)
                g = min(max(g, lo + 0.05 * (hi - lo)), hi - 0.05 * (hi - lo))
            else:  # inexact SVM solves broke monotonicity: bisect
                g = 0.5 * (lo + hi)
            new, s = self._trial(oracle, base, D, K_D, g)
            if new.J < best.J:
                best = new
            if abs(s) <= self.line_search_tol * abs(slope0):
                break
            if s < 0:
                lo, s_lo = g, s
            else:
                hi, s_hi = g, s
        return best


class _CuttingPlaneMKL(WrapperMKL):
    """Shared by SILP and the level method: the cuts (S_k, q_k) of every point
    evaluated, the model's lower bound, and the bound gap (UB - LB) / UB with
    LB = max(model minimum, best dual bound)."""

    def _domain(self):
        return Simplex()

    def _model_minimum(self, state):
        return state.domain.minimise_model(np.array(state.cut_offsets), np.array(state.cut_slopes))

    def _gap(self, oracle, state, pt):
        record_cut(oracle, state, pt)
        lower, state.model_theta = self._model_minimum(state)
        state.lower = max(state.lower, lower)
        return super()._gap(oracle, state, pt)  # adds the dual bound D(alpha)


class SILP(_CuttingPlaneMKL):
    """SILP (Sonnenburg, Raetsch, Schaefer, Schoelkopf, JMLR 2006): the next theta
    minimises the cutting-plane model over the simplex,
    min_{theta, eta} eta s.t. eta >= S_k - 1/2 q_k'theta, 1'theta = 1, theta >= 0
    (an LP: ``Simplex.minimise_model``).

    ``interleaved`` (default True): the LP runs between chunks of SVM
    working-set steps, as in Sonnenburg et al.'s chunking implementation
    (sec. 4.2; ``wrapper.py``); False solves the SVM to ``svm_tol`` first."""

    _parameter_constraints: dict = {**WrapperMKL._parameter_constraints, "interleaved": ["boolean"]}

    def __init__(
        self,
        C=1.0,
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
        self.interleaved = interleaved

    def _step(self, oracle, state, pt):
        return oracle.evaluate(state.model_theta)


class LevelMKL(_CuttingPlaneMKL):
    """Extended level method (Xu, Jin, King, Lyu, NIPS 2009) over the simplex.

    With the bounds LB (cutting-plane model) and UB (best J), the level is
    l = LB + tau (UB - LB) (GMKL's eq. 24); the next theta is the Euclidean
    projection of the current one onto {theta in Theta : S_k - 1/2 q_k'theta <= l}.

    ``tau=0.9`` reproduces the papers' schedule (0.9, raised to 0.99 once
    (UB - LB) / l < 0.01; Xu et al. 2009, Yang et al. 2011). With eq. (24) as
    printed, that level sits near UB and the iterates crawl (docs/design.md,
    performance, gives the counts). The default, tau = 0.3, is
    the classical level-method constant (about 0.29, Lemarechal, Nemirovskii &
    Nesterov 1995); the optimum reached is the same.
    Over a set with an inequality constraint (GMKL) the projection can fall
    inside the set; it is scaled onto the boundary, where J is smaller.

    ``weight_tol`` (default None: off) adds the papers' second stopping rule
    (Yang et al. 2011, sec. VI: 1e-3, beside 500 iterations): stop once no
    weight moves by more than ``weight_tol`` times the largest weight between
    consecutive iterates, max_m |theta_m^k - theta_m^{k-1}| < weight_tol
    max_m theta_m^{k-1}, and test nothing (the gap neither) before the first
    projection, as Algorithm 1 does (``WrapperMKL._stop``). ``tol=0`` leaves
    the gap out of the rule.

    ``interleaved`` (default False): the projection runs between chunks of
    SVM working-set steps, as SILP's (``wrapper.py``); cuts from any feasible
    alpha are valid and the upper bound is the primal, so the gap certifies as
    before. It is not the default because it is not faster everywhere
    (``benchmarks/solver_quality.md``: faster at n >= 1,000 and a 1% gap,
    slower at n = 500 and a 0.1% gap).

    ``inexact`` (default False): every point after the uniform start is the
    SVM solved warm on the engine from the previous multipliers to libsvm's
    tolerance equal to the relative gap so far (never below ``svm_tol``), as
    SPG-GMKL's are (Jain, Vishwanathan & Varma 2012; ``Oracle.refine``,
    ``spg.py``): loose while the bounds are far apart, tight near the end.
    Such a point's J is the SVM primal at its multipliers, an upper bound,
    and its cut holds for any feasible alpha, so the gap certifies as before;
    the fit ends on the SVM at the best weights solved to ``svm_tol``
    (``WrapperMKL._confirm``). After :data:`INEXACT_STALLED` loose points in
    a row that do not lower the upper bound, every later point is solved to
    ``svm_tol``. With ``interleaved`` the chunks come first and the points
    after them are solved loosely.
    """

    _parameter_constraints: dict = {
        **WrapperMKL._parameter_constraints,
        "tol": [Interval(Real, 0, None, closed="left")],
        "tau": [Interval(Real, 0, 1, closed="neither")],
        "weight_tol": [Interval(Real, 0, None, closed="neither"), None],
        "interleaved": ["boolean"],
        "inexact": ["boolean"],
    }

    def __init__(
        self,
        C=1.0,
        tol=1e-2,
        max_iter=500,
        svm_tol=1e-3,
        tau=0.3,
        weight_tol=None,
        verbose=0,
        task="classification",
        multiclass="ovr",
        interleaved=False,
        inexact=False,
    ):
        super().__init__(
            C=C, tol=tol, max_iter=max_iter, svm_tol=svm_tol, verbose=verbose, task=task,
            multiclass=multiclass,
        )  # fmt: skip
        self.tau = tau
        self.weight_tol = weight_tol
        self.interleaved = interleaved
        self.inexact = inexact

    def _step(self, oracle, state, pt):
        upper, lower = state.best.J, state.lower
        gap = upper - lower
        tau = self.tau
        if tau == 0.9 and gap < 0.01 * abs(lower + 0.9 * gap):
            tau = 0.99
        level = lower + tau * gap
        domain = state.domain
        try:
            theta = domain.project_level(
                pt.theta, np.array(state.cut_offsets), np.array(state.cut_slopes), level
            )
        except SubproblemError:  # level set numerically empty (level ~ LB at the end):
            theta = state.model_theta  # the model's minimiser lies in it by definition
        # the projection may lie inside Theta; J only decreases on scaling it out
        theta = domain.to_boundary(theta)
        if not self.inexact or oracle.chunked:
            return oracle.evaluate(theta)
        if state.stalled >= INEXACT_STALLED:
            state.exact = True  # loose upper bounds stopped improving: solve exactly
        # the SVM's precision: libsvm's tolerance at the relative gap so far
        precision = inexact_precision(state)
        return oracle.refine(theta, precision)

"""The cutting-plane model over the simplex, kept as one linear program across
the iterations of SILP, the level method and lp-norm cutting planes.

Every point evaluated adds a cut J(theta) >= S_k - 1/2 Q_k'theta; the model's
minimum

    min_{theta, eta}  eta   s.t.  S_k - 1/2 Q_k'theta <= eta  (k = 1..K),
                              1'theta = 1,  theta >= 0

is the lower bound of SILP (Sonnenburg et al. 2006, eq. 11) and of the level
method (Xu et al. 2009, eq. 8), and SILP's next theta. From one iteration to
the next the LP only gains a row, so it is kept in one HiGHS model
(``highspy``): the new cut is added and the dual simplex restarts from the
previous optimal basis, which stays dual feasible, usually a few pivots
instead of a solve from scratch.

The bound is read from the cut multipliers lambda (on the simplex: the eta
column makes them sum to 1): lambda'S - 1/2 max_m (lambda'Q)_m is a lower
bound on min J for any lambda on the simplex (it is the LP's dual function),
so an inexact solve never overstates it.
"""

from __future__ import annotations

import highspy
import numpy as np
from highspy._core import _Highs

from ..exceptions import SubproblemError

# HiGHS's default 1e-7 feasibility tolerances leave the bound read from the
# multipliers loose by ~6e-8 relative: asked for a smaller gap, the level
# method and SILP then wander for thousands of iterations
FEASIBILITY_TOL = 1e-10
# a new cut this many times larger than the scale fixed at the first cut
# rebuilds the model at a new scale (the solver's tolerances are absolute)
RESCALE_FACTOR = 1e3

# the solver class itself: ``highspy.Highs`` adds Python callbacks on top of it
# and, on construction, prints HiGHS's banner to the process's stdout, before
# ``output_flag`` can be switched off
HighsSolver = _Highs


def cut_scale(S: np.ndarray, Q: np.ndarray) -> float:
    """Cuts are divided by a common scale so the solver sees O(1) numbers."""
    return float(max(np.abs(S).max(), 0.5 * np.abs(Q).max(), 1e-300))


class SimplexCutModel:
    """The model's LP over the simplex of ``n_kernels`` weights, one row per cut
    (module docstring). :meth:`minimum` takes every cut so far, (S, Q) of
    shapes (K,) and (K, M), adds the rows it has not seen and solves."""

    def __init__(self, n_kernels: int):
        self.n_kernels = n_kernels
        self._highs: HighsSolver | None = None
        self._rows = 0  # cuts in the model
        self._scale = 1.0

    def _build(self, scale: float) -> None:
        """A fresh model: theta >= 0, eta free (minimised), 1'theta = 1, no cuts."""
        M = self.n_kernels
        h = HighsSolver()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("primal_feasibility_tolerance", FEASIBILITY_TOL)
        h.setOptionValue("dual_feasibility_tolerance", FEASIBILITY_TOL)
        h.setOptionValue("presolve", "off")  # a hot start goes straight to the simplex
        inf = highspy.kHighsInf
        costs = np.zeros(M + 1)
        costs[M] = 1.0
        lower = np.zeros(M + 1)
        lower[M] = -inf
        h.addCols(M + 1, costs, lower, np.full(M + 1, inf), 0, [], [], [])
        h.addRow(1.0, 1.0, M, np.arange(M, dtype=np.int32), np.ones(M))
        self._highs, self._rows, self._scale = h, 0, scale

    def minimum(self, S: np.ndarray, Q: np.ndarray) -> tuple[float, np.ndarray]:
        """The lower bound lambda'S - 1/2 max_m (lambda'Q)_m from the LP's cut
        multipliers, and the LP's minimiser theta (on the simplex)."""
        K, M = Q.shape
        if M != self.n_kernels:
            raise SubproblemError(f"cuts over {M} kernels given to a model of {self.n_kernels}")
        newest = max(float(np.abs(S[self._rows :]).max(initial=0.0)),
                     0.5 * float(np.abs(Q[self._rows :]).max(initial=0.0)))  # fmt: skip
        if self._highs is None or K < self._rows or newest > RESCALE_FACTOR * self._scale:
            self._build(cut_scale(S, Q))
        self._add_cuts(S, Q)
        h = self._highs
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            status = h.modelStatusToString(h.getModelStatus())
            self._highs = None  # the next call starts afresh
            raise SubproblemError(f"cutting-plane model not solved: {status}")
        solution = h.getSolution()
        theta = np.maximum(np.asarray(solution.col_value[:M]), 0.0)
        # HiGHS's row duals of the cuts (rows 1..K) are <= 0 for a minimisation
        lam = np.maximum(-np.asarray(solution.row_dual[1:]), 0.0)
        if not lam.sum() > 0:  # pragma: no cover - an optimal basis has a tight cut
            raise SubproblemError("cutting-plane model: no cut multipliers")
        lam /= lam.sum()
        lower = float(lam @ S - 0.5 * float(np.max(lam @ Q)))
        return lower, theta / theta.sum()

    def _add_cuts(self, S: np.ndarray, Q: np.ndarray) -> None:
        """Rows -1/2 Q_k'theta - eta <= -S_k (divided by the model's scale) for the
        cuts not yet in the model."""
        K, M = Q.shape
        if K == self._rows:
            return
        new = Q[self._rows :]
        index = np.arange(M + 1, dtype=np.int32)
        values = np.empty((K - self._rows, M + 1))
        values[:, :M] = -0.5 * new / self._scale
        values[:, M] = -1.0
        count = K - self._rows
        self._highs.addRows(
            count,
            np.full(count, -highspy.kHighsInf),
            -S[self._rows :] / self._scale,
            count * (M + 1),
            np.arange(count, dtype=np.int32) * (M + 1),
            np.tile(index, count),
            values.ravel(),
        )
        self._rows = K

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

Over more than FULL_MODEL_MAX_KERNELS kernels (thousands of rank-one kernels,
one per term) the model holds a working set W of them as columns (theta = 0
elsewhere) and prices the rest in: with the multipliers lambda of the LP on
W, a kernel m outside W can lower the minimum only if (lambda'Q)_m exceeds
max_{m in W} (lambda'Q)_m (its reduced cost is negative), and those are added
as columns, the most violated first, until none is left (column generation,
exact: the LP on W is then the LP on all kernels). W only grows; the solution
uses a few dozen to a few hundred kernels.

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
# up to this many kernels every kernel is a column from the start; above, the
# model starts from the kernels each cut favours most and prices the rest in,
# at most COLUMNS_PER_ROUND a round (benchmarks/bench_cut_model.py: slower at
# M = 500 and random cuts, faster from M = 1,000)
FULL_MODEL_MAX_KERNELS = 500
COLUMNS_PER_ROUND = 50
# a kernel prices in when (lambda'Q)_m exceeds the working set's largest by
# this much relative to the largest
PRICING_TOL = 1e-9

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
    shapes (K,) and (K, M), adds the rows it has not seen and solves, pricing
    kernels in as columns over ``full_model_max_kernels`` kernels (default
    FULL_MODEL_MAX_KERNELS)."""

    def __init__(self, n_kernels: int, full_model_max_kernels: int = FULL_MODEL_MAX_KERNELS):
        self.n_kernels = n_kernels
        self.full_model_max_kernels = full_model_max_kernels
        self._highs: HighsSolver | None = None
        self._rows = 0  # cuts in the model
        self._scale = 1.0
        self._columns = np.zeros(0, dtype=np.int64)  # kernels in the model (columns 1..)

    def _build(self, scale: float, columns: np.ndarray) -> None:
        """A fresh model: eta free (column 0, minimised), the kernels ``columns``
        (>= 0), 1'theta = 1 (row 0), no cuts."""
        h = HighsSolver()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("primal_feasibility_tolerance", FEASIBILITY_TOL)
        h.setOptionValue("dual_feasibility_tolerance", FEASIBILITY_TOL)
        h.setOptionValue("presolve", "off")  # a hot start goes straight to the simplex
        inf = highspy.kHighsInf
        h.addCols(1, np.ones(1), np.full(1, -inf), np.full(1, inf), 0, [], [], [])
        h.addRow(1.0, 1.0, 0, np.zeros(0, dtype=np.int32), np.zeros(0))
        self._highs, self._rows, self._scale = h, 0, scale
        self._columns = np.zeros(0, dtype=np.int64)
        self._add_columns(columns, np.zeros((0, self.n_kernels)))

    def minimum(self, S: np.ndarray, Q: np.ndarray) -> tuple[float, np.ndarray]:
        """The lower bound lambda'S - 1/2 max_m (lambda'Q)_m from the LP's cut
        multipliers, and the LP's minimiser theta (on the simplex)."""
        K, M = Q.shape
        if M != self.n_kernels:
            raise SubproblemError(f"cuts over {M} kernels given to a model of {self.n_kernels}")
        newest = max(float(np.abs(S[self._rows :]).max(initial=0.0)),
                     0.5 * float(np.abs(Q[self._rows :]).max(initial=0.0)))  # fmt: skip
        if self._highs is None or K < self._rows or newest > RESCALE_FACTOR * self._scale:
            if M <= self.full_model_max_kernels:
                start = np.arange(M)
            else:  # the kernel each cut favours most, and the working set so far
                start = np.union1d(self._columns, np.argmax(Q, axis=1))
            self._build(cut_scale(S, Q), start)
        self._add_cuts(S, Q)
        h = self._highs
        for _ in range(M + 1):  # each round adds a kernel, or ends
            h.run()
            if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                status = h.modelStatusToString(h.getModelStatus())
                self._highs = None  # the next call starts afresh
                raise SubproblemError(f"cutting-plane model not solved: {status}")
            solution = h.getSolution()
            # HiGHS's row duals of the cuts (rows 1..K) are <= 0 for a minimisation
            lam = np.maximum(-np.asarray(solution.row_dual[1:]), 0.0)
            if not lam.sum() > 0:  # pragma: no cover - an optimal basis has a tight cut
                raise SubproblemError("cutting-plane model: no cut multipliers")
            lam /= lam.sum()
            prices = lam @ Q
            if len(self._columns) == M:
                break
            inside = float(prices[self._columns].max())
            entering = np.flatnonzero(prices > inside + PRICING_TOL * abs(float(prices.max())))
            entering = np.setdiff1d(entering, self._columns)
            if entering.size == 0:
                break
            self._add_columns(entering[np.argsort(prices[entering])[-COLUMNS_PER_ROUND:]], Q)
        else:  # pragma: no cover - every round adds a kernel, so M rounds end it
            self._highs = None
            raise SubproblemError("cutting-plane model: column generation did not end")
        theta = np.zeros(M)
        theta[self._columns] = np.maximum(np.asarray(solution.col_value[1:]), 0.0)
        lower = float(lam @ S - 0.5 * float(prices.max()))
        return lower, theta / theta.sum()

    def _add_columns(self, kernels: np.ndarray, Q: np.ndarray) -> None:
        """Columns for ``kernels``: 1 in the simplex row, -1/2 Q_km (over the
        model's scale) in the row of each cut k already in the model."""
        count = len(kernels)
        if count == 0:
            return
        K = self._rows
        values = np.empty((count, K + 1))
        values[:, 0] = 1.0
        values[:, 1:] = -0.5 * Q[:K, kernels].T / self._scale
        self._highs.addCols(
            count,
            np.zeros(count),
            np.zeros(count),
            np.full(count, highspy.kHighsInf),
            count * (K + 1),
            np.arange(count, dtype=np.int32) * (K + 1),
            np.tile(np.arange(K + 1, dtype=np.int32), count),
            values.ravel(),
        )
        self._columns = np.concatenate([self._columns, np.asarray(kernels, dtype=np.int64)])

    def _add_cuts(self, S: np.ndarray, Q: np.ndarray) -> None:
        """Rows -1/2 Q_k'theta - eta <= -S_k (divided by the model's scale) over
        the model's columns, for the cuts not yet in the model."""
        K = Q.shape[0]
        if K == self._rows:
            return
        width = len(self._columns) + 1
        values = np.empty((K - self._rows, width))
        values[:, 0] = -1.0
        values[:, 1:] = -0.5 * Q[self._rows :, self._columns] / self._scale
        count = K - self._rows
        self._highs.addRows(
            count,
            np.full(count, -highspy.kHighsInf),
            -S[self._rows :] / self._scale,
            count * width,
            np.arange(count, dtype=np.int32) * width,
            np.tile(np.arange(width, dtype=np.int32), count),
            values.ravel(),
        )
        self._rows = K

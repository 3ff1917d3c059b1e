"""The framework shared by every alternating ("wrapper") MKL method.

Algorithm 1 of Xu et al. (2010): repeat
  1. solve the SVM for the current weights theta -> alpha, J(theta)
  2. compute q_m = (alpha*y)' K_m (alpha*y), the gradient being -1/2 q
  3. update theta (the method's step)
  4. stop when the gap is below ``tol``
for J(theta) = max_{alpha in A} 1'alpha - 1/2 sum_m theta_m q_m(alpha) over a
weight set Theta (``domains.py``). Methods differ only in step 3 and in which
gap they report; this module holds the loop, the oracle (the only place an SVM
is solved and the bank is read) and the stopping rule; the history, the best
point and the warnings are the shared iteration record (``iterations.py``).

The oracle works on an inner problem (``inner.py``): a dense bank (the SVM
with bias, libsvm) or a factor bank (the bias-free SVM with a regularised
constant feature, warm-started dual coordinate descent). J(theta) =
S(alpha) - 1/2 theta'q(alpha) on both, S the solution's ``linear_term``.

Cost model (docs/design.md, performance): a pass over the bank (forming a
combination, or computing q) costs about as much as an SVM solve at n = 500.
The oracle therefore forms combinations along a line as K(theta) + gamma K(d)
from two "combinations" (n x n matrices; weight vectors for factor banks), so
trial points of a line search cost one SVM solve and no pass.

Schedules. By default each point is an SVM solved to ``svm_tol``. With
``interleaved`` (Kloft et al. 2009, sec. 2.4; Sonnenburg et al. 2006, sec.
4.2) a point is one *chunk* of working-set steps of the SVM from the previous
point's multipliers, at the new weights (the inner problem's engine:
``mkl.solvers.smo.BankSMO`` on a dense bank, ``mkl.solvers.coordinate_descent``
epochs on factors), and q comes from the engine's incremental state, not a
pass. Such a point's alpha is feasible but not optimal, so its dual value is
no bound on J(theta); its J is the SVM *primal* at that alpha, an upper bound
(weak duality), and the dual bound D(alpha) <= min J holds for any feasible
alpha: the gap stays certified. Once it is within ``tol``, the SVM at the
best weights is solved to ``svm_tol`` from the engine's state (``confirm``),
and that exact point is what the fit returns; its gap is rechecked. With
``inexact`` (SPG-GMKL, ``spg.py``) a point is the SVM solved on the same
engine to a tolerance the method chooses (``Oracle.refine``): loose while the
gap is wide, ``svm_tol`` at the end, and certified the same way.

Shared weights across classes (``multiclass="shared"``). With C > 2 classes
and y_c = +1 on class c, -1 elsewhere, one weight vector serves all C
one-vs-rest problems, the minimiser of the sum of their SVM objectives:

    min_{theta in Theta}  sum_c J_c(theta),                                     (S1)
    J_c(theta) = max_{alpha_c in A_c} 1'alpha_c - 1/2 sum_m theta_m q_{c,m}(alpha_c),
    q_{c,m}(alpha_c) = (alpha_c y_c)' K_m (alpha_c y_c),                        (S2)

the one-vs-rest counterpart of Zien & Ong's multiclass MKL ("Multiclass
multiple kernel learning", ICML 2007; SHOGUN's MKLMulticlass), which shares
the kernel weights among the classes of one multiclass SVM, and what the
``sklearn.mkl`` proposal (scikit-learn PR #31166) offers as one learned
kernel for a multiclass problem. (S1) is convex (a sum of the convex J_c),
and at the maximisers alpha_c* (Danskin)

    dJ/dtheta_m = -1/2 sum_c q_{c,m}(alpha_c*),                                 (S3)

while for any feasible alpha_1..alpha_C

    D = sum_c 1'alpha_c - 1/2 sigma_Theta(sum_c q_c(alpha_c)) <= min (S1),      (S4)

since sum_c J_c(theta) >= sum_c 1'alpha_c - 1/2 theta'(sum_c q_c) for every
theta. So each method's step, cuts and certified gap hold for the sum as
they are, with S and q summed over the classes: the oracle works on
``mkl.solvers.inner.SummedProblems``, which solves the C SVMs at each theta
on one combination (each from its own warm start; interleaved, one engine
per class moved together) and returns the summed solution. An SVM solve of
the history counts each class's, a pass each class's forms.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.utils._param_validation import StrOptions

from ..solvers.inner import SummedProblems, inner_problem
from ..solvers.solution import SVMSolution
from .base import BaseMKL, BinaryFit
from .iterations import IterationLog


@dataclass
class Point:
    """One evaluated weight vector: theta, its combination K (an n x n matrix, or
    the weights themselves for a factor bank; None for an interleaved chunk),
    the SVM solution and J(theta). ``q`` (one pass over the bank) is computed
    on demand. ``exact``: the SVM was solved to ``svm_tol``; otherwise (an
    interleaved chunk) J is the primal upper bound of the solution."""

    theta: np.ndarray
    K: np.ndarray | None
    sol: SVMSolution
    _q: np.ndarray | None = field(default=None, repr=False)
    exact: bool = True

    @property
    def J(self) -> float:
        return self.sol.objective if self.exact else self.sol.primal


# interleaved chunks without a new best upper bound before the engine solves the
# SVM of every further point to svm_tol (the chunks' bounds at moving weights
# stall about 1e-7 relative above J)
STALLED_CHUNKS = 10
# the share of ``tol`` below which the weights' part of a chunk's gap hands
# the rest to solved SVMs (``weights_gap``)
WEIGHTS_SHARE = 0.5


class Oracle:
    """Evaluates J and its gradient on one inner problem (``inner.py``); counts SVM
    solves and bank passes. ``y``: one target vector (n,), or a target per
    class (C, n) for a :class:`~mkl.solvers.inner.SummedProblems` (S1), whose
    evaluations solve C SVMs and whose forms read the bank once per class."""

    def __init__(
        self,
        problem,
        y: np.ndarray,
        C,
        svm_tol: float,
        interleaved: bool = False,
        domain=None,
        inexact: bool = False,
    ):
        self.problem, self.y, self.C, self.svm_tol = problem, y, C, svm_tol
        self.targets = 1 if y.ndim == 1 else y.shape[0]  # SVMs per evaluation
        self.domain = domain
        self.svm_solves = 0
        self.passes = 0
        self.chunks = 0
        self.log: IterationLog | None = None  # told of every SVM solve's convergence
        # the interleaved schedule, or inexact solves (:meth:`refine`), on the
        # engine (module docstring); hard margin has no finite box for the
        # engine's primal bound, and is solved point by point
        wanted = (interleaved or inexact) and C is not None
        self.engine = problem.interleaved(y, C) if wanted else None
        # points are chunks (else solved SVMs)
        self.chunked = self.engine is not None and interleaved

    @property
    def work(self) -> float:
        """Passes over the bank so far, with the rows the engine read as fractions of a pass."""
        rows = 0 if self.engine is None else self.engine.rows_read
        return self.passes + rows / (self.problem.n_kernels * self.problem.n)

    def combine(self, theta: np.ndarray) -> np.ndarray:
        if self.problem.representation == "dense":
            self.passes += 1
        return self.problem.combine(theta)

    def shift_weight(self, combo: np.ndarray, source: int, target: int, amount: float) -> None:
        """``combo`` (a combination) with weight ``amount`` moved from kernel
        ``source`` to kernel ``target``, in place: O(n^2), not a pass."""
        self.problem.shift_weight(combo, source, target, amount)

    def evaluate(self, theta: np.ndarray, K_theta: np.ndarray | None = None) -> Point:
        """J(theta); pass ``K_theta`` when the combination is already known.
        Interleaved: one chunk of the engine at theta (J an upper bound)."""
        if self.engine is not None:
            if K_theta is not None:  # the uniform start: a full solve on a known combination
                self.svm_solves += self.targets
                sol, q = self.engine.solve(theta, self.svm_tol, K_theta)
                return Point(theta, None, sol, q)
            if not self.chunked:
                self.svm_solves += self.targets
                sol, q = self.engine.solve(theta, self.svm_tol)
                return Point(theta, None, sol, q)
            self.chunks += 1
            sol, q = self.engine.advance(theta, self.engine.chunk_steps, self.svm_tol)
            # a chunk that reached svm_tol is a solved SVM
            return Point(theta, None, sol, q, exact=sol.converged)
        if K_theta is None or self.problem.representation != "dense":
            K_theta = self.combine(theta)  # factor banks: the (clipped) weights themselves
        self.svm_solves += self.targets
        sol = self.problem.solve(K_theta, theta, self.y, self.C, self.svm_tol)
        if self.log is not None:
            self.log.inner(sol.converged, "SVM")
        return Point(theta, K_theta, sol)

    def refine(self, theta: np.ndarray, tol: float) -> Point:
        """J(theta) from the SVM solved to libsvm's ``tol`` (not below ``svm_tol``)
        by the engine, warm from its state at the previous point, forming only
        the kernel rows its working sets read; q comes from the engine's
        per-kernel products, not a pass. Solved looser than ``svm_tol``, the
        point is inexact: its J is the SVM primal at the multipliers, an upper
        bound (weak duality), and its cut and dual bound hold as for any
        feasible alpha. Without an engine (hard margin, the one-class SVM on
        factors): :meth:`evaluate`, exact."""
        if self.engine is None:
            return self.evaluate(theta)
        tol = max(tol, self.svm_tol)
        self.svm_solves += self.targets
        sol, q = self.engine.solve(theta, tol, whole=False)
        exact = tol <= self.svm_tol
        if exact and self.log is not None:
            self.log.inner(sol.converged, "SVM")
        return Point(theta, None, sol, q, exact=exact)

    def confirm(self, pt: Point, track: bool = False) -> Point:
        """The SVM at ``pt``'s weights solved to ``svm_tol`` from the engine's
        state: the exact point an interleaved fit returns (``track``: with its
        q, for a fit that goes on)."""
        self.svm_solves += self.targets
        sol, q = self.engine.solve(pt.theta, self.svm_tol, track=track)
        if self.log is not None:
            self.log.inner(sol.converged, "SVM")
        return Point(pt.theta, None, sol, q)

    def combination(self, pt: Point) -> np.ndarray:
        """``pt``'s combination: kept, or formed (interleaved points keep none;
        the engine forms the rows it has not formed at these weights)."""
        if pt.K is not None:
            return pt.K
        return self.engine.combination(pt.theta)

    def q(self, pt: Point) -> np.ndarray:
        """q_m = beta' K_m beta for beta = alpha*y: one matrix-vector pass over the bank."""
        if pt._q is None:
            self.passes += self.targets
            pt._q = self.problem.forms(pt.sol.dual_coef)
        return pt._q

    def curvature(self, K_d: np.ndarray, pt: Point) -> float:
        """beta' K(d) beta at ``pt``'s solution, for the combination K_d = K(d):
        the slope of J along d is -1/2 of it (Danskin)."""
        if self.problem.representation == "dense":
            return self.problem.curvature(K_d, pt.sol.dual_coef)
        return float(K_d @ self.q(pt))


def along(K: np.ndarray, gamma: float, K_d: np.ndarray) -> np.ndarray:
    """The combination K(theta + gamma d) = K(theta) + gamma K(d) of a line
    search, into one new array (an n x n matrix, or the weights on factors)
    with no temporary besides it."""
    out = np.multiply(K_d, gamma)
    out += K
    return out


def dual_bound(pt: Point, q: np.ndarray, domain) -> float:
    """D(alpha) = S(alpha) - 1/2 sigma_Theta(q(alpha)) <= min J (weak duality)."""
    return float(pt.sol.linear_term - 0.5 * domain.support(q))


def weights_gap(pt: Point, q: np.ndarray, domain) -> float:
    """The weights' part of a point's gap, relative to its J. The gap J - D(alpha)
    splits at D_theta(alpha) = S(alpha) - 1/2 theta'q(alpha), the SVM dual at
    theta, into the SVM's own gap J - D_theta(alpha) (zero for a solved SVM)
    and D_theta(alpha) - D(alpha) = 1/2 (sigma_Theta(q) - theta'q), what a
    weight step could still gain at these multipliers. Once the latter is a
    small share of ``tol``, further chunks only finish the SVM, which a solve
    does in one pass instead of many."""
    return 0.5 * float(domain.support(q) - pt.theta @ q) / max(abs(pt.J), 1e-300)


@dataclass
class LoopState:
    """What the wrapper loop keeps between iterations, and who may write it.

    * ``domain``: the weight set Theta (``domains.py``); read-only.
    * ``best``: the point of least J seen, ``stalled``: the points (interleaved
      chunks while they run) since it last improved, counted afresh when the
      chunks end; written by the loop only, read by every method.
    * ``lower``: the best lower bound on min J seen; raised by the gaps
      (``_gap``: the dual bound D(alpha), a cutting-plane model's minimum).
    * ``cut_offsets``, ``cut_slopes``: the cuts J(theta) >= S_k - 1/2 Q_k'theta
      (:func:`record_cut`), for the cutting-plane and level methods.
    * ``model_theta``: the minimiser of those cuts' model over Theta, kept by
      the method that computed it (SILP, level) for its step.
    * ``exact``: a method with inexact solves (``inexact``: SPG, level, GMKL)
      solves every SVM to ``svm_tol`` from now on (its loose solves stopped
      lowering the upper bound); written by that method.
    """

    domain: object
    best: Point | None = None
    stalled: int = 0
    lower: float = -np.inf
    cut_offsets: list[float] = field(default_factory=list)
    cut_slopes: list[np.ndarray] = field(default_factory=list)
    model_theta: np.ndarray | None = None
    exact: bool = False


def record_cut(oracle: Oracle, state: LoopState, pt: Point) -> None:
    """Keep the cut J(theta) >= S - 1/2 q'theta that ``pt`` gives (S = 1'alpha, less
    the intercept's penalty on the factored path), for cutting-plane and level
    methods."""
    state.cut_offsets.append(pt.sol.linear_term)
    state.cut_slopes.append(oracle.q(pt))


def relative_gap(upper: float, lower: float) -> float:
    return max(0.0, (upper - lower) / max(abs(upper), 1e-300))


def inexact_precision(state: LoopState) -> float:
    """The SVM precision of a method's next inexact point (SPG-GMKL's rule,
    Jain, Vishwanathan & Varma 2012): libsvm's tolerance at the relative gap
    so far, or 0 (``svm_tol``) once ``state.exact`` is set."""
    return 0.0 if state.exact else relative_gap(state.best.J, state.lower)


class WrapperMKL(BaseMKL):
    """Base of the alternating methods. Subclasses set the weight domain and
    implement ``_step`` (and ``_gap`` where the bound differs); the loop lives
    here, its bookkeeping in :class:`~mkl.algorithms.iterations.IterationLog`.

    Shared parameters: ``C`` (None: hard margin), ``tol`` (relative gap at
    which to stop), ``max_iter``, ``svm_tol`` (libsvm's tolerance),
    ``verbose`` (1: one line per iteration through the ``mkl`` logger),
    ``task`` (the inner dual: ``"classification"``, ``Regression(epsilon)``,
    ``Novelty(nu)``; :class:`~mkl.algorithms.base.BaseMKL`), ``multiclass``
    (more than two classes: ``"ovr"``, a weight vector per one-vs-rest
    problem, or ``"shared"``, one weight vector for all of them, (S1) in the
    module docstring: ``weights_`` (M,), ``objective_`` the sum of the
    classes' J_c, one ``gap_``, ``n_iter_`` and ``history_``, and a
    ``dual_coef_`` and ``intercept_`` per class).
    """

    _parameter_constraints: dict = {
        **BaseMKL._parameter_constraints,
        "multiclass": [StrOptions({"ovr", "shared"})],
    }

    def __init__(
        self,
        C=1.0,
        tol=1e-2,
        max_iter=500,
        svm_tol=1e-3,
        verbose=0,
        task="classification",
        multiclass="ovr",
    ):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.svm_tol = svm_tol
        self.verbose = verbose
        self.task = task
        self.multiclass = multiclass

    # the methods that take ``interleaved`` set it as a parameter
    interleaved = False
    # the methods whose points are the engine's loose warm solves (Oracle.refine)
    inexact = False
    # the methods that take ``weight_tol`` set it as a parameter (the papers'
    # rule, ``_stop``): the loop also stops once no weight moved by more than
    # weight_tol times the largest weight since the previous iterate, and
    # tests nothing before its first weight step
    weight_tol = None

    def _domain(self):
        raise NotImplementedError

    def _loop_state(self, domain) -> LoopState:
        """A fit's loop state; a method that keeps more between its steps returns
        a subclass of :class:`LoopState` holding it."""
        return LoopState(domain)

    def _step(self, oracle: Oracle, state: LoopState, pt: Point) -> Point:
        """The method's weight update from ``pt``: returns the next evaluated point."""
        raise NotImplementedError

    def _gap(self, oracle: Oracle, state: LoopState, pt: Point) -> float:
        """Relative gap (upper - lower) / upper, upper = the best J seen. Default:
        the duality gap, lower = the best dual bound D(alpha) seen."""
        lower = dual_bound(pt, oracle.q(pt), state.domain)
        state.lower = max(state.lower, lower)
        return relative_gap(state.best.J, state.lower)

    accepts_factors = True
    tasks = ("classification", "regression", "novelty")
    takes_sample_weight = True

    def _stop(self, row: dict, oracle: Oracle) -> str | None:
        """Why the loop stops at the iterate of history row ``row``, or None.

        The gap: ``row["gap"] <= tol``, measured with SVMs solved to ``svm_tol``
        (a gap of LpNewton's loosely solved SVMs does not count). With
        ``weight_tol`` (Yang et al. 2011, sec. VI, after SimpleMKL), also the
        weights: max_m |theta_m^k - theta_m^{k-1}| < weight_tol max_m theta_m^{k-1},
        and neither test before the first weight step, as in Algorithm 1
        (repeat ... until) and SimpleMKL's loop, which update the weights
        before they test: the uniform start is never returned as converged."""
        if self.weight_tol is not None and row["iteration"] == 1:
            return None
        if row["gap"] <= self.tol and oracle.svm_tol <= self.svm_tol:
            return "gap"
        if self.weight_tol is not None and row["relative_weights_change"] < self.weight_tol:
            return "weights change below weight_tol (relative to the largest weight)"
        return None

    @staticmethod
    def _confirm(oracle: Oracle, state: LoopState, log: IterationLog) -> None:
        """Solve the SVM at the best interleaved point's weights to ``svm_tol``
        and record it: J(theta) <= the primal bound that point was kept for,
        so the gap against the lower bound so far only shrinks."""
        pt = oracle.confirm(state.best)
        # the exact point replaces the bound, also where rounding puts it a hair above
        log.best, log.best_objective = pt, float(pt.J)
        state.best = pt
        gap = relative_gap(state.best.J, state.lower)
        log.record(
            pt.J, gap=gap, weights=pt.theta, svm_solves=oracle.svm_solves,
            passes=oracle.work, chunks=oracle.chunks,
        )  # fmt: skip

    def _fit_binary(self, K, y, K_mean):
        return self._minimise(K, y, K_mean)[0]

    def _fit_jointly(self, K, tasks: list[np.ndarray], K_mean) -> list[BinaryFit]:
        """``multiclass="shared"``: one weight vector for every one-vs-rest task,
        (S1) in the module docstring; a fit per class, all with the same weights
        and the joint fit's record."""
        return self._minimise(K, np.stack(tasks), K_mean)

    def _minimise(self, K, y, K_mean) -> list[BinaryFit]:
        """The loop on the targets ``y``: one vector (n,), or a matrix (C, n) whose
        SVM objectives are summed (S1). A fit per target vector."""
        domain = self._domain()
        problem = inner_problem(K, K_mean, self._task)
        if y.ndim == 2:
            problem = SummedProblems(problem, y.shape[0])
        oracle = Oracle(
            problem, y, self._box(self.C), self.svm_tol, interleaved=self.interleaved,
            domain=domain, inexact=self.inexact,
        )  # fmt: skip
        log = IterationLog(type(self).__name__, self.tol, self.max_iter, verbose=self.verbose)
        oracle.log = log
        theta = domain.initial(problem.n_kernels)
        # the uniform start reuses the average kernel formed by input validation
        pt = oracle.evaluate(theta, problem.uniform_combination(theta))
        state = self._loop_state(domain)

        def record(pt):
            state.best = log.consider(pt.J, pt)
            state.stalled = 0 if state.best is pt else state.stalled + 1
            gap = self._gap(oracle, state, pt)
            return log.record(
                pt.J, gap=gap, weights=pt.theta, svm_solves=oracle.svm_solves,
                passes=oracle.work, chunks=oracle.chunks,
            )  # fmt: skip

        for it in range(1, self.max_iter + 1):
            stop = self._stop(record(pt), oracle)
            if stop:
                if not state.best.exact:
                    # interleaved: the SVM at the best weights solved to svm_tol;
                    # its J is at most the bound the gap was measured with
                    self._confirm(oracle, state, log)
                log.stop(stop, converged=True)
                break
            if it == self.max_iter:
                break
            if oracle.chunked and state.stalled >= STALLED_CHUNKS:
                # chunks at moving weights no longer lower the upper bound: from
                # here on every point is the SVM solved to svm_tol by the engine,
                # the first at the best weights so far
                oracle.chunked = False
                state.stalled = 0  # from here on it counts points, not chunks
                if not state.best.exact:
                    pt = oracle.confirm(state.best, track=True)
                    continue
            if (
                oracle.chunked
                and not pt.exact
                and weights_gap(pt, oracle.q(pt), domain) <= WEIGHTS_SHARE * self.tol
            ):
                # the weights are within tolerance and the gap left is the SVM's:
                # solve it here, and every further point (weights_gap)
                oracle.chunked = False
                state.stalled = 0
                pt = oracle.confirm(pt, track=True)
                continue
            pt = self._step(oracle, state, pt)
        if not log.best.exact:  # stopped short: the fit returns an exact point
            self._confirm(oracle, state, log)
        log.finish()
        best = log.best
        spectral_ratio = problem.spectral_ratio(oracle.combination(best))
        return [
            BinaryFit(
                weights=best.theta,
                dual_coef=sol.dual_coef,
                intercept=sol.bias,
                objective=sol.objective,  # J at the returned weights (an exact point)
                spectral_ratio=spectral_ratio,
                **log.fit_fields(),
            )
            for sol in (best.sol.parts if y.ndim == 2 else [best.sol])
        ]

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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..solvers.inner import inner_problem
from ..solvers.libsvm import SVMSolution
from .base import BaseMKL, BinaryFit
from .iterations import IterationLog


@dataclass
class Point:
    """One evaluated weight vector: theta, its combination K (an n x n matrix, or
    the weights themselves for a factor bank), the SVM solution and J(theta).
    ``q`` (one pass over the bank) is computed on demand."""

    theta: np.ndarray
    K: np.ndarray
    sol: SVMSolution
    _q: np.ndarray | None = field(default=None, repr=False)

    @property
    def J(self) -> float:
        return self.sol.objective


class Oracle:
    """Evaluates J and its gradient on one inner problem (``inner.py``); counts SVM
    solves and bank passes."""

    def __init__(self, problem, y: np.ndarray, C, svm_tol: float):
        self.problem, self.y, self.C, self.svm_tol = problem, y, C, svm_tol
        self.svm_solves = 0
        self.passes = 0
        self.log: IterationLog | None = None  # told of every SVM solve's convergence

    def combine(self, theta: np.ndarray) -> np.ndarray:
        if self.problem.representation == "dense":
            self.passes += 1
        return self.problem.combine(theta)

    def kernel(self, m: int) -> np.ndarray:
        """The combination of kernel m alone."""
        return self.problem.kernel(m)

    def evaluate(self, theta: np.ndarray, K_theta: np.ndarray | None = None) -> Point:
        """J(theta); pass ``K_theta`` when the combination is already known."""
        if K_theta is None or self.problem.representation != "dense":
            K_theta = self.combine(theta)  # factor banks: the (clipped) weights themselves
        self.svm_solves += 1
        sol = self.problem.solve(K_theta, theta, self.y, self.C, self.svm_tol)
        if self.log is not None:
            self.log.inner(sol.converged, "SVM")
        return Point(theta, K_theta, sol)

    def q(self, pt: Point) -> np.ndarray:
        """q_m = beta' K_m beta for beta = alpha*y: one matrix-vector pass over the bank."""
        if pt._q is None:
            self.passes += 1
            pt._q = self.problem.forms(pt.sol.dual_coef)
        return pt._q

    def curvature(self, K_d: np.ndarray, pt: Point) -> float:
        """beta' K(d) beta at ``pt``'s solution, for the combination K_d = K(d):
        the slope of J along d is -1/2 of it (Danskin)."""
        if self.problem.representation == "dense":
            return self.problem.curvature(K_d, pt.sol.dual_coef)
        return float(K_d @ self.q(pt))


def dual_bound(pt: Point, q: np.ndarray, domain) -> float:
    """D(alpha) = S(alpha) - 1/2 sigma_Theta(q(alpha)) <= min J (weak duality)."""
    return float(pt.sol.linear_term - 0.5 * domain.support(q))


def record_cut(oracle: Oracle, state: dict, pt: Point) -> None:
    """Keep the cut J(theta) >= S - 1/2 q'theta that ``pt`` gives (S = 1'alpha, less
    the intercept's penalty on the factored path), in ``state["S"]`` and
    ``state["Q"]``, for cutting-plane and level methods."""
    state.setdefault("S", []).append(pt.sol.linear_term)
    state.setdefault("Q", []).append(oracle.q(pt))


def relative_gap(upper: float, lower: float) -> float:
    return max(0.0, (upper - lower) / max(abs(upper), 1e-300))


class WrapperMKL(BaseMKL):
    """Base of the alternating methods. Subclasses set the weight domain and
    implement ``_step`` (and ``_gap`` where the bound differs); the loop lives
    here, its bookkeeping in :class:`~mkl.algorithms.iterations.IterationLog`.

    Shared parameters: ``C`` (None: hard margin), ``tol`` (relative gap at
    which to stop), ``max_iter``, ``svm_tol`` (libsvm's tolerance),
    ``verbose`` (1: one line per iteration through the ``mkl`` logger),
    ``task`` (the inner dual: ``"classification"``, ``Regression(epsilon)``,
    ``Novelty(nu)``; :class:`~mkl.algorithms.base.BaseMKL`).
    """

    def __init__(
        self, C=1.0, tol=1e-2, max_iter=500, svm_tol=1e-3, verbose=0, task="classification"
    ):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.svm_tol = svm_tol
        self.verbose = verbose
        self.task = task

    def _domain(self):
        raise NotImplementedError

    def _step(self, oracle: Oracle, state: dict, pt: Point) -> Point:
        """The method's weight update from ``pt``: returns the next evaluated point."""
        raise NotImplementedError

    def _gap(self, oracle: Oracle, state: dict, pt: Point) -> float:
        """Relative gap (upper - lower) / upper, upper = the best J seen. Default:
        the duality gap, lower = the best dual bound D(alpha) seen."""
        lower = dual_bound(pt, oracle.q(pt), state["domain"])
        state["lower"] = max(state.get("lower", -np.inf), lower)
        return relative_gap(state["best"].J, state["lower"])

    accepts_factors = True
    tasks = ("classification", "regression", "novelty")

    def _fit_binary(self, K, y, K_mean):
        domain = self._domain()
        problem = inner_problem(K, K_mean, self._task)
        oracle = Oracle(problem, y, self.C, self.svm_tol)
        log = IterationLog(type(self).__name__, self.tol, self.max_iter, verbose=self.verbose)
        oracle.log = log
        theta = domain.initial(problem.n_kernels)
        # the uniform start reuses the average kernel formed by input validation
        pt = oracle.evaluate(theta, problem.uniform_combination(theta))
        state = {"domain": domain}
        for it in range(1, self.max_iter + 1):
            state["best"] = log.consider(pt.J, pt)
            gap = self._gap(oracle, state, pt)
            log.record(
                pt.J,
                gap=gap,
                weights=pt.theta,
                svm_solves=oracle.svm_solves,
                passes=oracle.passes,
            )
            # a gap measured with a loosely solved SVM (interleaved methods) does not count
            if gap <= self.tol and oracle.svm_tol <= self.svm_tol:
                log.stop("gap", converged=True)
                break
            if it == self.max_iter:
                break
            pt = self._step(oracle, state, pt)
        log.finish()
        best = log.best
        return BinaryFit(
            weights=best.theta,
            dual_coef=best.sol.dual_coef,
            intercept=best.sol.bias,
            objective=best.J,
            spectral_ratio=problem.spectral_ratio(best.K),
            **log.fit_fields(),
        )

"""The inner problems behind the wrapper oracle (``wrapper.py``), one per kernel
representation. The MKL loops never touch a bank directly: they ask the inner
problem for a combination, an SVM solve on it and the quadratic forms q_m, so a
new representation is a new class here, never a second copy of a loop.

Both solve, for fixed weights theta, the SVM dual

    J(theta) = max_alpha  S(alpha) - 1/2 sum_m theta_m q_m(alpha),
    q_m(alpha) = (alpha*y)' K_m (alpha*y),

and differ in the feasible set and S:

* :class:`DenseKernels` (an (M, n, n) bank): the C-SVM with bias, 0 <= alpha <= C,
  y'alpha = 0, S(alpha) = 1'alpha. The first solve is libsvm's (``mkl.solvers.libsvm``);
  later ones start from the previous alpha in our SMO (``mkl.solvers.smo``, libsvm's
  algorithm with a warm start), since consecutive weights give nearby
  problems. A "combination" is the n x n matrix K(theta).
* :class:`FactorKernels` (a :class:`~mkl.banks.factor_bank.FactorBank`): the
  bias-free C-SVM whose intercept is a regularised constant feature b
  (``mkl.solvers.coordinate_descent``): 0 <= alpha <= C, S(alpha) = 1'alpha - b^2/2 (y'alpha)^2,
  solved by dual coordinate descent warm-started at the previous alpha. A
  "combination" is the weight vector itself (nothing n x n exists). b^2 is the
  mean diagonal of the average kernel (1 for unit-diagonal kernels: liblinear's
  B = 1), fixed per bank, so J stays one convex function of theta.

S does not depend on theta, so every bound of the wrapper framework (the cuts
J >= S(alpha) - 1/2 q(alpha)'theta and the dual bound S(alpha) - 1/2 sigma(q))
holds for both.

The task (``mkl.solvers.task_duals``) says which dual is solved: the C-SVM above, the
epsilon-SVR or the one-class SVM, whose duals have the same form with their own
feasible set and S (beta = ``dual_coef`` in q_m = beta'K_m beta), on either
representation (on factors the SVR's intercept is regularised as the C-SVM's;
the one-class SVM keeps 1'alpha = 1). Which solver solves a task's dual on
each representation is chosen in one place, ``mkl.solvers.dispatch``.

:class:`SummedProblems` holds C problems of one bank at one weight vector,
one per target vector (the shared-weights multiclass fit), and solves the sum
of their duals; it is an inner problem like the two above, so the loops see
one problem.
"""

from __future__ import annotations

import copy

import numpy as np

from ..banks.algebra import (
    combine,
    eigenvalue_of,
    lanczos_largest,
    largest_eigenvalue,
    psd_quadratic_forms,
    quadratic_forms,
    refuse_indefinite,
    shift_weight,
    spectral_ratio,
)
from ..banks.checks import warn_zero_kernels
from ..banks.factor_bank import FactorBank
from ..exceptions import InputError
from .dispatch import (
    dense_interleaved_engine,
    factored_interleaved_engine,
    solve_dense_dual,
    solve_factored_dual,
)
from .solution import SMOSolution, SummedSolution, SVMSolution
from .task_duals import CLASSIFICATION


class DenseKernels:
    """A dense bank K (M, n, n); ``K_mean`` the average kernel from input
    validation; ``task`` the dual solved (``mkl.solvers.task_duals``; default the C-SVM)."""

    representation = "dense"

    def __init__(self, K: np.ndarray, K_mean: np.ndarray | None = None, task=CLASSIFICATION):
        self.K = K
        self.K_mean = K_mean
        self.task = task
        self.n_kernels, self.n = K.shape[0], K.shape[1]
        self.dtype = K.dtype  # the precision of a pass
        self._diag_max: np.ndarray | None = None  # max_i |K_m,ii|, for the PSD check
        self._warm: np.ndarray | None = None
        self.smo_iterations: list[int] = []  # per warm-started solve

    def sibling(self) -> DenseKernels:
        """The same problem with a warm start of its own, for another target
        (:class:`SummedProblems`): the bank, its average and its diagonal
        maxima shared, not copied."""
        twin = copy.copy(self)
        twin._warm, twin.smo_iterations = None, []
        return twin

    def combine(self, theta: np.ndarray) -> np.ndarray:
        """K(theta) (one pass over the bank)."""
        return combine(self.K, theta)

    def uniform_combination(self, theta: np.ndarray) -> np.ndarray | None:
        """K(theta) for equal weights from the average kernel, without a pass
        (None when the weights are not equal or no average is known)."""
        if self.K_mean is None or not np.all(theta == theta[0]):
            return None
        return self.K_mean * (theta[0] * self.n_kernels)

    def kernel(self, m: int) -> np.ndarray:
        return self.K[m]

    def shift_weight(self, combo: np.ndarray, source: int, target: int, amount: float) -> None:
        """combo += amount (K_target - K_source), in place (two kernels read)."""
        shift_weight(combo, self.K, source, target, amount)

    def solve(self, combo, theta, y, C, tol) -> SVMSolution:
        """The task's dual on ``combo`` (``mkl.solvers.dispatch.solve_dense_dual``:
        the C-SVM cold by libsvm, warm, after a first solve at finite C, by SMO
        from the previous alpha; the SVR and the one-class SVM by libsvm)."""
        warm = self._warm if self._warm is not None and len(self._warm) == len(y) else None
        sol = solve_dense_dual(self.task, combo, y, C, tol, warm)
        if isinstance(sol, SMOSolution):
            self.smo_iterations.append(sol.iterations)
        self._warm = sol.alpha
        return sol

    def interleaved(self, y: np.ndarray, C):
        """The interleaved engine for the task's dual
        (``mkl.solvers.dispatch.dense_interleaved_engine``)."""
        return dense_interleaved_engine(self.task, np.ascontiguousarray(self.K), y, C)

    def forms(self, beta: np.ndarray) -> np.ndarray:
        """q_m = beta' K_m beta, refusing an indefinite kernel (one pass)."""
        return self._checked(quadratic_forms(self.K, beta), beta)

    def forms_and_products(self, beta: np.ndarray):
        """q (M,) and a handle from which :meth:`combined_product` forms
        K(theta) beta for any theta without another pass (dense: the M vectors K_m beta)."""
        M, n = self.n_kernels, self.n
        Kb = (self.K.reshape(M * n, n) @ beta.astype(self.K.dtype, copy=False)).reshape(M, n)
        Kb = Kb.astype(np.float64)
        return self._checked(Kb @ beta, beta), Kb

    def combined_product(self, theta: np.ndarray, handle) -> np.ndarray:
        return theta @ handle

    def forms_of(self, handle, beta: np.ndarray) -> np.ndarray:
        """q (M,) from a handle of :meth:`forms_and_products` for this beta, without
        a pass. Handles are linear in beta: a combination of two handles is the
        handle of the same combination of their betas."""
        return self._checked(handle @ beta, beta)

    def _checked(self, q: np.ndarray, beta: np.ndarray) -> np.ndarray:
        """q with rounding read as 0, or InputError when a form proves a kernel
        indefinite (:func:`~mkl.banks.algebra.refuse_indefinite`, the check of
        :func:`psd_quadratic_forms`, with the diagonal's maxima read once per
        problem: O(M) a call)."""
        if self._diag_max is None:
            self._diag_max = np.abs(np.einsum("mii->mi", self.K)).max(axis=1).astype(np.float64)
        return refuse_indefinite(self.K, q, beta, self._diag_max)

    def curvature(self, combo: np.ndarray, beta: np.ndarray, q=None) -> float:
        """beta' K(d) beta for the combination ``combo`` = K(d) (no pass)."""
        return float(beta @ (combo @ beta))

    def spectral_ratio(self, combo: np.ndarray) -> float:
        return spectral_ratio(combo)

    def eigenvalue_scales(self) -> tuple[float, float]:
        """(max_m lambda_max(K_m), lambda_max of the average kernel): the first
        from one pass of bounds and the few kernels they leave
        (:func:`~mkl.banks.algebra.largest_eigenvalue`), the second from the
        average kernel that input validation formed."""
        K_mean = (
            self.K_mean
            if self.K_mean is not None
            else self.combine(np.full(self.n_kernels, 1.0 / self.n_kernels))
        )
        return largest_eigenvalue(self.K), eigenvalue_of(K_mean)

    def traces(self) -> np.ndarray:
        return np.einsum("mii->m", self.K).astype(np.float64)

    def check_psd(self, combo: np.ndarray, beta: np.ndarray, label: str) -> None:
        """Refuse an indefinite combination that the solution ``beta`` meets."""
        psd_quadratic_forms(combo[None], beta, labels=[label])

    def fold(self, fit_rows: np.ndarray, eval_rows: np.ndarray):
        """The problem on ``fit_rows`` and a function giving, for kernel m and a
        solution on them, the decision values on ``eval_rows`` (cross-validation)."""
        # C-contiguous blocks: fancy indexing leaves the kernel axis innermost, and
        # each solve and product on K_m would gather it again (mkl.model_selection)
        sub = DenseKernels(
            np.ascontiguousarray(self.K[:, fit_rows[:, None], fit_rows[None, :]]), task=self.task
        )
        cross = np.ascontiguousarray(self.K[:, eval_rows[:, None], fit_rows[None, :]])

        def decision(m: int, sol: SVMSolution) -> np.ndarray:
            return cross[m] @ sol.dual_coef + sol.bias

        return sub, decision

    def raw_forms(self, v: np.ndarray) -> np.ndarray:
        return quadratic_forms(self.K, v)


class FactorKernels:
    """A :class:`~mkl.banks.factor_bank.FactorBank`: combinations are weight vectors and
    each SVM solve warm-starts from the previous alpha."""

    representation = "factors"

    def __init__(self, bank: FactorBank, task=CLASSIFICATION):
        self.bank = bank
        self.task = task
        self.n_kernels, self.n = bank.n_kernels, bank.n_train
        self.dtype = bank.train.dtype  # the precision of a pass
        self._traces = bank.traces()
        if not self._traces.any():  # every column zero: nothing to learn from
            raise InputError("every kernel of the FactorBank is zero (all factors are 0)")
        # b^2: the mean diagonal of the average kernel (module docstring)
        b2 = float(self._traces.sum()) / (self.n_kernels * self.n)
        self.intercept_sq = b2 if b2 > 0 else 1.0
        self._warm: SVMSolution | None = None  # the previous solve's solution
        self.epochs: list[int] = []  # coordinate-descent epochs per solve

    def sibling(self) -> FactorKernels:
        """The same problem with a warm start of its own, for another target
        (:class:`SummedProblems`): the bank and its traces shared."""
        twin = copy.copy(self)
        twin._warm, twin.epochs = None, []
        return twin

    def combine(self, theta: np.ndarray) -> np.ndarray:
        return np.asarray(theta, dtype=np.float64).copy()

    def uniform_combination(self, theta: np.ndarray) -> np.ndarray:
        return self.combine(theta)

    def kernel(self, m: int) -> np.ndarray:
        e = np.zeros(self.n_kernels)
        e[m] = 1.0
        return e

    def shift_weight(self, combo: np.ndarray, source: int, target: int, amount: float) -> None:
        """The weight vector ``combo`` with ``amount`` moved from ``source`` to ``target``."""
        combo[source] -= amount
        combo[target] += amount

    def solve(self, combo, theta, y, C, tol) -> SVMSolution:
        """The task's dual on the factors (``mkl.solvers.dispatch.solve_factored_dual``),
        warm-started at the previous solution."""
        warm = self._warm if self._warm is not None and len(self._warm.alpha) == len(y) else None
        sol = solve_factored_dual(
            self.task, self.bank.train, self.bank.offsets, np.maximum(theta, 0.0), y, C, tol,
            self.intercept_sq, warm,
        )  # fmt: skip
        self._warm = sol
        self.epochs.append(sol.epochs)
        return sol

    def interleaved(self, y, C):
        """The interleaved engine on the factors for the C-SVM and the SVR; None
        for the one-class SVM, solved point by point
        (``mkl.solvers.dispatch.factored_interleaved_engine``)."""
        return factored_interleaved_engine(self.task, self.bank, self.intercept_sq, y, C)

    def forms(self, beta: np.ndarray) -> np.ndarray:
        """q_m = ||Z_m' beta||^2 (one pass; PSD by construction)."""
        return self.bank.quadratic_forms(beta)

    def forms_and_products(self, beta: np.ndarray):
        w = self.bank.project(beta)
        return self.bank.group_sums(w * w), w

    def combined_product(self, theta: np.ndarray, handle) -> np.ndarray:
        """K(theta) beta = Z (s * w) for w = Z' beta (one pass)."""
        return self.bank.times(self.bank.column_weights(theta) * handle)

    def forms_of(self, handle, beta: np.ndarray) -> np.ndarray:
        """As :meth:`DenseKernels.forms_of`: q_m = ||w_m||^2 for w = Z' beta."""
        return self.bank.group_sums(handle * handle)

    def curvature(self, combo: np.ndarray, beta: np.ndarray, q=None) -> float:
        """beta' K(d) beta = d'q(beta) for the weight vector ``combo`` = d."""
        if q is None:
            q = self.forms(beta)
        return float(combo @ q)

    def spectral_ratio(self, combo: np.ndarray) -> float:
        return self.bank.spectral_ratio(combo)

    def eigenvalue_scales(self) -> tuple[float, float]:
        """(max_m lambda_max(K_m), mean_m lambda_max(K_m)): the mean stands in for
        the average kernel's lambda_max (it bounds it from above), which
        Lanczos would get only from many passes over the factors."""
        eigenvalues = self.largest_eigenvalues()
        return float(eigenvalues.max()), float(eigenvalues.mean())

    def largest_eigenvalues(self) -> np.ndarray:
        """lambda_max(Z_m Z_m') = sigma_max(Z_m)^2: the Gram matrix Z_m'Z_m (r_m x r_m)
        for small ranks, Lanczos on it otherwise; factors on disk: every
        kernel's Gram matrix in one pass."""
        import scipy.sparse as sp
        from scipy.sparse.linalg import LinearOperator

        if self.bank.out_of_core:
            return np.array([float(np.linalg.eigvalsh(G)[-1]) for G in self.bank.factor_grams()])
        out = []
        for m in range(self.n_kernels):
            Zm = self.bank.factor(m)
            r = Zm.shape[1]
            if r <= 256:
                G = Zm.T @ Zm
                G = G.toarray() if sp.issparse(G) else G
                out.append(float(np.linalg.eigvalsh(np.asarray(G, dtype=np.float64))[-1]))
            else:
                op = LinearOperator((r, r), matvec=lambda x, Zm=Zm: Zm.T @ (Zm @ x), dtype=float)
                out.append(lanczos_largest(op))
        return np.array(out)

    def traces(self) -> np.ndarray:
        return self._traces

    def check_psd(self, combo: np.ndarray, beta: np.ndarray, label: str) -> None:
        """Nothing to check: K_m = Z_m Z_m' is PSD by construction."""

    def fold(self, fit_rows: np.ndarray, eval_rows: np.ndarray):
        """As :meth:`DenseKernels.fold`, on the factors' rows."""
        sub = FactorKernels(self.bank.rows(fit_rows), self.task)
        held = self.bank.rows(eval_rows)

        def decision(m: int, sol: SVMSolution) -> np.ndarray:
            w = sub.bank.project(sol.dual_coef) * sub.bank.column_weights(self.kernel(m))
            return held.times(w) + sol.bias

        return sub, decision

    def raw_forms(self, v: np.ndarray) -> np.ndarray:
        return self.bank.quadratic_forms(v)


class SummedProblems:
    """C problems on one bank at one weight vector, one per target vector
    y_c (the rows of a target matrix Y, (C, n)), whose duals are summed:

        J(theta) = sum_c J_c(theta),                                              (1)
        J_c(theta) = max_{beta_c} S_c(beta_c) - 1/2 sum_m theta_m beta_c'K_m beta_c,

    so that q_m = sum_c beta_c'K_m beta_c and S = sum_c S_c (each J_c convex
    in theta, a maximum of affine functions, and so is their sum). It is an
    inner problem as :class:`DenseKernels` and :class:`FactorKernels` are,
    taking Y where they take y: a combination is formed once and serves
    every target's solve, each target keeps its own warm start (``sibling``),
    and the solutions, q and the curvature are the sums over the targets
    (:class:`~mkl.solvers.solution.SummedSolution`). So the wrapper
    framework's J, gradient -1/2 q, cuts and dual bound are those of the sum,
    with no change to a loop (``mkl.algorithms.wrapper``, ``multiclass``)."""

    def __init__(self, problem, n_targets: int):
        self.problems = [problem] + [problem.sibling() for _ in range(n_targets - 1)]
        self.representation = problem.representation
        self.n_kernels, self.n, self.dtype = problem.n_kernels, problem.n, problem.dtype

    def combine(self, theta: np.ndarray) -> np.ndarray:
        return self.problems[0].combine(theta)

    def uniform_combination(self, theta: np.ndarray):
        return self.problems[0].uniform_combination(theta)

    def shift_weight(self, combo: np.ndarray, source: int, target: int, amount: float) -> None:
        self.problems[0].shift_weight(combo, source, target, amount)

    def solve(self, combo, theta, Y, C, tol) -> SummedSolution:
        """Every target's dual on the one combination ``combo``, each from its own
        warm start."""
        return SummedSolution(
            [p.solve(combo, theta, y, C, tol) for p, y in zip(self.problems, Y, strict=True)]
        )

    def interleaved(self, Y: np.ndarray, C):
        """Every target's interleaved engine, advanced together
        (:class:`SummedEngine`); None when a target's task has none."""
        engines = [p.interleaved(y, C) for p, y in zip(self.problems, Y, strict=True)]
        return None if any(e is None for e in engines) else SummedEngine(engines)

    def forms(self, B: np.ndarray) -> np.ndarray:
        """q_m = sum_c beta_c'K_m beta_c for the rows beta_c of B (one pass per target)."""
        return np.sum([self.problems[0].forms(beta) for beta in B], axis=0)

    def curvature(self, combo: np.ndarray, B: np.ndarray, q=None) -> float:
        """sum_c beta_c'K(d) beta_c for the combination ``combo`` = K(d)."""
        if q is not None:
            return float(combo @ q)
        return float(sum(self.problems[0].curvature(combo, beta) for beta in B))

    def spectral_ratio(self, combo: np.ndarray) -> float:
        return self.problems[0].spectral_ratio(combo)


class SummedEngine:
    """The interleaved engines of the targets of :class:`SummedProblems`
    (``BankSMO`` or ``FactorCD``, one per target, each with its own state),
    moved together at one weight vector: a chunk is a chunk of every
    target's, its solution the :class:`~mkl.solvers.solution.SummedSolution`
    of theirs (J's primal bound the sum of their bounds) and q the sum of
    their q. ``rows_read`` counts every engine's rows."""

    def __init__(self, engines: list):
        self.engines = engines
        self.chunk_steps = engines[0].chunk_steps

    @property
    def rows_read(self) -> int:
        return sum(e.rows_read for e in self.engines)

    def advance(self, theta: np.ndarray, max_steps: int, tol: float):
        return self._summed([e.advance(theta, max_steps, tol) for e in self.engines])

    def solve(
        self, theta: np.ndarray, tol: float, K_theta=None, track: bool = True, whole: bool = True
    ):
        return self._summed(
            [e.solve(theta, tol, K_theta, track=track, whole=whole) for e in self.engines]
        )

    def combination(self, theta: np.ndarray) -> np.ndarray:
        return self.engines[0].combination(theta)

    @staticmethod
    def _summed(results):
        solutions, forms = zip(*results, strict=True)
        q = None if any(f is None for f in forms) else np.sum(forms, axis=0)
        return SummedSolution(list(solutions)), q


def inner_problem(K, K_mean=None, task=CLASSIFICATION):
    """The inner problem of a fit for a bank and a task (``mkl.solvers.task_duals``):
    :class:`FactorKernels` for a FactorBank, :class:`DenseKernels` for an
    (M, n, n) array. Kernels that are zero on the training rows are warned
    about from the traces (:func:`mkl.banks.checks.warn_zero_kernels`: the
    diagonal, M n reads; a factor bank's traces, which its problem keeps); the
    problems of cross-validation folds (``fold``) are not, where a rare
    feature's kernel may well be zero."""
    if isinstance(K, FactorBank):
        problem = FactorKernels(K, task)
        warn_zero_kernels(problem.traces(), K.names)
    else:
        problem = DenseKernels(K, K_mean, task)
        warn_zero_kernels(problem.traces())
    return problem

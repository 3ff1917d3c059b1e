"""Baselines every MKL paper compares against, and the shape they share with
every method that fixes its weights before one SVM
(:class:`CombinationSVM`: the SVM on K(theta) = sum_m theta_m K_m).

* ``uniform``: the SVM on the average kernel (1/M) sum_m K_m (the "UW-MKL" of
  Yang et al. 2011, the "average kernel" of Lauriola et al. 2018).
* ``fixed``: the SVM on sum_m theta_m K_m with given weights theta (e.g. the
  ``weights_`` of another fit, reused on new data: SHOGUN's and MKLpy's
  users' "fixed combination").
* ``single_best``: the one kernel of the bank with the best inner
  cross-validated accuracy (regression: squared error) at the given C, then
  an SVM on it.
* ``linear``: an SVM on one given kernel (the workflow hands it the bank's
  linear kernel on all features, selected by its spec).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold

from ..banks.factor_bank import FactorBank
from ..exceptions import InputError
from ..solvers.inner import inner_problem
from .base import BaseMKL, BinaryFit
from .iterations import single_solve


def _svm_fit(
    problem,
    weights,
    sol,
    K_used,
    method: str,
    svm_solves=1,
    passes=1,
    cv_converged=True,
    check_psd=True,
    before="cross-validation SVM",
    **extra,
) -> BinaryFit:
    """A baseline's fit: one SVM on a fixed kernel. It computes no gap
    (``gap_`` is NaN) and has converged when its SVM solves have. An
    indefinite kernel that the SVM's solution meets is refused
    (:func:`mkl.banks.algebra.psd_quadratic_forms`) unless ``check_psd`` is
    False (a combination with negative weights, indefinite by design: CKA).
    ``cv_converged``: whether what ran ``before`` the SVM (single_best's
    cross-validation, a method's weights) converged."""
    if check_psd:
        problem.check_psd(K_used, sol.dual_coef, f"the combined kernel ({method})")
    log = single_solve(
        method, sol.objective, sol.converged, svm_solves=svm_solves, passes=passes, **extra
    )
    log.inner(cv_converged, before)
    log.finish()
    return BinaryFit(
        weights=weights,
        dual_coef=sol.dual_coef,
        intercept=sol.bias,
        objective=sol.objective,
        spectral_ratio=problem.spectral_ratio(K_used),
        **log.fit_fields(),
    )


def _one_hot(M: int, m: int) -> np.ndarray:
    w = np.zeros(M)
    w[m] = 1.0
    return w


class CombinationSVM(BaseMKL):
    """The SVM on one combination K(theta) = sum_m theta_m K_m whose weights
    are set before it, without looking at the SVM: given (``fixed``), equal
    (``uniform``), or a closed form or small QP on the kernels and the labels
    (:mod:`mkl.algorithms.alignment`). A subclass defines
    ``_combination_weights(problem, y)`` -> (theta, the history's own
    columns, whether the solve that set them converged); this class solves
    the one SVM (``C``, ``tol``: libsvm's stopping tolerance) and builds the
    fit. ``signed_weights``: theta may have negative
    entries (CKA), and the combination may then be indefinite: the SVM is
    solved on it as it is (libsvm's SMO reaches a stationary point of the
    non-convex dual), not refused."""

    def _combination_weights(self, problem, y: np.ndarray) -> tuple[np.ndarray, dict, bool]:
        raise NotImplementedError

    def _fit_binary(self, K, y, K_mean):
        problem = inner_problem(K, K_mean, self._task)
        theta, columns, converged = self._combination_weights(problem, y)
        combo = problem.uniform_combination(theta)
        if combo is None:
            combo = problem.combine(theta)
        sol = problem.solve(combo, theta, y, self._box(self.C), self.tol)
        method = type(self).__name__
        return _svm_fit(
            problem,
            theta,
            sol,
            combo,
            method,
            cv_converged=converged,
            check_psd=not (theta < 0).any(),
            before=f"{method}'s weights",
            **columns,
        )


class UniformMKL(CombinationSVM):
    """SVM on the average kernel: weights 1/M, one SVM solve.

    Parameters
    ----------
    C : float or None, soft-margin parameter (None: hard margin).
    tol : float, libsvm's stopping tolerance.
    """

    takes_sample_weight = True
    accepts_factors = True
    tasks = ("classification", "regression", "novelty")

    def __init__(self, C=1.0, tol=1e-3, task="classification"):
        self.C = C
        self.tol = tol
        self.task = task

    def _combination_weights(self, problem, y):
        return np.full(problem.n_kernels, 1.0 / problem.n_kernels), {}, True


class FixedWeightsMKL(CombinationSVM):
    """SVM on sum_m theta_m K_m with the given ``weights`` theta: one SVM
    solve, the weights as given (not rescaled: C acts on the combination
    they make). To reuse a fit's weights on new data or in another model:
    ``make_estimator("fixed", weights=est.weights_)``.

    Parameters
    ----------
    weights : array-like (M,), or (n_classes, M) for one-vs-rest
        Nonnegative weights, one per kernel of the bank (a row per class,
        in the order of ``classes_``, as a one-vs-rest fit's ``weights_``;
        one row is used for every class). Required.
    C : float or None, soft-margin parameter (None: hard margin).
    tol : float, libsvm's stopping tolerance.
    """

    takes_sample_weight = True
    accepts_factors = True
    tasks = ("classification", "regression", "novelty")

    _parameter_constraints: dict = {
        **BaseMKL._parameter_constraints,
        "weights": ["array-like", None],
    }

    def __init__(self, weights=None, C=1.0, tol=1e-3, task="classification"):
        self.weights = weights
        self.C = C
        self.tol = tol
        self.task = task

    def _checked_weights(self, M: int, n_tasks: int) -> np.ndarray:
        """``weights`` as (n_tasks, M) float64: finite, >= 0, not all zero in
        any row, one row per task (a single row repeated)."""
        if self.weights is None:
            raise InputError(
                "algorithm 'fixed' needs its weights: weights=[theta_1, ..., theta_M] "
                "(e.g. a fitted estimator's weights_)"
            )
        try:
            w = np.asarray(self.weights, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"weights must be numbers, got {self.weights!r}") from None
        if w.ndim == 1:
            w = np.broadcast_to(w, (n_tasks, w.size))
        if w.shape != (n_tasks, M):
            want = f"({M},)" + ("" if n_tasks == 1 else f" or ({n_tasks}, {M}), a row per class")
            raise InputError(
                f"weights must have shape {want} for this bank of {M} kernels, "
                f"got {np.shape(self.weights)}"
            )
        if not np.isfinite(w).all():
            raise InputError("weights contain NaN or inf")
        if (w < 0).any():
            raise InputError(
                "weights must be >= 0 (a negative weight can make the combination indefinite)"
            )
        if not (w.max(axis=1) > 0).all():
            raise InputError("weights are all zero (in a row): the combination is the zero kernel")
        return w

    def _fit_tasks(self, K, tasks):
        self._n_tasks = len(tasks)  # a row of weights per task
        try:
            super()._fit_tasks(K, tasks)
        finally:
            del self._n_tasks

    def _prepare(self, K, K_mean):
        # checked once the bank is (its bad input named first), a row per task in turn
        M = K.n_kernels if isinstance(K, FactorBank) else K.shape[0]
        return iter(self._checked_weights(M, self._n_tasks))

    def _combination_weights(self, problem, y):
        return next(self._shared).copy(), {}, True


class SingleKernelSVM(BaseMKL):
    """SVM on one kernel of the bank (``kernel_index``); the ``linear`` baseline
    when the workflow passes it the linear kernel."""

    takes_sample_weight = True
    accepts_factors = True

    tasks = ("classification", "regression", "novelty")

    def __init__(self, C=1.0, kernel_index=0, tol=1e-3, task="classification"):
        self.C = C
        self.kernel_index = kernel_index
        self.tol = tol
        self.task = task

    def _fit_binary(self, K, y, K_mean):
        problem = inner_problem(K, K_mean, self._task)
        M = problem.n_kernels
        m = self.kernel_index
        # no negative indices: -1 would silently pick the last kernel of a bank
        # whose order the caller may not know (the bank's names_ say which)
        if not (isinstance(m, (int, np.integer)) and not isinstance(m, bool) and 0 <= m < M):
            raise InputError(f"kernel_index must be an integer in [0, {M}), got {m!r}")
        m = int(m)
        theta = _one_hot(M, m)
        sol = problem.solve(problem.kernel(m), theta, y, self._box(self.C), self.tol)
        return _svm_fit(problem, theta, sol, problem.kernel(m), "SingleKernelSVM", passes=0)


class SingleBestKernel(BaseMKL):
    """The kernel with the best ``cv``-fold cross-validated score at the given C
    (ties: the first in bank order), refitted on all points: accuracy over
    stratified folds for classification, mean squared error over plain folds
    for regression (``mkl.make_estimator("single_best", task="regression")``).

    ``Cs``: candidate values of C, chosen with the kernel by the same folds
    (ties: the first of ``Cs``, then bank order), as scikit-learn's
    ``LogisticRegressionCV`` takes ``Cs``; ``C`` is then unused. The pair is
    chosen by one cross-validation of len(Cs) x M SVMs a fold (each kernel's
    SVMs solved along ``Cs``, each from the previous solution), where a grid
    search over C around this estimator (``GridSearchCV``, or the workflow's
    grid) nests a cross-validation of M SVMs a fold in each of its folds:
    with 3 folds each, the quick experiment's two values of C took 3.5 times
    the SVM solves.

    ``history_`` holds each kernel's CV score (``cv_accuracy``, or ``cv_mse``),
    at the chosen C (``C``) when ``Cs`` is given.
    """

    takes_sample_weight = True
    accepts_factors = True
    tasks = ("classification", "regression")

    _parameter_constraints: dict = {
        **BaseMKL._parameter_constraints,
        "Cs": ["array-like", None],
    }

    def __init__(self, C=1.0, cv=3, random_state=0, tol=1e-3, task="classification", Cs=None):
        self.C = C
        self.cv = cv
        self.random_state = random_state
        self.tol = tol
        self.task = task
        self.Cs = Cs

    def _candidate_Cs(self) -> list:
        """The values of C to choose among: ``Cs`` checked, else ``[C]``."""
        if self.Cs is None:
            return [self.C]
        Cs = np.asarray(self.Cs, dtype=object).ravel().tolist()
        if not Cs or not all(
            isinstance(c, Real) and not isinstance(c, bool) and np.isfinite(c) and c > 0 for c in Cs
        ):
            raise InputError(f"Cs must be a non-empty list of positive numbers, got {self.Cs!r}")
        return [float(c) for c in Cs]

    def _fit_binary(self, K, y, K_mean):
        problem = inner_problem(K, K_mean, self._task)
        M = problem.n_kernels
        Cs = self._candidate_Cs()
        regression = self._task.name == "regression"
        loss, total, cv_converged = cross_validated_losses(self, problem, y, Cs)
        # row-major: ties go to the first C of Cs, then to the first kernel
        chosen, best = np.unravel_index(int(np.argmin(loss)), loss.shape)
        C, loss = Cs[chosen], loss[chosen]
        if regression:
            scores = {"cv_mse": [float(v) for v in loss / total]}
        else:
            scores = {"cv_accuracy": [float(v) for v in (total - loss) / total]}
        if self.Cs is not None:
            scores["C"] = C
        best = int(best)
        theta = _one_hot(M, best)
        sol = problem.solve(problem.kernel(best), theta, y, self._box(C), self.tol)
        return _svm_fit(
            problem,
            theta,
            sol,
            problem.kernel(best),
            "SingleBestKernel",
            svm_solves=self.cv * M * len(Cs) + 1,
            passes=0,
            cv_converged=cv_converged,
            **scores,
        )


def cross_validated_losses(est: BaseMKL, problem, y: np.ndarray, Cs: list) -> tuple:
    """Each kernel's ``est.cv``-fold cross-validated loss at each C of ``Cs``:
    the (weighted) count of errors on the held-out points, or their (weighted)
    squared error for a regression, over stratified folds (plain folds for a
    regression) shuffled by ``est.random_state``; each kernel's SVMs solved
    along ``Cs`` from the previous solution. Returns (losses (len(Cs), M),
    the total weight of the points held out, whether every SVM converged).
    With sample weights the folds are of the points of positive weight, whose
    errors count by their weights: a point of weight 0 takes no part, one of
    weight k counts as k (as the rows repeated). ``SingleBestKernel`` chooses
    by it, PWMK weights by it (:mod:`mkl.algorithms.alignment`)."""
    M = problem.n_kernels
    regression = est._task.name == "regression"
    s = getattr(est, "_sample_weight", None)
    rows = np.arange(len(y)) if s is None else np.flatnonzero(s > 0)
    weight = np.ones(len(y)) if s is None else s
    y_cv = y[rows]
    if regression:
        n_max, what = len(y_cv), "the number of points"
        folds = KFold(est.cv, shuffle=True, random_state=est.random_state)
    else:
        n_max, what = np.bincount((y_cv > 0).astype(int)).min(), "the smaller class's size"
        folds = StratifiedKFold(est.cv, shuffle=True, random_state=est.random_state)
    if s is not None:
        what += " among the points of positive sample weight"
    if not (isinstance(est.cv, (int, np.integer)) and 2 <= est.cv <= n_max):
        raise InputError(f"cv must be an integer in [2, {n_max}] ({what}), got {est.cv!r}")
    loss = np.zeros((len(Cs), M))
    cv_converged = True  # the SVM solves (all converge unless C=None caps them)
    for tr, va in folds.split(np.zeros(len(y_cv)), y_cv):
        tr, va = rows[tr], rows[va]
        sub, decision = problem.fold(tr, va)
        for m in range(M):
            K_m, theta_m = sub.kernel(m), _one_hot(M, m)
            for c, C in enumerate(Cs):  # each from the previous solution (inner.py)
                sol = sub.solve(K_m, theta_m, y[tr], est._box(C, tr), est.tol)
                cv_converged &= sol.converged
                f = decision(m, sol)
                if regression:
                    loss[c, m] += float(weight[va] @ ((f - y[va]) ** 2))
                else:
                    loss[c, m] += float(weight[va] @ (np.where(f > 0, 1, -1) != y[va]))
    return loss, float(weight[rows].sum()), cv_converged

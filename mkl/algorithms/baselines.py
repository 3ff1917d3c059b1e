"""Baselines every MKL paper compares against.

* ``uniform``: the SVM on the average kernel (1/M) sum_m K_m (the "UW-MKL" of
  Yang et al. 2011, the "average kernel" of Lauriola et al. 2018).
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

from ..exceptions import InputError
from ..solvers.inner import inner_problem
from .base import BaseMKL, BinaryFit
from .iterations import single_solve


def _svm_fit(
    problem, weights, sol, K_used, method: str, svm_solves=1, passes=1, cv_converged=True, **extra
) -> BinaryFit:
    """A baseline's fit: one SVM on a fixed kernel. It computes no gap
    (``gap_`` is NaN) and has converged when its SVM solves have. An
    indefinite kernel that the SVM's solution meets is refused
    (:func:`mkl.banks.algebra.psd_quadratic_forms`)."""
    problem.check_psd(K_used, sol.dual_coef, f"the combined kernel ({method})")
    log = single_solve(
        method, sol.objective, sol.converged, svm_solves=svm_solves, passes=passes, **extra
    )
    log.inner(cv_converged, "cross-validation SVM")
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


class UniformMKL(BaseMKL):
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

    def _fit_binary(self, K, y, K_mean):
        problem = inner_problem(K, K_mean, self._task)
        M = problem.n_kernels
        theta = np.full(M, 1.0 / M)
        combo = problem.uniform_combination(theta)
        sol = problem.solve(combo, theta, y, self._box(self.C), self.tol)
        return _svm_fit(problem, theta, sol, combo, "UniformMKL")


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
        # with sample weights the folds are of the points of positive weight, whose
        # errors count by their weights: a point of weight 0 takes no part, one of
        # weight k counts as k (as the rows repeated); the others' folds as before
        s = getattr(self, "_sample_weight", None)
        rows = np.arange(len(y)) if s is None else np.flatnonzero(s > 0)
        weight = np.ones(len(y)) if s is None else s
        y_cv = y[rows]
        if regression:
            n_max, what = len(y_cv), "the number of points"
            folds = KFold(self.cv, shuffle=True, random_state=self.random_state)
        else:
            n_max, what = np.bincount((y_cv > 0).astype(int)).min(), "the smaller class's size"
            folds = StratifiedKFold(self.cv, shuffle=True, random_state=self.random_state)
        if s is not None:
            what += " among the points of positive sample weight"
        if not (isinstance(self.cv, (int, np.integer)) and 2 <= self.cv <= n_max):
            raise InputError(f"cv must be an integer in [2, {n_max}] ({what}), got {self.cv!r}")
        # (weighted) errors, or squared errors, over the held-out points, per C and kernel
        loss = np.zeros((len(Cs), M))
        cv_converged = True  # the selection's SVM solves (all converge unless C=None caps them)
        for tr, va in folds.split(np.zeros(len(y_cv)), y_cv):
            tr, va = rows[tr], rows[va]
            sub, decision = problem.fold(tr, va)
            for m in range(M):
                K_m, theta_m = sub.kernel(m), _one_hot(M, m)
                for c, C in enumerate(Cs):  # each from the previous solution (inner.py)
                    sol = sub.solve(K_m, theta_m, y[tr], self._box(C, tr), self.tol)
                    cv_converged &= sol.converged
                    f = decision(m, sol)
                    if regression:
                        loss[c, m] += float(weight[va] @ ((f - y[va]) ** 2))
                    else:
                        loss[c, m] += float(weight[va] @ (np.where(f > 0, 1, -1) != y[va]))
        # row-major: ties go to the first C of Cs, then to the first kernel
        chosen, best = np.unravel_index(int(np.argmin(loss)), loss.shape)
        C, loss = Cs[chosen], loss[chosen]
        total = float(weight[rows].sum())
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

"""Baselines every MKL paper compares against.

* ``uniform``: the SVM on the average kernel (1/M) sum_m K_m (the "UW-MKL" of
  Yang et al. 2011, the "average kernel" of Lauriola et al. 2018).
* ``single_best``: the one kernel of the bank with the best inner
  cross-validated accuracy at the given C, then an SVM on it.
* ``linear``: an SVM on one given kernel (the workflow hands it the bank's
  linear kernel on all features, selected by its spec).
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import StratifiedKFold

from ..base import BinaryFit, MKLClassifier
from ..kernels import spectral_ratio
from ..svm import solve_svm_dual


def _one_hot(M: int, m: int) -> np.ndarray:
    w = np.zeros(M)
    w[m] = 1.0
    return w


class UniformMKL(MKLClassifier):
    """SVM on the average kernel: weights 1/M, one SVM solve.

    Parameters
    ----------
    C : float or None, soft-margin parameter (None: hard margin).
    tol : float, libsvm's stopping tolerance.
    """

    def __init__(self, C=1.0, tol=1e-3):
        self.C = C
        self.tol = tol

    def _fit_binary(self, K, y, K_mean):
        sol = solve_svm_dual(K_mean, y, self.C, self.tol)
        M = K.shape[0]
        return BinaryFit(
            weights=np.full(M, 1.0 / M),
            dual_coef=sol.dual_coef,
            intercept=sol.bias,
            objective=sol.objective,
            converged=sol.converged,
            history=[{"objective": sol.objective, "gap": 0.0, "svm_solves": 1}],
            spectral_ratio=spectral_ratio(K_mean),
        )


class SingleKernelSVM(MKLClassifier):
    """SVM on one kernel of the bank (``kernel_index``); the ``linear`` baseline
    when the workflow passes it the linear kernel."""

    def __init__(self, C=1.0, kernel_index=0, tol=1e-3):
        self.C = C
        self.kernel_index = kernel_index
        self.tol = tol

    def _fit_binary(self, K, y, K_mean):
        M = K.shape[0]
        m = self.kernel_index
        if not (isinstance(m, (int, np.integer)) and -M <= m < M):
            raise ValueError(f"kernel_index must be an integer in [0, {M}), got {m!r}")
        m = int(m) % M
        sol = solve_svm_dual(K[m], y, self.C, self.tol)
        return BinaryFit(
            weights=_one_hot(M, m),
            dual_coef=sol.dual_coef,
            intercept=sol.bias,
            objective=sol.objective,
            converged=sol.converged,
            history=[{"objective": sol.objective, "gap": 0.0, "svm_solves": 1}],
            spectral_ratio=spectral_ratio(K[m]),
        )


class SingleBestKernel(MKLClassifier):
    """The kernel with the best ``cv``-fold stratified cross-validated accuracy
    at the given C (ties: the first in bank order), refitted on all points.

    ``history_`` holds each kernel's mean CV accuracy.
    """

    def __init__(self, C=1.0, cv=3, random_state=0, tol=1e-3):
        self.C = C
        self.cv = cv
        self.random_state = random_state
        self.tol = tol

    def _fit_binary(self, K, y, K_mean):
        M = K.shape[0]
        n_min = np.bincount((y > 0).astype(int)).min()
        if not (isinstance(self.cv, (int, np.integer)) and 2 <= self.cv <= n_min):
            raise ValueError(
                f"cv must be an integer in [2, {n_min}] (the smaller class's size), got {self.cv!r}"
            )
        folds = StratifiedKFold(self.cv, shuffle=True, random_state=self.random_state)
        correct = np.zeros(M)
        for tr, va in folds.split(np.zeros(len(y)), y):
            K_tr = K[:, tr[:, None], tr[None, :]]
            K_va = K[:, va[:, None], tr[None, :]]
            for m in range(M):
                sol = solve_svm_dual(K_tr[m], y[tr], self.C, self.tol)
                pred = np.where(K_va[m] @ sol.dual_coef + sol.bias > 0, 1, -1)
                correct[m] += (pred == y[va]).sum()
        scores = correct / len(y)
        best = int(np.argmax(scores))
        sol = solve_svm_dual(K[best], y, self.C, self.tol)
        history = [{"kernel": m, "cv_accuracy": float(s)} for m, s in enumerate(scores)]
        return BinaryFit(
            weights=_one_hot(M, best),
            dual_coef=sol.dual_coef,
            intercept=sol.bias,
            objective=sol.objective,
            n_iter=M,
            converged=sol.converged,
            history=history,
            spectral_ratio=spectral_ratio(K[best]),
        )

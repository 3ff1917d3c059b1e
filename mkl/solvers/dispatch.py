"""Which solver solves a task's dual on which representation of the bank,
chosen in one place. The tasks (``mkl.solvers.task_duals``) describe their
duals and call no solver; the inner problems (``mkl.solvers.inner``) hold the
bank and the warm start, and call these.

* A dense kernel K(theta), n x n (:func:`solve_dense_dual`): the C-SVM by
  libsvm (``mkl.solvers.libsvm.solve_svm_dual``) cold or at hard margin, else
  by the SMO (``mkl.solvers.smo.solve_svm_smo``) from the previous alpha:
  libsvm takes no initial alpha, and stays the cold solver since from zero at
  large C it is as fast as our SMO or faster (benchmarks/bench_smo.py). The
  epsilon-SVR and the one-class SVM by libsvm (``solve_svr_dual``,
  ``solve_one_class_dual``).
* Factors, a FactorBank (:func:`solve_factored_dual`): dual coordinate descent
  (``mkl.solvers.coordinate_descent``: ``solve_factored_svm``,
  ``solve_factored_svr``, ``solve_factored_one_class``) warm-started at the
  previous solution.
* The interleaved engine, whose weights change between chunks of solver
  steps: ``mkl.solvers.smo.BankSMO`` on a dense bank, on the task's
  ``dual_form`` (:func:`dense_interleaved_engine`), and
  ``mkl.solvers.coordinate_descent.FactorCD`` on factors, on the task's
  ``factor_form`` (:func:`factored_interleaved_engine`; none for the
  one-class SVM).

The numba solvers are imported when first needed.
"""

from __future__ import annotations

import numpy as np

from .libsvm import solve_one_class_dual, solve_svm_dual, solve_svr_dual
from .solution import SVMSolution
from .task_duals import finite_C


def solve_dense_dual(
    task, K: np.ndarray, y: np.ndarray, C, tol: float, warm: np.ndarray | None
) -> SVMSolution:
    """The dual of ``task`` on the kernel ``K`` (n, n): the C-SVM cold by libsvm
    (``warm`` None, or hard margin), else by SMO from the multipliers ``warm``;
    the epsilon-SVR and the one-class SVM by libsvm (``warm`` not used)."""
    if task.name == "regression":
        return solve_svr_dual(K, y, finite_C(C), task.epsilon, tol)
    if task.name == "novelty":
        return solve_one_class_dual(K, task.nu, tol)
    if C is None or warm is None:
        return solve_svm_dual(K, y, C, tol)
    from .smo import solve_svm_smo

    return solve_svm_smo(K, y, C, tol, alpha0=warm)


def solve_factored_dual(
    task, Z, offsets, theta, y, C, tol: float, intercept_sq: float, warm: SVMSolution | None
) -> SVMSolution:
    """The dual of ``task`` on factors ``Z`` (columns ``offsets[m]:offsets[m+1]``
    of kernel m) at weights ``theta`` by dual coordinate descent, started at the
    previous solution ``warm`` (or None): the C-SVM and the epsilon-SVR with
    their intercept a regularised constant feature (``intercept_sq`` = b^2),
    the one-class SVM with its equality kept by the method of multipliers
    (its offset is not regularised: ``intercept_sq`` is not used)."""
    from .coordinate_descent import (
        solve_factored_one_class,
        solve_factored_svm,
        solve_factored_svr,
    )

    if task.name == "regression":
        return solve_factored_svr(
            Z, offsets, theta, y, finite_C(C), task.epsilon, tol, intercept_sq=intercept_sq,
            beta0=None if warm is None else warm.dual_coef,
        )  # fmt: skip
    if task.name == "novelty":
        return solve_factored_one_class(
            Z, offsets, theta, task.nu, tol,
            alpha0=None if warm is None else warm.alpha,
            rho0=None if warm is None else -warm.bias,
        )  # fmt: skip
    return solve_factored_svm(
        Z, offsets, theta, y, C, tol, intercept_sq=intercept_sq,
        alpha0=None if warm is None else warm.alpha,
    )  # fmt: skip


def dense_interleaved_engine(task, K: np.ndarray, y: np.ndarray, C):
    """The interleaved engine on a dense bank ``K`` (M, n, n; C-contiguous):
    ``mkl.solvers.smo.BankSMO`` on the task's dual in libsvm's form."""
    from .smo import BankSMO

    return BankSMO(K, task.dual_form(y, C, K.shape[1]), task, y, C)


def factored_interleaved_engine(task, bank, intercept_sq: float, y: np.ndarray, C):
    """The interleaved engine on a ``FactorBank``:
    ``mkl.solvers.coordinate_descent.FactorCD`` on the task's box QP for the
    C-SVM and the SVR; None for the one-class SVM, whose equality the factored
    solver keeps by an outer multiplier loop (it is then solved point by point)."""
    if not hasattr(task, "factor_form"):
        return None
    from .coordinate_descent import FactorCD

    return FactorCD(bank, intercept_sq, task, y, C)

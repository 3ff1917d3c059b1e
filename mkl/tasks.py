"""The learning task of an inner problem: which SVM dual is solved for fixed
kernel weights theta. Every task's dual has the wrapper framework's form

    J(theta) = max_{beta in B}  S(beta) - 1/2 sum_m theta_m beta' K_m beta,

a maximum of functions affine in theta, so J is convex and every wrapper
method (SimpleMKL, the level method, lp-norm MKL, GMKL) minimises it over its
weight set unchanged: a task is a new inner problem behind the one oracle
(``mkl/algorithms/inner.py``), not a new loop.

* :data:`CLASSIFICATION`: the C-SVM, beta = alpha * y, 0 <= alpha <= C,
  y'alpha = 0, S = 1'alpha (``mkl.svm.solve_svm_dual``, warm starts by
  ``mkl.smo``).
* :class:`Regression` (epsilon-SVR): -C <= beta <= C, 1'beta = 0,
  S = y'beta - epsilon ||beta||_1 (``mkl.svm.solve_svr_dual``).
* :class:`Novelty` (one-class SVM, Schoelkopf et al. 2001): 0 <= beta <= 1/(nu n),
  1'beta = 1, S = 0, so J(theta) = -min_beta 1/2 beta'K(theta)beta: learning
  the weights maximises the one-class dual value (``mkl.svm.solve_one_class_dual``).
  ``objective_`` is J, at most 0; Schoelkopf's dual value is -J.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from .exceptions import InputError
from .svm import SVMSolution, solve_one_class_dual, solve_svr_dual


@dataclass(frozen=True)
class Classification:
    """The C-SVM (solved by the inner problem itself: libsvm cold, SMO warm)."""

    name = "classification"


@dataclass(frozen=True)
class Regression:
    """epsilon-SVR with tube half-width ``epsilon`` >= 0."""

    epsilon: float = 0.1
    name = "regression"

    def __post_init__(self):
        e = self.epsilon
        if not (isinstance(e, numbers.Real) and not isinstance(e, bool) and np.isfinite(e)):
            raise InputError(f"epsilon must be a finite number >= 0, got epsilon={e!r}")
        if e < 0:
            raise InputError(f"epsilon must be >= 0, got epsilon={e!r}")

    def solve(self, K: np.ndarray, y: np.ndarray, C, tol: float) -> SVMSolution:
        if C is None:
            raise InputError("regression needs a finite C (there is no hard-margin SVR)")
        return solve_svr_dual(K, y, C, self.epsilon, tol)


@dataclass(frozen=True)
class Novelty:
    """The one-class SVM with ``nu`` in (0, 1]: an upper bound on the fraction
    of training points outside the estimated support, a lower bound on the
    fraction of support vectors."""

    nu: float = 0.5
    name = "novelty"

    def __post_init__(self):
        nu = self.nu
        if not (
            isinstance(nu, numbers.Real)
            and not isinstance(nu, bool)
            and np.isfinite(nu)
            and 0 < nu <= 1
        ):
            raise InputError(f"nu must be a number in (0, 1], got nu={nu!r}")

    def solve(self, K: np.ndarray, y: np.ndarray, C, tol: float) -> SVMSolution:
        return solve_one_class_dual(K, self.nu, tol)


CLASSIFICATION = Classification()

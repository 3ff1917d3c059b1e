"""The learning task of an inner problem: which SVM dual is solved for fixed
kernel weights theta. Every task's dual has the wrapper framework's form

    J(theta) = max_{beta in B}  S(beta) - 1/2 sum_m theta_m beta' K_m beta,

a maximum of functions affine in theta, so J is convex and every wrapper
method (SimpleMKL, the level method, lp-norm MKL, GMKL) minimises it over its
weight set unchanged: a task is a new inner problem behind the one oracle
(``mkl/algorithms/inner.py``), not a new loop.

* :data:`CLASSIFICATION`: the C-SVM, beta = alpha * y, 0 <= alpha <= C,
  y'alpha = 0, S = 1'alpha (``mkl.solvers.libsvm.solve_svm_dual``, warm starts by
  ``mkl.solvers.smo``).
* :class:`Regression` (epsilon-SVR): -C <= beta <= C, 1'beta = 0,
  S = y'beta - epsilon ||beta||_1 (``mkl.solvers.libsvm.solve_svr_dual``).
* :class:`Novelty` (one-class SVM, Schoelkopf et al. 2001): 0 <= beta <= 1/(nu n),
  1'beta = 1, S = 0, so J(theta) = -min_beta 1/2 beta'K(theta)beta: learning
  the weights maximises the one-class dual value (``mkl.solvers.libsvm.solve_one_class_dual``).
  ``objective_`` is J, at most 0; Schoelkopf's dual value is -J.

Each task solves its dual on a dense kernel (``solve``) and on factors
(``solve_factors``, ``mkl.solvers.coordinate_descent``): there the intercept of the C-SVM and
the SVR is a regularised constant feature b (no 1'beta = 0 constraint; S gains
-b^2/2 (1'beta)^2), while the one-class SVM keeps 1'alpha = 1 exactly.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import check_target_vector
from ..exceptions import InputError
from .libsvm import SVMSolution, solve_one_class_dual, solve_svr_dual


@dataclass(frozen=True)
class Classification:
    """The C-SVM (on a dense bank solved by the inner problem itself: libsvm
    cold, SMO warm)."""

    name = "classification"

    def solve_factors(self, Z, offsets, theta, y, C, tol, intercept_sq, warm) -> SVMSolution:
        """The bias-free C-SVM on factors (``mkl.solvers.coordinate_descent.solve_factored_svm``),
        warm-started at the previous solution ``warm`` (or None)."""
        from .coordinate_descent import solve_factored_svm
        # numba: loaded when first needed

        return solve_factored_svm(
            Z, offsets, theta, y, C, tol, intercept_sq=intercept_sq,
            alpha0=None if warm is None else warm.alpha,
        )  # fmt: skip


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

    def targets(self, y, n: int) -> np.ndarray:
        """The real targets y as the dual takes them (:func:`check_regression_targets`)."""
        return check_regression_targets(y, n)

    def solve(self, K: np.ndarray, y: np.ndarray, C, tol: float) -> SVMSolution:
        return solve_svr_dual(K, y, _finite_C(C), self.epsilon, tol)

    def solve_factors(self, Z, offsets, theta, y, C, tol, intercept_sq, warm) -> SVMSolution:
        """The epsilon-SVR on factors with a regularised intercept
        (``mkl.solvers.coordinate_descent.solve_factored_svr``)."""
        from .coordinate_descent import solve_factored_svr

        return solve_factored_svr(
            Z, offsets, theta, y, _finite_C(C), self.epsilon, tol, intercept_sq=intercept_sq,
            beta0=None if warm is None else warm.dual_coef,
        )  # fmt: skip


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

    def targets(self, y, n: int) -> np.ndarray:
        """Ones: every training point is normal (``y`` is ignored)."""
        return np.ones(n)

    def solve(self, K: np.ndarray, y: np.ndarray, C, tol: float) -> SVMSolution:
        return solve_one_class_dual(K, self.nu, tol)

    def solve_factors(self, Z, offsets, theta, y, C, tol, intercept_sq, warm) -> SVMSolution:
        """The one-class SVM on factors, its equality kept by the method of
        multipliers (``mkl.solvers.coordinate_descent.solve_factored_one_class``); the offset
        is not regularised, so ``intercept_sq`` is not used."""
        from .coordinate_descent import solve_factored_one_class

        return solve_factored_one_class(
            Z, offsets, theta, self.nu, tol,
            alpha0=None if warm is None else warm.alpha,
            rho0=None if warm is None else -warm.bias,
        )  # fmt: skip


def _finite_C(C):
    if C is None:
        raise InputError("regression needs a finite C (there is no hard-margin SVR)")
    return C


CLASSIFICATION = Classification()

# y with at most this many distinct integer values looks like class labels
CLASS_LIKE_VALUES = 10


def check_regression_targets(y, n: int) -> np.ndarray:
    """Real targets: 1-D, n of them, numeric and finite. Targets that look like
    class labels (at most CLASS_LIKE_VALUES distinct integers) are fitted, with
    a warning."""
    y = check_target_vector(y, n, "targets", "a regressor needs targets y")
    if y.dtype.kind not in "biuf":
        raise InputError(f"regression targets must be numbers, got dtype {y.dtype}")
    y = y.astype(np.float64)
    if not np.isfinite(y).all():
        raise InputError("y contains NaN or inf")
    values = np.unique(y)
    if values.size <= CLASS_LIKE_VALUES and np.all(values == np.round(values)):
        warnings.warn(
            f"y has only {values.size} distinct integer values, like class labels; "
            "fitting a regression (for classification use mkl.make_estimator(name))",
            UserWarning,
            stacklevel=4,
        )
    return y

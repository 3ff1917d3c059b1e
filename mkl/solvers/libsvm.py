"""The cold inner SVM of every MKL algorithm: the C-SVM dual on a precomputed kernel,

    max_alpha  1'alpha - 1/2 (alpha*y)' K (alpha*y)
    s.t.       0 <= alpha_i <= C,  y'alpha = 0,

solved by libsvm through scikit-learn's ``SVC(kernel='precomputed')``. It
returns the full-length alpha, the bias and the dual objective value, which is
J(theta) for the combined kernel. Later solves of a fit on a dense bank start
from the previous alpha in ``mkl.solvers.smo`` (libsvm takes no initial alpha;
``mkl.solvers.dispatch`` chooses between them). The epsilon-SVR and the
one-class SVM are solved by libsvm here too (:func:`solve_svr_dual`,
:func:`solve_one_class_dual`).

Hard margin (``C=None``) is solved as a C-SVM with a box so large that no
multiplier reaches it: the box is scaled with the kernel's diagonal
(``HARD_MARGIN_C / mean diag K``) because alpha scales inversely with K. If a
multiplier does reach it the data are not separable in that kernel, and
``SVMSolution.at_bound`` says so. With such a box libsvm needs very many
iterations on classes that overlap, so hard-margin solves stop after
``HARD_MARGIN_MAX_ITER_PER_POINT`` x n iterations and report
``converged=False`` (classes whose hulls nearly touch can reach the cap too,
and are then reported as not separable).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn import config_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC, SVR, OneClassSVM

from ..exceptions import InputError
from .solution import SVMSolution, box_bounds

HARD_MARGIN_C = 1e6
HARD_MARGIN_MAX_ITER_PER_POINT = 200


def _libsvm_box(C, n: int):
    """libsvm's (C, rows kept, sample weights, the bounds) for the box ``C``: a
    number (every row, no weights), or C_i per point (:func:`~mkl.solvers.solution.box_bounds`)
    as C = max C_i and weights C_i / max C_i on the rows of C_i > 0. libsvm
    drops the rows of weight 0 and numbers its support vectors among the
    others, so they are left out here and mapped back (alpha_i = 0)."""
    if np.ndim(C) == 0:
        return float(C), np.arange(n), None, float(C)
    U = box_bounds(C, n)
    box = float(U.max())
    kept = np.flatnonzero(U > 0)
    return box, kept, U[kept] / box, U


def _kept_block(K: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """K on the rows and columns ``kept`` (K itself when every row is kept)."""
    return K if kept.size == K.shape[0] else K[np.ix_(kept, kept)]


def solve_svm_dual(
    K: np.ndarray,
    y: np.ndarray,
    C: float | np.ndarray | None = 1.0,
    tol: float = 1e-3,
    max_iter: int = -1,
) -> SVMSolution:
    """Solve the SVM dual for one precomputed kernel ``K`` (n, n) and labels
    ``y`` in {-1, +1}. ``C=None`` means hard margin; an (n,) ``C`` is a box
    0 <= alpha_i <= C_i per point (:func:`~mkl.solvers.solution.box_bounds`), given to
    libsvm as C = max_i C_i and sample weights C_i / max_i C_i."""
    y = np.asarray(y)
    n = K.shape[0]
    if C is None:
        scale = float(np.mean(np.diag(K)))
        if not scale > 0:
            scale = float(np.max(np.abs(K))) or 1.0
        C_used = HARD_MARGIN_C / scale
        if max_iter == -1:
            max_iter = HARD_MARGIN_MAX_ITER_PER_POINT * n
    else:
        C_used = C
    box, kept, weights, C_used = _libsvm_box(C_used, n)
    K = np.ascontiguousarray(K, dtype=np.float64)  # no copy when already so
    svc = SVC(C=box, kernel="precomputed", tol=tol, max_iter=max_iter, shrinking=True)
    if weights is not None and np.unique(y[kept]).size < 2:
        raise InputError("the points of nonzero per-sample C (sample weight) are of one class only")
    converged = _fit_libsvm(svc, K if weights is None else K[np.ix_(kept, kept)], y[kept], weights)
    beta = np.zeros(n)
    beta[kept[svc.support_]] = svc.dual_coef_[0]
    alpha = beta * y
    # libsvm returns alpha within [0, C] up to rounding; clip the rounding
    np.clip(alpha, 0.0, C_used, out=alpha)
    beta = alpha * y
    objective = float(alpha.sum() - 0.5 * beta @ (K @ beta))
    # hard margin: a multiplier at the box, or libsvm stopped at its iteration
    # cap without finding the separating solution, means "not separable"
    at_bound = C is None and (bool(np.any(alpha >= C_used * (1 - 1e-8))) or not converged)
    return SVMSolution(
        alpha=alpha,
        dual_coef=beta,
        bias=float(svc.intercept_[0]),
        objective=objective,
        C=C_used,
        at_bound=at_bound,
        converged=converged,
    )


def primal_objective(K: np.ndarray, y: np.ndarray, C, sol: SVMSolution) -> float:
    """The C-SVM primal 1/2 ||w||^2 + sum_i C_i max(0, 1 - y_i f(x_i)) at the
    solution's w = sum_i alpha_i y_i phi(x_i) and bias: an upper bound on the
    dual optimum whatever the solver's precision (weak duality)."""
    f = K @ sol.dual_coef + sol.bias
    hinge = np.maximum(0.0, 1.0 - y * f)  # C: a number, or C_i per point
    return float(0.5 * sol.dual_coef @ (f - sol.bias) + np.sum(C * hinge))


def _fit_libsvm(model, K: np.ndarray, y=None, sample_weight=None) -> bool:
    """Fit a scikit-learn libsvm model on a precomputed kernel; True if libsvm
    stopped on its tolerance rather than its iteration cap."""
    # the model's parameters are this module's own: scikit-learn's check of them
    # is skipped (sklearn.config_context)
    with (
        warnings.catch_warnings(record=True) as caught,
        config_context(skip_parameter_validation=True),
    ):
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(np.ascontiguousarray(K, dtype=np.float64), y, sample_weight=sample_weight)
    return not any(issubclass(w.category, ConvergenceWarning) for w in caught)


def solve_svr_dual(
    K: np.ndarray, y: np.ndarray, C, epsilon: float, tol: float = 1e-3
) -> SVMSolution:
    """The epsilon-SVR dual on one precomputed kernel (Smola & Schoelkopf 2004,
    with beta = alpha - alpha*):

        max_beta  y'beta - epsilon ||beta||_1 - 1/2 beta'K beta
        s.t.      1'beta = 0,  -C_i <= beta_i <= C_i,

    solved by libsvm (``SVR(kernel='precomputed')``; at its optimum
    alpha_i alpha*_i = 0, so its sum(alpha + alpha*) is ||beta||_1). ``C``: a
    number, or C_i per point (given to libsvm as :func:`solve_svm_dual` does).
    ``linear`` = y'beta - epsilon ||beta||_1, ``alpha`` = |beta|, and the
    prediction is K(x, X) beta + bias."""
    y = np.asarray(y, dtype=np.float64)
    n = K.shape[0]
    box, kept, weights, C = _libsvm_box(C, n)
    model = SVR(kernel="precomputed", C=box, epsilon=float(epsilon), tol=tol)
    K = np.ascontiguousarray(K, dtype=np.float64)
    converged = _fit_libsvm(model, _kept_block(K, kept), y[kept], weights)
    beta = np.zeros(n)
    beta[kept[model.support_]] = model.dual_coef_[0]
    np.clip(beta, -C, C, out=beta)  # libsvm's rounding
    linear = float(y @ beta - epsilon * np.abs(beta).sum())
    return SVMSolution(
        alpha=np.abs(beta),
        dual_coef=beta,
        bias=float(model.intercept_[0]),
        objective=linear - 0.5 * float(beta @ (K @ beta)),
        C=C,
        at_bound=False,
        converged=converged,
        linear=linear,
    )


def solve_one_class_dual(K: np.ndarray, nu: float, tol: float = 1e-3) -> SVMSolution:
    """The one-class SVM dual (Schoelkopf et al. 2001, eq. 4) on one precomputed
    kernel, written as a maximisation so that it has the wrapper's form:

        max_alpha  -1/2 alpha'K alpha
        s.t.       0 <= alpha_i <= 1 / (nu n),  1'alpha = 1

    (``linear`` = 0). libsvm (``OneClassSVM(kernel='precomputed')``) solves it
    with alpha scaled by nu n (its box is [0, 1], its sum nu n); alpha and the
    offset -rho are divided by nu n here, so the decision function
    K(x, X) alpha - rho is libsvm's divided by nu n (the same sign)."""
    n = K.shape[0]
    scale = nu * n
    if scale >= n:  # nu = 1: alpha = 1/n is the only feasible point (libsvm's rho is NaN)
        alpha = np.full(n, 1.0 / n)
        g = K @ alpha
        _, rho = one_class_optimality(g, alpha, 1.0 / n)
        return SVMSolution(
            alpha=alpha,
            dual_coef=alpha,
            bias=-rho,
            objective=-0.5 * float(alpha @ g),
            C=1.0 / n,
            at_bound=False,
            converged=True,
            linear=0.0,
        )
    model = OneClassSVM(kernel="precomputed", nu=float(nu), tol=tol)
    converged = _fit_libsvm(model, K)
    alpha = np.zeros(n)
    alpha[model.support_] = model.dual_coef_[0] / scale
    np.clip(alpha, 0.0, 1.0 / scale, out=alpha)
    return SVMSolution(
        alpha=alpha,
        dual_coef=alpha,
        bias=float(model.intercept_[0]) / scale,
        objective=-0.5 * float(alpha @ (K @ alpha)),
        C=1.0 / scale,
        at_bound=False,
        converged=converged,
        linear=0.0,
    )


def one_class_optimality(g: np.ndarray, alpha: np.ndarray, upper: float) -> tuple[float, float]:
    """libsvm's optimality test and offset for the one-class dual at alpha with
    gradient g = K alpha: (the largest g_i that can shrink less the smallest that
    can grow, at most 0 at the optimum; rho, the mean g_i over the free
    multipliers, else the middle of the interval the bounded ones leave). With
    every multiplier at its upper bound (nu = 1) rho is the largest g_i: every
    training point on or inside the boundary."""
    can_grow, can_shrink = g[alpha < upper], g[alpha > 0]
    violation = 0.0
    if can_grow.size and can_shrink.size:
        violation = float(can_shrink.max() - can_grow.min())
    free = (alpha > 0) & (alpha < upper)
    if free.any():
        rho = float(g[free].mean())
    elif can_grow.size and can_shrink.size:
        rho = 0.5 * float(can_shrink.max() + can_grow.min())
    else:
        rho = float(can_shrink.max())
    return violation, rho

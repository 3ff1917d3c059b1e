"""The non-sparse MKL of Nath, Dinesh, Raman, Bhattacharyya, Ben-Tal &
Ramakrishnan (NIPS 2009), as eq. (10) of Kundu, Tankasali, Bhattacharyya &
Ben-Tal (NIPS 2010) states it: the MKL that EMKL and REKL
(mkl.algorithms.indefinite) solve at every mirror step, whose maximisers
(gamma*, v = Y alpha*) give their subgradient -1/(2 gamma_i*) v v' (eq. 12).
A solver of its own, certified by a duality gap, on any bank of PSD kernels:
:func:`nonsparse_mkl`.
"""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..solvers.libsvm import solve_svm_dual

# the smallest gamma_i relative to the largest: a kernel on which the SVM's
# multipliers put no weight (q_i = 0) keeps a finite, very large coefficient
GAMMA_FLOOR = 1e-10


def nonsparse_mkl(
    kernels: np.ndarray, y: np.ndarray, C: float, svm_tol: float, tol: float, max_iter: int = 200
):
    """The non-sparse MKL of Kundu et al. 2010, eq. (10) (Nath et al. 2009):

        Omega = max_{gamma >= 0, sum gamma <= 1} max_{alpha in A}
                    1'alpha - 1/2 alpha'Y (sum_i K_i / gamma_i) Y alpha
              = max_{alpha in A} 1'alpha - 1/2 (sum_i sqrt(q_i))^2,   q_i = v'K_i v, v = Y alpha,

    the dual of min 1/2 max_i ||w_i||^2 + C sum_j xi_j: every kernel's block
    gets the same norm, so no kernel drops out. The objective is jointly
    concave in (alpha, gamma) (q_i / gamma_i is a perspective), so block
    ascent converges: the SVM on K_gamma = sum_i K_i / gamma_i, then the
    closed form gamma_i = sqrt(q_i) / sum_k sqrt(q_k).

    Certified: D(alpha) = 1'alpha - 1/2 (sum_i sqrt(q_i))^2 is a lower bound
    at every SVM solution; the primal point w_i = (1/gamma_i) sum_j v_j phi_i(x_j)
    with the SVM's bias gives the upper bound P = 1/2 max_i q_i / gamma_i^2 +
    C sum_j max(0, 1 - y_j f_j), f = K_gamma v + b. Stops when (P - D) / |P|
    <= tol (or after ``max_iter`` SVM solves).

    Returns (weights, sol, K_weights, info): the combination's weights
    (1/gamma_i normalised to sum 1), the SVM at the best point with
    ``dual_coef`` scaled so that sum_i weights_i K_i dual_coef + bias is the
    decision function, its ``objective`` (Omega, the best lower bound), the
    combination sum_i weights_i K_i, and ``converged``, ``svm_solves``,
    ``gamma`` and ``v`` = Y alpha* (the SVM's coefficients on K_gamma)."""
    m = kernels.shape[0]
    gamma = np.full(m, 1.0 / m)
    lower, upper, best, solves, converged = -np.inf, np.inf, None, 0, False
    for _ in range(max_iter):
        coef = 1.0 / gamma
        K_gamma = np.tensordot(coef, kernels, axes=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            sol = solve_svm_dual(K_gamma, y, C, svm_tol)
        solves += 1
        v = sol.dual_coef
        q = np.maximum(np.einsum("i,mij,j->m", v, kernels, v), 0.0)
        root = np.sqrt(q)
        dual = float(np.sum(sol.alpha)) - 0.5 * float(root.sum()) ** 2
        f = K_gamma @ v + sol.bias
        primal = 0.5 * float(np.max(q * coef**2)) + float(np.sum(C * np.maximum(0.0, 1.0 - y * f)))
        if dual > lower:
            lower, best = dual, (coef, sol, gamma)
        upper = min(upper, primal)
        if upper - lower <= tol * max(abs(upper), 1e-300):
            converged = True
            break
        if not root.sum() > 0:  # v = 0: every gamma gives the same SVM
            converged = True
            break
        gamma = np.maximum(root / root.sum(), GAMMA_FLOOR * root.max() / root.sum())
        gamma /= gamma.sum()
    coef, sol, gamma = best
    scale = float(coef.sum())
    weights = coef / scale
    info = {"converged": converged, "svm_solves": solves, "gamma": gamma, "v": sol.dual_coef}
    sol = SimpleNamespace(dual_coef=sol.dual_coef * scale, bias=sol.bias, objective=lower)
    return weights, sol, np.tensordot(weights, kernels, axes=1), info

"""Independent reference solutions by CVXPY + Clarabel (test-only)."""

import cvxpy as cp
import numpy as np


def psd_factor(K):
    """L with K = L L' (eigendecomposition, tiny negative eigenvalues clipped)."""
    lam, V = np.linalg.eigh((K + K.T) / 2)
    return V * np.sqrt(np.clip(lam, 0, None))


def svm_dual_value(K, y, C=None):
    """max 1'a - 1/2 (a y)'K(a y), 0 <= a <= C, y'a = 0 (C=None: no upper bound)."""
    n = len(y)
    a = cp.Variable(n)
    L = psd_factor(K)
    cons = [a >= 0, y @ a == 0]
    if C is not None:
        cons.append(a <= C)
    prob = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.sum_squares(L.T @ cp.multiply(a, y))), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == cp.OPTIMAL, prob.status
    return prob.value, a.value

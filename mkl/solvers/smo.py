"""A warm-startable SMO solver for the C-SVM dual on a precomputed kernel,

    min_alpha  1/2 alpha'Q alpha - 1'alpha,  Q = diag(y) K diag(y),
    s.t.       0 <= alpha_i <= C,  y'alpha = 0,

the problem of ``mkl.solvers.libsvm`` (libsvm through scikit-learn), with what libsvm does
not offer: a start from a given feasible alpha and its gradient. The wrapper
MKL methods solve a sequence of SVMs whose kernels change little from one
iteration to the next; started at the previous alpha, a solve needs a fraction
of a cold solve's iterations.

The algorithm is libsvm's (Chang & Lin 2011, Section 4; Fan, Chen & Lin 2005):
working-set selection by second-order information (WSS 2), the two-variable
update clipped to the box, and the same stopping rule, max_{I_up} -y_t G_t +
max_{I_low} y_t G_t <= tol, so ``tol`` means what it means for libsvm. The
shrinking heuristic of libsvm (Section 5.1) drops bound multipliers whose
gradient says they will stay at their bound from the working-set search and
the gradient updates, and checks the whole set once before stopping. The loop
is compiled by numba; Q's rows are read from the C-contiguous kernel (a
precomputed kernel needs no cache).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..exceptions import InputError
from .libsvm import SVMSolution

TAU = 1e-12  # libsvm's floor on the second-order term


@dataclass
class SMOSolution(SVMSolution):
    """An :class:`~mkl.solvers.libsvm.SVMSolution` with the SMO iterations it took."""

    iterations: int = 0


@njit(cache=True, nogil=True)
def _smo(K, QD, y, C, alpha, G, tol, max_iter, shrinking):
    """libsvm's Solver::Solve for one box C (in place on alpha and G = Q alpha - 1);
    QD the kernel's diagonal. K is symmetric: only its rows i and j are read
    (contiguous). Returns (iterations, converged)."""
    n = y.shape[0]
    active = np.arange(n)
    active_size = n
    unshrunk = False
    counter = min(n, 1000) + 1
    iteration = 0
    while iteration < max_iter:
        counter -= 1
        if counter == 0 and shrinking:
            counter = min(n, 1000)
            # --- shrinking (libsvm do_shrinking)
            gmax1 = -np.inf  # max { -y_t G_t : t in I_up }
            gmax2 = -np.inf  # max { y_t G_t : t in I_low }
            for k in range(active_size):
                t = active[k]
                if y[t] > 0:
                    if alpha[t] < C and -G[t] >= gmax1:
                        gmax1 = -G[t]
                    if alpha[t] > 0 and G[t] >= gmax2:
                        gmax2 = G[t]
                else:
                    if alpha[t] > 0 and G[t] >= gmax1:
                        gmax1 = G[t]
                    if alpha[t] < C and -G[t] >= gmax2:
                        gmax2 = -G[t]
            if not unshrunk and gmax1 + gmax2 <= tol * 10:
                unshrunk = True
                active_size = _unshrink(K, y, alpha, G, active, active_size, n)
            k = 0
            while k < active_size:
                t = active[k]
                if _shrinkable(y[t], alpha[t], G[t], C, gmax1, gmax2):
                    active_size -= 1
                    active[k], active[active_size] = active[active_size], active[k]
                else:
                    k += 1
        # --- working-set selection (WSS 2)
        gmax = -np.inf
        i = -1
        for k in range(active_size):
            t = active[k]
            if y[t] > 0:
                if alpha[t] < C and -G[t] >= gmax:
                    gmax = -G[t]
                    i = t
            else:
                if alpha[t] > 0 and G[t] >= gmax:
                    gmax = G[t]
                    i = t
        gmax2 = -np.inf
        j = -1
        best = np.inf
        if i >= 0:
            Kii = QD[i]
            Ki = K[i]
            for k in range(active_size):
                t = active[k]
                if y[t] > 0:
                    if alpha[t] > 0:
                        diff = gmax + G[t]
                        if G[t] >= gmax2:
                            gmax2 = G[t]
                    else:
                        continue
                else:
                    if alpha[t] < C:
                        diff = gmax - G[t]
                        if -G[t] >= gmax2:
                            gmax2 = -G[t]
                    else:
                        continue
                if diff > 0:
                    quad = Kii + QD[t] - 2.0 * Ki[t]
                    if quad <= 0:
                        quad = TAU
                    obj = -(diff * diff) / quad
                    if obj <= best:
                        best = obj
                        j = t
        if gmax + gmax2 < tol or j == -1:
            if active_size < n:  # stop only on the whole set: select on it next,
                active_size = _unshrink(K, y, alpha, G, active, active_size, n)
                unshrunk = True
                counter = 2  # and shrink again the iteration after (libsvm)
                continue
            return iteration, True
        iteration += 1
        # --- the two-variable update, clipped to the box (libsvm)
        old_i, old_j = alpha[i], alpha[j]
        if y[i] != y[j]:
            quad = QD[i] + QD[j] + 2.0 * (y[i] * y[j] * K[i, j])
            if quad <= 0:
                quad = TAU
            delta = (-G[i] - G[j]) / quad
            diff = alpha[i] - alpha[j]
            alpha[i] += delta
            alpha[j] += delta
            if diff > 0:
                if alpha[j] < 0:
                    alpha[j] = 0.0
                    alpha[i] = diff
            else:
                if alpha[i] < 0:
                    alpha[i] = 0.0
                    alpha[j] = -diff
            if diff > 0:
                if alpha[i] > C:
                    alpha[i] = C
                    alpha[j] = C - diff
            else:
                if alpha[j] > C:
                    alpha[j] = C
                    alpha[i] = C + diff
        else:
            quad = QD[i] + QD[j] - 2.0 * (y[i] * y[j] * K[i, j])
            if quad <= 0:
                quad = TAU
            delta = (G[i] - G[j]) / quad
            total = alpha[i] + alpha[j]
            alpha[i] -= delta
            alpha[j] += delta
            if total > C:
                if alpha[i] > C:
                    alpha[i] = C
                    alpha[j] = total - C
            else:
                if alpha[j] < 0:
                    alpha[j] = 0.0
                    alpha[i] = total
            if total > C:
                if alpha[j] > C:
                    alpha[j] = C
                    alpha[i] = total - C
            else:
                if alpha[i] < 0:
                    alpha[i] = 0.0
                    alpha[j] = total
        di = (alpha[i] - old_i) * y[i]
        dj = (alpha[j] - old_j) * y[j]
        Ki = K[i]
        Kj = K[j]
        for k in range(active_size):
            t = active[k]
            G[t] += y[t] * (Ki[t] * di + Kj[t] * dj)
        # the shrunk variables' gradients are rebuilt when they return
    return iteration, False


@njit(cache=True, nogil=True)
def _shrinkable(yt, at, Gt, C, gmax1, gmax2):
    """libsvm be_shrunk: a bound multiplier whose gradient keeps it there."""
    if at >= C:
        if yt > 0:
            return -Gt > gmax1
        return -Gt > gmax2
    if at <= 0:
        if yt > 0:
            return Gt > gmax2
        return Gt > gmax1
    return False


@njit(cache=True, nogil=True)
def _unshrink(K, y, alpha, G, active, active_size, n):
    """Bring every variable back; the shrunk ones' gradients are recomputed from
    the multipliers (G_t = y_t sum_s K_ts y_s alpha_s - 1)."""
    if active_size == n:
        return n
    for k in range(active_size, n):
        t = active[k]
        g = 0.0
        for s in range(n):
            if alpha[s] != 0.0:
                g += K[t, s] * y[s] * alpha[s]
        G[t] = y[t] * g - 1.0
    return n


@njit(cache=True, nogil=True)
def _rho(y, alpha, G, C):
    """libsvm calculate_rho: the mean of y_t G_t over free multipliers, else the
    middle of the feasible interval."""
    ub = np.inf
    lb = -np.inf
    free = 0
    total = 0.0
    for t in range(y.shape[0]):
        yG = y[t] * G[t]
        if alpha[t] >= C:
            if y[t] < 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif alpha[t] <= 0:
            if y[t] > 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            free += 1
            total += yG
    if free > 0:
        return total / free
    return (ub + lb) / 2.0


def feasible_start(alpha0, y: np.ndarray, C: float) -> np.ndarray:
    """alpha0 made feasible for (C, y): clipped to [0, C], then the larger class's
    multipliers scaled down until y'alpha = 0 (a start from another C or from a
    problem whose labels differ is projected, never used as given)."""
    alpha = np.clip(np.asarray(alpha0, dtype=np.float64), 0.0, C)
    pos, neg = alpha[y > 0].sum(), alpha[y < 0].sum()
    if pos > neg:
        alpha[y > 0] *= neg / pos
    elif neg > pos:
        alpha[y < 0] *= pos / neg
    return alpha


def solve_svm_smo(
    K: np.ndarray,
    y: np.ndarray,
    C: float = 1.0,
    tol: float = 1e-3,
    alpha0: np.ndarray | None = None,
    max_iter: int | None = None,
    shrinking: bool = True,
) -> SMOSolution:
    """The C-SVM dual on the precomputed kernel ``K`` (n, n), labels ``y`` in
    {-1, +1}, box ``C``, libsvm's stopping tolerance ``tol``; started at
    ``alpha0`` when given (made feasible by :func:`feasible_start`), else at 0.
    ``max_iter``: cap on SMO iterations (default: libsvm's, 1e7 or 100 n)."""
    K = np.ascontiguousarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[0]
    if K.shape != (n, n):
        raise InputError(f"K must be ({n}, {n}) for {n} labels, got {K.shape}")
    if not (C is not None and C > 0 and np.isfinite(C)):
        raise InputError(f"C must be a positive finite number, got {C!r}")
    if not np.all(np.abs(y) == 1):
        raise InputError("labels must be -1 or +1")
    if alpha0 is None:
        alpha = np.zeros(n)
        G = -np.ones(n)
    else:
        if np.shape(alpha0) != (n,):
            raise InputError(f"alpha0 must have shape ({n},), got {np.shape(alpha0)}")
        alpha = feasible_start(alpha0, y, float(C))
        G = y * (K @ (y * alpha)) - 1.0
    if max_iter is None:
        max_iter = max(10_000_000, 100 * n)
    QD = np.ascontiguousarray(np.diag(K))
    iterations, converged = _smo(K, QD, y, float(C), alpha, G, float(tol), int(max_iter), shrinking)
    np.clip(alpha, 0.0, C, out=alpha)
    beta = alpha * y
    G = y * (K @ beta) - 1.0  # exact (shrunk variables' entries are stale at a cap)
    objective = float(alpha.sum() - 0.5 * (alpha.sum() + alpha @ G))  # G = Q alpha - 1
    return SMOSolution(
        alpha=alpha,
        dual_coef=beta,
        bias=-float(_rho(y, alpha, G, float(C))),
        objective=objective,
        C=float(C),
        at_bound=False,
        converged=bool(converged),
        iterations=int(iterations),
    )

"""The inner SVM on factored kernels: dual coordinate descent (Hsieh, Chang, Lin,
Keerthi & Sundararajan, ICML 2008, Algorithm 1 with shrinking, as in liblinear),
compiled by numba.

When every kernel is given by a factor, K_m = Z_m Z_m' with Z_m of shape (n, r_m),
the combined kernel sum_m theta_m K_m is the linear kernel of the features
[sqrt(theta_1) Z_1, ..., sqrt(theta_M) Z_M]. With Z = [Z_1, ..., Z_M] (n, R) and the
column weights s_j = theta_m for the columns j of kernel m, this module solves

    max_alpha  1'alpha - 1/2 (alpha*y)' (Z diag(s) Z' + b^2 11') (alpha*y)
    s.t.       0 <= alpha_i <= C                                           (P)

the **bias-free** C-SVM dual whose intercept is a regularised constant feature
of value b (liblinear's ``-B``; Xu et al. 2010, eq. 7, treat the bias the same
way). There is no y'alpha = 0 constraint, so one coordinate moves at a time at
the cost of one row of Z: an epoch is one pass over the factors, nothing n x n
is formed, and sparse factors stay sparse. The decision function is
f(x) = sum_j s_j z_j(x) w_j + b^2 y'alpha with w = Z'(alpha*y).

Why this solver: the wrapper methods need the dual alpha and solve many nearby
SVMs, so the solver must return alpha and accept a warm start. scikit-learn's
``LinearSVC`` (liblinear) exposes neither; a pure-NumPy coordinate loop runs one
Python iteration per coordinate (about 1 us each: 0.1 s per epoch at n = 100,000
before any arithmetic). The loop below is liblinear's, with the column weights
applied on the fly (no scaled copy of the factors) and kernels of zero weight
skipped. Stopping rule: the spread of the projected gradient, max PG - min PG
<= tol, the same measure as libsvm's (so ``tol`` means the same on both paths).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from .svm import HARD_MARGIN_C, HARD_MARGIN_MAX_ITER_PER_POINT, SVMSolution

# epochs (passes over the training points) before a soft-margin solve gives up.
# With shrinking most epochs visit a small active set: on Nystroem features of
# wide Gaussians (n = 20,000) tol 1e-3 took 700-3000 epochs, 0.2-0.9 s in all
MAX_EPOCHS = 10000
# with at most this many points and no more points than active factor columns,
# the solve forms the n x n Hessian once and descends on it (``_gram_dual_cd``)
GRAM_MAX_N = 4000


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _row_dot(i, dense, Z, data, indices, indptr, u, active):
    """z_i' u over the active columns (u already holds the column weights)."""
    acc = 0.0
    if dense:
        for g in range(active.shape[0]):
            for j in range(active[g, 0], active[g, 1]):
                acc += Z[i, j] * u[j]
    else:
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * u[indices[k]]
    return acc


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _row_axpy(i, d, dense, Z, data, indices, indptr, u, s, active):
    """u += d * s * z_i over the active columns."""
    if dense:
        for g in range(active.shape[0]):
            for j in range(active[g, 0], active[g, 1]):
                u[j] += d * s[j] * Z[i, j]
    else:
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            u[j] += d * s[j] * data[k]


@njit(cache=True, nogil=True)
def _dual_cd(dense, Z, data, indices, indptr, s, active, y, alpha, C, b2, tol, max_epochs, seed):
    """Hsieh et al. (2008), Algorithm 1 for the L1-loss SVM, with liblinear's
    shrinking. ``alpha`` (in/out) is the warm start. Returns
    (epochs, converged, u, v) with u = s * Z'(alpha y) and v = y'alpha."""
    n = y.shape[0]
    R = s.shape[0]
    u = np.zeros(R)
    v = 0.0
    qd = np.full(n, b2)  # Q_ii = sum_j s_j Z_ij^2 + b^2
    for i in range(n):
        if dense:
            acc = 0.0
            for g in range(active.shape[0]):
                for j in range(active[g, 0], active[g, 1]):
                    acc += s[j] * Z[i, j] * Z[i, j]
            qd[i] += acc
        else:
            acc = 0.0
            for k in range(indptr[i], indptr[i + 1]):
                acc += s[indices[k]] * data[k] * data[k]
            qd[i] += acc
        if alpha[i] != 0.0:
            _row_axpy(i, alpha[i] * y[i], dense, Z, data, indices, indptr, u, s, active)
            v += alpha[i] * y[i]
    np.random.seed(seed)
    index = np.arange(n)
    active_size = n
    pg_max_old = np.inf
    pg_min_old = -np.inf
    converged = False
    epoch = 0
    while epoch < max_epochs:
        epoch += 1
        pg_max_new = -np.inf
        pg_min_new = np.inf
        for t in range(active_size - 1, 0, -1):  # Fisher-Yates over the active set
            r = np.random.randint(0, t + 1)
            index[t], index[r] = index[r], index[t]
        k = 0
        while k < active_size:
            i = index[k]
            G = y[i] * (_row_dot(i, dense, Z, data, indices, indptr, u, active) + b2 * v) - 1.0
            pg = 0.0
            if alpha[i] == 0.0:
                if G > pg_max_old:  # shrink: stays at 0
                    active_size -= 1
                    index[k], index[active_size] = index[active_size], index[k]
                    continue
                if G < 0.0:
                    pg = G
            elif alpha[i] == C:
                if G < pg_min_old:  # shrink: stays at C
                    active_size -= 1
                    index[k], index[active_size] = index[active_size], index[k]
                    continue
                if G > 0.0:
                    pg = G
            else:
                pg = G
            if pg > pg_max_new:
                pg_max_new = pg
            if pg < pg_min_new:
                pg_min_new = pg
            if abs(pg) > 1e-12 and qd[i] > 0.0:
                old = alpha[i]
                new = min(max(old - G / qd[i], 0.0), C)
                alpha[i] = new
                d = (new - old) * y[i]
                if d != 0.0:
                    _row_axpy(i, d, dense, Z, data, indices, indptr, u, s, active)
                    v += d
            k += 1
        if pg_max_new - pg_min_new <= tol:
            if active_size == n:
                converged = True
                break
            # stopping on the shrunk set: check the whole set once more
            active_size = n
            pg_max_old = np.inf
            pg_min_old = -np.inf
            continue
        pg_max_old = pg_max_new if pg_max_new > 0.0 else np.inf
        pg_min_old = pg_min_new if pg_min_new < 0.0 else -np.inf
    return epoch, converged, u, v


@njit(cache=True, nogil=True)
def _gram_dual_cd(H, alpha, C, tol, max_epochs, seed):
    """The same coordinate descent on (P) with its Hessian H_ij = y_i y_j
    (K(theta)_ij + b^2) formed (n x n): the gradient g = H alpha - 1 is kept, so
    a coordinate costs O(1) and a change O(n). Same visiting order and stopping
    rule as ``_dual_cd`` (no shrinking: an epoch is at most n^2)."""
    n = H.shape[0]
    g = H @ alpha - 1.0
    np.random.seed(seed)
    index = np.arange(n)
    converged = False
    epoch = 0
    while epoch < max_epochs:
        epoch += 1
        pg_max = -np.inf
        pg_min = np.inf
        for t in range(n - 1, 0, -1):
            r = np.random.randint(0, t + 1)
            index[t], index[r] = index[r], index[t]
        for k in range(n):
            i = index[k]
            G = g[i]
            pg = 0.0
            if alpha[i] == 0.0:
                if G < 0.0:
                    pg = G
            elif alpha[i] == C:
                if G > 0.0:
                    pg = G
            else:
                pg = G
            if pg > pg_max:
                pg_max = pg
            if pg < pg_min:
                pg_min = pg
            if abs(pg) > 1e-12 and H[i, i] > 0.0:
                old = alpha[i]
                new = min(max(old - G / H[i, i], 0.0), C)
                if new != old:
                    alpha[i] = new
                    d = new - old
                    for j in range(n):
                        g[j] += d * H[j, i]
        if pg_max - pg_min <= tol:
            converged = True
            break
    return epoch, converged


@dataclass
class FactoredSolution(SVMSolution):
    """An :class:`~mkl.svm.SVMSolution` of problem (P), with the solver's epochs."""

    epochs: int = 0


def _active_ranges(s: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """[start, stop) column ranges of the kernels with nonzero weight."""
    M = len(offsets) - 1
    weights = s[offsets[:-1]] if M else s
    nz = np.flatnonzero((weights != 0) & (np.diff(offsets) > 0))
    return np.stack([offsets[nz], offsets[nz + 1]], axis=1).astype(np.int64)


def solve_factored_svm(
    Z,
    offsets: np.ndarray,
    theta: np.ndarray,
    y: np.ndarray,
    C: float | None = 1.0,
    tol: float = 1e-3,
    intercept_sq: float = 1.0,
    alpha0: np.ndarray | None = None,
    max_epochs: int | None = None,
    seed: int = 0,
    method: str = "auto",
) -> FactoredSolution:
    """Solve (P) for factors ``Z`` (n, R; an array or a CSR matrix) whose columns
    ``offsets[m]:offsets[m+1]`` belong to kernel m, weights ``theta`` (M,),
    labels ``y`` in {-1, +1}, and ``intercept_sq`` = b^2.

    ``alpha0``: a warm start, clipped into the box [0, C] (a start from another
    C or other labels is still feasible once clipped: the problem has no other
    constraint). ``C=None``: hard margin, as in :func:`mkl.svm.solve_svm_dual`
    (a box of HARD_MARGIN_C over the mean diagonal, an epoch cap, ``at_bound``
    when a multiplier reaches the box or the cap stops the solve).
    The solution's ``objective`` is the dual value of (P), ``bias`` = b^2 y'alpha.

    ``method``: ``"factors"`` (passes over Z, nothing n x n), ``"gram"`` (the
    n x n Hessian formed once: cheaper when n is below the number of active
    columns) or ``"auto"`` (gram for sparse factors when n <= GRAM_MAX_N and
    n <= active columns).
    Both run the same coordinate descent to the same stopping rule.
    """
    if method not in ("auto", "factors", "gram"):
        raise ValueError(f"method must be 'auto', 'factors' or 'gram', got {method!r}")
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[0]
    theta = np.asarray(theta, dtype=np.float64)
    s = np.repeat(theta, np.diff(offsets))
    if sp.issparse(Z):
        dense = False
        data, indices, indptr = Z.data, Z.indices, Z.indptr
        Zd = np.zeros((0, 0), dtype=data.dtype)
    else:
        dense = True
        Zd = Z
        data = np.zeros(0, dtype=Z.dtype)
        indices = np.zeros(0, dtype=np.int32)
        indptr = np.zeros(1, dtype=np.int32)
    if C is None:
        scale = mean_diagonal(Z, s) + intercept_sq
        C_used = HARD_MARGIN_C / (scale if scale > 0 else 1.0)
        epochs_cap = HARD_MARGIN_MAX_ITER_PER_POINT if max_epochs is None else max_epochs
    else:
        C_used = float(C)
        epochs_cap = MAX_EPOCHS if max_epochs is None else max_epochs
    if alpha0 is None:
        alpha = np.zeros(n)
    else:
        alpha = np.clip(np.asarray(alpha0, dtype=np.float64), 0.0, C_used)
        if alpha.shape != (n,):
            raise ValueError(f"alpha0 must have shape ({n},), got {alpha.shape}")
    active = _active_ranges(s, np.asarray(offsets, dtype=np.int64))
    width = int((active[:, 1] - active[:, 0]).sum())
    if method == "gram" or (method == "auto" and not dense and n <= GRAM_MAX_N and n <= width):
        # sparse factors with more active columns than points (one rank-one kernel
        # per term of a few hundred documents): a coordinate of the factor path
        # walks every active kernel's range, the Hessian formed once makes it O(1).
        # Dense factors never gain: the factor path with shrinking was 1.6-10x
        # faster at n = 1,000-3,000 and up to 5,000 columns (MNIST Nystroem)
        cols = np.flatnonzero(s != 0)  # the active columns
        Zs = Z[:, cols]
        Zs = Zs.multiply(np.sqrt(s[cols])).tocsr() if sp.issparse(Zs) else Zs * np.sqrt(s[cols])
        K = Zs @ Zs.T
        K = (K.toarray() if sp.issparse(K) else K).astype(np.float64)
        H = (K + intercept_sq) * np.outer(y, y)
        epochs, converged = _gram_dual_cd(H, alpha, C_used, float(tol), int(epochs_cap), int(seed))
        v = float(y @ alpha)
        quad = float(alpha @ (H @ alpha))
    else:
        epochs, converged, u, v = _dual_cd(
            dense,
            Zd,
            data,
            indices,
            indptr,
            s,
            active,
            y,
            alpha,
            C_used,
            float(intercept_sq),
            float(tol),
            int(epochs_cap),
            int(seed),
        )
        # 1/2 beta'K(theta)beta = 1/2 sum_j s_j w_j^2 = 1/2 sum_j u_j^2 / s_j
        on = s != 0
        quad = float(np.sum(u[on] ** 2 / s[on])) + intercept_sq * v * v
    beta = alpha * y
    at_bound = C is None and (bool(np.any(alpha >= C_used * (1 - 1e-8))) or not converged)
    return FactoredSolution(
        alpha=alpha,
        dual_coef=beta,
        bias=float(intercept_sq * v),
        objective=float(alpha.sum() - 0.5 * quad),
        C=C_used,
        at_bound=at_bound,
        converged=bool(converged),
        bias_penalty=float(0.5 * intercept_sq * v * v),
        epochs=int(epochs),
    )


def mean_diagonal(Z, s: np.ndarray) -> float:
    """Mean diagonal of Z diag(s) Z' (one pass)."""
    if sp.issparse(Z):
        sq = Z.multiply(Z).sum(axis=0).A1
    else:
        sq = np.einsum("ij,ij->j", Z, Z, dtype=np.float64)
    return float(sq @ s) / Z.shape[0]

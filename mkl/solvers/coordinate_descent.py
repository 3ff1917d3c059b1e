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
Python iteration per coordinate. The loop below is liblinear's, with the column
weights applied on the fly (no scaled copy of the factors) and kernels of zero
weight skipped. Stopping rule: the spread of the projected gradient, max PG - min PG
<= tol, the same measure as libsvm's (so ``tol`` means the same on both paths).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..banks.row_blocks import RowBlocks, times, transposed_times
from .libsvm import HARD_MARGIN_C, HARD_MARGIN_MAX_ITER_PER_POINT, one_class_optimality
from .solution import FactoredSolution, box_of

# epochs (passes over the training points) before a soft-margin solve gives up.
# With shrinking most epochs visit a small active set: on Nystroem features of
# wide Gaussians (n = 20,000) tol 1e-3 took 700-3000 epochs, 0.2-0.9 s in all
MAX_EPOCHS = 10000
# with at most this many points and no more points than active factor columns,
# the solve forms the n x n Hessian once and descends on it (``_gram_dual_cd``):
# sparse factors up to GRAM_MAX_N points, dense factors in memory up to
# DENSE_GRAM_MAX_N (forming the Hessian costs n^2 x columns, which at a few
# thousand points outweighs the factor path's shrinking; measured by
# benchmarks/bench_factored_svm.py)
GRAM_MAX_N = 4000
DENSE_GRAM_MAX_N = 1000
# and for dense factors at most this many multiply-adds forming it (n^2 x active
# columns; the float64 copy of the active columns is n x columns): 10^4 columns
# at n = 1,000
DENSE_GRAM_MAX_FLOPS = 1e10
# the tail of a descent on dense factors: once shrinking has left coordinates
# out and at most TAIL_GRAM_MAX active, and at most half as many as the columns a
# row's dot reads, the active set's Hessian is formed (one BLAS product) and the
# descent goes on there (``_gram_tail``): a coordinate then costs O(1) and a
# move O(active) instead of two walks over the columns. The tail of a large
# solve is hundreds to thousands of epochs over a few hundred free multipliers
# (benchmarks/solver_quality.md); and at most TAIL_GRAM_MAX_FLOPS multiply-adds
# forming it (active^2 x columns, about 0.1 s of BLAS), so that the formation
# never costs more than a few hundred of the epochs it replaces
TAIL_GRAM_MAX = 2000
TAIL_GRAM_MAX_FLOPS = 2e9


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _row_dot(i, dense, Z, data, indices, indptr, s, w, ranges):
    """z_i' diag(s) w over the column ranges (a sparse row: over its entries)."""
    acc = 0.0
    if dense:
        for g in range(ranges.shape[0]):
            for j in range(ranges[g, 0], ranges[g, 1]):
                acc += Z[i, j] * s[j] * w[j]
    else:
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            acc += data[k] * s[j] * w[j]
    return acc


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _row_axpy(i, d, dense, Z, data, indices, indptr, w, ranges):
    """w += d * z_i over the column ranges (a sparse row: over its entries)."""
    if dense:
        for g in range(ranges.shape[0]):
            for j in range(ranges[g, 0], ranges[g, 1]):
                w[j] += d * Z[i, j]
    else:
        for k in range(indptr[i], indptr[i + 1]):
            w[indices[k]] += d * data[k]


@njit(cache=True, nogil=True)
def _projected_gradient(G, xi, lo, hi, eps):
    """The projected gradient of coordinate i of min 1/2 x'Qx + p'x + eps ||x||_1
    over lo <= x <= hi with the smooth gradient G = (Qx + p)_i: the one-sided
    derivative of G d + eps |x_i + d| at d = 0 in a feasible direction that
    descends (0 when none does)."""
    up = G + eps if xi >= 0.0 else G - eps  # slope when x_i increases
    down = G - eps if xi <= 0.0 else G + eps  # slope when x_i decreases
    if xi < hi and up < 0.0:
        return up
    if xi > lo and down > 0.0:
        return down
    return 0.0


@njit(cache=True, nogil=True)
def _coordinate_step(G, xi, lo, hi, eps, qii):
    """One coordinate of the problem of :func:`_projected_gradient`: (projected
    gradient, new value). The new value minimises 1/2 Q_ii d^2 + G d +
    eps |x_i + d| (soft thresholding, then the box: Ho & Lin 2012, eq. 20 for
    the SVR; with eps = 0 the clipped Newton step of Hsieh et al. 2008)."""
    pg = _projected_gradient(G, xi, lo, hi, eps)
    if pg == 0.0 or qii <= 0.0:
        return pg, xi
    if xi - (G + eps) / qii > 0.0:
        new = xi - (G + eps) / qii
    elif xi - (G - eps) / qii < 0.0:
        new = xi - (G - eps) / qii
    else:
        new = 0.0
    return pg, min(max(new, lo), hi)


@njit(cache=True, nogil=True)
def _stays(G, xi, lo, hi, eps, pg_max_old, pg_min_old):
    """liblinear's shrinking: x_i sits at a bound (or at the kink 0 of the L1
    term) with a slope pointing outwards by more than the last epoch's largest
    violation, so it is left out until the final check."""
    if xi == lo:
        return (G + eps if xi >= 0.0 else G - eps) > pg_max_old
    if xi == hi:
        return (G - eps if xi <= 0.0 else G + eps) < pg_min_old
    if xi == 0.0 and eps > 0.0:
        return G + eps > pg_max_old and G - eps < pg_min_old
    return False


@njit(cache=True, nogil=True)
def _projected_gradients(
    coords, dense, Z, data, indices, indptr, s, w, dots, sign, p, x, lo, hi, eps, b2, v
):
    """The projected gradients of (Q) (:func:`_dual_cd`) of the coordinates
    ``coords`` at the current w and v, one row each, nothing moved."""
    out = np.empty(coords.shape[0])
    for k in range(coords.shape[0]):
        i = coords[k]
        G = sign[i] * (_row_dot(i, dense, Z, data, indices, indptr, s, w, dots) + b2 * v) + p[i]
        out[k] = _projected_gradient(G, x[i], lo[i], hi[i], eps)
    return out


@njit(cache=True, nogil=True)
def _coming_back(pgs, band_top, band_bottom, tol):
    """Which shrunk coordinates come back when the check at the current iterate
    fails (:func:`_dual_cd`): those whose projected gradient ``pgs`` lies
    outside the band [band_top - tol, band_bottom + tol] of the active set's
    (largest, smallest) ones; when none does yet they spread past tol, all of
    nonzero projected gradient (else the same check would repeat)."""
    outside = (pgs > band_bottom + tol) | (pgs < band_top - tol)
    if not outside.any():
        outside = pgs != 0.0
    return outside


@njit(cache=True, nogil=True)
def _cd_start(dense, Z, data, indices, indptr, s, ranges, sign, x, b2):
    """The state of :func:`_dual_cd` at ``x`` (one pass): the diagonal
    Q_ii = sum_j s_j Z_ij^2 + b^2, w = Z'(sign*x) over the column ranges, v = sign'x."""
    n = sign.shape[0]
    w = np.zeros(s.shape[0])
    v = 0.0
    qd = np.full(n, b2)
    for i in range(n):
        acc = 0.0
        if dense:
            for g in range(ranges.shape[0]):
                for j in range(ranges[g, 0], ranges[g, 1]):
                    acc += s[j] * Z[i, j] * Z[i, j]
        else:
            for k in range(indptr[i], indptr[i + 1]):
                acc += s[indices[k]] * data[k] * data[k]
        qd[i] += acc
        if x[i] != 0.0:
            _row_axpy(i, x[i] * sign[i], dense, Z, data, indices, indptr, w, ranges)
            v += x[i] * sign[i]
    return qd, w, v


@njit(cache=True, nogil=True)
def _gram_tail(
    active, Z, s, dots, width, updates, sign, p, lo, hi, eps, x, w, v, b2, tol, max_epochs, seed
):  # fmt: skip
    """The descent of :func:`_dual_cd` on its active coordinates ``active`` alone
    (the others fixed), on their Hessian H = sign sign' (Z_A diag(s) Z_A' + b2)
    formed once (:func:`_gram_dual_cd`, the same steps and stopping rule) from
    the exact gradients at the current w and v; w and v then take the moves.
    Dense factors only; ``width``: the columns of the ranges ``dots``. Returns
    (epochs, v)."""
    na = active.shape[0]
    Za = np.empty((na, width))
    for k in range(na):
        i = active[k]
        c = 0
        for g in range(dots.shape[0]):
            for j in range(dots[g, 0], dots[g, 1]):
                Za[k, c] = Z[i, j] * np.sqrt(s[j])
                c += 1
    H = np.dot(Za, Za.T)
    xa = np.empty(na)
    pa = np.empty(na)
    for k in range(na):
        i = active[k]
        for j in range(na):
            H[k, j] = (H[k, j] + b2) * sign[i] * sign[active[j]]
        xa[k] = x[i]
    dummy = np.zeros(0, dtype=Z.dtype)
    no_index = np.zeros(0, dtype=np.int32)
    for k in range(na):  # p_A such that H x_A + p_A is the exact gradient
        i = active[k]
        G = sign[i] * (_row_dot(i, True, Z, dummy, no_index, no_index, s, w, dots) + b2 * v)
        pa[k] = G + p[i] - np.dot(H[k], xa)
    epochs, _ = _gram_dual_cd(
        H, pa, lo[active], hi[active], eps, xa, tol, max_epochs, seed
    )  # fmt: skip
    for k in range(na):
        i = active[k]
        if xa[k] != x[i]:
            d = (xa[k] - x[i]) * sign[i]
            x[i] = xa[k]
            _row_axpy(i, d, True, Z, dummy, no_index, no_index, w, updates)
            v += d
    return epochs, v


@njit(cache=True, nogil=True)
def _dual_cd(
    dense, Z, data, indices, indptr, s, dots, updates, sign, p, lo, hi, eps, x, w, v, qd, b2,
    tol, max_epochs, seed, tail_max=0, tail_flops=0.0,
):  # fmt: skip
    """Dual coordinate descent on

        min_x  1/2 (sign*x)' (Z diag(s) Z' + b2 11') (sign*x) + p'x + eps ||x||_1,
               lo <= x <= hi  (per coordinate: lo_i, hi_i)                     (Q)

    Hsieh et al. (2008), Algorithm 1, with liblinear's shrinking, except when
    the shrunk set meets ``tol``: liblinear brings back every shrunk coordinate
    and shrinks again from the whole set, which costs epochs
    (``benchmarks/solver_quality.md``); here every coordinate's projected
    gradient is read at the current iterate, none moved, and the solve ends
    when they spread by at most ``tol`` (exactly, at the point returned), else
    only the shrunk coordinates that break it come back. An epoch over every
    coordinate ends the solve by liblinear's rule (each projected gradient read
    before that coordinate's step). The L1 term is Ho & Lin (2012)'s for the
    SVR. The C-SVM (P) is sign = y, p = -1, box [0, C], eps = 0. In/out: ``x``
    (the warm start), w = Z'(sign*x) kept over the column ranges ``updates``
    (the dots read the ranges ``dots``, those of nonzero weight: a subset), and
    qd the diagonal of (Q) (:func:`_cd_start`). Returns (epochs, converged, v,
    first_max, first_min, brought_back, exact_end, tail_epochs) with v = sign'x, the
    largest and smallest projected gradient of the first epoch (which visits
    every coordinate: :func:`_descend` stops on them), the shrunk coordinates
    brought back, and whether the solve ended on the check at the current
    iterate, and the epochs run on the Hessian of the active set: with
    ``tail_max`` (dense factors), once shrinking has left coordinates out and
    at most ``tail_max`` active, at most half as many as the columns the dots
    read, and at most ``tail_flops`` multiply-adds to form their Hessian, the
    descent goes on on it (:func:`_gram_tail`) until they
    meet ``tol``, then to the check as above; again only once the active set
    has changed."""
    n = sign.shape[0]
    width = 0
    for g in range(dots.shape[0]):
        width += dots[g, 1] - dots[g, 0]
    tail_size = -1  # the active set's size at the last Hessian tail
    tail_epochs = 0
    np.random.seed(seed)
    index = np.arange(n)
    active_size = n
    pg_max_old = np.inf
    pg_min_old = -np.inf
    converged = False
    first_max = -np.inf
    first_min = np.inf
    brought_back = 0
    exact_end = False
    epoch = 0
    while epoch < max_epochs:
        if (
            dense
            and active_size <= tail_max
            and 2 * active_size <= width
            and float(active_size) * active_size * width <= tail_flops
            and active_size < n  # shrinking has left coordinates out
            and active_size != tail_size
            and pg_max_old < np.inf  # (the next epoch would shrink: not after a check)
        ):
            tail_size = active_size
            epochs, v = _gram_tail(
                index[:active_size].copy(), Z, s, dots, width, updates, sign, p, lo, hi, eps,
                x, w, v, b2, tol, max_epochs - epoch, seed + epoch,
            )  # fmt: skip
            epoch += epochs
            tail_epochs += epochs
            # the next epoch reads the active set's gradients exactly (no shrinking)
            pg_max_old = np.inf
            pg_min_old = -np.inf
            continue
        epoch += 1
        pg_max_new = -np.inf
        pg_min_new = np.inf
        for t in range(active_size - 1, 0, -1):  # Fisher-Yates over the active set
            r = np.random.randint(0, t + 1)
            index[t], index[r] = index[r], index[t]
        k = 0
        while k < active_size:
            i = index[k]
            G = sign[i] * (_row_dot(i, dense, Z, data, indices, indptr, s, w, dots) + b2 * v) + p[i]
            if _stays(G, x[i], lo[i], hi[i], eps, pg_max_old, pg_min_old):
                active_size -= 1
                index[k], index[active_size] = index[active_size], index[k]
                continue
            pg, new = _coordinate_step(G, x[i], lo[i], hi[i], eps, qd[i])
            if pg > pg_max_new:
                pg_max_new = pg
            if pg < pg_min_new:
                pg_min_new = pg
            if abs(pg) > 1e-12 and new != x[i]:
                d = (new - x[i]) * sign[i]
                x[i] = new
                _row_axpy(i, d, dense, Z, data, indices, indptr, w, updates)
                v += d
            k += 1
        if epoch == 1:
            first_max, first_min = pg_max_new, pg_min_new
        if pg_max_new - pg_min_new <= tol:
            if active_size == n:  # liblinear's rule: an epoch over every coordinate
                converged = True
                break
            # stopping on the shrunk set: every coordinate's projected gradient
            # at the current w, none moved (the active ones' above were read
            # before this epoch's moves). The active set first: past tol, its
            # epochs go on; within tol, the shrunk coordinates outside the band
            # [max - tol, min + tol] of the active set come back (not all, as
            # liblinear does: re-shrinking the whole set costs epochs), or all
            # those of nonzero PG when none is outside it yet they spread past tol
            pgs = _projected_gradients(
                index[:active_size], dense, Z, data, indices, indptr, s, w, dots, sign, p, x,
                lo, hi, eps, b2, v,
            )  # fmt: skip
            top = pgs.max() if pgs.shape[0] else -np.inf
            bottom = pgs.min() if pgs.shape[0] else np.inf
            if top - bottom > tol:
                pg_max_old = np.inf
                pg_min_old = -np.inf
                continue
            band_top, band_bottom = top, bottom
            shrunk = index[active_size:].copy()
            pgs = _projected_gradients(
                shrunk, dense, Z, data, indices, indptr, s, w, dots, sign, p, x, lo, hi, eps,
                b2, v,
            )  # fmt: skip
            top, bottom = max(top, pgs.max()), min(bottom, pgs.min())
            if top - bottom <= tol:
                converged = True
                exact_end = True
                break
            outside = _coming_back(pgs, band_top, band_bottom, tol)
            back = shrunk[outside]  # to the end of the active set, the rest after
            index[active_size : active_size + back.shape[0]] = back
            index[active_size + back.shape[0] :] = shrunk[~outside]
            active_size += back.shape[0]
            brought_back += back.shape[0]
            pg_max_old = np.inf
            pg_min_old = -np.inf
            continue
        pg_max_old = pg_max_new if pg_max_new > 0.0 else np.inf
        pg_min_old = pg_min_new if pg_min_new < 0.0 else -np.inf
    return epoch, converged, v, first_max, first_min, brought_back, exact_end, tail_epochs


@njit(cache=True, nogil=True)
def _gram_dual_cd(H, p, lo, hi, eps, x, tol, max_epochs, seed):
    """The same coordinate descent on (Q) with its Hessian H_ij = sign_i sign_j
    (K(theta)_ij + b^2) formed (n x n): the gradient g = H x + p is kept, so a
    coordinate costs O(1) and a change O(n). Same visiting order and stopping
    rule as ``_dual_cd`` (no shrinking: an epoch is at most n^2)."""
    n = H.shape[0]
    g = H @ x + p
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
            pg, new = _coordinate_step(g[i], x[i], lo[i], hi[i], eps, H[i, i])
            if pg > pg_max:
                pg_max = pg
            if pg < pg_min:
                pg_min = pg
            if abs(pg) > 1e-12 and new != x[i]:
                d = new - x[i]
                x[i] = new
                for j in range(n):
                    g[j] += d * H[j, i]
        if pg_max - pg_min <= tol:
            converged = True
            break
    return epoch, converged


# factors on disk (``_descend``): epochs of the descent on one block's
# coordinates as the pass reads it, and the bytes of rows kept in memory
# between passes (the free multipliers', where the descent spends its epochs)
BLOCK_EPOCHS = 3
CACHE_BYTES = 1 << 30
# the kept rows are solved to this share of the pass's violation (max PG - min
# PG): the next pass moves the rest, and an exact solve of rows that pass
# changes is wasted; near the end, to this share of tol: solved to tol itself,
# the pass after them found them just past it again (the next pass's blocks move
# the rows at the bounds), and the passes over the file went on
# (benchmarks/solver_quality.md, the out-of-core regression)
CACHE_TOL = 0.1


def _arrays(Z):
    """(dense, Z, data, indices, indptr) as the compiled loops take factors in
    memory: a dense array, or a CSR matrix's three arrays."""
    if sp.issparse(Z):
        return (False, np.zeros((0, 0), dtype=Z.data.dtype), Z.data, Z.indices, Z.indptr)
    empty = np.zeros(0, dtype=Z.dtype)
    return True, Z, empty, np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int32)


def _start(Z, s, ranges, sign, x, b2):
    """:func:`_cd_start` over factors in memory or on disk (summed over the
    row blocks): (qd, w, v)."""
    if not isinstance(Z, RowBlocks):
        return _cd_start(*_arrays(Z), s, ranges, sign, x, b2)
    qd = np.empty(sign.shape[0])
    w = np.zeros(s.shape[0])
    v = 0.0
    for a, b, rows in Z.blocks():
        qd_b, w_b, v_b = _cd_start(*_arrays(rows), s, ranges, sign[a:b], x[a:b], b2)
        qd[a:b] = qd_b
        w += w_b
        v += v_b
    return qd, w, v


def _descend(Z, s, dots, updates, sign, p, lo, hi, eps, x, w, v, qd, b2, tol, max_epochs, seed):
    """:func:`_dual_cd` on (Q) over the factors ``Z``; returns (epochs,
    converged, v, rows visited).

    In memory: one call, ``max_epochs`` epochs at most. On disk
    (:class:`~mkl.banks.row_blocks.RowBlocks`): block minimisation (Yu, Hsieh,
    Chang & Lin, "Large linear classification when data cannot fit in
    memory", KDD 2010) with the informative rows kept in memory (Chang & Roth,
    "Selective block minimization", KDD 2011). Each pass reads the blocks (in
    a random order) and runs BLOCK_EPOCHS epochs on each block's coordinates, with
    w and v kept over all points; then the rows whose multipliers are free
    (strictly inside the box, and off the kink 0 of the SVR's L1 term:
    liblinear's shrinking keeps them active, the others settle at a bound or
    at 0) are gathered, at most CACHE_BYTES of them (each block its share,
    drawn at random when it has more), and the descent runs on those alone
    to CACHE_TOL x max(tol, the pass's max PG - min PG): the next pass moves
    the rest, an exact solve of rows it changes would be wasted, and a margin
    below tol lets the pass after them certify it. A pass whose first epochs,
    which see every coordinate once, find max PG - min PG <= tol ends it:
    liblinear's rule for an epoch, visiting the coordinates block by block.
    ``max_epochs`` counts passes (each: BLOCK_EPOCHS epochs a block and the
    kept rows' solve); the rows visited are counted exactly."""
    n = sign.shape[0]
    if not isinstance(Z, RowBlocks):
        epochs, converged, v, *_ = _dual_cd(
            *_arrays(Z), s, dots, updates, sign, p, lo, hi, eps, x, w, v, qd, b2, tol,
            max_epochs, seed, TAIL_GRAM_MAX, TAIL_GRAM_MAX_FLOPS,
        )  # fmt: skip
        return epochs, converged, v, epochs * n
    visited = 0
    capacity = max(1, CACHE_BYTES // max(1, Z.shape[1] * Z.dtype.itemsize))
    rng = np.random.default_rng(seed)
    seeds = lambda: int(rng.integers(2**31))  # noqa: E731  (each descent its own order)
    # the kept rows; pages never written take no memory
    cache = np.empty((min(n, capacity + Z.n_blocks), Z.shape[1]), Z.dtype)
    for done in range(max_epochs):
        top, bottom = -np.inf, np.inf
        kept, size = [], 0
        # blocks in a random order each pass: rows stored sorted (by class, say)
        # do not always meet the descent in the same sequence
        for a, b, rows in Z.blocks(rng.permutation(Z.n_blocks)):
            epochs, _, v, first_max, first_min, *_ = _dual_cd(
                *_arrays(rows), s, dots, updates, sign[a:b], p[a:b], lo[a:b], hi[a:b], eps,
                x[a:b], w, v, qd[a:b], b2, tol, BLOCK_EPOCHS, seeds(),
            )  # fmt: skip
            top, bottom = max(top, first_max), min(bottom, first_min)
            visited += epochs * (b - a)
            xb = x[a:b]
            free = (xb > lo[a:b]) & (xb < hi[a:b])
            free = np.flatnonzero(free & (xb != 0.0) if eps > 0 else free)
            share = capacity * (b - a) // n + 1  # the block's share of the rows kept
            if free.size > share:
                free = np.sort(rng.choice(free, share, replace=False))
            kept.append(free + a)
            cache[size : size + free.size] = rows[free]  # copied: the buffer is read into again
            size += free.size
        if top - bottom <= tol:
            return done + 1, True, v, visited
        index = np.concatenate(kept)
        if index.size:
            xc = x[index]
            epochs, _, v, *_ = _dual_cd(
                *_arrays(cache[:size]), s, dots, updates, sign[index], p[index], lo[index],
                hi[index], eps, xc, w, v, qd[index], b2, CACHE_TOL * max(tol, top - bottom),
                MAX_EPOCHS, seeds(),
            )  # fmt: skip
            x[index] = xc
            visited += epochs * index.size
    return max_epochs, False, v, visited


def _active_ranges(s: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """[start, stop) column ranges of the kernels with nonzero weight, adjacent
    ones merged: the row loops then run over long contiguous stretches (one of
    R columns when every kernel is active), not one short loop a kernel."""
    M = len(offsets) - 1
    weights = s[offsets[:-1]] if M else s
    nz = np.flatnonzero((weights != 0) & (np.diff(offsets) > 0))
    starts, stops = offsets[nz], offsets[nz + 1]
    opens = np.ones(len(nz), dtype=bool)
    opens[1:] = starts[1:] != stops[:-1]  # a range that does not continue the previous one
    closes = np.ones(len(nz), dtype=bool)
    closes[:-1] = opens[1:]  # the last range of a stretch
    return np.stack([starts[opens], stops[closes]], axis=1).astype(np.int64)


def _per_coordinate(bound, n: int) -> np.ndarray:
    """A bound of the box of (Q) for each of the n coordinates (float64): a
    number the same for all, or an (n,) vector (per-sample C: C_i)."""
    return np.ascontiguousarray(np.broadcast_to(np.asarray(bound, dtype=np.float64), (n,)))


def _gram_pays(Z, n: int, width: int) -> bool:
    """Whether ``"auto"`` descends on the n x n Hessian rather than on the
    factors: no more points than active columns, and at most GRAM_MAX_N points
    for sparse factors, DENSE_GRAM_MAX_N for dense ones in memory (factors on
    disk keep the block minimisation, which never reads them whole)."""
    if n > width:
        return False
    if sp.issparse(Z):
        return n <= GRAM_MAX_N
    return (
        not isinstance(Z, RowBlocks)
        and n <= DENSE_GRAM_MAX_N
        and float(n) * n * width <= DENSE_GRAM_MAX_FLOPS
    )


def _solve_dual_qp(Z, offsets, theta, sign, p, lo, hi, eps, b2, tol, x0, max_epochs, seed, method):
    """Solve (Q), the dual every task takes on factors, for factors ``Z`` (n, R;
    an array or a CSR matrix) whose columns ``offsets[m]:offsets[m+1]`` belong
    to kernel m and weights ``theta`` (M,), from ``x0`` clipped into the box
    (zeros if None): by coordinate descent on the factors (:func:`_descend`) or
    on the n x n Hessian formed once (:func:`_gram_dual_cd`; ``method``). Returns
    (x, epochs, converged, quad, v) with quad = (sign*x)'(K(theta) + b2 11')(sign*x)
    and v = sign'x."""
    if method not in ("auto", "factors", "gram"):
        raise ValueError(f"method must be 'auto', 'factors' or 'gram', got {method!r}")
    n = sign.shape[0]
    s = np.repeat(np.asarray(theta, dtype=np.float64), np.diff(offsets))
    lo, hi = _per_coordinate(lo, n), _per_coordinate(hi, n)
    if x0 is None:
        x = np.zeros(n)
    else:
        x = np.clip(np.asarray(x0, dtype=np.float64), lo, hi)
        if x.shape != (n,):
            raise ValueError(f"the warm start must have shape ({n},), got {x.shape}")
    active = _active_ranges(s, np.asarray(offsets, dtype=np.int64))
    width = int((active[:, 1] - active[:, 0]).sum())
    if method == "gram" or (method == "auto" and _gram_pays(Z, n, width)):
        # more active columns than points (one rank-one kernel per term of a few
        # hundred documents): a coordinate of the factor path walks every active
        # kernel's range, the Hessian formed once makes it O(1)
        cols = np.flatnonzero(s != 0)  # the active columns
        Zs = (Z.read() if isinstance(Z, RowBlocks) else Z)[:, cols]
        Zs = Zs.multiply(np.sqrt(s[cols])).tocsr() if sp.issparse(Zs) else Zs * np.sqrt(s[cols])
        K = Zs @ Zs.T
        K = (K.toarray() if sp.issparse(K) else K).astype(np.float64)
        H = (K + b2) * np.outer(sign, sign)
        epochs, converged = _gram_dual_cd(
            H, p, lo, hi, float(eps), x, float(tol), int(max_epochs), int(seed)
        )
        v = float(sign @ x)
        quad = float(x @ (H @ x))
    else:
        qd, w, v = _start(Z, s, active, sign, x, float(b2))
        epochs, converged, v, _ = _descend(
            Z, s, active, active, sign, p, lo, hi, float(eps), x, w, v, qd, float(b2),
            float(tol), int(max_epochs), int(seed),
        )  # fmt: skip
        # beta'K(theta)beta = sum_j s_j w_j^2 (+ the constant feature's b^2 v^2)
        quad = float(s @ (w * w)) + b2 * v * v
    return x, int(epochs), bool(converged), quad, float(v)


def solve_factored_svm(
    Z,
    offsets: np.ndarray,
    theta: np.ndarray,
    y: np.ndarray,
    C: float | np.ndarray | None = 1.0,
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

    ``C``: a number, or C_i per point (``mkl.solvers.solution.box_bounds``: sample weights).
    ``alpha0``: a warm start, clipped into the box [0, C] (a start from another
    C or other labels is still feasible once clipped: the problem has no other
    constraint). ``C=None``: hard margin, as in :func:`mkl.solvers.libsvm.solve_svm_dual`
    (a box of HARD_MARGIN_C over the mean diagonal, an epoch cap, ``at_bound``
    when a multiplier reaches the box or the cap stops the solve).
    The solution's ``objective`` is the dual value of (P), ``bias`` = b^2 y'alpha.

    ``method``: ``"factors"`` (passes over Z, nothing n x n), ``"gram"`` (the
    n x n Hessian formed once: cheaper when n is below the number of active
    columns) or ``"auto"`` (gram when n <= active columns, for sparse factors
    up to GRAM_MAX_N points and dense ones in memory up to DENSE_GRAM_MAX_N).
    Both run the same coordinate descent to the same stopping rule.
    """
    y = np.asarray(y, dtype=np.float64)
    if C is None:
        s = np.repeat(np.asarray(theta, dtype=np.float64), np.diff(offsets))
        scale = mean_diagonal(Z, s) + intercept_sq
        C_used = HARD_MARGIN_C / (scale if scale > 0 else 1.0)
        epochs_cap = HARD_MARGIN_MAX_ITER_PER_POINT if max_epochs is None else max_epochs
    else:
        C_used = box_of(C, len(y))
        epochs_cap = MAX_EPOCHS if max_epochs is None else max_epochs
    alpha, epochs, converged, quad, v = _solve_dual_qp(
        Z, offsets, theta, y, np.full(len(y), -1.0), 0.0, C_used, 0.0,
        intercept_sq, tol, alpha0, epochs_cap, seed, method,
    )  # fmt: skip
    at_bound = C is None and (bool(np.any(alpha >= C_used * (1 - 1e-8))) or not converged)
    return FactoredSolution(
        alpha=alpha,
        dual_coef=alpha * y,
        bias=float(intercept_sq * v),
        objective=float(alpha.sum() - 0.5 * quad),
        C=C_used,
        at_bound=at_bound,
        converged=converged,
        bias_penalty=float(0.5 * intercept_sq * v * v),
        epochs=epochs,
    )


def solve_factored_svr(
    Z,
    offsets: np.ndarray,
    theta: np.ndarray,
    y: np.ndarray,
    C: float,
    epsilon: float,
    tol: float = 1e-3,
    intercept_sq: float = 1.0,
    beta0: np.ndarray | None = None,
    max_epochs: int | None = None,
    seed: int = 0,
    method: str = "auto",
) -> FactoredSolution:
    """The epsilon-SVR on factors with the intercept a regularised constant
    feature b (liblinear's L1-loss SVR dual, Ho & Lin 2012, eq. 15 with -B):

        max_beta  y'beta - epsilon ||beta||_1 - 1/2 beta'(K(theta) + b^2 11')beta
        s.t.      -C <= beta_i <= C                                          (R)

    (no 1'beta = 0: the bias b^2 1'beta is part of the model, as for the
    classifier (P)). Arguments as :func:`solve_factored_svm`; ``beta0`` a warm
    start clipped into the box. ``linear`` = S(beta) = y'beta - epsilon ||beta||_1
    - b^2/2 (1'beta)^2, ``objective`` = S - 1/2 beta'K(theta)beta, and the
    prediction is K(x, X) beta + b^2 1'beta."""
    y = np.asarray(y, dtype=np.float64)
    C = box_of(C, len(y))  # or C_i per point
    cap = MAX_EPOCHS if max_epochs is None else max_epochs
    beta, epochs, converged, quad, v = _solve_dual_qp(
        Z, offsets, theta, np.ones(len(y)), -y, -C, C, float(epsilon),
        intercept_sq, tol, beta0, cap, seed, method,
    )  # fmt: skip
    fit = float(y @ beta - epsilon * np.abs(beta).sum())
    return FactoredSolution(
        alpha=np.abs(beta),
        dual_coef=beta,
        bias=float(intercept_sq * v),
        objective=fit - 0.5 * quad,
        C=C,
        at_bound=False,
        converged=converged,
        linear=fit - 0.5 * intercept_sq * v * v,
        epochs=epochs,
    )


# the one-class solver's outer (multiplier) iterations before it gives up
MAX_MULTIPLIER_STEPS = 100


def solve_factored_one_class(
    Z,
    offsets: np.ndarray,
    theta: np.ndarray,
    nu: float,
    tol: float = 1e-3,
    alpha0: np.ndarray | None = None,
    rho0: float | None = None,
    max_epochs: int | None = None,
    seed: int = 0,
    method: str = "auto",
) -> FactoredSolution:
    """The one-class SVM dual (Schoelkopf et al. 2001, eq. 4) on factors, as
    :func:`mkl.solvers.libsvm.solve_one_class_dual` writes it:

        max_alpha  -1/2 alpha'K(theta)alpha
        s.t.       0 <= alpha_i <= 1/(nu n),  1'alpha = 1.                 (O)

    Unlike the classifier's, this equality cannot become a regularised feature
    (alpha = 0 would be optimal), so it is kept by the method of multipliers
    (Hestenes 1969; Bertsekas 1982, ch. 2): for the offset rho fixed,

        min_alpha  1/2 alpha'K(theta)alpha - rho (1'alpha - 1) + mu/2 (1'alpha - 1)^2

    over the box is (Q) with sign = 1, p = -(rho + mu) 1 and b^2 = mu, solved by
    the classifier's coordinate descent warm-started at the previous alpha; then
    rho <- rho - mu (1'alpha - 1). mu is the mean diagonal of K(theta), the scale
    the classifier's b^2 has. ``tol`` is libsvm's, whose alpha sums to nu n: on
    this scale it is tol / (nu n). When mu |1'alpha - 1| is within a tenth of
    that (or after MAX_MULTIPLIER_STEPS), the remainder goes to the multipliers
    whose gradient asks for it most, which leaves alpha feasible for (O)
    exactly, and a pass gives the gradient g = K(theta) alpha for libsvm's
    optimality test (the largest -g_i that can grow less the smallest that can
    shrink) and rho (the mean g_i over the free multipliers). ``alpha0``,
    ``rho0``: a warm start (a previous solution's alpha and -bias). The
    decision function is K(x, X) alpha - rho: ``bias`` = -rho, ``linear`` = 0."""
    n = Z.shape[0]
    upper = 1.0 / (nu * n)
    s = np.repeat(np.asarray(theta, dtype=np.float64), np.diff(offsets))
    mu = mean_diagonal(Z, s)
    mu = mu if mu > 0 else 1.0
    cap = MAX_EPOCHS if max_epochs is None else max_epochs
    alpha = np.full(n, 1.0 / n) if alpha0 is None else alpha0
    rho = 0.0 if rho0 is None else float(rho0)
    # libsvm's tol applies to its alpha, which sums to nu n: ours is 1/(nu n) of it
    tol_scaled = tol * upper
    ones = np.ones(n)
    epochs = 0
    for _ in range(MAX_MULTIPLIER_STEPS):
        alpha, e, inner_ok, _, total = _solve_dual_qp(
            Z, offsets, theta, ones, np.full(n, -(rho + mu)), 0.0, upper, 0.0,
            mu, tol_scaled, alpha, cap, seed, method,
        )  # fmt: skip
        epochs += e
        rho -= mu * (total - 1.0)
        # the remaining mu (1'alpha - 1) shifts every gradient by a tenth of tol at most
        if inner_ok and mu * abs(total - 1.0) <= 0.1 * tol_scaled:
            break
    alpha = _onto_the_simplex_box(alpha, upper, _times_kernel(Z, s, alpha))
    g = _times_kernel(Z, s, alpha)
    violation, rho = one_class_optimality(g, alpha, upper)
    return FactoredSolution(
        alpha=alpha,
        dual_coef=alpha,
        bias=-rho,
        objective=-0.5 * float(alpha @ g),
        C=upper,
        at_bound=False,
        converged=bool(violation <= tol_scaled),
        linear=0.0,
        epochs=epochs,
    )


def _onto_the_simplex_box(alpha: np.ndarray, upper: float, g: np.ndarray) -> np.ndarray:
    """alpha within [0, upper] moved onto 1'alpha = 1 at the least first-order
    cost for the gradient g = K alpha: a shortfall fills the multipliers that can
    grow in increasing order of g, an excess empties those that can shrink in
    decreasing order (each up to its room). Feasible for (O) whenever n upper >= 1."""
    alpha = np.clip(alpha, 0.0, upper)
    short = 1.0 - float(alpha.sum())
    if short == 0.0:
        return alpha
    if short > 0:
        order = np.argsort(g, kind="stable")
        room = (upper - alpha)[order]
    else:
        order = np.argsort(-g, kind="stable")
        room = alpha[order]
    reach = np.cumsum(room)
    k = int(np.searchsorted(reach, abs(short)))  # the first multiplier that is not filled
    move = room.copy()
    move[k + 1 :] = 0.0
    if k < len(move):
        move[k] = abs(short) - (reach[k - 1] if k > 0 else 0.0)
    alpha[order] += np.sign(short) * move
    return np.clip(alpha, 0.0, upper)


def _times_kernel(Z, s: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Z diag(s) Z' x (one pass; dense factors in their own precision, as
    :meth:`mkl.banks.factor_bank.FactorBank.project` and ``times``)."""
    if sp.issparse(Z):
        return np.asarray(Z @ (np.asarray(Z.T @ x, dtype=np.float64) * s), dtype=np.float64)
    return times(Z, transposed_times(Z, x) * s)


def mean_diagonal(Z, s: np.ndarray) -> float:
    """Mean diagonal of Z diag(s) Z' (one pass; factors on disk: their scan)."""
    if sp.issparse(Z):
        sq = Z.multiply(Z).sum(axis=0).A1
    elif isinstance(Z, RowBlocks):
        sq = Z.scan().column_sq_norms
    else:
        sq = np.einsum("ij,ij->j", Z, Z, dtype=np.float64)
    return float(sq @ s) / Z.shape[0]


class FactorCD:
    """The interleaved engine's state on factors (the counterpart of
    ``mkl.solvers.smo.BankSMO``): the box QP (Q) of a task (``mkl.solvers.task_duals``:
    the C-SVM and the SVR with their intercept a regularised constant feature b)
    for weights that change between chunks of coordinate-descent epochs.

    Kept across chunks: x, w = Z'(sign*x) over *every* kernel's columns and
    v = sign'x, so q_m = ||w_m||^2 is O(R) and a new theta only changes the
    diagonal, Q_ii = sum_m theta_m ||z_i,m||^2 + b^2, from the per-kernel row
    norms computed once. An epoch reads every row of Z once (a pass over the
    factors); the primal bound takes one product Z (s * w) per chunk.
    ``rows_read`` counts rows of length M-kernel factors, a pass being M n
    (the units of ``BankSMO``)."""

    def __init__(self, bank, intercept_sq: float, task, y: np.ndarray, C):
        self.bank, self.b2, self.task, self.y, self.C = bank, float(intercept_sq), task, y, C
        Z = self.Z = bank.train  # in memory, or on disk (read by row blocks)
        self.offsets = np.asarray(bank.offsets, dtype=np.int64)
        self.M, self.n = bank.n_kernels, bank.n_train
        self.every = np.stack([self.offsets[:-1], self.offsets[1:]], axis=1)
        # per-kernel squared row norms (n, M): the diagonal of K_m, one pass
        self.diag = bank.row_sq_norms_by_kernel()
        self.sign, self.p, lo, hi, self.eps = task.factor_form(y, C, self.n)
        self.lo, self.hi = _per_coordinate(lo, self.n), _per_coordinate(hi, self.n)
        self.x = np.clip(np.zeros(self.n), self.lo, self.hi)
        self.w = np.zeros(Z.shape[1])
        self.v = 0.0
        self.rows_read = self.M * self.n
        # epochs per chunk; factors on disk: passes (``_descend``)
        self.chunk_steps = 1
        self._chunks = 0

    def advance(self, theta: np.ndarray, max_epochs: int, tol: float):
        """At most ``max_epochs`` epochs at ``theta`` to the stopping rule's
        ``tol``: the task's solution (``primal`` an upper bound on J(theta)) and q."""
        theta = np.asarray(theta, dtype=np.float64)
        s = np.repeat(np.maximum(theta, 0.0), np.diff(self.offsets))
        qd = self.diag @ np.maximum(theta, 0.0) + self.b2
        self._chunks += 1
        epochs, converged, self.v, visited = _descend(
            self.Z, s, _active_ranges(s, self.offsets), self.every, self.sign, self.p,
            self.lo, self.hi, float(self.eps), self.x, self.w, self.v, qd, self.b2,
            float(tol), int(max_epochs), self._chunks,
        )  # fmt: skip
        self.rows_read += self.M * visited
        q = self.bank.group_sums(self.w * self.w)
        f = self.bank.times(s * self.w) + self.b2 * self.v  # K(theta) beta with the intercept
        self.rows_read += self.M * self.n
        sol = self.task.factor_solution(
            self.x.copy(),
            q,
            float(theta @ q),
            f,
            self.v,
            self.b2,
            self.y,
            self.C,
            bool(converged),
            int(epochs),
        )
        return sol, q

    def solve(
        self, theta: np.ndarray, tol: float, K_theta=None, track: bool = True, whole: bool = True
    ):
        """The problem at ``theta`` solved to ``tol`` from the current state
        (the other arguments are ``BankSMO.solve``'s: factors have no rows to form)."""
        return self.advance(theta, MAX_EPOCHS, tol)

    def combination(self, theta: np.ndarray) -> np.ndarray:
        """A factor bank's combination is its weight vector."""
        return np.asarray(theta, dtype=np.float64).copy()

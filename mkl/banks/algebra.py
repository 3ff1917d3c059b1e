"""The algebra of a dense bank that every solver's hot loop runs on: the weighted
combination sum_m theta_m K_m (:func:`combine`), the quadratic forms v'K_m v of
every kernel (:func:`quadratic_forms`; :func:`psd_quadratic_forms` for methods
whose math needs PSD kernels), the spectral ratio (Lauriola et al. 2018) and
the Frobenius products of centred kernels behind the kernel alignment
(:func:`centred_products`, :func:`kernel_alignment`; Cortes, Mohri &
Rostamizadeh 2012). See docs/design.md, "Performance" and "Input checks".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numba import njit

from ..exceptions import InputError


def spectral_ratio(K: np.ndarray) -> float:
    """C(K) = tr(K) / ||K||_F, between 1 (rank one) and sqrt(n) (identity);
    the kernel-complexity measure of Lauriola et al. 2018."""
    fro = float(np.linalg.norm(K))
    if fro == 0:
        raise InputError("spectral ratio of the zero matrix is undefined")
    return float(np.trace(K)) / fro


def combine(K: np.ndarray, weights: Iterable[float], out: np.ndarray | None = None) -> np.ndarray:
    """sum_m weights_m K_m as a C-contiguous float64 array.

    With every weight nonzero the sum is one matrix-vector product over the
    flattened bank (BLAS, memory-bandwidth bound). Otherwise only the kernels
    of nonzero weight are read, four a sweep (:func:`_combine_active`): the
    sparse weights of L1-MKL and SimpleMKL's descent directions cost their
    share of a pass, not a pass. A float32 bank is read in float32 and summed
    in float64 on the sparse path, in float32 on the dense one; the bank is
    never copied.
    """
    w = np.asarray(weights, dtype=np.float64)
    M = K.shape[0]
    if w.shape != (M,):
        raise InputError(f"weights must have shape ({M},), got {w.shape}")
    active = np.flatnonzero(w)
    shape = K.shape[1:]
    if active.size == M:
        flat = K.reshape(M, -1)
        res = np.ascontiguousarray(
            (w.astype(K.dtype, copy=False) @ flat).reshape(shape), dtype=np.float64
        )
    else:
        res = np.empty(shape) if out is None else out
        _combine_active(K.reshape(M, -1), active, w, res)
        return res
    if out is not None:
        out[...] = res
        return out
    return res


@njit(cache=True, nogil=True)
def _combine_active(K, active, w, out):
    """out = sum_{m in active} w_m K_m (float64) over the flattened bank (M, N),
    reading only the kernels listed, four a sweep."""
    N = K.shape[1]
    o = out.reshape(-1)
    o[:] = 0.0
    a, A = 0, active.size
    while a + 4 <= A:
        i0, i1, i2, i3 = active[a], active[a + 1], active[a + 2], active[a + 3]
        w0, w1, w2, w3 = w[i0], w[i1], w[i2], w[i3]
        K0, K1, K2, K3 = K[i0], K[i1], K[i2], K[i3]
        for k in range(N):
            o[k] += w0 * K0[k] + w1 * K1[k] + w2 * K2[k] + w3 * K3[k]
        a += 4
    while a < A:
        i = active[a]
        wi, Ki = w[i], K[i]
        for k in range(N):
            o[k] += wi * Ki[k]
        a += 1


def shift_weight(combo: np.ndarray, K: np.ndarray, source: int, target: int, amount: float) -> None:
    """combo += amount (K_target - K_source), in place: a combination whose weight
    ``amount`` moves from kernel ``source`` to kernel ``target`` (two kernels
    read, no temporary)."""
    _shift_weight(combo.reshape(-1), K[source].reshape(-1), K[target].reshape(-1), float(amount))


@njit(cache=True, nogil=True)
def _shift_weight(out, K_source, K_target, amount):
    for k in range(out.size):
        out[k] += amount * (K_target[k] - K_source[k])


def largest_eigenvalue(K: np.ndarray) -> float:
    """max_m lambda_max(K_m) over a bank of symmetric kernels, computing few
    eigenvalues. One pass gives, per kernel, a lower bound (the Rayleigh
    quotient 1'K_m 1 / n) and an upper bound (the largest absolute row sum,
    Gershgorin); only kernels whose upper bound exceeds the best eigenvalue
    found so far are solved (Lanczos, :func:`eigenvalue_of`), largest bound
    first."""
    M, n, _ = K.shape
    lower, upper = np.empty(M), np.empty(M)
    _eigenvalue_bounds(K.reshape(M, n, n), lower, upper)
    best = float(lower.max())
    for m in np.argsort(-upper):
        if upper[m] <= best:
            break
        best = max(best, eigenvalue_of(K[m]))
    return best


def eigenvalue_of(K: np.ndarray) -> float:
    """lambda_max of one symmetric matrix (dense solver for n <= 64, else Lanczos)."""
    if K.shape[0] <= 64:
        return float(np.linalg.eigvalsh(K)[-1])
    return lanczos_largest(K.astype(np.float64, copy=False))


def lanczos_largest(A) -> float:
    """lambda_max of a symmetric matrix or ``LinearOperator`` by Lanczos
    (ARPACK), from a fixed start: ARPACK's default start is random, and a fit
    must repeat exactly."""
    from scipy.sparse.linalg import eigsh

    v0 = np.random.default_rng(0).standard_normal(A.shape[0])
    return float(eigsh(A, k=1, which="LA", v0=v0, return_eigenvectors=False)[0])


@njit(cache=True, nogil=True)
def _eigenvalue_bounds(K, lower, upper):
    """Per kernel: 1'K_m 1 / n <= lambda_max(K_m) <= max_i sum_j |K_m,ij|."""
    M, n, _ = K.shape
    for m in range(M):
        total, widest = 0.0, 0.0
        for i in range(n):
            row_sum, row_abs = 0.0, 0.0
            for j in range(n):
                v = K[m, i, j]
                row_sum += v
                row_abs += abs(v)
            total += row_sum
            widest = max(widest, row_abs)
        lower[m] = total / n
        upper[m] = widest


# below this share of nonzero coefficients the quadratic forms read only the
# rows of the nonzero ones (``add_rows``); above it, one BLAS matrix-vector
# product over the whole bank streams faster than rows gathered
SUPPORT_FRACTION = 0.6


@njit(cache=True, nogil=True)
def add_rows(K, g, changed, delta):
    """g_m += sum_{i in changed} delta_i K_m[i] for every kernel m: the
    per-kernel products K_m beta after beta moved by ``delta`` (the kernels are
    symmetric, so the columns of the moved coefficients are their rows); four
    rows a sweep, so g_m is written |changed|/4 times."""
    C = changed.shape[0]
    for m in range(K.shape[0]):
        gm = g[m]
        c = 0
        while c + 4 <= C:
            i0, i1, i2, i3 = changed[c], changed[c + 1], changed[c + 2], changed[c + 3]
            d0, d1, d2, d3 = delta[i0], delta[i1], delta[i2], delta[i3]
            K0, K1, K2, K3 = K[m, i0], K[m, i1], K[m, i2], K[m, i3]
            for k in range(gm.shape[0]):
                gm[k] += d0 * K0[k] + d1 * K1[k] + d2 * K2[k] + d3 * K3[k]
            c += 4
        while c < C:
            i = changed[c]
            d = delta[i]
            Kmi = K[m, i]
            for k in range(gm.shape[0]):
                gm[k] += d * Kmi[k]
            c += 1


def quadratic_forms(K: np.ndarray, v: np.ndarray) -> np.ndarray:
    """v' K_m v for every kernel of the bank, the gradient of every method that
    weights kernels by how they score one coefficient vector (q_m of the
    wrapper methods, d_r of EasyMKL and MEMO): for a dual vector with few
    nonzeros (support vectors) the rows of those only, else one
    matrix-vector pass over the flattened bank (in its own dtype)."""
    M, n, _ = K.shape
    v = np.asarray(v, dtype=np.float64)
    support = np.flatnonzero(v)
    if support.size <= SUPPORT_FRACTION * n:
        Kv = np.zeros((M, n))
        add_rows(K, Kv, support, v)  # K_m v from the rows of v's support
        return Kv @ v
    Kv = (K.reshape(M * n, n) @ v.astype(K.dtype, copy=False)).reshape(M, n)
    return Kv.astype(np.float64) @ v


def psd_quadratic_forms(
    K: np.ndarray, v: np.ndarray, labels: Sequence[str] | None = None
) -> np.ndarray:
    """:func:`quadratic_forms` for methods whose math needs PSD kernels (the
    wrapper methods' q_m, EasyMKL's and MEMO's scores). A form below zero by
    more than rounding (``10 eps n ||v||^2 max_i K_m,ii`` in the bank's dtype)
    proves K_m indefinite: :class:`InputError` names it with its smallest
    eigenvalue. Smaller negatives are rounding and read as 0 (documented in
    docs/design.md, "Input checks"). ``labels``: the kernels' names in the
    message (default ``K[m]``)."""
    return refuse_indefinite(K, quadratic_forms(K, v), v, labels=labels)


def refuse_indefinite(
    K: np.ndarray,
    q: np.ndarray,
    v: np.ndarray,
    diag_max: np.ndarray | None = None,
    labels: Sequence[str] | None = None,
) -> np.ndarray:
    """The check of :func:`psd_quadratic_forms` on forms q_m = v'K_m v computed
    elsewhere (the interleaved engine keeps them): q with rounding read as 0, or
    :class:`InputError` naming the first kernel they prove indefinite.
    ``diag_max``: max_i |K_m,ii| per kernel, when known."""
    n = K.shape[1]
    v = np.asarray(v, dtype=np.float64)
    if diag_max is None:
        diag_max = np.abs(np.einsum("mii->mi", K)).max(axis=1).astype(np.float64)
    rounding = 10.0 * np.finfo(K.dtype).eps * n * float(v @ v) * diag_max
    bad = np.flatnonzero(q < -rounding)
    if bad.size:
        m = int(bad[0])
        label = labels[m] if labels is not None else f"K[{m}]"
        raise InputError(indefinite_message(K[m], label, q[m]))
    return np.maximum(q, 0.0)


def indefinite_message(K_m: np.ndarray, name: str, form: float | None = None) -> str:
    """Error text for an indefinite kernel given to a method that needs PSD ones
    (error path only: one partial eigendecomposition)."""
    import scipy.linalg

    lam_min = float(
        scipy.linalg.eigh(
            np.asarray(K_m, dtype=np.float64), eigvals_only=True, subset_by_index=[0, 0]
        )[0]
    )
    seen = f" (a quadratic form v'Kv = {form:.3g})" if form is not None else ""
    return (
        f"{name} is not positive semidefinite: smallest eigenvalue {lam_min:.3g}{seen}. "
        "This method needs PSD kernels; for indefinite similarities use a method "
        "for them (eigen transforms: mkl.algorithms.eigen_transforms; IndSVM, ESKL, EMKL, "
        "REKL: mkl.algorithms.indefinite)"
    )


# the centred rows of every kernel are formed this many bytes at a time
CENTRED_BLOCK_BYTES = 64 * 2**20


def centred_products(K: np.ndarray, y: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The Frobenius products of the centred kernels of a bank K (M, n, n), and
    their products with yy' (Cortes, Mohri & Rostamizadeh, JMLR 2012, Section 2):

        F_kl = <K_k^c, K_l^c>_F,    a_k = <K_k^c, yy'>_F = (Hy)' K_k (Hy),

    with K^c = H K H, H = I - 11'/n (``y`` None: a is zeros). Returns (F (M, M),
    a (M,)), in float64. Two passes over the bank: the row means, then the
    centred rows of every kernel formed :data:`CENTRED_BLOCK_BYTES` at a time,
    K_k^c[i, :] = K_k[i, :] - r_k,i - r_k + mean(r_k) (r_k the row means of a
    symmetric K_k), whose Gram matrix accumulates F. No centred copy of the
    bank is made, and no cancellation of uncentred products
    (<K_k, K_l> - 2/n r_k'r_l + ...) loses the centred part of a nearly
    constant kernel."""
    M, n, _ = K.shape
    r = K.mean(axis=2, dtype=np.float64)  # (M, n); the column means too (symmetric)
    g = r.mean(axis=1)
    yc = None if y is None else np.asarray(y, dtype=np.float64)
    F = np.zeros((M, M))
    a = np.zeros(M)
    rows = max(1, CENTRED_BLOCK_BYTES // (8 * M * n))
    for i in range(0, n, rows):
        j = min(i + rows, n)
        block = K[:, i:j, :].astype(np.float64)  # (M, rows, n), a copy
        block -= r[:, i:j, None]
        block -= r[:, None, :]
        block += g[:, None, None]
        flat = block.reshape(M, -1)
        F += flat @ flat.T
        if yc is not None:  # y'K^c y = (Hy)'K(Hy), row block by row block
            a += (block @ yc) @ yc[i:j]
    F = 0.5 * (F + F.T)  # summed in one order per entry: symmetric up to rounding
    return F, a


def kernel_alignment(K1, K2, centered: bool = True) -> float:
    """The alignment of two kernel matrices on the same points,

        A(K1, K2) = <K1, K2>_F / (||K1||_F ||K2||_F)

    (Cristianini, Shawe-Taylor, Elisseeff & Kandola 2001), on their centred
    versions K^c = H K H when ``centered`` (the centred alignment rho of
    Cortes, Mohri & Rostamizadeh, JMLR 2012, Definition in Section 2: the
    alignment of the kernels of the features less their mean). In [-1, 1];
    ``kernel_alignment(K, np.outer(y, y))`` is K's alignment with the ideal
    kernel of labels y in {-1, +1}. A kernel whose (centred) norm is zero, a
    constant one when centred, has no alignment: refused by name."""
    blocks = []
    for name, K in (("K1", K1), ("K2", K2)):
        K = np.asarray(K, dtype=np.float64)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise InputError(f"{name} must be a square kernel matrix (n, n), got shape {K.shape}")
        if not np.isfinite(K).all():
            raise InputError(f"{name} contains NaN or inf")
        blocks.append(K)
    if blocks[0].shape != blocks[1].shape:
        raise InputError(
            f"K1 and K2 must be kernels on the same points, got shapes "
            f"{blocks[0].shape} and {blocks[1].shape}"
        )
    if centered:
        F, _ = centred_products(np.stack(blocks))
    else:
        flat = np.stack(blocks).reshape(2, -1)
        F = flat @ flat.T
    for k, name in enumerate(("K1", "K2")):
        if not F[k, k] > 0:
            what = "constant (zero once centred)" if centered else "zero"
            raise InputError(f"{name} is {what}: its alignment is undefined")
    return float(np.clip(F[0, 1] / np.sqrt(F[0, 0] * F[1, 1]), -1.0, 1.0))

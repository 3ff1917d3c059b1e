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

    The sum is one matrix-vector product over the flattened bank (memory-bandwidth
    bound, no Python loop over kernels). Kernels with zero weight are skipped
    when few kernels are active (gathering them costs a read and a write of
    each, so with more than a third of the bank active one full pass is
    cheaper). A float32 bank is combined in float32 and only the (n x n)
    result is promoted, so the bank is never copied to float64.
    """
    w = np.asarray(weights, dtype=np.float64)
    M = K.shape[0]
    if w.shape != (M,):
        raise InputError(f"weights must have shape ({M},), got {w.shape}")
    active = np.flatnonzero(w)
    shape = K.shape[1:]
    if active.size == 0:
        res = np.zeros(shape)
    else:
        if 3 * active.size < M:
            sub, wa = K[active], w[active]
        else:
            sub, wa = K, w
        flat = sub.reshape(sub.shape[0], -1)
        res = (wa.astype(K.dtype, copy=False) @ flat).reshape(shape)
    res = np.ascontiguousarray(res, dtype=np.float64)
    if out is not None:
        out[...] = res
        return out
    return res


def quadratic_forms(K: np.ndarray, v: np.ndarray) -> np.ndarray:
    """v' K_m v for every kernel of the bank: one matrix-vector pass over the
    flattened bank (in its own dtype), the gradient of every method that
    weights kernels by how they score one coefficient vector (q_m of the
    wrapper methods, d_r of EasyMKL and MEMO)."""
    M, n, _ = K.shape
    Kv = (K.reshape(M * n, n) @ np.asarray(v).astype(K.dtype, copy=False)).reshape(M, n)
    return Kv.astype(np.float64) @ np.asarray(v, dtype=np.float64)


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

"""Input checks of a dense training bank (docs/design.md, "Input checks"):
structure (:func:`as_kernel_array`) and values, folded into the one pass that
forms the average kernel (:func:`check_training_kernels`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from .._validation import as_real_float
from ..exceptions import DegenerateKernelWarning, InputError, warn_at_caller
from .algebra import indefinite_message
from .kernel_bank import KernelBank


def as_kernel_array(K, name: str = "K") -> np.ndarray:
    """Structural checks on a bank: 3-D, numeric, float32 or float64, C-contiguous
    (no copy when it is all of these already)."""
    if isinstance(K, KernelBank):
        K = K.train
    if not isinstance(K, np.ndarray):
        K = np.asarray(K)
    if K.ndim != 3:
        raise InputError(
            f"{name} must have shape (n_kernels, n_samples, n_samples), got shape {K.shape}"
            + ("; wrap a single kernel as K[None]" if K.ndim == 2 else "")
        )
    K = as_real_float(K, name)
    if K.shape[0] == 0 or K.shape[1] == 0:
        raise InputError(f"{name} is empty (shape {K.shape})")
    # solvers pass over the flattened bank every iteration: a strided view
    # would be copied each time, so it is copied once here instead
    return np.ascontiguousarray(K)


def locate_bad_kernel(K: np.ndarray, name: str = "K") -> str:
    """Name the first kernel holding NaN/inf and its first such entry (error
    path only: one pass)."""
    for m in range(K.shape[0]):
        bad = ~np.isfinite(K[m])
        if bad.any():
            i, j = (int(a) for a in np.argwhere(bad)[0])
            return (
                f"{name}[{m}] contains NaN or inf (first at entry ({i}, {j}): {float(K[m, i, j])})"
            )
    return f"{name} contains NaN or inf"


def max_asymmetry(K: np.ndarray, block: int = 64) -> float:
    """max |K_ij - K_ji|, compared in strips of ``block`` rows over the upper
    triangle: cache-friendly, unlike ``abs(K - K.T).max()``."""
    n = K.shape[0]
    worst = 0.0
    for i in range(0, n, block):
        worst = max(worst, float(np.abs(K[i : i + block, i:] - K[i:, i : i + block].T).max()))
    return worst


@njit(cache=True, nogil=True)
def _scale_and_asymmetry(A, B, block=64):
    """(max |entry|, max |X_ij - X_ji|) over two square matrices A and B in one
    read, tile pairs (I, J), (J, I) of ``block`` rows over the upper triangle
    (the four reductions and two strip passes of ``max`` and
    :func:`max_asymmetry` read each matrix three times). A NaN or inf entry
    makes the scale inf."""
    n = A.shape[0]
    scale, asymmetry = 0.0, 0.0
    finite = True
    for i0 in range(0, n, block):
        i1 = min(i0 + block, n)
        for j0 in range(i0, n, block):
            j1 = min(j0 + block, n)
            for i in range(i0, i1):
                for j in range(max(j0, i), j1):
                    a, at, b, bt = A[i, j], A[j, i], B[i, j], B[j, i]
                    # x - x is 0 for every finite x (no overflow), NaN for NaN and inf
                    finite &= (a - a) + (at - at) + (b - b) + (bt - bt) == 0.0
                    scale = max(scale, abs(a), abs(at), abs(b), abs(bt))
                    asymmetry = max(asymmetry, abs(a - at), abs(b - bt))
    if not finite:
        return np.inf, np.inf
    return scale, asymmetry


# fixed weights of the second combination formed in the validation pass (a
# seeded draw, so that the checks do not depend on the caller's random state)
_CHECK_WEIGHTS = np.random.default_rng(20101).uniform(0.5, 1.5, size=4096)


def combination_weights(M: int) -> np.ndarray:
    """The validation pass's two weight rows (2, M): the average's (1/M each) and
    the check combination's (distinct positive weights summing to 1)."""
    check = np.resize(_CHECK_WEIGHTS, M)
    return np.stack([np.full(M, 1.0 / M), check / check.sum()])


@njit(cache=True, nogil=True)
def _two_combinations(K, w0, w1, out0, out1):
    """out0 = sum_m w0_m K_m and out1 = sum_m w1_m K_m (float64) in one read of
    the bank (M, N), four kernels a sweep."""
    M, N = K.shape
    o0, o1 = out0.reshape(-1), out1.reshape(-1)
    o0[:] = 0.0
    o1[:] = 0.0
    m = 0
    while m + 4 <= M:
        a0, a1, a2, a3 = w0[m], w0[m + 1], w0[m + 2], w0[m + 3]
        b0, b1, b2, b3 = w1[m], w1[m + 1], w1[m + 2], w1[m + 3]
        K0, K1, K2, K3 = K[m], K[m + 1], K[m + 2], K[m + 3]
        for k in range(N):
            v0, v1, v2, v3 = K0[k], K1[k], K2[k], K3[k]
            o0[k] += a0 * v0 + a1 * v1 + a2 * v2 + a3 * v3
            o1[k] += b0 * v0 + b1 * v1 + b2 * v2 + b3 * v3
        m += 4
    while m < M:
        a, b, Km = w0[m], w1[m], K[m]
        for k in range(N):
            o0[k] += a * Km[k]
            o1[k] += b * Km[k]
        m += 1


def check_training_kernels(K: np.ndarray, psd: bool = True) -> np.ndarray:
    """Value checks of a training bank, folded into the one pass that forms the
    average kernel (docs/design.md, "Input checks"):

    * NaN/inf anywhere shows up in the average;
    * symmetry per kernel: the same pass (one matrix product with two weight
      vectors) also forms a combination with distinct positive weights, so an
      asymmetric kernel cannot hide behind another's transpose
      (K = [B, B'] has a symmetric average, not a symmetric second combination);
      on failure each kernel is checked to name the culprit;
    * with ``psd``: every diagonal entry >= 0 (M n reads), and a kernel whose
      diagonal is zero is zero (|K_ij| <= sqrt(K_ii K_jj)), else indefinite
      (only such kernels are read again). A full eigenvalue check would cost M
      eigendecompositions; instead every quadratic form the solvers compute is
      checked (:func:`mkl.banks.algebra.psd_quadratic_forms`), so an indefinite
      kernel is refused as soon as a solution meets a negative direction, and
      never silently clipped. A kernel whose negative directions no solution
      meets passes.

    Returns the average kernel, which most methods need anyway."""
    M, n, n2 = K.shape
    if n != n2:
        raise InputError(f"training kernels must be square, got shape {K.shape} (M, n, n)")
    weights = combination_weights(M)
    K_mean, K_other = np.empty((n, n)), np.empty((n, n))
    _two_combinations(K.reshape(M, -1), weights[0], weights[1], K_mean, K_other)
    scale, asymmetry = _scale_and_asymmetry(K_mean, K_other)
    if not np.isfinite(scale):  # NaN/inf in a kernel reaches both combinations
        raise InputError(locate_bad_kernel(K))
    if scale == 0.0:  # both combinations have positive weights: every kernel is 0
        raise InputError("every kernel of the bank is zero (all entries are 0)")
    tol = 1e-6 * scale + 1e-300
    if asymmetry > tol:
        for m in range(M):
            if max_asymmetry(K[m]) > 1e-6 * float(np.abs(K[m]).max()) + 1e-300:
                raise InputError(f"K[{m}] is not symmetric")
        raise InputError("the kernels are not symmetric")
    if psd:
        diag = np.einsum("mii->mi", K)
        if (diag < -tol).any():
            m, i = (int(a[0]) for a in np.nonzero(diag < -tol))
            raise InputError(
                f"K[{m}] is not positive semidefinite: its diagonal entry ({i}, {i}) is "
                f"{float(diag[m, i]):.3g} < 0. This method needs PSD kernels; for "
                "indefinite similarities use a method for them (eigen transforms: "
                "mkl.algorithms.eigen_transforms; IndSVM, ESKL, EMKL, REKL: "
                "mkl.algorithms.indefinite)"
            )
        # |K_ij| <= sqrt(K_ii K_jj) for a PSD kernel: one whose diagonal is zero is
        # zero, and any entry beyond its diagonal's size proves it indefinite (the
        # kernels with a zero diagonal only are read)
        diag_max = diag.max(axis=1)
        for m in np.flatnonzero(diag_max <= tol):
            if float(np.abs(K[m]).max()) > float(diag_max[m]) + tol:
                raise InputError(indefinite_message(K[m], f"K[{m}]"))
    return K_mean


# a kernel whose trace is at most this fraction of the bank's largest is zero
# (for a PSD kernel every entry is then as small: |K_ij| <= sqrt(K_ii K_jj))
ZERO_TRACE_RTOL = 1e-12


def warn_zero_kernels(traces: np.ndarray, names: Sequence[str] | None = None) -> None:
    """Warn (:class:`mkl.exceptions.DegenerateKernelWarning`) about the kernels of
    a PSD bank that are zero on the training rows, from their traces (M,),
    which the caller has (a dense bank's diagonal, a factor bank's column
    norms): such a kernel adds nothing to any combination sum_m theta_m K_m,
    so the weight a method gives it means nothing (``uniform`` still gives it
    1/M, scaling the useful kernels down as a smaller C would). ``names``: the
    kernels' names (default ``K[m]``). A bank whose every kernel is zero is the
    caller's to refuse, non-finite traces the passes' to name."""
    traces = np.asarray(traces, dtype=np.float64)
    top = float(traces.max()) if traces.size else 0.0
    if not 0 < top < np.inf:  # all zero, or not finite: the caller's, or a pass's, to name
        return
    zero = np.flatnonzero(traces <= ZERO_TRACE_RTOL * top)
    if zero.size == 0:
        return
    shown = ", ".join(
        (names[m] if names is not None else f"K[{m}]") for m in (int(m) for m in zero[:5])
    )
    more = f" and {len(zero) - 5} more" if len(zero) > 5 else ""
    warn_at_caller(
        f"{len(zero)} of the {traces.size} kernels are zero on the training rows (trace at "
        f"most {ZERO_TRACE_RTOL:g} of the largest kernel's): {shown}{more}. A zero kernel "
        "adds nothing to the combined kernel, so its weight means nothing (uniform still "
        "gives it 1/M, which scales the other kernels down as a smaller C would): drop it "
        "from the bank (a kernel of a feature that is constant on the training rows, "
        "once centred?)",
        DegenerateKernelWarning,
    )


def degenerate_kernels(block: np.ndarray, rtol: float = 1e-6) -> tuple[list[int], list[int]]:
    """The kernels of a block of training rows (M, k, k) that cannot help a
    classifier, as (identity, constant) index lists:

    * numerically the identity: every off-diagonal entry below ``rtol`` times
      the mean diagonal entry, and every diagonal entry at least half the
      mean. Such a kernel memorises the rows: a Gaussian much narrower than
      the distances between rows (the narrow widths of a bank on many
      standardised features), which an L1 method may still pick;
    * constant: every entry equal (zero included), e.g. a kernel on a feature
      that is constant over the training rows.

    A check for warnings, not a refusal (the fit is still what it says): the
    callers pass the block of their first few hundred rows, so the cost does
    not grow with n."""
    identity, constant = [], []
    if block.shape[1] < 2:
        return identity, constant
    for m in range(block.shape[0]):
        B = np.array(block[m], dtype=np.float64)
        low, high = float(B.min()), float(B.max())
        if high - low <= rtol * max(abs(low), abs(high)):
            constant.append(m)
            continue
        diagonal = np.diagonal(B)
        diagonal_mean = float(diagonal.mean())
        # the identity's diagonal is even: a block with a few nonzero rows only
        # (a rare term's rank-one kernel) is not it
        even = float(diagonal.min()) >= 0.5 * diagonal_mean > 0
        np.fill_diagonal(B, 0.0)
        if even and float(np.abs(B).max()) <= rtol * diagonal_mean:
            identity.append(m)
    return identity, constant


def degenerate_factor_kernels(bank, rows: int, rtol: float = 1e-6) -> tuple[list[int], list[int]]:
    """:func:`degenerate_kernels` of a FactorBank, kernel by kernel (one k x k
    block at a time): constant from the factor over all rows (K_m = Z_m Z_m'
    is constant when every row of Z_m is the same), the identity on the
    block of the first ``rows`` rows, and only for kernels of rank >= rows (a
    lower-rank kernel is not the identity: a rank-one term kernel whose term
    is in one of the first rows would otherwise look like one)."""
    from ..kernels.specs import column_ranges

    identity, constant = [], []
    for m in range(bank.n_kernels):
        Z = bank.factor(m)
        scale = float(abs(Z).max()) if Z.shape[0] else 0.0
        if float(column_ranges(Z).max(initial=0.0)) <= rtol * scale:
            constant.append(m)
        elif bank.ranks[m] >= rows > 1:
            top = Z[:rows]
            block = top @ top.T
            block = block.toarray() if hasattr(block, "toarray") else np.asarray(block)
            if degenerate_kernels(block[None], rtol)[0]:
                identity.append(m)
    return identity, constant

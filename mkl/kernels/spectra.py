"""Eigendecompositions of indefinite similarity matrices (computed once per block
and cached by content), and the eigen transforms of Wu, Chang & Zhang (2005) /
Chen et al. (2009) that Kundu et al. (2010) compare against.

Notation (Kundu et al. 2010, Section 4): S = sum_j lambda_j v_j v_j' is the
eigendecomposition of a symmetric similarity matrix, and a spectrum transform
gives the PSD kernel K = sum_j mu_j v_j v_j' with

* ``denoise``: mu_j = max(lambda_j, 0)       (clip the negative eigenvalues)
* ``flip``:    mu_j = |lambda_j|
* ``shift``:   mu_j = lambda_j - delta, delta = min(lambda_1, ..., lambda_n, 0)

Test similarities. A test point comes with its similarities s to the training
points, not with a row of K. Following Chen et al. (2009, Section 3), denoise
and flip treat s through the training eigenvectors: k = s P with
P = V diag(mu_j / lambda_j) V' (mu_j / lambda_j is 0 or +-1, and eigenvalues
below ``RANK_TOL`` x max |lambda| are mapped to 0), which reproduces K on the
training rows. Shift changes only the diagonal (K = S - delta I) and a test
point is never one of the training points, so its similarities are used as
they are. The kernels learned by IndSVM, ESKL, EMKL and REKL are proxies of S
close to it in the loss they minimise; their classifiers use the raw test
similarities with the learned SVM coefficients, as Luss & d'Aspremont (2007)
and Chen et al. (2009) do for IndSVM.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ..exceptions import InputError

TRANSFORMS = ("denoise", "flip", "shift")


RANK_TOL = 1e-10


@dataclass
class Spectra:
    """Eigendecompositions of a stack of symmetric matrices: S_m = V_m diag(w_m) V_m'."""

    values: np.ndarray  # (M, n), ascending
    vectors: np.ndarray  # (M, n, n), columns are eigenvectors


# Spectra keyed by the content of the matrices (a BLAKE2b digest of their bytes,
# with dtype and shape): an array edited in place, or a new array with equal
# content, is looked up by what it holds, never by object identity. Hashing
# costs about 1/50 of an eigendecomposition at n = 1000. A small LRU: the
# blocks in use at once are one CV fold's and the training block's.
_CACHE: OrderedDict[tuple, Spectra] = OrderedDict()


CACHE_ENTRIES = 4


def symmetric_eigh(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix by LAPACK.
    The default driver (syevr) occasionally stops with "Internal Error" on
    matrices with clustered eigenvalues (seen on ESKL iterates); the
    divide-and-conquer driver (syevd) is tried next, then the QR one (syev)."""
    A = np.asarray(A, dtype=np.float64)
    for driver in ("evr", "evd", "ev"):
        try:
            import scipy.linalg

            return scipy.linalg.eigh(A, driver=driver)
        except np.linalg.LinAlgError:
            continue
    raise np.linalg.LinAlgError("eigendecomposition failed with every LAPACK driver")


def eigendecompose(S: np.ndarray) -> Spectra:
    """Eigendecomposition of each S_m (in float64, :func:`symmetric_eigh`)."""
    S = np.asarray(S)
    if S.ndim == 2:
        S = S[None]
    M, n, _ = S.shape
    values = np.empty((M, n))
    vectors = np.empty((M, n, n))
    for m in range(M):
        values[m], vectors[m] = symmetric_eigh(S[m])
    return Spectra(values, vectors)


def _content_key(S: np.ndarray) -> tuple:
    S = np.ascontiguousarray(S)
    digest = hashlib.blake2b(memoryview(S).cast("B"), digest_size=20).hexdigest()
    return (S.dtype.str, S.shape, digest)


def remember(S: np.ndarray, spectra: Spectra) -> None:
    """Make known spectra of ``S`` (e.g. stored in the bank file) found by
    :func:`spectra` for any array with the same content."""
    key = _content_key(S)
    _CACHE[key] = spectra
    _CACHE.move_to_end(key)
    while len(_CACHE) > CACHE_ENTRIES:
        _CACHE.popitem(last=False)


def spectra(S: np.ndarray) -> Spectra:
    """The eigendecompositions of the stack ``S``, computed once per content:
    every algorithm and grid point fitted on the same training block (or inner
    CV fold block) reuses them."""
    S = np.asarray(S)
    key = _content_key(S)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    out = eigendecompose(S)
    remember(S, out)
    return out


def transform_spectrum(values: np.ndarray, how: str) -> np.ndarray:
    """mu from lambda for ``denoise``, ``flip`` or ``shift`` (module docstring)."""
    values = np.asarray(values, dtype=np.float64)
    if how == "denoise":
        return np.maximum(values, 0.0)
    if how == "flip":
        return np.abs(values)
    if how == "shift":
        delta = min(float(values.min()), 0.0)
        return values - delta
    raise InputError(f"unknown spectrum transform {how!r}; known: {TRANSFORMS}")


def from_spectrum(vectors: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """V diag(mu) V'."""
    return (vectors * mu) @ vectors.T


def test_map(vectors: np.ndarray, values: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """P = V diag(mu / lambda) V' (pseudo-inverse below RANK_TOL): S P = K on the
    training rows, applied to test similarities (Chen et al. 2009)."""
    scale = np.abs(values).max()
    keep = np.abs(values) > RANK_TOL * scale
    ratio = np.zeros_like(values)
    ratio[keep] = mu[keep] / values[keep]
    return (vectors * ratio) @ vectors.T

"""Base kernel functions and the normalisations fitted on a training block.

Conventions
-----------
* Gaussian: ``k(x, z) = exp(-||x - z||^2 / (2 width^2))`` (SimpleMKL's convention,
  Rakotomamonjy et al. 2008, used by the SMKL and GMKL papers' "widths 2^-3..2^6").
* Polynomial: ``k(x, z) = (x'z + 1)^degree`` (SimpleMKL's inhomogeneous kernel).
* Homogeneous polynomial: ``k(x, z) = (x'z)^degree``; with ``unit_diagonal``
  normalisation it is the normalised homogeneous polynomial kernel of
  Lauriola et al. 2018 (MEMO): ``(x'z)^d / sqrt((x'x)^d (z'z)^d)``.
* Linear: ``x'z``. On a single feature i it is ``v_i v_i'`` (Xu et al. 2010, toy data).
* Identity: 1 where a training point meets itself, 0 elsewhere (so its test block
  against the training points is zero).

A bank is a list of :class:`KernelSpec`; its training block has shape
(M, n_train, n_train) and its test block (M, n_test, n_train).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InputError
from .specs import ALL_FEATURES, NORMALISATIONS, KernelSpec, check_feature


def _sq_dists(X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    d = (X * X).sum(1)[:, None] + (Z * Z).sum(1)[None, :] - 2.0 * (X @ Z.T)
    np.maximum(d, 0.0, out=d)
    return d


def _columns(spec: KernelSpec, X: np.ndarray) -> np.ndarray:
    """The features ``spec`` looks at: all of X, or its one column."""
    if spec.feature == ALL_FEATURES:
        return X
    check_feature(spec, X.shape[1])
    return X[:, [spec.feature]]


def kernel_function(
    spec: KernelSpec, X: np.ndarray, Z: np.ndarray, same: bool = False
) -> np.ndarray:
    """Unnormalised kernel matrix k(x_i, z_j) for one spec.

    ``same`` tells the identity kernel that X and Z are the same points.
    """
    X = _columns(spec, np.asarray(X, dtype=np.float64))
    Z = _columns(spec, np.asarray(Z, dtype=np.float64))
    fam = spec.family
    if fam == "gaussian":
        return np.exp(-_sq_dists(X, Z) / (2.0 * spec.param**2))
    if fam == "polynomial":
        return (X @ Z.T + 1.0) ** spec.param
    if fam == "homogeneous_polynomial":
        return (X @ Z.T) ** spec.param
    if fam == "linear":
        return X @ Z.T
    if fam == "identity":
        if same:
            return np.eye(X.shape[0])
        return np.zeros((X.shape[0], Z.shape[0]))
    raise InputError(f"unknown kernel family {fam!r}")


def self_similarity(spec: KernelSpec, X: np.ndarray) -> np.ndarray:
    """Diagonal k(x_i, x_i), needed by the cosine normalisation of a test block."""
    X = _columns(spec, np.asarray(X, dtype=np.float64))
    fam = spec.family
    if fam in ("gaussian", "identity"):
        return np.ones(X.shape[0])
    sq = (X * X).sum(1)
    if fam == "polynomial":
        return (sq + 1.0) ** spec.param
    if fam == "homogeneous_polynomial":
        return sq**spec.param
    if fam == "linear":
        return sq
    raise InputError(f"unknown kernel family {fam!r}")


def normalisation_factor(K_train: np.ndarray, how: str) -> float:
    """Scalar divisor fitted on a training block.

    unit_trace: tr(K) (so tr = 1); unit_variance: the implied feature-space
    variance 1/n tr(K) - 1/n^2 1'K1 (Zien & Ong 2007; Kloft et al. 2011);
    unit_diagonal and none: 1 (the cosine normalisation is per entry).
    """
    if how in ("none", "unit_diagonal"):
        return 1.0
    n = K_train.shape[0]
    if how == "unit_trace":
        f = float(np.trace(K_train))
    elif how == "unit_variance":
        mean_diag = float(np.trace(K_train) / n)
        f = mean_diag - float(K_train.sum() / n**2)
        # below rounding of the two terms the variance is zero: a constant kernel
        if f <= 1e-12 * abs(mean_diag):
            raise InputError(
                "cannot normalise to unit_variance: the training block's implied "
                f"variance is {f:.3g}, zero up to rounding (a constant kernel)"
            )
    else:
        raise InputError(f"unknown normalisation {how!r}; known: {NORMALISATIONS}")
    # below the smallest normal float (subnormal) a division keeps too few digits
    if not np.isfinite(f) or f < np.finfo(np.float64).tiny:
        raise InputError(
            f"cannot normalise to {how}: the training block's factor is {f:.3g}, "
            "zero or too small to divide by (a numerically zero kernel)"
        )
    return f


def cosine_normalise(K: np.ndarray, diag_rows: np.ndarray, diag_cols: np.ndarray) -> np.ndarray:
    """K_ij / sqrt(k(x_i,x_i) k(z_j,z_j)); zero rows/columns of a zero diagonal stay zero.

    By Cauchy-Schwarz the result lies in [-1, 1]; it is clipped there, because
    rounding (e.g. a subnormal self-similarity) can push it just outside and
    break positive semidefiniteness."""
    dr = np.sqrt(np.maximum(diag_rows, 0.0))
    dc = np.sqrt(np.maximum(diag_cols, 0.0))
    dr[dr == 0] = 1.0
    dc[dc == 0] = 1.0
    return np.clip(K / dr[:, None] / dc[None, :], -1.0, 1.0)


def normalise_train(how: str, K_train, d_train=None):
    """Normalise a training block (in place where it divides): the cosine
    normalisation by its self-similarities ``d_train``, or a scalar divisor
    fitted on it. Returns (K_train, divisor)."""
    if how == "unit_diagonal":
        return cosine_normalise(K_train, d_train, d_train), 1.0
    factor = normalisation_factor(K_train, how)
    K_train /= factor
    return K_train, factor


def normalise_test(how: str, K_test, factor: float, diagonals=None):
    """Normalise a test block as its training block was: by ``diagonals`` =
    (training, test) self-similarities for the cosine, else by ``factor``."""
    if how == "unit_diagonal":
        d_tr, d_te = diagonals
        return cosine_normalise(K_test, d_te, d_tr)
    K_test /= factor
    return K_test


def normalise_blocks(how: str, K_train, K_test, diagonals=None):
    """Normalise a training block and its test block with statistics of the
    training block (``diagonals`` = (training, test) self-similarities, used by
    the cosine normalisation). Returns (K_train, K_test, divisor)."""
    d_tr = None if diagonals is None else diagonals[0]
    K_train, factor = normalise_train(how, K_train, d_tr)
    if K_test is not None:
        K_test = normalise_test(how, K_test, factor, diagonals)
    return K_train, K_test, factor


def check_features(X, name: str) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InputError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}")
    if not np.isfinite(X).all():
        raise InputError(f"{name} contains NaN or inf")
    return X


def check_same_features(X_train, X_test):
    if X_test.shape[1] != X_train.shape[1]:
        raise InputError(
            f"X_test has {X_test.shape[1]} features but X_train has {X_train.shape[1]}"
        )

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
* scikit-learn's pairwise kernels by name (``laplacian``, ``chi2``, ``sigmoid``,
  ``cosine``, ``additive_chi2``, ``rbf``, ``poly``: :data:`mkl.kernels.specs.PAIRWISE_KERNELS`):
  ``sklearn.metrics.pairwise.PAIRWISE_KERNEL_FUNCTIONS[name](X, Z, **keywords)``,
  their own conventions (e.g. laplacian exp(-gamma ||x - z||_1), rbf
  exp(-gamma ||x - z||^2)); sigmoid and additive_chi2 are not PSD.
* A callable ``k(X, Z)``: the user's function on the rows as given (any dtype),
  its result refused by the kernel's name when it is not an (n_X, n_Z) array of
  finite numbers, or, on the training rows, not symmetric.

Centring (``center``, :func:`center`) moves the feature map to the training
points' mean, phi(x) - 1/n sum_j phi(x_j) (Schoelkopf, Smola & Mueller 1998,
Appendix A; Cortes, Mohri & Rostamizadeh 2012, Section 2): the centred alignment of
the alignment methods (:mod:`mkl.algorithms.alignment`) is taken on such kernels.

A bank is a list of :class:`KernelSpec`; its training block has shape
(M, n_train, n_train) and its test block (M, n_test, n_train).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InputError
from .specs import (
    ALL_FEATURES,
    CALLABLE,
    NORMALISATIONS,
    PAIRWISE_KERNELS,
    KernelSpec,
    check_feature,
)

# a callable's training block is refused as asymmetric beyond this relative to
# its largest entry (the bank-level input checks' tolerance,
# mkl.banks.checks.check_training_kernels)
CALLABLE_SYMMETRY_RTOL = 1e-6

# the self-similarities of a pairwise or callable kernel are the diagonals of
# its blocks on this many rows at a time (one call per block, not per row)
DIAGONAL_BLOCK_ROWS = 64


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

    ``same`` tells the identity kernel that X and Z are the same points (a
    pairwise kernel is then computed on X alone, exactly symmetric; a
    callable's block is checked for symmetry).
    """
    if spec.family == CALLABLE:
        return _callable_block(spec, X, Z, same)
    X = _columns(spec, np.asarray(X, dtype=np.float64))
    Z = _columns(spec, np.asarray(Z, dtype=np.float64))
    fam = spec.family
    if fam in PAIRWISE_KERNELS:
        return _pairwise_block(spec, X, None if same else Z)
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
    """Diagonal k(x_i, x_i), needed by the cosine normalisation of a test block
    (a pairwise or callable kernel's: the diagonals of its blocks on
    :data:`DIAGONAL_BLOCK_ROWS` rows at a time)."""
    fam = spec.family
    if fam in PAIRWISE_KERNELS or fam == CALLABLE:
        n, step = len(X), DIAGONAL_BLOCK_ROWS
        blocks = [
            kernel_function(spec, X[i : i + step], X[i : i + step]) for i in range(0, n, step)
        ]
        return np.concatenate([np.diagonal(b) for b in blocks]) if blocks else np.empty(0)
    X = _columns(spec, np.asarray(X, dtype=np.float64))
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


def _pairwise_block(spec: KernelSpec, X: np.ndarray, Z: np.ndarray | None) -> np.ndarray:
    """scikit-learn's pairwise kernel ``spec.family`` with its ``keywords``
    between the rows of X and Z (None: X itself), scikit-learn's refusals
    (e.g. chi2 of negative features) raised as :class:`InputError` naming the
    kernel."""
    from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS  # 0.3 s: on first use

    try:
        return PAIRWISE_KERNEL_FUNCTIONS[spec.family](X, Z, **dict(spec.keywords))
    except ValueError as exc:
        raise InputError(f"kernel {spec.label()}: {exc}") from None


def _callable_block(spec: KernelSpec, X, Z, same: bool) -> np.ndarray:
    """The user's ``spec.function(X, Z)`` on the rows as given (the columns
    of a single-feature kernel), as an (n_X, n_Z) float64 array, refused
    by the kernel's label when it is of another shape, not numbers, NaN or
    inf, or (``same``: the training block) asymmetric beyond
    :data:`CALLABLE_SYMMETRY_RTOL` of its largest entry."""
    if spec.feature != ALL_FEATURES:
        X, Z = _columns(spec, np.asarray(X)), _columns(spec, np.asarray(Z))
    K = spec.function(X, Z)
    if hasattr(K, "toarray"):  # a scipy.sparse result
        K = K.toarray()
    try:
        K = np.asarray(K, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(
            f"kernel {spec.label()} returned {type(K).__name__}, not an array of numbers"
        ) from None
    expected = (len(X), len(Z))
    if K.shape != expected:
        raise InputError(
            f"kernel {spec.label()} returned shape {K.shape} for {expected[0]} and "
            f"{expected[1]} rows: a kernel k(X, Y) returns (n_X, n_Y) = {expected}"
        )
    if not np.isfinite(K).all():
        raise InputError(f"kernel {spec.label()} returned NaN or inf")
    if same and K.size:
        asymmetry, scale = float(np.abs(K - K.T).max()), float(np.abs(K).max())
        if asymmetry > CALLABLE_SYMMETRY_RTOL * scale:
            raise InputError(
                f"kernel {spec.label()} is not symmetric on the training rows: "
                f"max |k(x_i, x_j) - k(x_j, x_i)| = {asymmetry:.3g} against entries up "
                f"to {scale:.3g}"
            )
    return K


def check_kernel_rows(specs, X, name: str):
    """The rows the kernels of ``specs`` are computed on: X checked as
    features (:func:`check_features`: float64, 2-D, finite) when every kernel
    computes on numbers; with a callable kernel, X as given (2-D: its rows
    are what the callable reads, strings or booleans as well as numbers), and
    convertible to finite numbers when another kernel of the bank needs them."""
    if all(spec.family != CALLABLE for spec in specs):
        return check_features(X, name)
    X = np.asarray(X)
    if X.ndim != 2:
        raise InputError(
            f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}: a callable "
            "kernel is given rows of X (texts, say, as one column: X[:, None])"
        )
    numeric = [spec for spec in specs if spec.family != CALLABLE]
    if numeric:
        try:
            check_features(X, name)
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"kernel {numeric[0].label()} computes on numbers, but {name} does not "
                f"hold finite numbers ({exc}): give it its columns in a view of its own, "
                "or a callable kernel that reads them"
            ) from None
    return X


def center(K_train, K_test=None):
    """Kernels centred in feature space on the training points: with
    H = I - 11'/n and m = K_train 1/n (the training block's column means),

        K_train^c = H K_train H
        K_test^c  = K_test - K_test 11'/n - 1 m' + (1'm/n) 11',

    i.e. k^c(x, z) = <phi(x) - mu, phi(z) - mu> with mu the training points'
    mean in feature space (Schoelkopf, Smola & Mueller 1998, Appendix A;
    Cortes, Mohri & Rostamizadeh, JMLR 2012, Section 2): the test block is
    centred with the training means, never its own.

    ``K_train``: one kernel (n, n) or a bank (M, n, n); ``K_test``: its test
    block, (n_test, n) or (M, n_test, n). Returns the centred training block
    (a new array), or (training, test) when ``K_test`` is given. A training
    block's centred rows and columns sum to zero; it stays symmetric and PSD.
    """
    K = np.array(K_train, dtype=np.float64)  # a copy: centred in place below
    if K.ndim not in (2, 3) or K.shape[-1] != K.shape[-2]:
        raise InputError(
            f"K_train must be one kernel (n, n) or a bank (M, n, n), got shape {K.shape}"
        )
    if not np.isfinite(K).all():
        raise InputError("K_train contains NaN or inf")
    bank = K.reshape((-1, *K.shape[-2:]))
    means = np.stack([center_train(block) for block in bank])
    if K_test is None:
        return K
    T = np.array(K_test, dtype=np.float64)
    if T.ndim != K.ndim or T.shape[:-2] != K.shape[:-2] or T.shape[-1] != K.shape[-1]:
        lead = "" if K.ndim == 2 else f"{K.shape[0]}, "
        raise InputError(
            f"K_test must have shape ({lead}n_test, {K.shape[-1]}) to match K_train, got {T.shape}"
        )
    if not np.isfinite(T).all():
        raise InputError("K_test contains NaN or inf")
    for block, m in zip(T.reshape((-1, *T.shape[-2:])), means, strict=True):
        center_test(block, m)
    return K, T


def center_train(K: np.ndarray) -> np.ndarray:
    """Centre a training block in place (H K H) and return its column means m
    before centring, what :func:`center_test` centres its test block with."""
    m = K.mean(axis=0, dtype=np.float64)
    grand = float(m.mean())
    K -= m[None, :]
    K -= m[:, None]  # K is symmetric: its row means are m too
    K += grand
    return m


def center_test(K_test: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Centre a test block (n_test, n) in place with its training block's
    column means ``means`` (:func:`center_train`); returns it."""
    K_test -= K_test.mean(axis=1, dtype=np.float64)[:, None]
    K_test -= means[None, :]
    K_test += float(means.mean())
    return K_test


def normalisation_factor(K_train: np.ndarray, how: str) -> float:
    """Scalar divisor fitted on a training block.

    unit_trace: tr(K) (so tr = 1); unit_variance: the implied feature-space
    variance 1/n tr(K) - 1/n^2 1'K1 (Zien & Ong 2007; Kloft et al. 2011);
    unit_diagonal, center and none: 1 (the cosine normalisation is per entry,
    the centring a subtraction).
    """
    if how in ("none", "unit_diagonal", "center"):
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
    """Normalise a training block (in place where it divides or centres): the
    cosine normalisation by its self-similarities ``d_train``, the centring
    (:func:`center_train`: the column means are the caller's to keep, taken
    before), or a scalar divisor fitted on it. Returns (K_train, divisor)."""
    if how == "unit_diagonal":
        return cosine_normalise(K_train, d_train, d_train), 1.0
    if how == "center":
        center_train(K_train)
        return K_train, 1.0
    factor = normalisation_factor(K_train, how)
    K_train /= factor
    return K_train, factor


def normalise_test(how: str, K_test, factor: float, diagonals=None, means=None):
    """Normalise a test block as its training block was: by ``diagonals`` =
    (training, test) self-similarities for the cosine, with the training
    block's column ``means`` for the centring, else by ``factor``."""
    if how == "unit_diagonal":
        d_tr, d_te = diagonals
        return cosine_normalise(K_test, d_te, d_tr)
    if how == "center":
        return center_test(K_test, means)
    K_test /= factor
    return K_test


def normalise_blocks(how: str, K_train, K_test, diagonals=None):
    """Normalise a training block and its test block with statistics of the
    training block (``diagonals`` = (training, test) self-similarities, used by
    the cosine normalisation; the column means, by the centring). Returns
    (K_train, K_test, divisor)."""
    d_tr = None if diagonals is None else diagonals[0]
    means = K_train.mean(axis=0, dtype=np.float64) if how == "center" else None
    K_train, factor = normalise_train(how, K_train, d_tr)
    if K_test is not None:
        K_test = normalise_test(how, K_test, factor, diagonals, means)
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

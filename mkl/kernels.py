"""Base kernels, kernel banks described by a compact specification, normalisations
fitted on the training block, the spectral ratio, and the weighted combination
sum_m theta_m K_m that is the hot loop of every wrapper MKL method.

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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from .exceptions import InputError

FAMILIES = ("gaussian", "polynomial", "linear", "homogeneous_polynomial", "identity")
SIMILARITY = "similarity"  # a precomputed similarity matrix; param = its index
NORMALISATIONS = ("none", "unit_trace", "unit_diagonal", "unit_variance")
ALL_FEATURES = -1
# the keys of a bank specification (an experiment file's ``kernels`` section)
BANK_SPEC_KEYS = (
    "families",
    "features",
    "normalise",
    "dtype",
    "feature_limit",
    "varying_features_only",
    "similarity",
    "eigendecompose",
    "representation",
)


@dataclass(frozen=True)
class KernelSpec:
    """One base kernel: a family, its parameter (width or degree; None if none),
    the feature it looks at (``ALL_FEATURES`` = -1 for all of them) and the
    normalisation fitted on the training block."""

    family: str
    param: float | None = None
    feature: int = ALL_FEATURES
    normalise: str = "none"

    def label(self) -> str:
        scope = "all" if self.feature == ALL_FEATURES else f"x{self.feature}"
        par = "" if self.param is None else f"({self.param:g})"
        return f"{self.family}{par}@{scope}"

    def as_dict(self) -> dict:
        return asdict(self)


# --------------------------------------------------------------------------- #
# Bank specification                                                          #
# --------------------------------------------------------------------------- #
def _expand_values(value) -> list[float | None]:
    """A list of numbers, or {from, to} (integers, inclusive), or
    {base, from, to} (powers base**k for k = from..to)."""
    if value is None:
        return [None]
    if isinstance(value, Mapping):
        lo, hi = int(value["from"]), int(value["to"])
        if hi < lo:
            raise InputError(f"kernel parameter range has to >= from, got {dict(value)}")
        if "base" in value:
            return [float(value["base"]) ** k for k in range(lo, hi + 1)]
        return [float(k) for k in range(lo, hi + 1)]
    if isinstance(value, (int, float)):
        return [float(value)]
    return [float(v) for v in value]


_PARAM_KEY = {
    "gaussian": "widths",
    "polynomial": "degrees",
    "homogeneous_polynomial": "degrees",
    "linear": None,
    "identity": None,
}


def expand_bank_spec(
    spec: Mapping,
    n_features: int,
    n_similarities: int = 0,
    single_features: Sequence[int] | None = None,
) -> list[KernelSpec]:
    """Expand a compact bank specification into the ordered list of kernels.

    ``spec`` (as written in an experiment file)::

        families:
          - {family: gaussian, widths: {base: 2, from: -3, to: 6}}
          - {family: polynomial, degrees: [1, 2, 3]}
        features: [all, single]       # default scopes of every family
        normalise: unit_trace         # default normalisation of every family

    A family entry may override ``features`` and ``normalise``. Order: for each
    scope (all, then single), each family in the order given, each feature,
    each parameter value -- the order of the GMKL paper's Figure 1. The count
    is sum over families of (#params x (#all + d x #single)); the example gives
    13 (d + 1) kernels.

    ``single_features`` restricts the single-feature kernels to those feature
    indices (see :func:`most_frequent_features`; default all ``n_features``).

    A similarity bank (``similarity: {source: dataset}`` or ``{generator: ...}``)
    is one ``KernelSpec("similarity", i)`` per similarity matrix, i < ``n_similarities``.
    """
    if not isinstance(spec, Mapping):
        raise InputError(f"a bank specification is a mapping, got {type(spec).__name__}")
    unknown = set(spec) - set(BANK_SPEC_KEYS)
    if unknown:
        raise InputError(
            f"unknown key(s) {sorted(unknown)} in the bank specification; known: {BANK_SPEC_KEYS}"
        )
    if "similarity" in spec:
        if n_similarities < 1:
            raise InputError("a similarity bank needs at least one similarity matrix")
        norm = spec.get("normalise", "none")
        if norm not in NORMALISATIONS:
            raise InputError(f"unknown normalisation {norm!r}; known: {NORMALISATIONS}")
        return [KernelSpec(SIMILARITY, float(i), ALL_FEATURES, norm) for i in range(n_similarities)]
    if n_features < 1:
        raise InputError(f"bank needs at least one feature, got n_features={n_features}")
    default_scopes = list(spec.get("features", ["all"]))
    default_norm = spec.get("normalise", "none")
    families = spec.get("families")
    if not families:
        raise InputError("bank specification has no 'families'")
    out: list[KernelSpec] = []
    for scope in ("all", "single"):
        for fam in families:
            family = fam.get("family") if isinstance(fam, Mapping) else None
            if family not in FAMILIES:
                raise InputError(f"unknown kernel family {family!r}; known: {FAMILIES}")
            key = _PARAM_KEY[family]
            allowed = {"family", "features", "normalise"} | ({key} if key else set())
            if set(fam) - allowed:
                raise InputError(
                    f"unknown key(s) {sorted(set(fam) - allowed)} in the {family} entry; "
                    f"it takes {sorted(allowed)}"
                )
            if key and fam.get(key) is None:
                raise InputError(f"a {family} kernel needs its {key}")
            norm = fam.get("normalise", default_norm)
            if norm not in NORMALISATIONS:
                raise InputError(f"unknown normalisation {norm!r}; known: {NORMALISATIONS}")
            scopes = fam.get("features", default_scopes)
            bad = set(scopes) - {"all", "single"}
            if bad:
                raise InputError(f"kernel 'features' must be 'all' or 'single', got {sorted(bad)}")
            if scope not in scopes:
                continue
            try:
                params = _expand_values(fam.get(key)) if key else [None]
            except InputError:
                raise
            except (TypeError, ValueError, KeyError):
                raise InputError(
                    f"bad {key} {fam.get(key)!r} for a {family} kernel: give a list of "
                    "numbers, {from, to} (integers) or {base, from, to} (powers)"
                ) from None
            if key and family == "gaussian" and any(p <= 0 for p in params):
                raise InputError(f"gaussian widths must be positive, got {params}")
            singles = range(n_features) if single_features is None else single_features
            features = [ALL_FEATURES] if scope == "all" else singles
            for j in features:
                for p in params:
                    out.append(KernelSpec(family, p, int(j), norm))
    return out


def most_frequent_features(X_train: np.ndarray, k: int) -> list[int]:
    """The k features non-zero in the most training rows (ties: lower index
    first), in index order: e.g. the k terms found in most training documents,
    whose per-term kernels an experiment keeps (kernels: ``feature_limit``)."""
    X_train = np.asarray(X_train)
    if k < 1:
        raise InputError(f"feature_limit must be >= 1, got {k}")
    counts = np.count_nonzero(X_train, axis=0)
    order = np.lexsort((np.arange(X_train.shape[1]), -counts))
    return sorted(int(j) for j in order[:k])


def varying_features(X_train: np.ndarray) -> list[int]:
    """The features that take more than one value over the training rows (e.g.
    the terms of the training vocabulary not in every training document alike):
    a constant feature's kernel is constant, zero once the features are centred,
    and has no unit trace (kernels: ``varying_features_only``)."""
    X_train = np.asarray(X_train)
    return [int(j) for j in np.flatnonzero(np.ptp(X_train, axis=0) > 0)]


def single_features(spec: Mapping, X_train: np.ndarray) -> list[int] | None:
    """The features a bank spec gives single-feature kernels, chosen on the
    training rows without labels: the ``feature_limit`` most frequent
    (:func:`most_frequent_features`), those that vary
    (``varying_features_only``, :func:`varying_features`), or None for all."""
    if "feature_limit" in spec:
        return most_frequent_features(X_train, spec["feature_limit"])
    if spec.get("varying_features_only"):
        return varying_features(X_train)
    return None


def count_kernels(spec: Mapping, n_features: int) -> int:
    """Number of kernels a bank specification yields for ``n_features`` features."""
    return len(expand_bank_spec(spec, n_features))


# --------------------------------------------------------------------------- #
# Kernel functions                                                            #
# --------------------------------------------------------------------------- #
def _sq_dists(X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    d = (X * X).sum(1)[:, None] + (Z * Z).sum(1)[None, :] - 2.0 * (X @ Z.T)
    np.maximum(d, 0.0, out=d)
    return d


def kernel_function(
    spec: KernelSpec, X: np.ndarray, Z: np.ndarray, same: bool = False
) -> np.ndarray:
    """Unnormalised kernel matrix k(x_i, z_j) for one spec.

    ``same`` tells the identity kernel that X and Z are the same points.
    """
    X = np.asarray(X, dtype=np.float64)
    Z = np.asarray(Z, dtype=np.float64)
    if spec.feature != ALL_FEATURES:
        X = X[:, [spec.feature]]
        Z = Z[:, [spec.feature]]
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
    X = np.asarray(X, dtype=np.float64)
    if spec.feature != ALL_FEATURES:
        X = X[:, [spec.feature]]
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


# --------------------------------------------------------------------------- #
# Normalisations (fitted on the training block)                               #
# --------------------------------------------------------------------------- #
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


def compute_bank(
    specs: Sequence[KernelSpec],
    X_train: np.ndarray,
    X_test: np.ndarray | None = None,
    dtype=np.float64,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Training block (M, n, n), test block (M, n_test, n) and the scalar
    normalisation factors (M,), each normalisation fitted on the training rows."""
    X_train = _check_features(X_train, "X_train")
    n = X_train.shape[0]
    M = len(specs)
    if X_test is not None:
        X_test = _check_features(X_test, "X_test")
        _check_same_features(X_train, X_test)
    train = np.empty((M, n, n), dtype=dtype)
    factors = np.ones(M)
    for m, spec in enumerate(specs):
        Ktr = kernel_function(spec, X_train, X_train, same=True)
        d_tr = self_similarity(spec, X_train) if spec.normalise == "unit_diagonal" else None
        train[m], factors[m] = _normalise_train(spec.normalise, Ktr, d_tr)
    test = None if X_test is None else compute_test_block(specs, X_train, X_test, factors, dtype)
    return train, test, factors


def compute_test_block(
    specs: Sequence[KernelSpec],
    X_train: np.ndarray,
    X_test: np.ndarray,
    factors: np.ndarray,
    dtype=np.float64,
) -> np.ndarray:
    """The test block (M, n_test, n_train) k_m(x_test, x_train), normalised with
    the training block's statistics: its divisors ``factors`` (from
    :func:`compute_bank`) or, for ``unit_diagonal``, the self-similarities.
    Predicting on new points needs this block only, not the training block."""
    X_train = _check_features(X_train, "X_train")
    X_test = _check_features(X_test, "X_test")
    _check_same_features(X_train, X_test)
    factors = np.asarray(factors, dtype=np.float64)
    if factors.shape != (len(specs),):
        raise InputError(f"factors must have shape ({len(specs)},), got {factors.shape}")
    test = np.empty((len(specs), X_test.shape[0], X_train.shape[0]), dtype=dtype)
    for m, spec in enumerate(specs):
        Kte = kernel_function(spec, X_test, X_train)
        diagonals = None
        if spec.normalise == "unit_diagonal":
            diagonals = (self_similarity(spec, X_train), self_similarity(spec, X_test))
        test[m] = _normalise_test(spec.normalise, Kte, factors[m], diagonals)
    return test


def _normalise_train(how: str, K_train, d_train=None):
    """Normalise a training block (in place where it divides): the cosine
    normalisation by its self-similarities ``d_train``, or a scalar divisor
    fitted on it. Returns (K_train, divisor)."""
    if how == "unit_diagonal":
        return cosine_normalise(K_train, d_train, d_train), 1.0
    factor = normalisation_factor(K_train, how)
    K_train /= factor
    return K_train, factor


def _normalise_test(how: str, K_test, factor: float, diagonals=None):
    """Normalise a test block as its training block was: by ``diagonals`` =
    (training, test) self-similarities for the cosine, else by ``factor``."""
    if how == "unit_diagonal":
        d_tr, d_te = diagonals
        return cosine_normalise(K_test, d_te, d_tr)
    K_test /= factor
    return K_test


def _normalise_blocks(how: str, K_train, K_test, diagonals=None):
    """Normalise a training block and its test block with statistics of the
    training block (``diagonals`` = (training, test) self-similarities, used by
    the cosine normalisation). Returns (K_train, K_test, divisor)."""
    d_tr = None if diagonals is None else diagonals[0]
    K_train, factor = _normalise_train(how, K_train, d_tr)
    if K_test is not None:
        K_test = _normalise_test(how, K_test, factor, diagonals)
    return K_train, K_test, factor


def similarity_bank(
    specs: Sequence[KernelSpec],
    S: np.ndarray,
    train_index: np.ndarray,
    test_index: np.ndarray | None = None,
    dtype=np.float64,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Training and test blocks of precomputed similarity matrices ``S`` (m, N, N)
    over all examples, for ``KernelSpec("similarity", i)`` specs: S_i[train, train]
    and S_i[test, train], normalised like feature kernels (fitted on the
    training block; ``unit_diagonal`` divides by the self-similarities)."""
    S = np.asarray(S)
    if S.ndim != 3 or S.shape[1] != S.shape[2]:
        raise InputError(f"similarities must have shape (m, N, N), got {S.shape}")
    tr = np.asarray(train_index)
    te = None if test_index is None else np.asarray(test_index)
    M, n = len(specs), len(tr)
    train = np.empty((M, n, n), dtype=dtype)
    test = None if te is None else np.empty((M, len(te), n), dtype=dtype)
    factors = np.ones(M)
    for m, spec in enumerate(specs):
        if spec.family != SIMILARITY or not 0 <= int(spec.param) < S.shape[0]:
            raise InputError(f"{spec.label()} is not one of the {S.shape[0]} similarity matrices")
        Si = S[int(spec.param)]
        Ktr = Si[np.ix_(tr, tr)].astype(np.float64)
        Kte = None if te is None else Si[np.ix_(te, tr)].astype(np.float64)
        d = np.diag(Si)
        diagonals = (d[tr], None if te is None else d[te])
        train[m], Kte, factors[m] = _normalise_blocks(spec.normalise, Ktr, Kte, diagonals)
        if test is not None:
            test[m] = Kte
    return train, test, factors


def _check_features(X, name: str) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InputError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}")
    if not np.isfinite(X).all():
        raise InputError(f"{name} contains NaN or inf")
    return X


def _check_same_features(X_train, X_test):
    if X_test.shape[1] != X_train.shape[1]:
        raise InputError(
            f"X_test has {X_test.shape[1]} features but X_train has {X_train.shape[1]}"
        )


# --------------------------------------------------------------------------- #
# Diagnostics and the weighted combination                                    #
# --------------------------------------------------------------------------- #
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
    q = quadratic_forms(K, v)
    M, n, _ = K.shape
    v = np.asarray(v, dtype=np.float64)
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
        "for them (eigen transforms, IndSVM, ESKL, EMKL, REKL: mkl.algorithms.indefinite)"
    )


# factor constructors (banks without n x n matrices) live in their own module
# (mkl.kernel_factors) and are reachable here, beside the dense kernels they
# approximate or represent; loaded on first use (scipy.sparse, which the
# workflow's kernel jobs do without)
_FACTOR_CONSTRUCTORS = (
    "compute_factor_bank",
    "exact_factor_bank",
    "linear_group_bank",
    "normalise_factors",
    "nystroem_bank",
    "random_fourier_bank",
    "rank_one_bank",
)


def __getattr__(name: str):
    if name in _FACTOR_CONSTRUCTORS:
        from . import kernel_factors

        return getattr(kernel_factors, name)
    raise AttributeError(f"module 'mkl.kernels' has no attribute {name!r}")

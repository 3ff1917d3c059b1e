"""The bank specification language: one :class:`KernelSpec` per base kernel,
and :func:`expand_bank_spec`, which expands an experiment file's compact
``kernels`` section into the ordered list of specs (the GMKL paper's order).

A kernel is one of the built-in families (:data:`FAMILIES`), a kernel of
scikit-learn's ``sklearn.metrics.pairwise.PAIRWISE_KERNEL_FUNCTIONS`` by its
name (:data:`PAIRWISE_KERNELS`: laplacian, chi2, sigmoid, cosine, ... with a
grid of its keyword parameters), or, on the front ends on X, a callable
``k(X, Y) -> (n_X, n_Y) array`` (:data:`CALLABLE`), which sees the rows as
given (strings, booleans: whatever it reads).

A bank is a list of :class:`KernelSpec`; its training block has shape
(M, n_train, n_train) and its test block (M, n_test, n_train). The kernel
functions and normalisations are in :mod:`mkl.kernels.functions`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..exceptions import InputError

FAMILIES = ("gaussian", "polynomial", "linear", "homogeneous_polynomial", "identity")


SIMILARITY = "similarity"  # a precomputed similarity matrix; param = its index


# the kernels of scikit-learn's sklearn.metrics.pairwise.PAIRWISE_KERNEL_FUNCTIONS
# by name, each with the keyword parameters it takes, in its signature's order
# (kept equal to scikit-learn's functions by tests/test_kernels.py; written out
# so that a spec is checked without importing scikit-learn, as the workflow
# plans a run). Its ``linear`` is the built-in family of that name, and its
# ``polynomial`` (gamma x'z + coef0)^degree is here under its alias ``poly``:
# the built-in ``polynomial`` is SimpleMKL's (x'z + 1)^degree, the same
# function at gamma = coef0 = 1
PAIRWISE_KERNELS = {
    "additive_chi2": (),
    "chi2": ("gamma",),
    "cosine": (),
    "laplacian": ("gamma",),
    "poly": ("degree", "gamma", "coef0"),
    "rbf": ("gamma",),
    "sigmoid": ("gamma", "coef0"),
}


CALLABLE = "callable"  # a user's function k(X, Y) -> (n_X, n_Y) array (front ends on X)


NORMALISATIONS = ("none", "unit_trace", "unit_diagonal", "unit_variance", "center")


ALL_FEATURES = -1


# a Gaussian family's ``widths_scale``: "sqrt_features" multiplies the widths
# of its all-features kernels by sqrt(d), d the number of features
WIDTHS_SCALES = ("none", "sqrt_features")


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
    normalisation fitted on the training block.

    A kernel of scikit-learn's pairwise kernels (a family of
    :data:`PAIRWISE_KERNELS`) has its parameters in ``keywords``, (name,
    value) pairs in the order of its signature (``(("gamma", 0.5),)``;
    scikit-learn's defaults for the rest), and ``param`` None. A callable
    kernel is family :data:`CALLABLE`, the callable in ``function`` and its
    label's name in ``name`` (default: the callable's ``__name__``)."""

    family: str
    param: float | None = None
    feature: int = ALL_FEATURES
    normalise: str = "none"
    keywords: tuple[tuple[str, float], ...] = ()
    function: Callable | None = None
    name: str | None = None

    def __post_init__(self):
        """Refuse a spec whose kernel would be undefined or not what it says:
        each problem named here, not later as a NaN or indefinite matrix."""
        known = (*FAMILIES, *PAIRWISE_KERNELS, SIMILARITY, CALLABLE)
        if self.family not in known:
            raise InputError(f"unknown kernel family {self.family!r}; known: {known}")
        if self.normalise not in NORMALISATIONS:
            raise InputError(f"unknown normalisation {self.normalise!r}; known: {NORMALISATIONS}")
        if not _is_integer(self.feature) or self.feature < ALL_FEATURES:
            raise InputError(
                f"{self.family} kernel: feature must be a column index >= 0 "
                f"(or {ALL_FEATURES} for all features), got {self.feature!r}"
            )
        if self.family in PAIRWISE_KERNELS:
            object.__setattr__(self, "keywords", _checked_keywords(self.family, self.keywords))
        elif self.keywords:
            raise InputError(
                f"{self.family} kernel: keyword parameters are for scikit-learn's pairwise "
                f"kernels ({', '.join(PAIRWISE_KERNELS)}), got {self.keywords!r}"
            )
        if self.family == CALLABLE:
            if not callable(self.function):
                raise InputError(
                    f"a callable kernel needs a function k(X, Y), got {self.function!r}"
                )
            if self.name is None:
                object.__setattr__(self, "name", callable_name(self.function))
        elif self.function is not None or self.name is not None:
            raise InputError(
                f"{self.family} kernel: function and name are for a callable kernel's spec"
            )
        param = self.param
        if self.family in PAIRWISE_KERNELS or self.family == CALLABLE:
            if param is not None:
                raise InputError(
                    f"{self.family} kernel: its parameters are keywords, not param={param!r}"
                )
        elif self.family == "gaussian":
            if not _is_real(param) or not np.isfinite(param) or param <= 0:
                raise InputError(f"Gaussian kernel: the width must be a number > 0, got {param!r}")
        elif self.family in ("polynomial", "homogeneous_polynomial"):
            # a fractional or negative power of x'z (+ 1) is not a kernel
            if not _is_real(param) or not float(param).is_integer() or param < 1:
                raise InputError(
                    f"{self.family} kernel: the degree must be an integer >= 1, got {param!r}"
                )
        elif self.family == SIMILARITY:
            if not _is_integer(param) or param < 0:
                raise InputError(f"similarity kernel: the index must be >= 0, got {param!r}")

    def label(self, feature_names: Sequence[str] | None = None) -> str:
        """``family(param)@scope``: scope ``all``, or the feature's name in
        ``feature_names`` (a DataFrame's columns), else ``x<index>``; a
        pairwise kernel's parameters by name (``laplacian(gamma=0.5)@all``), a
        callable by its name (``spectrum@all``)."""
        if self.feature == ALL_FEATURES:
            scope = "all"
        elif feature_names is not None:
            scope = str(feature_names[self.feature])
        else:
            scope = f"x{self.feature}"
        if self.family == CALLABLE:
            return f"{self.name}@{scope}"
        if self.keywords:
            par = "(" + ",".join(f"{key}={value:g}" for key, value in self.keywords) + ")"
        else:
            par = "" if self.param is None else f"({self.param:g})"
        return f"{self.family}{par}@{scope}"


def callable_name(function) -> str:
    """The name a callable kernel is labelled by: its ``__name__`` (a
    ``functools.partial``'s function's), else its type's."""
    inner = getattr(function, "func", function)  # functools.partial
    return str(getattr(inner, "__name__", type(inner).__name__))


def _checked_keywords(family: str, keywords) -> tuple[tuple[str, float], ...]:
    """A pairwise kernel's keyword parameters as (name, float) pairs in its
    signature's order, each a parameter it takes and a finite number:
    ``gamma`` > 0 (at 0 every kernel of the family is constant), ``degree``
    an integer >= 1 (a fractional power of gamma x'z + coef0 is not a
    kernel)."""
    takes = PAIRWISE_KERNELS[family]
    try:
        given = dict(keywords.items() if isinstance(keywords, Mapping) else keywords)
    except (TypeError, ValueError):
        raise InputError(
            f"{family} kernel: keywords are (name, value) pairs, got {keywords!r}"
        ) from None
    unknown = sorted(set(given) - set(takes))
    if unknown:
        raise InputError(
            f"{family} kernel: no parameter(s) {unknown}; it takes "
            f"{list(takes) if takes else 'none'}"
        )
    for key, value in given.items():
        if not _is_real(value) or not np.isfinite(value):
            raise InputError(f"{family} kernel: {key} must be a finite number, got {value!r}")
        if key == "gamma" and value <= 0:
            raise InputError(f"{family} kernel: gamma must be > 0, got {value!r}")
        if key == "degree" and (not float(value).is_integer() or value < 1):
            raise InputError(f"{family} kernel: the degree must be an integer >= 1, got {value!r}")
    return tuple((key, float(given[key])) for key in takes if key in given)


BANK_DTYPES = ("float32", "float64")


def bank_dtype(spec: Mapping) -> np.dtype:
    """The ``dtype`` of a bank specification (default float64): float32 or
    float64 only. An integer bank would truncate a Gaussian kernel to {0, 1}
    and float16 keeps three significant digits, so both are refused."""
    value = spec.get("dtype", "float64")
    try:
        dtype = np.dtype(value)
    except TypeError:
        dtype = None
    if dtype is None or dtype.name not in BANK_DTYPES:
        raise InputError(
            f"a bank's dtype must be one of {BANK_DTYPES}, got {value!r}"
            + (
                " (an integer bank truncates the kernel values)"
                if dtype is not None and dtype.kind in "iub"
                else ""
            )
        )
    return dtype


def check_feature(spec: KernelSpec, n_features: int) -> None:
    """A single-feature spec must name one of the data's ``n_features`` columns."""
    if spec.feature != ALL_FEATURES and spec.feature >= n_features:
        raise InputError(
            f"kernel {spec.label()} looks at feature {spec.feature}, but X has "
            f"{n_features} feature(s) (columns 0 to {n_features - 1})"
        )


def _is_real(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def _is_integer(value) -> bool:
    return _is_real(value) and float(value).is_integer()


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
    # a string is a sequence of characters: "12" would read as [1, 2] (the
    # caller names the key and family of a TypeError)
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(value)
    if not all(_is_real(v) for v in value):
        raise TypeError(value)
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

    A family entry may override ``features`` and ``normalise``; a Gaussian
    entry's ``widths_scale: sqrt_features`` multiplies the widths of its
    all-features kernels by sqrt(d) (widths given per feature: on d
    standardised features the squared distances between rows are about 2d, so
    a width of 0.125 on all 30 features is numerically the identity). Order: for each
    scope (all, then single), each family in the order given, each feature,
    each parameter value -- the order of the GMKL paper's Figure 1. The count
    is sum over families of (#params x (#all + d x #single)); the example gives
    13 (d + 1) kernels.

    scikit-learn's pairwise kernels (:data:`PAIRWISE_KERNELS`) are families
    by name with a grid of their keyword parameters, each a number, a list or
    a range as above: ``{family: laplacian, gamma: [0.1, 1]}`` gives
    ``laplacian(gamma=0.1)`` and ``laplacian(gamma=1)``, ``{family: sigmoid,
    gamma: [0.01, 0.1], coef0: [0, 1]}`` four kernels (the last parameter
    varying fastest); an unset parameter keeps scikit-learn's default (gamma
    None: 1 / the number of features the kernel looks at). The sigmoid kernel
    is not positive semidefinite for most parameters, nor is additive_chi2
    (-sum_k (x_k - z_k)^2 / (x_k + z_k), zero on the diagonal): methods that
    need PSD kernels refuse them by their input checks. chi2 and
    additive_chi2 take non-negative features only (e.g. histograms, not
    standardised features). On the front ends on X a family may also be a
    callable k(X, Y), given alone or as ``{family: k, name: ..., features,
    normalise}``.

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
            entry = {"family": fam} if callable(fam) else fam
            if not isinstance(entry, Mapping):
                raise InputError(
                    f"a bank's family entry is a mapping {{family: ...}} or a callable "
                    f"k(X, Y), got {fam!r}"
                )
            family = entry.get("family")
            kind = CALLABLE if callable(family) else family
            if kind != CALLABLE and kind not in FAMILIES and kind not in PAIRWISE_KERNELS:
                raise InputError(
                    f"unknown kernel family {family!r}; known: {FAMILIES}, scikit-learn's "
                    f"pairwise kernels {tuple(PAIRWISE_KERNELS)}, or a callable k(X, Y)"
                )
            allowed = {"family", "features", "normalise"} | _ENTRY_KEYS.get(
                kind, set(PAIRWISE_KERNELS.get(kind, ()))
            )
            if set(entry) - allowed:
                label = "callable" if kind == CALLABLE else family
                raise InputError(
                    f"unknown key(s) {sorted(set(entry) - allowed)} in the {label} entry; "
                    f"it takes {sorted(allowed)}"
                )
            norm = entry.get("normalise", default_norm)
            if norm not in NORMALISATIONS:
                raise InputError(f"unknown normalisation {norm!r}; known: {NORMALISATIONS}")
            scopes = entry.get("features", default_scopes)
            bad = set(scopes) - {"all", "single"}
            if bad:
                raise InputError(f"kernel 'features' must be 'all' or 'single', got {sorted(bad)}")
            if scope not in scopes:
                continue
            if kind == CALLABLE:
                variants = [{"family": CALLABLE, "function": family, "name": entry.get("name")}]
            elif kind in PAIRWISE_KERNELS:
                variants = _pairwise_grid(kind, entry)
            else:
                variants = _family_params(kind, entry, scope, n_features)
            singles = range(n_features) if single_features is None else single_features
            features = [ALL_FEATURES] if scope == "all" else singles
            for j in features:
                for variant in variants:
                    out.append(KernelSpec(feature=int(j), normalise=norm, **variant))
    return out


# the keys of a family entry beside family, features and normalise (a
# pairwise kernel's: its parameters' names, PAIRWISE_KERNELS)
_ENTRY_KEYS = {
    "gaussian": {"widths", "widths_scale"},
    "polynomial": {"degrees"},
    "homogeneous_polynomial": {"degrees"},
    "linear": set(),
    "identity": set(),
    CALLABLE: {"name"},
}


def _family_params(family: str, entry: Mapping, scope: str, n_features: int) -> list[dict]:
    """The kernels of a built-in family's entry: one per width or degree
    (with ``widths_scale: sqrt_features``, all-features widths times sqrt(d))."""
    key = _PARAM_KEY[family]
    if key and entry.get(key) is None:
        raise InputError(f"a {family} kernel needs its {key}")
    params = _entry_values(entry, key, family) if key else [None]
    if key and family == "gaussian" and any(p <= 0 for p in params):
        raise InputError(f"gaussian widths must be positive, got {params}")
    scale = entry.get("widths_scale", "none")
    if scale not in WIDTHS_SCALES:
        raise InputError(f"widths_scale must be one of {WIDTHS_SCALES}, got {scale!r}")
    if scale == "sqrt_features" and scope == "all":
        # squared distances between standardised rows grow like the number
        # of features: a width given per feature means on d features
        # what it means on one
        params = [p * float(np.sqrt(n_features)) for p in params]
    return [{"family": family, "param": p} for p in params]


def _pairwise_grid(family: str, entry: Mapping) -> list[dict]:
    """The kernels of a pairwise kernel's entry: one per point of the grid of
    its parameters' values (each a number, a list, or a range as
    :func:`_expand_values` reads it), the last parameter varying fastest;
    an unset parameter keeps scikit-learn's default."""
    keys = [key for key in PAIRWISE_KERNELS[family] if key in entry]
    grids = [_entry_values(entry, key, family) for key in keys]
    return [
        {"family": family, "keywords": tuple(zip(keys, point, strict=True))}
        for point in itertools.product(*grids)
    ]


def _entry_values(entry: Mapping, key: str, family: str) -> list[float]:
    """The values of an entry's ``key`` (:func:`_expand_values`), a bad one named."""
    try:
        return _expand_values(entry.get(key))
    except InputError:
        raise
    except (TypeError, ValueError, KeyError):
        raise InputError(
            f"bad {key} {entry.get(key)!r} for a {family} kernel: give a number, a list of "
            "numbers, {from, to} (integers) or {base, from, to} (powers)"
        ) from None


def most_frequent_features(X_train: np.ndarray, k: int) -> list[int]:
    """The k features non-zero in the most training rows (ties: lower index
    first), in index order: e.g. the k terms found in most training documents,
    whose per-term kernels an experiment keeps (kernels: ``feature_limit``)."""
    if k < 1:
        raise InputError(f"feature_limit must be >= 1, got {k}")
    if hasattr(X_train, "tocsr"):  # scipy.sparse: the nonzero entries per column
        counts = np.asarray((X_train != 0).sum(axis=0)).ravel()
    else:
        counts = np.count_nonzero(np.asarray(X_train), axis=0)
    order = np.lexsort((np.arange(X_train.shape[1]), -counts))
    return sorted(int(j) for j in order[:k])


def varying_features(X_train: np.ndarray) -> list[int]:
    """The features that take more than one value over the training rows (e.g.
    the terms of the training vocabulary not in every training document alike):
    a constant feature's kernel is constant, zero once the features are centred,
    and has no unit trace (kernels: ``varying_features_only``)."""
    return [int(j) for j in np.flatnonzero(column_ranges(X_train) > 0)]


def column_ranges(X) -> np.ndarray:
    """max - min of each column of X (dense or scipy.sparse), as an array."""
    if hasattr(X, "tocsr"):  # scipy.sparse (a matrix or an array)
        return np.asarray(X.max(axis=0).toarray() - X.min(axis=0).toarray()).ravel()
    return np.ptp(np.asarray(X), axis=0)


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


def c_unit(specs: Sequence[KernelSpec], n_train: int) -> float:
    """The unit of the SVM's C on a bank of these kernels fitted on ``n_train``
    rows: ``n_train`` when every kernel is normalised to unit trace, else 1.

    Scaling a kernel scales C inversely: with a = n b, the C-SVM dual on K / n,
    max 1'a - 1/2 a'Y(K/n)Ya over 0 <= a <= C, is n times the dual on K over
    0 <= b <= C / n, with the same decision function sum_i a_i y_i K(x_i, x) / n
    = sum_i b_i y_i K(x_i, x) (the epsilon-SVR's dual likewise). A unit-trace
    kernel (tr K_m = 1: entries about 1/n) is a unit-diagonal one (entries
    about 1, as an RBF kernel's) divided by n, so C = c n on the first is
    C = c on the second: defaults of C are stated per unit-diagonal kernel,
    and this is what they are multiplied by (the front ends' ``C="auto"``, an
    experiment entry's default C grid, docs/design.md "C's unit"). Banks of
    other normalisations (unit diagonal, unit variance, none), or of several,
    keep the unit 1."""
    if specs and all(s.normalise == "unit_trace" for s in specs):
        return float(n_train)
    return 1.0

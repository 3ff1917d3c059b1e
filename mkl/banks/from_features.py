"""Kernel banks computed from features: a bank specification expanded on the
columns of X (in one part, or one per view of the columns), held dense or as
factors K_m = Z_m Z_m', and its test block.

The bank specification is the language of an experiment file's ``kernels``
section (docs/design.md, "Experiment files")::

    {"families": [{"family": "gaussian", "widths": {"base": 2, "from": -3, "to": 6}},
                  {"family": "polynomial", "degrees": [1, 2, 3]}],
     "features": ["all"],          # and/or "single": one kernel per feature
     "normalise": "unit_diagonal"}

Two callers read it. The workflow's kernels stage (:mod:`mkl.workflow.banks`)
computes a split's training and test blocks at once in the spec's own
``representation`` (:func:`expand_on_features`, :func:`compute_feature_bank`).
The front ends on raw features (:mod:`mkl.estimators.feature_bank`) compute the
training bank of the spec, or of each of their ``views``, in a representation
resolved from their own parameter (:func:`feature_bank_spec`,
:func:`view_parts`, :func:`expand_views`, :func:`resolve_representation`,
:func:`training_bank`), and the test block at predict from the stored training
rows, in chunks of test rows (:func:`dense_test_blocks`); factors keep their
fitted maps instead (:class:`mkl.banks.factor_builders.FactorMaps`).

Every normalisation is fitted on the training rows
(:func:`mkl.kernels.dense.compute_bank`); the test block is normalised with
the training block's statistics (:func:`mkl.kernels.dense.compute_test_block`).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..exceptions import InputError
from ..kernels.dense import compute_bank, compute_test_block
from ..kernels.representation import bank_representation
from ..kernels.specs import KernelSpec, bank_dtype, expand_bank_spec, single_features

if TYPE_CHECKING:  # types only
    from .factor_bank import FactorBank
    from .factor_builders import FactorMaps

# 8 Gaussian widths 2^-1 .. 2^6 per feature, i.e. times sqrt(d) on all d
# features, and polynomial degrees 1-3, on all features, each kernel with unit
# diagonal so that C means what it means for an SVC on one normalised kernel:
# 11 kernels. SimpleMKL's range 2^-3 .. 2^6 (Rakotomamonjy et al. 2008, for
# unit-variance features) is a range for one feature: on d standardised
# features squared distances concentrate near 2d, so a width w sqrt(d) gives
# typical entries exp(-1/w^2), 1e-28 for w = 2^-3 and 1e-7 for 2^-2: kernels
# that are numerically the identity (unscaled, an L1 method put its largest
# weight on one in the README's example); 2^-1 gives 0.02
DEFAULT_KERNELS = {
    "families": [
        {
            "family": "gaussian",
            "widths": {"base": 2, "from": -1, "to": 6},
            "widths_scale": "sqrt_features",
        },
        {"family": "polynomial", "degrees": [1, 2, 3]},
    ],
    "features": ["all"],
    "normalise": "unit_diagonal",
}

# representation="auto": factors where the dense training bank (M n^2 numbers)
# would take more than this, if the algorithm takes factor banks
DENSE_BANK_LIMIT_BYTES = 4 * 2**30
# the Nystroem rank / random Fourier dimension of representation="nystroem" /
# "rff" / "auto" (a mapping such as {"kind": "nystroem", "rank": 200} sets it)
DEFAULT_FACTOR_RANK = 500
# the dense test block is computed in chunks of rows of at most this many bytes
TEST_BLOCK_CHUNK_BYTES = 256 * 2**20


# ---------------------------------------------------------------- the spec
def as_bank_spec(kernels):
    """``kernels`` given as a callable kernel k(X, Y) or a list of families
    (built-in, scikit-learn's by name, callables), as the bank specification
    ``{"families": [...]}`` of them; anything else as given."""
    if callable(kernels):
        return {"families": [kernels]}
    if isinstance(kernels, (list, tuple)):
        return {"families": list(kernels)}
    return kernels


def checked_feature_spec(spec) -> dict:
    """A bank specification to compute from features (a copy): a mapping (or
    a callable or list of families, :func:`as_bank_spec`), and neither a
    similarity bank (precomputed matrices) nor ``eigendecompose`` (which
    applies to similarity banks only)."""
    spec = as_bank_spec(spec)
    if not isinstance(spec, Mapping):
        raise InputError(
            f"kernels must be a bank specification (a mapping with 'families'), "
            f"got {type(spec).__name__}"
        )
    if "similarity" in spec:
        raise InputError(
            "a similarity bank is made of precomputed matrices, not computed from "
            "features: fit a bank-level estimator (mkl.make_estimator) on it instead"
        )
    if "eigendecompose" in spec:
        raise InputError("eigendecompose applies to similarity banks only")
    return dict(spec)


def feature_bank_spec(kernels) -> dict:
    """The checked bank specification ``kernels`` (:func:`checked_feature_spec`);
    None: :data:`DEFAULT_KERNELS`."""
    return checked_feature_spec(DEFAULT_KERNELS if kernels is None else kernels)


def all_kernels_linear(kernels, views) -> bool:
    """Whether every kernel of the bank of ``kernels`` (None:
    :data:`DEFAULT_KERNELS`) and of ``views`` (their own specs) is linear: then
    exact factors (X itself, its columns or groups) keep a sparse X sparse. A
    malformed spec is not linear (the bank's computation names the problem)."""
    try:
        return all(_family(fam) == "linear" for fam in _bank_families(kernels, views))
    except (TypeError, KeyError, AttributeError):
        return False


def callable_kernels(kernels, views) -> list:
    """The callable kernels k(X, Y) of the bank of ``kernels`` and ``views``:
    with one, X is given to the kernels as it is (strings, booleans), and the
    bank is dense. A malformed spec has none (the bank's computation names
    the problem)."""
    try:
        return [_family(fam) for fam in _bank_families(kernels, views) if callable(_family(fam))]
    except (TypeError, KeyError, AttributeError):
        return []


def _bank_families(kernels, views) -> list:
    """The family entries of every part of the bank: the ``views``' own specs
    and, where a part uses it, ``kernels`` (None: :data:`DEFAULT_KERNELS`)."""
    views = list(views or ())
    own = [v[2] for v in views if isinstance(v, (tuple, list)) and len(v) == 3 and v[2] is not None]
    specs = own
    if not views or len(own) < len(views):  # some part uses ``kernels``
        specs = [*own, kernels if kernels is not None else DEFAULT_KERNELS]
    return [fam for spec in specs for fam in as_bank_spec(spec)["families"]]


def _family(entry):
    """The family of a family entry: the callable given alone, else its ``family``."""
    return entry if callable(entry) else entry.get("family")


def expand_on_features(spec: Mapping, X_train) -> tuple[list[KernelSpec], list[int] | None]:
    """The kernels of ``spec`` on the columns of X_train
    (:func:`~mkl.kernels.specs.expand_bank_spec`), and the features given
    single-feature kernels (:func:`~mkl.kernels.specs.single_features`: chosen
    on the rows of X_train, without labels; None for all)."""
    singles = single_features(spec, X_train)
    return expand_bank_spec(spec, X_train.shape[1], single_features=singles), singles


# ---------------------------------------------------------------- views
def view_parts(views, spec: Mapping, n_features: int, feature_names=None) -> list[tuple]:
    """(view name or None, column indices, bank spec) for each part of the
    bank: the ``views`` (``(name, columns)`` or ``(name, columns, kernels)``
    tuples, columns named by ``feature_names`` when X has them), or, with
    ``views`` None, one part of every column and ``spec``. A view's own spec
    may not set the bank's ``representation`` or ``dtype``."""
    if views is None:
        return [(None, np.arange(n_features), spec)]
    if isinstance(views, (str, Mapping)) or not views:
        raise InputError(
            "views must be a non-empty list of (name, columns) or (name, columns, "
            f"kernels) tuples, got {views!r}"
        )
    parts, seen = [], set()
    for view in views:
        if not isinstance(view, (tuple, list)) or len(view) not in (2, 3):
            raise InputError(f"a view is (name, columns) or (name, columns, kernels), got {view!r}")
        name, columns = str(view[0]), view[1]
        if name in seen:
            raise InputError(f"two views are named {name!r}")
        seen.add(name)
        own = view[2] if len(view) == 3 and view[2] is not None else spec
        if own is not spec:
            own = checked_feature_spec(own)
            for key in ("representation", "dtype"):
                if key in own and own[key] != spec.get(key):
                    raise InputError(
                        f"view {name!r} sets {key}: set it once, in kernels, for the bank"
                    )
        parts.append((name, view_columns(name, columns, feature_names, n_features), own))
    return parts


def view_columns(name, columns, feature_names, n_features) -> np.ndarray:
    """A view's columns as indices: a slice, indices, or names of X's columns."""
    if isinstance(columns, slice):
        ends = (columns.start, columns.stop, columns.step)
        if not all(
            e is None or (isinstance(e, numbers.Integral) and not isinstance(e, bool)) for e in ends
        ):
            raise InputError(f"view {name!r}: a slice of columns takes integers, got {columns!r}")
        cols = np.arange(n_features)[columns]
    elif _is_boolean_mask(columns):  # a mask over X's columns, as NumPy's X[:, mask]
        mask = np.asarray(columns, dtype=bool)
        if mask.shape != (n_features,):
            raise InputError(
                f"view {name!r}: a boolean mask of columns needs one entry per column of X "
                f"({n_features}), got {mask.size}"
            )
        cols = np.flatnonzero(mask)
    else:
        listed = [columns] if isinstance(columns, (str, numbers.Integral)) else list(columns)
        index = {} if feature_names is None else {c: j for j, c in enumerate(feature_names)}
        cols = []
        for c in listed:
            if isinstance(c, str):
                if c not in index:
                    raise InputError(
                        f"view {name!r}: no column named {c!r} (columns are named when "
                        "X is a DataFrame)"
                    )
                cols.append(index[c])
            elif (
                isinstance(c, numbers.Integral) and not isinstance(c, bool) and 0 <= c < n_features
            ):
                cols.append(int(c))
            else:
                raise InputError(
                    f"view {name!r}: column {c!r} is not an index in [0, {n_features})"
                )
        cols = np.array(cols, dtype=np.int64)
    if cols.size == 0:
        raise InputError(f"view {name!r} has no columns")
    return cols


def _is_boolean_mask(columns) -> bool:
    """Whether a view's columns are a sequence of booleans (a list, an array, a
    pandas Series), rather than indices or names."""
    if isinstance(columns, (str, bytes, numbers.Number)) or not hasattr(columns, "__len__"):
        return False
    values = list(columns)
    return bool(values) and all(isinstance(v, (bool, np.bool_)) for v in values)


def expand_views(
    parts: Sequence[tuple], X, feature_names=None
) -> tuple[list[tuple], list[KernelSpec], np.ndarray]:
    """Each part of :func:`view_parts` expanded on its columns of the training
    rows X (:func:`expand_on_features`): the parts as (view, columns, kernel
    specs), all the kernel specs in order, and the kernels' names (dtype
    object), e.g. ``gaussian(0.5)@all``, single-feature kernels named by
    ``feature_names`` (``gaussian(1)@age``), else ``@x<index>``, and a view's
    kernels prefixed by its name (``clinical:gaussian(1)@all``)."""
    column_names = (
        np.array([f"x{j}" for j in range(X.shape[1])], dtype=object)
        if feature_names is None
        else feature_names
    )
    expanded, specs, names = [], [], []
    for view, cols, spec_v in parts:
        specs_v, _ = expand_on_features(spec_v, X[:, cols])
        labels = [s.label(column_names[cols]) for s in specs_v]
        names += labels if view is None else [f"{view}:{label}" for label in labels]
        expanded.append((view, cols, specs_v))
        specs += specs_v
    return expanded, specs, np.array(names, dtype=object)


# ---------------------------------------------------------------- representation
def resolve_representation(
    requested,
    spec: Mapping,
    n_kernels: int,
    n: int,
    factors_allowed: bool,
    draw_seed: Callable[[], int],
    sparse: bool = False,
) -> dict:
    """The representation (:func:`~mkl.kernels.representation.bank_representation`)
    of a bank of ``n_kernels`` kernels on ``n`` training rows, from a front
    end's ``requested`` one: ``"dense"``, ``"nystroem"``, ``"rff"``,
    ``"exact"`` (the factors' rank / dimension :data:`DEFAULT_FACTOR_RANK`), a
    mapping as in an experiment file, or ``"auto"``: exact factors for
    ``sparse`` X, else the spec's own ``representation`` if it has one, else
    Nystroem factors when the dense bank would exceed
    :data:`DENSE_BANK_LIMIT_BYTES` and ``factors_allowed``, else dense. For
    a Nystroem or random Fourier representation ``draw_seed()`` is called
    once, and its value is the seed unless the representation has its own; a
    Nystroem rank is at most n (the landmarks are training rows)."""
    rep = requested
    if isinstance(rep, str) and rep == "auto":
        if sparse:
            rep = "exact"  # sparse X: linear kernels only
        elif "representation" in spec:
            rep = spec["representation"]
        else:
            dtype = bank_dtype(spec)
            dense_bytes = n_kernels * n * n * dtype.itemsize
            factors = dense_bytes > DENSE_BANK_LIMIT_BYTES and factors_allowed
            rep = "nystroem" if factors else "dense"
    elif "representation" in spec and spec["representation"] != rep:
        raise InputError(
            f"the kernels spec says representation {spec['representation']!r} and the "
            f"estimator {rep!r}: give it in one place"
        )
    if isinstance(rep, str):
        size = {"nystroem": "rank", "rff": "dimension"}.get(rep)
        rep = {"kind": rep} if size is None else {"kind": rep, size: DEFAULT_FACTOR_RANK}
    elif not isinstance(rep, Mapping):
        raise InputError(
            "representation must be 'auto', 'dense', 'nystroem', 'rff', 'exact' or a "
            f"mapping, got {rep!r}"
        )
    rep = dict(rep)
    if rep.get("kind") in ("nystroem", "rff"):
        rep.setdefault("seed", draw_seed())
    if rep.get("kind") == "nystroem" and isinstance(rep.get("rank"), int):
        rep["rank"] = min(rep["rank"], n)  # landmarks are training rows
    return bank_representation({"representation": rep})


# ---------------------------------------------------------------- banks
def compute_feature_bank(
    specs: Sequence[KernelSpec],
    X_train,
    X_test,
    representation: Mapping,
    dtype=np.float64,
    y_train=None,
    y_test=None,
) -> tuple[np.ndarray | FactorBank, np.ndarray | None, np.ndarray]:
    """The bank of ``specs`` on training and test rows in ``representation``
    (:func:`~mkl.kernels.representation.bank_representation`), as (train,
    test, divisors): dense, the training block (M, n, n), the test block
    (M, n_test, n) and the normalisation divisors (M,)
    (:func:`~mkl.kernels.dense.compute_bank`); factors, a FactorBank of the
    training and test factors, normalised on the factors themselves
    (:func:`~mkl.banks.factor_builders.compute_factor_bank`, labelled by
    ``y_train`` and ``y_test``), None, and NaN divisors (not recorded)."""
    if representation["kind"] == "dense":
        return compute_bank(specs, X_train, X_test, dtype=dtype)
    from .factor_builders import compute_factor_bank

    train = compute_factor_bank(specs, X_train, X_test, representation, dtype, y_train, y_test)
    return train, None, np.full(len(specs), np.nan)


def training_bank(
    parts: Sequence[tuple], X, representation: Mapping, dtype, names
) -> tuple[np.ndarray | FactorBank, np.ndarray | None, np.ndarray | None, list[FactorMaps] | None]:
    """The training bank of the parts of :func:`expand_views` on the rows of X,
    the parts' kernels side by side, as (bank, divisors, column means, maps):
    dense, the (M, n, n) block, each part's written in place, the
    normalisation divisors (M,) and, when a kernel is centred, the training
    block's column means (M, n) (the rows of centred kernels; None without
    one); factors, one FactorBank named ``names``, None, None and each part's
    fitted maps (:func:`~mkl.banks.factor_builders.compute_factor_maps`, part
    i seeded by the representation's seed + i), which give test rows their
    factors."""
    if representation["kind"] == "dense":
        specs = [s for _, _, specs_v in parts for s in specs_v]
        K = np.empty((len(specs), X.shape[0], X.shape[0]), dtype=dtype)
        centred = any(spec.normalise == "center" for spec in specs)
        means = np.zeros((len(specs), X.shape[0])) if centred else None
        divisors, start = np.ones(len(specs)), 0
        for _, cols, specs_v in parts:  # each view's bank written in place
            stop = start + len(specs_v)
            _, _, divisors[start:stop] = compute_bank(
                specs_v,
                X[:, cols],
                dtype=dtype,
                out=K[start:stop],
                column_means=None if means is None else means[start:stop],
            )
            start = stop
        return K, divisors, means, None
    from .factor_bank import FactorBank
    from .factor_builders import compute_factor_maps

    maps, banks = [], []
    for i, (_, cols, specs_v) in enumerate(parts):
        # each view its own draws (random Fourier W, b; Nystroem landmarks)
        rep_v = (
            {**representation, "seed": representation["seed"] + i}
            if "seed" in representation
            else representation
        )
        maps_v, bank_v = compute_factor_maps(specs_v, X[:, cols], rep_v, dtype)
        maps.append(maps_v)
        banks.append(bank_v)
    if len(banks) == 1:
        bank = banks[0]
        bank.names = [str(name) for name in names]
    else:  # the views' factors side by side (one copy)
        factors_of = [b.factor(m) for b in banks for m in range(b.n_kernels)]
        bank = FactorBank(factors_of, names=list(names))
        del factors_of
    return bank, None, None, maps


def dense_test_blocks(
    specs: Sequence[KernelSpec],
    parts: Sequence[tuple[np.ndarray, int]],
    X_train,
    X_test,
    divisors: np.ndarray,
    dtype,
    column_means: np.ndarray | None = None,
) -> Iterator[np.ndarray]:
    """The dense test blocks (M, rows, n_train) of the rows of X_test against
    the training rows X_train, chunks of rows of at most
    :data:`TEST_BLOCK_CHUNK_BYTES` in turn; ``parts`` are (columns, number of
    kernels) of each part of the bank, whose kernels are ``specs`` in order,
    normalised with the training block's ``divisors`` and, for centred
    kernels, its ``column_means`` (:func:`training_bank`)."""
    dtype = np.dtype(dtype)
    row_bytes = len(specs) * X_train.shape[0] * dtype.itemsize
    chunk = max(1, TEST_BLOCK_CHUNK_BYTES // row_bytes)
    for first in range(0, X_test.shape[0], chunk):
        rows = X_test[first : first + chunk]
        block = np.empty((len(specs), rows.shape[0], X_train.shape[0]), dtype)
        start = 0
        for cols, n_kernels in parts:
            stop = start + n_kernels
            block[start:stop] = compute_test_block(
                specs[start:stop],
                X_train[:, cols],
                rows[:, cols],
                divisors[start:stop],
                dtype,
                None if column_means is None else column_means[start:stop],
            )
            start = stop
        yield block


def factor_test_bank(
    parts: Sequence[tuple[np.ndarray, int]], maps: Sequence[FactorMaps], X_test
) -> FactorBank:
    """The test factors of the rows of X_test, a FactorBank of test factors
    only: each part's fitted maps (:func:`training_bank`) on its columns
    (``parts``: (columns, number of kernels) of each), O(n_test r M), no
    landmark eigendecomposition or training factor again."""
    from .factor_bank import FactorBank

    test = []
    for (cols, _), maps_v in zip(parts, maps, strict=True):
        test += maps_v.transform(X_test[:, cols])
    return FactorBank.of_test_factors(test)

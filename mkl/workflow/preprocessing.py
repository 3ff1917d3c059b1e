"""What happens to a dataset between its parser and the kernels: raw labels
mapped to classes (binary groupings included), LIBSVM's gene-expression
normalisation, and feature scaling fitted on the training rows of a split."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..exceptions import SolverError


def map_labels(
    y_raw: np.ndarray, spec: Mapping | None, features: np.ndarray | None = None
) -> tuple[np.ndarray, list[str]]:
    """Raw labels -> (integer codes, class names), by the registry's ``labels``:
    ``{positive: [...]}`` (binary: listed values vs the rest), ``{map: {raw: class}}``
    (unlisted values dropped -> code -1), ``{balanced_binary: true}`` (see
    :func:`balanced_binary_classes`; with ``ties: not_linearly_separable``,
    ``features`` (n, d) are the examples whose groupings are checked), or
    nothing (classes as found, sorted)."""
    raw = np.array([_label_str(v) for v in y_raw], dtype=object)
    if spec and spec.get("balanced_binary"):
        found = sorted(set(raw), key=_natural_key)
        counts = [int((raw == c).sum()) for c in found]
        ties = spec.get("ties", "lowest_index")
        if ties == "lowest_index":
            passed_over = None
        elif ties == "not_linearly_separable":
            if features is None or len(features) != len(raw):
                raise ValueError("ties: not_linearly_separable needs the features of every example")
            codes = np.array([found.index(v) for v in raw])

            def passed_over(classes):
                return linearly_separable(features, np.isin(codes, classes))

        else:
            raise ValueError(
                f"unknown balanced_binary ties rule {ties!r}; "
                "use lowest_index or not_linearly_separable"
            )
        positive = [found[i] for i in balanced_binary_classes(counts, passed_over)]
        names = ["rest", "+".join(positive)]
        return np.isin(raw, positive).astype(int), names
    if spec and "positive" in spec:
        pos = {_label_str(v) for v in spec["positive"]}
        unknown = pos - set(raw)
        if unknown:
            raise ValueError(f"positive label(s) {sorted(unknown)} do not occur in the data")
        names = list(spec.get("names", ["negative", "positive"]))
        return np.isin(raw, list(pos)).astype(int), names
    if spec and "map" in spec:
        mapping = {_label_str(k): str(v) for k, v in spec["map"].items()}
        names = sorted(set(mapping.values()))
        codes = np.array([names.index(mapping[v]) if v in mapping else -1 for v in raw])
        return codes, names
    names = sorted(set(raw), key=_natural_key)
    return np.array([names.index(v) for v in raw]), names


def balanced_binary_classes(
    counts: Sequence[int], passed_over: Callable[[list[int]], bool] | None = None
) -> list[int]:
    """A multiclass problem mapped to a binary one "keeping the distribution of
    positive and negative examples balanced" (Lauriola et al. 2018): the set of
    classes whose total is closest to half the examples (exhaustive over the
    subsets, the last class always negative so that a set and its complement
    are one grouping). Ties go to the set listed first when subsets are
    enumerated by bitmask, which favours low class indices; with
    ``passed_over`` (a predicate on a set's class indices), the tied sets for
    which it holds are skipped first (a unique closest set is never skipped).
    Returns the positive classes' indices."""
    k = len(counts)
    if k < 2:
        raise ValueError("balanced_binary needs at least two classes")
    if k > 20:
        raise ValueError(f"balanced_binary enumerates class subsets; {k} classes are too many")
    half = sum(counts) / 2
    masks = range(1, 2 ** (k - 1))  # the last class is always negative: no mirror sets
    errors = [abs(sum(c for i, c in enumerate(counts) if mask >> i & 1) - half) for mask in masks]
    closest = min(errors)
    tied = [
        [i for i in range(k) if mask >> i & 1]
        for mask, error in zip(masks, errors, strict=True)
        if error == closest
    ]
    if passed_over is None or len(tied) == 1:  # the text's rule decides alone
        return tied[0]
    for classes in tied:
        if not passed_over(classes):
            return classes
    raise ValueError(
        "balanced_binary: every class set closest to half the examples is passed over "
        "by the ties rule: nothing is left to choose"
    )


def linearly_separable(X: np.ndarray, positive: np.ndarray) -> bool:
    """Whether a hyperplane separates the ``positive`` rows of X from the others
    strictly: some (w, b) with s_i (w'x_i + b) >= 1 for every row, s_i = +1 on
    the positive rows and -1 on the rest (the hard-margin SVM's constraints; a
    linear-programming feasibility problem, HiGHS). An affine rescaling of the
    features does not change the answer."""
    from scipy.optimize import linprog

    X = np.asarray(X, dtype=np.float64)
    s = np.where(np.asarray(positive, dtype=bool), 1.0, -1.0)
    n, d = X.shape
    result = linprog(
        np.zeros(d + 1),
        A_ub=-s[:, None] * np.hstack([X, np.ones((n, 1))]),
        b_ub=-np.ones(n),
        bounds=[(None, None)] * (d + 1),
        method="highs",
    )
    if result.status not in (0, 2):  # 0: a separating (w, b) found; 2: none exists
        raise SolverError(f"linear separability check failed: {result.message}")
    return result.status == 0


def _label_str(v) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _natural_key(s: str):
    try:
        return (0, float(s), s)
    except ValueError:
        return (1, 0.0, s)


def libsvm_gene_normalisation(X: np.ndarray) -> np.ndarray:
    """What LIBSVM applied to its colon-cancer, leu and duke files: each sample
    standardised to mean 0 and variance 1 over its genes, then each gene to
    mean 0 and variance 1 over the samples (of the whole file, as published)."""
    X = np.asarray(X, dtype=np.float64)
    X = (X - X.mean(1, keepdims=True)) / X.std(1, keepdims=True)
    sd = X.std(0, keepdims=True)
    return (X - X.mean(0, keepdims=True)) / np.where(sd > 0, sd, 1.0)


def scale_features(X_train: np.ndarray, X_test: np.ndarray, how: str = "standardise"):
    """Fit the scaling on the training rows, apply it to both parts.
    standardise: zero mean, unit variance; minmax: training range -> [0, 1];
    minmax_symmetric: training range -> [-1, 1] (the range of LIBSVM's
    ``*_scale`` files, svm-scale's default); none. Features constant on the
    training rows are centred, not divided."""
    if how == "none":
        return X_train, X_test
    if how == "standardise":
        shift, scale = X_train.mean(0), X_train.std(0)
    elif how == "minmax":
        shift, scale = X_train.min(0), np.ptp(X_train, axis=0)
    elif how == "minmax_symmetric":  # centre of the training range -> 0, half its width -> 1
        shift, scale = (X_train.max(0) + X_train.min(0)) / 2, np.ptp(X_train, axis=0) / 2
    else:
        raise ValueError(
            f"unknown feature scaling {how!r}; use standardise, minmax, minmax_symmetric or none"
        )
    scale = np.where(scale > 0, scale, 1.0)
    return (X_train - shift) / scale, (X_test - shift) / scale

"""Dense kernel banks: the training block (M, n, n), the test block (M, n_test, n)
and the normalisation divisors fitted on the training rows (and, for centred
kernels, the training block's column means), from features
(:func:`compute_bank`, :func:`compute_test_block`) or from precomputed
similarity matrices over all examples (:func:`similarity_bank`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..exceptions import InputError
from .functions import (
    check_kernel_rows,
    check_same_features,
    cosine_normalise,
    kernel_function,
    normalise_blocks,
    normalise_test,
    normalise_train,
    self_similarity,
)
from .specs import SIMILARITY, KernelSpec


def compute_bank(
    specs: Sequence[KernelSpec],
    X_train: np.ndarray,
    X_test: np.ndarray | None = None,
    dtype=np.float64,
    out: np.ndarray | None = None,
    column_means: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Training block (M, n, n), test block (M, n_test, n) and the scalar
    normalisation factors (M,), each normalisation fitted on the training rows.
    ``out``: an (M, n, n) array to write the training block into (e.g. a
    slice of a larger bank), instead of a new one. ``column_means``: an
    (M, n) array that receives, in the row of each kernel normalised by
    ``center``, its training block's column means before centring (what
    :func:`compute_test_block` centres a later test block with); the other
    rows are left as they are."""
    X_train = check_kernel_rows(specs, X_train, "X_train")
    n = X_train.shape[0]
    M = len(specs)
    if X_test is not None:
        X_test = check_kernel_rows(specs, X_test, "X_test")
        check_same_features(X_train, X_test)
    if out is None:
        out = np.empty((M, n, n), dtype=dtype)
    elif out.shape != (M, n, n):
        raise InputError(f"out must have shape {(M, n, n)}, got {out.shape}")
    centred = [m for m, spec in enumerate(specs) if spec.normalise == "center"]
    if column_means is None and centred and X_test is not None:
        column_means = np.empty((M, n))
    elif column_means is not None and column_means.shape != (M, n):
        raise InputError(f"column_means must have shape {(M, n)}, got {column_means.shape}")
    train = out
    factors = np.ones(M)
    for m, spec in enumerate(specs):
        Ktr = _finite(kernel_function(spec, X_train, X_train, same=True), spec, X_train)
        if spec.normalise == "center" and column_means is not None:
            column_means[m] = Ktr.mean(axis=0)
        d_tr = self_similarity(spec, X_train) if spec.normalise == "unit_diagonal" else None
        train[m], factors[m] = normalise_train(spec.normalise, Ktr, d_tr)
    test = (
        None
        if X_test is None
        else compute_test_block(specs, X_train, X_test, factors, dtype, column_means)
    )
    return train, test, factors


def _finite(K: np.ndarray, spec: KernelSpec, X: np.ndarray) -> np.ndarray:
    """K, refused by name when the kernel overflowed on X (a polynomial kernel of
    large features, say), instead of a "K[m] contains NaN or inf" at fit time."""
    if not np.isfinite(K).all():
        raise InputError(
            f"kernel {spec.label()} overflows on these features (|X| up to "
            f"{float(np.abs(X).max()):.3g}): rescale the features (e.g. standardise them)"
        )
    return K


def compute_test_block(
    specs: Sequence[KernelSpec],
    X_train: np.ndarray,
    X_test: np.ndarray,
    factors: np.ndarray,
    dtype=np.float64,
    column_means: np.ndarray | None = None,
) -> np.ndarray:
    """The test block (M, n_test, n_train) k_m(x_test, x_train), normalised with
    the training block's statistics: its divisors ``factors`` (from
    :func:`compute_bank`), for ``unit_diagonal`` the self-similarities, for
    ``center`` the training block's ``column_means`` (M, n_train) (from
    :func:`compute_bank`). Predicting on new points needs this block only, not
    the training block."""
    X_train = check_kernel_rows(specs, X_train, "X_train")
    X_test = check_kernel_rows(specs, X_test, "X_test")
    check_same_features(X_train, X_test)
    factors = np.asarray(factors, dtype=np.float64)
    if factors.shape != (len(specs),):
        raise InputError(f"factors must have shape ({len(specs)},), got {factors.shape}")
    if any(spec.normalise == "center" for spec in specs) and (
        column_means is None or np.shape(column_means) != (len(specs), X_train.shape[0])
    ):
        raise InputError(
            "a centred kernel's test block needs the training block's column means, "
            f"column_means of shape ({len(specs)}, {X_train.shape[0]}) (from compute_bank)"
        )
    test = np.empty((len(specs), X_test.shape[0], X_train.shape[0]), dtype=dtype)
    for m, spec in enumerate(specs):
        Kte = _finite(kernel_function(spec, X_test, X_train), spec, X_test)
        diagonals = None
        if spec.normalise == "unit_diagonal":
            diagonals = (self_similarity(spec, X_train), self_similarity(spec, X_test))
        means = None if column_means is None else column_means[m]
        test[m] = normalise_test(spec.normalise, Kte, factors[m], diagonals, means)
    return test


def compute_cross_block(
    specs: Sequence[KernelSpec],
    X_train: np.ndarray,
    X: np.ndarray,
    Y: np.ndarray,
    factors: np.ndarray,
    column_means: np.ndarray | None = None,
) -> np.ndarray:
    """The block (M, n_X, n_Y) k_m(x, y) between two sets of new rows,
    normalised as the bank fitted on X_train: by its divisors ``factors``,
    for ``unit_diagonal`` by the rows' own self-similarities, for ``center``
    with the training points' mean in feature space, k^c(x, y) = k(x, y) -
    mean_j k(x, x_j) - mean_j k(y, x_j) + mean_ij k(x_i, x_j) (the training
    block's ``column_means``, from :func:`compute_bank`; the rows' means
    against the training rows computed here). With Y = X_train it is
    :func:`compute_test_block`'s."""
    X = check_kernel_rows(specs, X, "X")
    Y = check_kernel_rows(specs, Y, "Y")
    X_train = check_kernel_rows(specs, X_train, "X_train")
    check_same_features(X_train, X)
    check_same_features(X_train, Y)
    block = np.empty((len(specs), X.shape[0], Y.shape[0]))
    for m, spec in enumerate(specs):
        K = _finite(kernel_function(spec, X, Y), spec, X)
        if spec.normalise == "unit_diagonal":
            K = cosine_normalise(K, self_similarity(spec, X), self_similarity(spec, Y))
        elif spec.normalise == "center":
            if column_means is None:
                raise InputError("a centred kernel needs the training block's column means")
            row_x = kernel_function(spec, X, X_train).mean(axis=1)
            row_y = kernel_function(spec, Y, X_train).mean(axis=1)
            K += float(column_means[m].mean()) - row_x[:, None] - row_y[None, :]
        else:
            K /= factors[m]
        block[m] = K
    return block


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
        train[m], Kte, factors[m] = normalise_blocks(spec.normalise, Ktr, Kte, diagonals)
        if test is not None:
            test[m] = Kte
    return train, test, factors

"""The weights figure of a fitted estimator: one bar per kernel (matplotlib,
imported when called: the library alone does not need it)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..exceptions import InputError


def plot_weights(estimator, names: Sequence[str] | None = None, top: int | None = None, ax=None):
    """Horizontal bars of a fitted estimator's kernel weights ``weights_``,
    kernel names on the vertical axis.

    ``estimator``: a front end (:class:`mkl.MultipleKernelClassifier`, whose
    ``kernel_names_`` label the bars) or a bank-level estimator (bars labelled
    ``K[m]``, or by ``names``). One-vs-rest weights (n_classes, M) are drawn
    as one series per class. ``top``: only the ``top`` kernels of largest
    weight (over the classes), in the bank's order. Returns the matplotlib
    Axes (a new figure's when ``ax`` is None)."""
    check_is_fitted(estimator, "weights_")
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plot_weights draws with matplotlib: pip install matplotlib") from None
    weights = np.atleast_2d(np.asarray(estimator.weights_, dtype=float))
    n_kernels = weights.shape[1]
    if names is None:
        names = getattr(estimator, "kernel_names_", None)
    names = [f"K[{m}]" for m in range(n_kernels)] if names is None else [str(n) for n in names]
    if len(names) != n_kernels:
        raise InputError(f"{len(names)} names for {n_kernels} kernel weights")
    shown = np.arange(n_kernels)
    if top is not None:
        if top < 1:
            raise InputError(f"top must be >= 1, got {top}")
        shown = np.sort(np.argsort(-weights.max(axis=0), kind="stable")[:top])
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 0.9 + 0.28 * len(shown) * max(1, len(weights) / 2)))
    series = len(weights)
    height = 0.8 / series
    positions = np.arange(len(shown))
    classes = getattr(estimator, "classes_", None)
    for k, row in enumerate(weights):
        label = f"class {classes[k]}" if series > 1 and classes is not None else None
        ax.barh(positions + k * height - 0.4 + height / 2, row[shown], height=height, label=label)
    ax.set_yticks(positions, [names[m] for m in shown])
    ax.invert_yaxis()  # the bank's first kernel on top
    ax.set_xlabel("kernel weight")
    if series > 1:
        ax.legend()
    return ax

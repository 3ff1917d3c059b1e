"""Solutions shared between the fits of one model-selection fold.

Model selection fits one estimator per grid point on the same fold's bank, and
the final SVM of several points is often one and the same problem. Inside a
:func:`shared_solutions` block, :func:`shared_solution` solves each such
problem once; :func:`mkl.model_selection.cross_validate_grid` opens one block
per fold, and the margin methods' base learner (``mkl.algorithms.margin``)
keys its C-SVM by the bank, the weights, the labels and the solver's settings.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

# The solutions shared within a shared_solutions() block (None outside one).
_SHARED: ContextVar[dict | None] = ContextVar("mkl_shared_solutions", default=None)


@contextmanager
def shared_solutions():
    """Within the block, :func:`shared_solution` solves each problem once
    (e.g. MEMO with a large theta puts all its weight on the simplest kernel,
    so several grid points end in the same SVM). The bank must not change
    inside the block."""
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def shared_solution(bank: np.ndarray, weights, y, params: Hashable, solve: Callable):
    """``solve()``, or inside :func:`shared_solutions` a copy of the solution
    already computed for the same bank object, kernel weights, labels and
    ``params`` (the solver's settings). The entry holds the bank, so that no
    other array can take its id while the block lasts."""
    cache = _SHARED.get()
    if cache is None:
        return solve()
    key = (
        id(bank),
        np.asarray(weights, dtype=np.float64).tobytes(),
        np.asarray(y, dtype=np.float64).tobytes(),
        params,
    )
    if key not in cache:
        cache[key] = (bank, solve())
    return copy.deepcopy(cache[key][1])

"""One factory for every estimator on kernel banks: :func:`make_estimator`.

    >>> import mkl
    >>> mkl.make_estimator("level", C=10.0)                       # a classifier
    LevelMKL(C=10.0)
    >>> mkl.make_estimator("level", task="regression", epsilon=0.05)
    MKLRegressor(algorithm='level', epsilon=0.05)

``make_regressor`` and ``make_novelty_detector`` are the deprecated names of
``make_estimator(name, task="regression" | "novelty")``.
"""

from __future__ import annotations

import warnings

from ..algorithms.registry import new_algorithm
from ..exceptions import InputError
from .algorithm_params import own_and_algorithm_params
from .task_estimators import MKLNoveltyDetector, MKLRegressor

TASKS = ("classification", "regression", "novelty")


def make_estimator(name: str, task: str = "classification", **params):
    """An unfitted estimator of the registry method ``name`` (:data:`mkl.ALGORITHMS`)
    for ``task``:

    * ``"classification"``: the registry's classifier (:class:`~mkl.algorithms.base.BaseMKL`)
      with ``params`` set;
    * ``"regression"``: an :class:`~mkl.estimators.task_estimators.MKLRegressor` (the method's
      weight update with the epsilon-SVR dual); ``params``: C, epsilon, p, v and any
      other parameter of the method (passed on as ``algorithm_params``);
    * ``"novelty"``: an :class:`~mkl.estimators.task_estimators.MKLNoveltyDetector` (the
      one-class SVM dual); ``params``: nu, p, v and the method's others.

    An unknown name, task or parameter is an InputError naming the known ones.
    """
    if task == "classification":
        return new_algorithm(name, **params)
    if task == "regression":
        return MKLRegressor(algorithm=name, **own_and_algorithm_params(MKLRegressor, params))
    if task == "novelty":
        return MKLNoveltyDetector(
            algorithm=name, **own_and_algorithm_params(MKLNoveltyDetector, params)
        )
    raise InputError(f"unknown task {task!r}; known: {', '.join(TASKS)}")


def make_regressor(name: str, **params):
    """Deprecated: ``make_estimator(name, task="regression", **params)``."""
    warnings.warn(
        'make_regressor is deprecated; use make_estimator(name, task="regression", ...)',
        FutureWarning,
        stacklevel=2,
    )
    return make_estimator(name, task="regression", **params)


def make_novelty_detector(name: str, **params):
    """Deprecated: ``make_estimator(name, task="novelty", **params)``."""
    warnings.warn(
        'make_novelty_detector is deprecated; use make_estimator(name, task="novelty", ...)',
        FutureWarning,
        stacklevel=2,
    )
    return make_estimator(name, task="novelty", **params)

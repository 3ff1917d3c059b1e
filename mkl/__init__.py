"""Multiple kernel learning: scikit-learn-style estimators on banks of precomputed
kernels (the library), and, in :mod:`mkl.workflow`, the machinery of the
project's Snakemake workflow (its own extra: ``pip install "mkl-research[workflow]"``).

    >>> import mkl
    >>> est = mkl.make_estimator("uniform", C=10.0)
    >>> est.fit(K_train, y_train).predict(K_test)      # doctest: +SKIP
    >>> clf = mkl.MultipleKernelClassifier(algorithm="simplemkl", C=10.0)
    >>> clf.fit(X_train, y_train).predict(X_test)      # doctest: +SKIP

The import name is ``mkl``; the distribution is ``mkl-research`` (Intel's
``mkl-service`` also installs a module named ``mkl``: :data:`IS_MKL_RESEARCH`
lets scripts check they imported this package).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from .bank import KernelBank
from .exceptions import InputError, SolverError

if TYPE_CHECKING:
    from .algorithms import ALGORITHMS
    from .base import MKLClassifier
    from .factor_bank import FactorBank
    from .feature_estimators import MultipleKernelClassifier, MultipleKernelRegressor

try:
    __version__ = version("mkl-research")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+source"

IS_MKL_RESEARCH = True


def __getattr__(name: str):
    # the estimators (and scikit-learn, 0.9 s of imports) load on first use, so
    # the workflow's data and kernel jobs, which never fit, start without them
    if name == "ALGORITHMS":
        from .algorithms import ALGORITHMS

        return ALGORITHMS
    if name == "MKLClassifier":
        from .base import MKLClassifier

        return MKLClassifier
    if name in ("MultipleKernelClassifier", "MultipleKernelRegressor"):
        from . import feature_estimators

        return getattr(feature_estimators, name)
    if name == "FactorBank":  # loads scipy.sparse, which the data jobs do without
        from .factor_bank import FactorBank

        return FactorBank
    raise AttributeError(f"module 'mkl' has no attribute {name!r}")


def make_estimator(name: str, **params) -> MKLClassifier:
    """An unfitted estimator for a registry name (see ``ALGORITHMS``)."""
    from .algorithms import ALGORITHMS

    try:
        cls = ALGORITHMS[name]
    except (KeyError, TypeError):  # TypeError: an unhashable name, e.g. a list
        raise InputError(
            f"unknown algorithm {name!r}; known: {', '.join(sorted(ALGORITHMS))}"
        ) from None
    est = cls()
    unknown = set(params) - set(est.get_params())
    if unknown:
        raise InputError(
            f"algorithm {name!r} has no parameter(s) {sorted(unknown)}; "
            f"it takes {sorted(est.get_params())}"
        )
    return est.set_params(**params)


def make_regressor(name: str, **params):
    """An unfitted multiple kernel epsilon-SVR (:class:`mkl.task_estimators.MKLRegressor`)
    running the registry method ``name``'s weight update; ``params``: C, epsilon,
    p, v, and any other parameter of the method (passed as ``algorithm_params``)."""
    from .task_estimators import MKLRegressor

    return MKLRegressor(algorithm=name, **_own_and_algorithm_params(MKLRegressor, params))


def make_novelty_detector(name: str, **params):
    """An unfitted multiple kernel one-class SVM
    (:class:`mkl.task_estimators.MKLNoveltyDetector`) running the registry method
    ``name``'s weight update; ``params``: nu, p, v and any other parameter of the method."""
    from .task_estimators import MKLNoveltyDetector

    return MKLNoveltyDetector(
        algorithm=name, **_own_and_algorithm_params(MKLNoveltyDetector, params)
    )


def _own_and_algorithm_params(cls, params: dict) -> dict:
    """Split make_regressor's keywords into the estimator's own parameters and
    the method's (``algorithm_params``, also accepted as such)."""
    params = dict(params)
    extra = dict(params.pop("algorithm_params", None) or {})
    own = set(cls().get_params()) - {"algorithm", "algorithm_params"}
    extra.update({k: v for k, v in params.items() if k not in own})
    return {**{k: v for k, v in params.items() if k in own}, "algorithm_params": extra or None}


__all__ = [
    "ALGORITHMS",
    "FactorBank",
    "InputError",
    "KernelBank",
    "MKLClassifier",
    "MultipleKernelClassifier",
    "MultipleKernelRegressor",
    "SolverError",
    "make_estimator",
    "make_novelty_detector",
    "make_regressor",
]

"""Multiple kernel learning: scikit-learn-style estimators on banks of precomputed
kernels (the library), and, in :mod:`mkl.workflow`, the machinery of the
project's Snakemake workflow (its own extra: ``pip install "mkl-research[workflow]"``).

    >>> import mkl
    >>> est = mkl.make_estimator("uniform", C=10.0)
    >>> est.fit(K_train, y_train).predict(K_test)      # doctest: +SKIP

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
    if name == "FactorBank":  # loads scipy.sparse, which the data jobs do without
        from .factor_bank import FactorBank

        return FactorBank
    raise AttributeError(f"module 'mkl' has no attribute {name!r}")


def make_estimator(name: str, **params) -> MKLClassifier:
    """An unfitted estimator for a registry name (see ``ALGORITHMS``)."""
    from .algorithms import ALGORITHMS

    try:
        cls = ALGORITHMS[name]
    except KeyError:
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


__all__ = [
    "ALGORITHMS",
    "FactorBank",
    "InputError",
    "KernelBank",
    "MKLClassifier",
    "SolverError",
    "make_estimator",
]

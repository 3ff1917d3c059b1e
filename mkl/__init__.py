"""Multiple kernel learning: scikit-learn-style estimators on banks of precomputed
kernels (the library), and, in :mod:`mkl.workflow`, the machinery of the
project's Snakemake workflow (its own extra: ``pip install "mkl-research[workflow]"``).

    >>> import mkl
    >>> est = mkl.make_estimator("uniform", C=10.0)
    >>> est.fit(K_train, y_train).predict(K_test)      # doctest: +SKIP
    >>> clf = mkl.MultipleKernelClassifier(algorithm="simplemkl", C=10.0)
    >>> clf.fit(X_train, y_train).predict(X_test)      # doctest: +SKIP

The layout (docs/design.md): :mod:`mkl.kernels` (the spec language, kernel
functions, dense banks, similarities), :mod:`mkl.banks` (``KernelBank``,
``FactorBank`` and its builders, the combination algebra), :mod:`mkl.solvers`
(the SVM duals and the inner problem behind the one oracle),
:mod:`mkl.algorithms` (one module per family, the registry),
:mod:`mkl.estimators` (the factory, task estimators, front ends on X).

The import name is ``mkl``; the distribution is ``mkl-research`` (Intel's
``mkl-service`` also installs a module named ``mkl``: :data:`IS_MKL_RESEARCH`
lets scripts check they imported this package).
"""

from __future__ import annotations

import importlib
import warnings
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from .banks.kernel_bank import KernelBank
from .exceptions import (
    DegenerateKernelWarning,
    InputError,
    NegativeWeightsWarning,
    SmallCombinationWarning,
    SolverError,
)

if TYPE_CHECKING:
    from .algorithms.base import BaseMKL
    from .algorithms.registry import ALGORITHMS
    from .banks.factor_bank import FactorBank
    from .estimators.factory import make_estimator, make_novelty_detector, make_regressor
    from .estimators.feature_estimators import (
        MultipleKernelClassifier,
        MultipleKernelOutlierDetector,
        MultipleKernelRegressor,
    )
    from .estimators.plotting import plot_weights
    from .estimators.task_estimators import MKLNoveltyDetector, MKLRegressor
    from .kernels.specs import KernelSpec

try:
    __version__ = version("mkl-research")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+source"

IS_MKL_RESEARCH = True

# the public names loaded on first use: the estimators (and scikit-learn, 0.9 s
# of imports) are not needed by the workflow's data and kernel jobs, which
# never fit, nor FactorBank (scipy.sparse)
_LAZY = {
    "ALGORITHMS": "algorithms.registry",
    "BaseMKL": "algorithms.base",
    "FactorBank": "banks.factor_bank",
    "KernelSpec": "kernels.specs",
    "MKLNoveltyDetector": "estimators.task_estimators",
    "MKLRegressor": "estimators.task_estimators",
    "MultipleKernelClassifier": "estimators.feature_estimators",
    "MultipleKernelOutlierDetector": "estimators.feature_estimators",
    "MultipleKernelRegressor": "estimators.feature_estimators",
    "make_estimator": "estimators.factory",
    "make_novelty_detector": "estimators.factory",
    "make_regressor": "estimators.factory",
    "plot_weights": "estimators.plotting",
}


def __getattr__(name: str):
    if name == "MKLClassifier":
        warnings.warn(
            "mkl.MKLClassifier is deprecated; the base class is mkl.BaseMKL",
            FutureWarning,
            stacklevel=2,
        )
        name = "BaseMKL"
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'mkl' has no attribute {name!r}")


__all__ = [
    "ALGORITHMS",
    "IS_MKL_RESEARCH",
    "BaseMKL",
    "DegenerateKernelWarning",
    "FactorBank",
    "InputError",
    "KernelBank",
    "KernelSpec",
    "MKLNoveltyDetector",
    "MKLRegressor",
    "MultipleKernelClassifier",
    "MultipleKernelOutlierDetector",
    "MultipleKernelRegressor",
    "NegativeWeightsWarning",
    "SmallCombinationWarning",
    "SolverError",
    "make_estimator",
    "make_novelty_detector",
    "make_regressor",
    "plot_weights",
]

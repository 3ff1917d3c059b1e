"""The registry: the names used in config files and result tables
(docs/design.md, "Registry names") and the estimator class of each.

A family's module is imported when one of its names is first looked up, not
when the registry is: ``make_estimator("uniform")`` loads neither the
indefinite-similarity family nor the numba solvers, and the workflow's fit
hash of one family (:func:`mkl.workflow.hashing.fit_hash`) covers that
family's module, not every family's.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from ..exceptions import InputError

# registry name -> (module of mkl.algorithms, class)
_LOCATIONS = {
    "uniform": ("baselines", "UniformMKL"),
    "single_best": ("baselines", "SingleBestKernel"),
    "linear": ("baselines", "SingleKernelSVM"),
    "simplemkl": ("l1", "SimpleMKL"),
    "silp": ("l1", "SILP"),
    "level": ("l1", "LevelMKL"),
    "lp_newton": ("lp", "LpNewton"),
    "lp_cutting_plane": ("lp", "LpCuttingPlane"),
    "lp_analytic": ("lp", "LpAnalytic"),
    "gmkl": ("gmkl", "GMKL"),
    "smkl": ("smkl", "SMKL"),
    "easymkl": ("margin", "EasyMKL"),
    "memo": ("margin", "MEMO"),
    "denoise": ("indefinite", "Denoise"),
    "flip": ("indefinite", "Flip"),
    "shift": ("indefinite", "Shift"),
    "similarity_features": ("indefinite", "SimilarityFeaturesSVM"),
    "indsvm": ("indefinite", "IndSVM"),
    "eskl": ("indefinite", "ESKL"),
    "emkl": ("indefinite", "EMKL"),
    "rekl": ("indefinite", "REKL"),
}


class Registry(Mapping):
    """Registry name -> estimator class, each family imported on first lookup."""

    def __getitem__(self, name):
        try:
            module, cls = _LOCATIONS[name]
        except (KeyError, TypeError):  # TypeError: an unhashable name, e.g. a list
            raise KeyError(name) from None
        return getattr(importlib.import_module(f"{__package__}.{module}"), cls)

    def __iter__(self) -> Iterator[str]:
        return iter(_LOCATIONS)

    def __len__(self) -> int:
        return len(_LOCATIONS)

    def __repr__(self) -> str:
        return f"Registry({', '.join(_LOCATIONS)})"


ALGORITHMS = Registry()


def algorithm_class(name: str):
    """The estimator class of a registry name; an unknown name is an InputError
    listing the known ones."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise InputError(
            f"unknown algorithm {name!r}; known: {', '.join(sorted(ALGORITHMS))}"
        ) from None


def new_algorithm(name: str, **params):
    """An unfitted estimator of a registry name with ``params`` set; a parameter
    the method does not take is an InputError naming those it does."""
    est = algorithm_class(name)()
    unknown = set(params) - set(est.get_params())
    if unknown:
        raise InputError(
            f"algorithm {name!r} has no parameter(s) {sorted(unknown)}; "
            f"it takes {sorted(est.get_params())}"
        )
    return est.set_params(**params)


def algorithms_for_task(task: str) -> list[str]:
    """The registry names whose method solves ``task`` ("classification",
    "regression", "novelty")."""
    return sorted(name for name, cls in ALGORITHMS.items() if task in cls.tasks)

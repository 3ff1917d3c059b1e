"""The registry: the names used in config files and result tables
(docs/design.md, "Registry names") and the estimator class of each.

A family's module is imported when one of its names is first looked up, not
when the registry is: ``make_estimator("uniform")`` loads neither the
indefinite-similarity family nor the numba solvers, and the workflow's fit
hash of one family (:func:`mkl.workflow.hashing.fit_hash`) covers that
family's module, not every family's. What the workflow checks experiment
files against (the names, each method's parameters, tasks and whether it takes
a factor bank) is described here, beside the names (:func:`algorithm_info`),
so that planning a run imports no family at all.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from ..exceptions import InputError


class AlgorithmInfo(NamedTuple):
    """What the workflow checks an experiment file against, without importing
    the family (scikit-learn, SciPy's optimisers: seconds of imports at every
    start of Snakemake): the class's module and name, its ``get_params()``
    names, its ``tasks``, ``accepts_factors`` and ``takes_sample_weight``.
    ``tests/test_estimators.py`` keeps each entry equal to the class it
    describes."""

    module: str  # of mkl.algorithms
    cls: str
    params: frozenset[str]
    tasks: tuple[str, ...]
    accepts_factors: bool
    takes_sample_weight: bool


_EVERY_TASK = ("classification", "regression", "novelty")
_CLASSIFICATION = ("classification",)
# the alternating methods' shared parameters
_WRAPPER = "C max_iter multiclass svm_tol task tol verbose"


def _info(
    module, cls, params, tasks=_EVERY_TASK, accepts_factors=True, sample_weight=False
) -> AlgorithmInfo:
    return AlgorithmInfo(
        module, cls, frozenset(params.split()), tasks, accepts_factors, sample_weight
    )


# registry name -> its description (each family imported on first lookup of the class)
_ALGORITHMS = {
    "uniform": _info("baselines", "UniformMKL", "C task tol", sample_weight=True),
    "single_best": _info(
        "baselines",
        "SingleBestKernel",
        "C Cs cv random_state task tol",
        _EVERY_TASK[:2],
        sample_weight=True,
    ),
    "linear": _info("baselines", "SingleKernelSVM", "C kernel_index task tol", sample_weight=True),
    "fixed": _info("baselines", "FixedWeightsMKL", "C task tol weights", sample_weight=True),
    "align": _info("alignment", "AlignMKL", "C tol", _CLASSIFICATION, False),
    "alignf": _info("alignment", "AlignFMKL", "C tol", _CLASSIFICATION, False),
    "cka": _info("alignment", "CKA", "C tol", _CLASSIFICATION, False),
    "fheuristic": _info("alignment", "FHeuristic", "C tol", _CLASSIFICATION, False),
    "pwmk": _info("alignment", "PWMK", "C cv delta random_state tol", _CLASSIFICATION),
    "rmkl": _info(
        "radius_margin", "RMKL", "C inner_tol max_iter tol verbose", _CLASSIFICATION, False
    ),
    "gram": _info(
        "radius_margin", "GRAM", "C inner_tol max_iter svm_tol tol verbose", _CLASSIFICATION, False
    ),
    "simplemkl": _info("l1", "SimpleMKL", f"{_WRAPPER} line_search_tol", sample_weight=True),
    "silp": _info("l1", "SILP", f"{_WRAPPER} interleaved", sample_weight=True),
    "level": _info(
        "l1", "LevelMKL", f"{_WRAPPER} tau weight_tol interleaved inexact", sample_weight=True
    ),
    "lp_newton": _info("lp", "LpNewton", f"{_WRAPPER} p interleaved", sample_weight=True),
    "lp_cutting_plane": _info(
        "lp", "LpCuttingPlane", f"{_WRAPPER} p interleaved", sample_weight=True
    ),
    "lp_analytic": _info("lp", "LpAnalytic", f"{_WRAPPER} p interleaved", sample_weight=True),
    "gmkl": _info("gmkl", "GMKL", f"{_WRAPPER} tau weight_tol v inexact", sample_weight=True),
    "spg": _info("spg", "SPGMKL", f"{_WRAPPER} memory v", sample_weight=True),
    "smkl": _info(
        "smkl", "SMKL", "C max_iter smoothing smoothing_scale step tol verbose", _CLASSIFICATION
    ),
    "spicymkl": _info(
        "spicy", "SpicyMKL", "C C1 C2 gamma max_iter tol verbose", _CLASSIFICATION, False
    ),
    "easymkl": _info("margin", "EasyMKL", "C lam svm_tol tol trace_normalise", _CLASSIFICATION),
    "memo": _info(
        "margin", "MEMO", "C margin_tol max_iter svm_tol theta tol verbose", _CLASSIFICATION, False
    ),
    "denoise": _info("eigen_transforms", "Denoise", "C tol", _CLASSIFICATION, False),
    "flip": _info("eigen_transforms", "Flip", "C tol", _CLASSIFICATION, False),
    "shift": _info("eigen_transforms", "Shift", "C tol", _CLASSIFICATION, False),
    "similarity_features": _info(
        "eigen_transforms", "SimilarityFeaturesSVM", "C tol", _CLASSIFICATION, False
    ),
    "indsvm": _info(
        "indefinite", "IndSVM", "C max_iter rho svm_tol tol verbose", _CLASSIFICATION, False
    ),
    "eskl": _info(
        "indefinite",
        "ESKL",
        "C loss max_iter rho svm_tol tau tol verbose",
        _CLASSIFICATION,
        False,
    ),
    "emkl": _info(
        "indefinite",
        "EMKL",
        "C loss max_iter mkl_tol rho svm_tol tau tol verbose",
        _CLASSIFICATION,
        False,
    ),
    "rekl": _info(
        "indefinite",
        "REKL",
        "C max_iter mkl_tol rho svm_tol tau tol verbose",
        _CLASSIFICATION,
        False,
    ),
}


def algorithm_info(name: str) -> AlgorithmInfo:
    """The description of a registry name, no module imported; an unknown name
    is an InputError listing the known ones."""
    try:
        return _ALGORITHMS[name]
    except (KeyError, TypeError):  # TypeError: an unhashable name, e.g. a list
        raise InputError(
            f"unknown algorithm {name!r}; known: {', '.join(sorted(_ALGORITHMS))}"
        ) from None


class Registry(Mapping):
    """Registry name -> estimator class, each family imported on first lookup."""

    def __getitem__(self, name):
        try:
            info = _ALGORITHMS[name]
        except (KeyError, TypeError):  # TypeError: an unhashable name, e.g. a list
            raise KeyError(name) from None
        return getattr(importlib.import_module(f"{__package__}.{info.module}"), info.cls)

    def __contains__(self, name) -> bool:  # without importing the family
        try:
            return name in _ALGORITHMS
        except TypeError:
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(_ALGORITHMS)

    def __len__(self) -> int:
        return len(_ALGORITHMS)

    def __repr__(self) -> str:
        return f"Registry({', '.join(_ALGORITHMS)})"


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
    if "multiclass" in unknown:
        sharing = [other for other, info in _ALGORITHMS.items() if "multiclass" in info.params]
        raise InputError(
            f"algorithm {name!r} has no parameter 'multiclass': it learns a weight vector "
            f"per class (one-vs-rest) only; one weight vector shared by the classes "
            f"(multiclass='shared') is learned by {', '.join(sharing)}"
        )
    if unknown:
        raise InputError(
            f"algorithm {name!r} has no parameter(s) {sorted(unknown)}; "
            f"it takes {sorted(est.get_params())}"
        )
    return est.set_params(**params)


def algorithms_where(**fields) -> list[str]:
    """The registry names (in registry order) whose description has these
    field values, e.g. ``algorithms_where(accepts_factors=True)``: the lists an
    error message names, kept with the descriptions."""
    return [
        name
        for name, info in _ALGORITHMS.items()
        if all(getattr(info, field) == value for field, value in fields.items())
    ]


def algorithms_for_task(task: str) -> list[str]:
    """The registry names whose method solves ``task`` ("classification",
    "regression", "novelty")."""
    return sorted(name for name, info in _ALGORITHMS.items() if task in info.tasks)

"""What an experiment file (config/experiments/{name}.yaml) asks for, resolved:
the per-dataset protocol, kernel bank and algorithm settings (``overrides``), hyperparameter sweeps
expanded into one algorithm entry per value, and the list of fit jobs.

The workflow calls these when it builds the DAG, and the scripts call them on
the experiment they are given, so the two cannot disagree. Everything here is
plain dictionaries in, plain dictionaries out (the YAML is validated against
``workflow/schemas/experiment.schema.yaml`` before it gets here).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping


def sweep_name(key: str, value) -> str:
    """The algorithm name of one value of a sweep: ``gmkl_v`` at 0.3 ->
    ``gmkl_v_0p3`` (names must match ``[A-Za-z0-9_]+``: they are wildcards)."""
    text = format(value, "g") if isinstance(value, (int, float)) else str(value)
    text = text.replace("+", "").replace("-", "m").replace(".", "p")
    if not text.replace("_", "").isalnum():
        raise ValueError(f"sweep {key!r}: value {value!r} cannot be part of a file name")
    return f"{key}_{text}"


def expand(exp: Mapping) -> dict:
    """A copy of the experiment with every ``sweep`` algorithm replaced by one
    entry per value, in order. Each expanded entry runs the same estimator with
    ``params[param] = value`` and records ``sweep_of``, ``sweep_param`` and
    ``sweep_value``; the sweep's ``datasets`` restriction is kept.

    Idempotent: an expanded experiment is returned unchanged (as a copy)."""
    exp = copy.deepcopy(dict(exp))
    algorithms = {}
    for key, cfg in exp["algorithms"].items():
        if "sweep" not in cfg:
            algorithms[key] = cfg
            continue
        if len(cfg["sweep"]) != 1:
            raise ValueError(f"algorithm {key!r}: a sweep varies exactly one parameter")
        ((param, values),) = cfg["sweep"].items()
        if param in cfg.get("grid", {}):
            raise ValueError(f"algorithm {key!r}: {param!r} is both swept and in the grid")
        for value in values:
            name = sweep_name(key, value)
            if name in exp["algorithms"] or name in algorithms:
                raise ValueError(f"algorithm {key!r}: sweep entry {name!r} already exists")
            entry = {k: v for k, v in cfg.items() if k != "sweep"}
            entry["estimator"] = cfg.get("estimator", key)
            entry["params"] = {**cfg.get("params", {}), param: value}
            entry.update(sweep_of=key, sweep_param=param, sweep_value=value)
            algorithms[name] = entry
    exp["algorithms"] = algorithms
    return exp


def sweep_members(exp: Mapping, key: str) -> list[tuple[str, object]]:
    """(algorithm name, value) of each point of sweep ``key`` of an expanded experiment."""
    members = [
        (name, cfg["sweep_value"])
        for name, cfg in exp["algorithms"].items()
        if cfg.get("sweep_of") == key
    ]
    if not members:
        raise ValueError(f"experiment {exp.get('name')!r} has no sweep {key!r}")
    return members


def table_algorithms(exp: Mapping) -> list[str]:
    """The algorithms of the results figure: all but sweep points (which have
    their own figures)."""
    return [a for a, cfg in exp["algorithms"].items() if "sweep_of" not in cfg]


def runs_on(exp: Mapping, algorithm: str, dataset: str) -> bool:
    """Whether an algorithm entry is fitted on a dataset (its ``datasets`` list, if any)."""
    only = exp["algorithms"][algorithm].get("datasets")
    return only is None or dataset in only


def protocol(exp: Mapping, dataset: str) -> dict:
    """The split protocol of one dataset: the experiment's, with the keys of
    ``overrides[dataset].protocol`` replaced."""
    override = exp.get("overrides", {}).get(dataset, {})
    return {**exp["protocol"], **override.get("protocol", {})}


def kernels(exp: Mapping, dataset: str) -> dict:
    """The kernel bank of one dataset: ``overrides[dataset].kernels`` if given
    (a whole bank description), else the experiment's."""
    return dict(exp.get("overrides", {}).get(dataset, {}).get("kernels", exp["kernels"]))


def algorithm(exp: Mapping, name: str, dataset: str) -> dict:
    """One algorithm entry as fitted on one dataset: ``overrides[dataset].algorithms``
    may replace params and grid values (e.g. a wider C grid for unnormalised
    text kernels). A sweep point takes the override of its sweep's key."""
    entry = dict(exp["algorithms"][name])
    overrides = exp.get("overrides", {}).get(dataset, {}).get("algorithms", {})
    override = overrides.get(name) or overrides.get(entry.get("sweep_of", ""), {})
    if override:
        entry["params"] = {**entry.get("params", {}), **override.get("params", {})}
        entry["grid"] = {**entry.get("grid", {}), **override.get("grid", {})}
        for key in entry["params"]:
            if key in entry["grid"] and key in override.get("params", {}):
                del entry["grid"][key]  # an override that fixes a grid parameter
        for key in override.get("grid", {}):
            entry["params"].pop(key, None)
        if "sweep_param" in entry:  # the swept value wins over any override
            entry["params"][entry["sweep_param"]] = entry["sweep_value"]
            entry["grid"].pop(entry["sweep_param"], None)
    if takes_default_C(entry, name, task(exp)):
        entry["grid"] = {"C": list(DEFAULT_C_GRID), **entry.get("grid", {})}
        entry["C_units"] = C_UNITS
    return entry


# An entry that sets no C is cross-validated over these values of C, in the
# unit of C on its bank (mkl.kernels.specs.c_unit: n_train for unit-trace
# kernels, else 1), so that the default means the same on every normalisation:
# the range of C = 1 around an SVC on one unit-diagonal kernel
DEFAULT_C_GRID = (0.1, 1.0, 10.0, 100.0)
# an entry's ``C_units``: its C grid is in the unit of its bank's normalisation
# (mkl.workflow.evaluation.entry_grid multiplies it when the bank is loaded)
C_UNITS = "normalisation"


# registry names whose C is None (a hard margin) unless set, as in their
# papers (Lauriola et al. 2018): they keep it (tests/workflow/test_experiment.py
# holds this to the classes' defaults)
HARD_MARGIN_BY_DEFAULT = frozenset({"easymkl", "memo", "gram"})


def takes_default_C(entry: Mapping, name: str, task_name: str) -> bool:
    """Whether an algorithm entry gets the default C grid (:data:`DEFAULT_C_GRID`):
    its estimator has a C (not a one-class SVM's nu) that is not a hard margin
    by default (:data:`HARD_MARGIN_BY_DEFAULT`), and neither its params nor its
    grid set C, nor its own candidates of C (``single_best``'s ``Cs``)."""
    from ..algorithms.registry import algorithm_info

    registry_name, params = estimator(entry, name)
    if task_name == "novelty" or "C" not in algorithm_info(registry_name).params:
        return False
    if registry_name in HARD_MARGIN_BY_DEFAULT:
        return False
    return not ({"C", "Cs"} & (set(params) | set(entry.get("grid", {}))))


def estimator(entry: Mapping, name: str, extra: Mapping | None = None) -> tuple[str, dict]:
    """(registry name, constructor params) of algorithm entry ``name``: its
    ``estimator`` (default the key) and ``params``, with ``extra`` on top (a
    figure series' own params)."""
    return entry.get("estimator", name), {**entry.get("params", {}), **(extra or {})}


# an experiment's task -> the metric its results table shows and its grids are
# selected by unless the protocol names another, and that metric's table scale
TABLE_METRICS = {"classification": "accuracy", "regression": "rmse", "novelty": "auc"}
METRIC_SCALES = {"accuracy": 100.0, "f1": 100.0, "mcc": 100.0, "auc": 100.0}  # in %
METRIC_NAMES = {"accuracy": "accuracy (%)", "f1": "F1 (%)", "mcc": "MCC (%)", "auc": "AUC (%)"}


def task(exp: Mapping) -> str:
    """What the experiment's estimators do: classification (the default),
    regression (real targets; ``mkl.make_estimator(name, task="regression")``) or novelty (one-class
    models fitted on the inliers of each training part, the largest class,
    and tested on inliers against every other class: ``task="novelty"``)."""
    return exp.get("task", "classification")


def recorded_metrics(task_name: str) -> tuple[str, ...]:
    """The metrics a fit of this task records."""
    from ..metrics import METRICS, NOVELTY_METRICS, REGRESSION_METRICS

    return {"classification": METRICS, "regression": REGRESSION_METRICS}.get(
        task_name, NOVELTY_METRICS
    )


def table_metric(exp: Mapping) -> str:
    """The metric of the experiment's results table and figure (its task's)."""
    return TABLE_METRICS[task(exp)]


def figure_metric(exp: Mapping) -> str:
    """The metric of the results figure: the table's, but R^2 for a regression
    (comparable across datasets, where RMSE is in each target's units)."""
    return "r2" if task(exp) == "regression" else table_metric(exp)


def selection_metric(exp: Mapping, dataset: str) -> str:
    """The metric that model selection maximises (minimises, for an error) on a
    dataset: the protocol's ``selection_metric``, else the task's table metric."""
    return protocol(exp, dataset).get("selection_metric", table_metric(exp))


def supplies_fidelity(exp: Mapping) -> bool:
    """Whether the fidelity report reads this experiment: it has a ``paper``
    section, and the section does not say ``fidelity: false`` (a sensitivity
    study, several of our datasets standing for one of the paper's)."""
    return "paper" in exp and exp["paper"].get("fidelity", True)


def fit_jobs(exp: Mapping, datasets=None) -> list[tuple[str, str, int]]:
    """(dataset, algorithm, split) of every fit, over ``datasets`` (default: all
    of the experiment's), each dataset with its own number of repetitions."""
    return [(ds, alg, split) for ds, alg, split, _ in fit_batches(exp, datasets, per_job=1)]


def split_batches(n_splits: int, per_job: int) -> list[tuple[int, int]]:
    """Splits 0..n_splits-1 cut into runs of ``per_job`` consecutive splits, as
    (first, last) pairs (the last run may be shorter)."""
    if per_job < 1:
        raise ValueError(f"splits_per_job must be at least 1, got {per_job}")
    return [(a, min(a + per_job, n_splits) - 1) for a in range(0, n_splits, per_job)]


def fit_batches(exp: Mapping, datasets=None, per_job: int = 1) -> list[tuple[str, str, int, int]]:
    """(dataset, algorithm, first split, last split) of every fit job when each
    job fits ``per_job`` consecutive splits of one (dataset, algorithm)."""
    return [
        (ds, alg, first, last)
        for ds in (exp["datasets"] if datasets is None else datasets)
        for alg in exp["algorithms"]
        if runs_on(exp, alg, ds)
        for first, last in split_batches(protocol(exp, ds)["repetitions"], per_job)
    ]


def check(exp: Mapping) -> None:
    """Cross-references the schema cannot express: overrides, algorithm
    ``datasets`` and figures name the experiment's own datasets/algorithms."""
    name = exp.get("name", "?")
    datasets = set(exp["datasets"])
    sweep_keys = {cfg.get("sweep_of") for cfg in exp["algorithms"].values()}
    for ds, override in exp.get("overrides", {}).items():
        if ds not in datasets:
            raise ValueError(f"experiment {name!r}: override for {ds!r}, not one of its datasets")
        for alg in override.get("algorithms", {}):
            if alg not in exp["algorithms"] and alg not in sweep_keys:
                raise ValueError(
                    f"experiment {name!r}: override for {ds!r} names algorithm {alg!r}, "
                    "not one of its own"
                )
    for alg, cfg in exp["algorithms"].items():
        for ds in cfg.get("datasets", []):
            if ds not in datasets:
                raise ValueError(
                    f"experiment {name!r}: algorithm {alg!r} names dataset {ds!r}, not listed"
                )
    for ds in exp["datasets"]:
        metric = selection_metric(exp, ds)
        if metric not in recorded_metrics(task(exp)):
            raise ValueError(
                f"experiment {name!r}: selection_metric {metric!r} on {ds!r} is not a "
                f"{task(exp)} metric ({', '.join(recorded_metrics(task(exp)))})"
            )
    paper = exp.get("paper", {})
    if "paper_metric" in paper and not isinstance(paper.get("metric", "accuracy"), str):
        raise ValueError(
            f"experiment {name!r}: paper_metric renames a single metric, given as a string; "
            f"the paper section lists {paper['metric']}"
        )
    if paper.get("cell_status"):
        names = paper.get("datasets", {})
        mapped = {names.get(ds, ds) for tables in paper["tables"].values() for ds in tables}
        unknown = sorted(set(paper["cell_status"]) - mapped)
        if unknown:
            raise ValueError(
                f"experiment {name!r}: cell_status names {unknown}, not among the paper's "
                f"datasets its tables map ({', '.join(sorted(mapped))})"
            )
    for alg in exp["algorithms"]:
        _check_task(name, alg, exp["algorithms"][alg], task(exp))
        for ds in exp["datasets"]:
            _check_parameters(name, alg, algorithm(exp, alg, ds), f"on {ds!r}", task=task(exp))
            _check_C(name, alg, algorithm(exp, alg, ds), f"on {ds!r}")
            if runs_on(exp, alg, ds):
                _check_representation(name, alg, algorithm(exp, alg, ds), kernels(exp, ds), ds)
    sweeps = {cfg["sweep_of"] for cfg in exp["algorithms"].values() if "sweep_of" in cfg}
    for fig, spec in exp.get("figures", {}).items():
        for label, series in spec.get("series", {}).items():
            if series.get("algorithm") in exp["algorithms"] and series.get("params"):
                entry = exp["algorithms"][series["algorithm"]]
                where = f"in figure {fig!r}, series {label!r}"
                _check_parameters(
                    name, series["algorithm"], {**entry, "grid": {}}, where, series["params"]
                )
        if fig == "results":
            raise ValueError(f"experiment {name!r}: the figure name 'results' is taken")
        kind = spec.get("kind", "weights")
        if task(exp) != "classification" and kind in ("weights", "timing"):
            raise ValueError(
                f"experiment {name!r}: figure {fig!r} ({kind}) fits classifiers; "
                f"this experiment's task is {task(exp)}"
            )
        used = [spec["dataset"]] if "dataset" in spec else list(spec.get("datasets", []))
        if kind == "timing":  # draws its own points from any registry dataset
            used = []
            _check_timing_points(name, fig, spec, exp["algorithms"], exp["figures"])
        for ds in used:
            if ds not in datasets:
                raise ValueError(
                    f"experiment {name!r}: figure {fig!r} uses dataset {ds!r}, not listed"
                )
        if kind == "weights":
            algs = [s["algorithm"] for s in spec["series"].values()]
        elif kind == "sweep":
            if spec["sweep"] not in sweeps:
                raise ValueError(f"experiment {name!r}: figure {fig!r} names no sweep of this file")
            algs = []
        else:
            algs = list(spec.get("algorithms", []))
        for alg in algs:
            if alg not in exp["algorithms"]:
                raise ValueError(
                    f"experiment {name!r}: figure {fig!r} names algorithm {alg!r}, "
                    "not one of its own"
                )


def _check_task(name: str, alg: str, entry: Mapping, task_name: str) -> None:
    """The entry's method does the experiment's task (EasyMKL has no regression)."""
    from ..algorithms.registry import algorithm_info, algorithms_for_task

    registry_name = entry.get("estimator", alg)
    if task_name != "classification" and task_name not in algorithm_info(registry_name).tasks:
        able = algorithms_for_task(task_name)
        raise ValueError(
            f"experiment {name!r}: algorithm {alg!r} ({registry_name}) does not do "
            f"{task_name}; those that do: {', '.join(able)}"
        )


# the parameters of the task estimators beside those of the registry method
TASK_PARAMETERS = {"classification": set(), "regression": {"epsilon"}, "novelty": {"nu"}}


def _check_parameters(
    name: str,
    alg: str,
    entry: Mapping,
    where: str,
    extra: Mapping | None = None,
    task: str = "classification",
) -> None:
    """The entry's params, grid keys (and a figure's extra params) are
    parameters of its estimator: a typo fails when the file is loaded, not
    as failed fits after an hour of kernels."""
    from ..algorithms.registry import algorithm_info

    registry_name, params = estimator(entry, alg, extra)
    known = set(algorithm_info(registry_name).params) | TASK_PARAMETERS[task]
    if task == "novelty":
        known.discard("C")  # the one-class SVM has nu in its place
    unknown = sorted((set(params) | set(entry.get("grid", {}))) - known)
    if unknown:
        raise ValueError(
            f"experiment {name!r}: algorithm {alg!r} ({registry_name}) {where} sets "
            f"{unknown}, not parameters of {registry_name} (it takes {sorted(known)})"
        )


def _check_C(name: str, alg: str, entry: Mapping, where: str) -> None:
    """Every value of C the entry's params and grid give (and of ``Cs``) is a
    number > 0, or null for C (a hard margin): a C of -1 would otherwise fail
    its grid point's fits one by one, leaving a cell that does not say why."""
    values = [("params", "C", entry.get("params", {}).get("C", 1.0))]
    values += [("grid", "C", v) for v in entry.get("grid", {}).get("C", [])]
    Cs = entry.get("params", {}).get("Cs")
    values += [("params", "Cs", v) for v in (Cs if isinstance(Cs, list) else [Cs])]
    for section, key, value in values:
        if value is None and (key == "C" or Cs is None):
            continue
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not value > 0 or value == float("inf"):
            raise ValueError(
                f"experiment {name!r}: algorithm {alg!r} {where}: {section} {key} holds "
                f"{value!r}; C must be a number > 0 (or null for a hard margin): "
                "remove or replace the value"
            )


def _check_timing_points(
    name: str, fig: str, spec: Mapping, algorithms: Mapping, figures: Mapping
) -> None:
    """Every point of a timing figure is well formed, and a factor bank's series
    are estimators that take one."""
    from ..algorithms.registry import algorithm_info
    from .timing_settings import timing_point_settings

    for label, series in spec.get("series", {}).items():
        if series["algorithm"] not in algorithms:
            raise ValueError(
                f"experiment {name!r}: figure {fig!r}, series {label!r} names algorithm "
                f"{series['algorithm']!r}, not one of its own"
            )
    other = spec.get("compare_with")
    if other is not None:
        target = figures.get(other, {})
        if target.get("kind") != "timing" or target.get("vary") != spec["vary"] or other == fig:
            raise ValueError(
                f"experiment {name!r}: figure {fig!r} compares with {other!r}, which is not "
                f"another timing figure with vary: {spec['vary']}"
            )
    for value in spec.get("values", []):
        try:
            _, _, rep = timing_point_settings(spec, value)
        except ValueError as exc:
            raise ValueError(
                f"experiment {name!r}: figure {fig!r}, point {value!r}: {exc}"
            ) from None
        if rep["kind"] == "dense":
            continue
        for label, series in spec["series"].items():
            registry_name, _ = estimator(algorithms[series["algorithm"]], series["algorithm"])
            if not algorithm_info(registry_name).accepts_factors:
                raise ValueError(
                    f"experiment {name!r}: figure {fig!r}, series {label!r} ({registry_name}) "
                    f"cannot use a {rep['kind']} factor bank: it needs dense kernel matrices"
                )


def _check_representation(name: str, alg: str, entry: Mapping, bank: Mapping, dataset: str) -> None:
    """A bank of factors goes only to estimators that take a FactorBank, and its
    representation is well formed: both found when the file is loaded."""
    from ..algorithms.registry import algorithm_info
    from ..kernels.representation import bank_representation

    try:
        kind = bank_representation(bank)["kind"]
    except ValueError as exc:
        raise ValueError(f"experiment {name!r}, kernels of {dataset!r}: {exc}") from None
    registry_name, _ = estimator(entry, alg)
    if kind != "dense" and not algorithm_info(registry_name).accepts_factors:
        raise ValueError(
            f"experiment {name!r}: algorithm {alg!r} ({registry_name}) cannot use the "
            f"{kind} factor bank of {dataset!r}: it needs dense kernel matrices"
        )


# the keys of a protocol that make the splits (feature scaling and the selection
# metric come later: changing them must not redraw the splits)
SPLIT_KEYS = (
    "repetitions",
    "train_fraction",
    "inner_folds",
    "seed",
    "balanced_classes",
    "fresh_draws",
)
# the keys of an algorithm entry that make its fits (not its datasets list, sweep bookkeeping)
FIT_KEYS = ("estimator", "params", "grid", "C_units", "select", "exclude")


def split_protocol(exp: Mapping, dataset: str) -> dict:
    """The part of a dataset's protocol that its splits depend on."""
    p = protocol(exp, dataset)
    return {k: p[k] for k in SPLIT_KEYS if k in p}


def fit_spec(exp: Mapping, name: str, dataset: str) -> dict:
    """What a fit of algorithm entry ``name`` on ``dataset`` depends on: its
    estimator (registry name), params, grid and kernel selection."""
    entry = algorithm(exp, name, dataset)
    spec = {k: entry[k] for k in FIT_KEYS if k in entry}
    spec["estimator"] = entry.get("estimator", name)
    if task(exp) != "classification":  # (absent for a classifier: its specs stay as they were)
        spec["task"] = task(exp)
    return spec

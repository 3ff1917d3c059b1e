"""The files a run builds, as plain functions of the experiments and the
configuration: the rules' input functions (``workflow/rules/common.smk``) bind
these to the loaded experiments and add the damaged-file check.

Paths (docs/design.md, data flow)::

    results/fits/{experiment}/{dataset}/{algorithm}/{split}.json           one split per job
    results/fits/{experiment}/{dataset}/{algorithm}/splits_{a}-{b}.json    splits a..b per job
    results/fits/{experiment}/{dataset}/splits_{a}-{b}.json                every algorithm, a..b
    results/cv/{experiment}/{dataset}/{algorithm}/{split}/{chunk}.json     a chunk of a grid's CV
    results/cv/{experiment}/{dataset}/{algorithm}/splits_{a}-{b}/{chunk}.json   its splits a..b
    results/kernels/{experiment}/{dataset}/{split}.h5
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from ..model_selection import grid_points
from .experiment import algorithm as algorithm_entry
from .experiment import fit_batches, fit_jobs, runs_on


def splits_per_job(exp: Mapping, config: Mapping) -> int:
    """How many splits of one (dataset, algorithm) a fit job does: config
    ``splits_per_job``, else the experiment's ``execution.splits_per_job``, else 1."""
    return int(config.get("splits_per_job", exp.get("execution", {}).get("splits_per_job", 1)))


def batch_algorithms(exp: Mapping, config: Mapping) -> bool:
    """Whether one fit job fits every algorithm of a dataset in turn: config
    ``batch_algorithms``, else the experiment's ``execution.batch_algorithms``,
    else False (``--config batch_algorithms=true`` gives the string "true")."""
    value = config.get("batch_algorithms", exp.get("execution", {}).get("batch_algorithms", False))
    return str(value).lower() == "true"


def fit_files(
    exp: Mapping, available: Sequence[str], per_job: int, all_algorithms: bool = False
) -> list[str]:
    """The fit records of the experiment's ``available`` datasets: one file per
    split, or with ``per_job`` = b > 1 one file per b consecutive splits; with
    ``all_algorithms`` one file per dataset and b splits, holding the records
    of every algorithm that runs on the dataset (:func:`dataset_algorithms`)."""
    name = exp["name"]
    if all_algorithms:  # the batches of fit_batches, without their algorithm
        paths = (
            f"results/fits/{name}/{ds}/splits_{first}-{last}.json"
            for ds, _, first, last in fit_batches(exp, available, per_job)
        )
        return list(dict.fromkeys(paths))
    if per_job == 1:
        return [
            f"results/fits/{name}/{ds}/{alg}/{split}.json"
            for ds, alg, split in fit_jobs(exp, available)
        ]
    return [
        f"results/fits/{name}/{ds}/{alg}/splits_{first}-{last}.json"
        for ds, alg, first, last in fit_batches(exp, available, per_job)
    ]


def slice_fit_files(
    exp: Mapping,
    dataset: str,
    algorithm: str | None,
    available: Callable[[str], bool],
    per_job: int,
    all_algorithms: bool = False,
) -> list[str]:
    """The fit records a slice of the experiment's table reads (the
    table_slice rules): those of ``dataset`` (none if ``available(dataset)``
    says it cannot be obtained: asked once the names are checked)
    and, with an ``algorithm``, of that algorithm alone where the fit jobs are
    per algorithm (a job of every algorithm, ``all_algorithms``, holds the
    others' records too: the slice reads its own). A dataset or algorithm the
    experiment does not have, or an algorithm that does not run on the
    dataset, is refused by name."""
    if dataset not in exp["datasets"]:
        raise ValueError(
            f"experiment {exp['name']} has no dataset {dataset!r} ({', '.join(exp['datasets'])})"
        )
    if algorithm is not None and algorithm not in exp["algorithms"]:
        raise ValueError(
            f"experiment {exp['name']} has no algorithm {algorithm!r} "
            f"({', '.join(exp['algorithms'])})"
        )
    if algorithm is not None and not runs_on(exp, algorithm, dataset):
        raise ValueError(f"experiment {exp['name']} does not run {algorithm} on {dataset}")
    paths = fit_files(exp, [dataset] if available(dataset) else [], per_job, all_algorithms)
    if algorithm is None or all_algorithms:
        return paths
    return [p for p in paths if p.startswith(f"results/fits/{exp['name']}/{dataset}/{algorithm}/")]


def dataset_algorithms(exp: Mapping, dataset: str) -> list[str]:
    """The algorithm entries fitted on ``dataset``, in the experiment's order:
    the algorithms of a fit job that fits them all (``batch_algorithms``)."""
    return [alg for alg in exp["algorithms"] if runs_on(exp, alg, dataset)]


def job_algorithms(wildcards, exp: Mapping) -> list[str]:
    """The algorithms a fit job fits: its ``algorithm``, or every algorithm of
    its dataset for a job without one (``batch_algorithms``)."""
    if hasattr(wildcards, "algorithm"):
        return [wildcards.algorithm]
    return dataset_algorithms(exp, wildcards.dataset)


def job_splits(wildcards) -> list[int]:
    """The splits a fit job works on: its ``split``, or its batch ``first``..``last``."""
    if hasattr(wildcards, "split"):
        return [int(wildcards.split)]
    return list(range(int(wildcards.first), int(wildcards.last) + 1))


def bank_files(wildcards) -> list[str]:
    """The kernel banks of a fit job's splits."""
    return [
        f"results/kernels/{wildcards.experiment}/{wildcards.dataset}/{split}.h5"
        for split in job_splits(wildcards)
    ]


def grid_chunks(exp: Mapping, config: Mapping, algorithm: str, dataset: str) -> int:
    """How many CV jobs the fit of (dataset, algorithm) is cut into: config
    ``grid_chunks``, else the experiment's ``execution.grid_chunks``, else 1;
    at most one per grid point, and 1 when there is no grid to cross-validate."""
    wanted = config.get("grid_chunks", exp.get("execution", {}).get("grid_chunks", 1))
    entry = algorithm_entry(exp, algorithm, dataset)
    points = len(grid_points(entry.get("grid", {})))
    return 1 if points < 2 else min(int(wanted), points)


def cv_chunk_files(wildcards, chunks: Mapping[str, int]) -> list[str]:
    """The CV chunks a fit job joins, algorithm by algorithm (``chunks``: how
    many of each of the job's algorithms), each chunk's file holding the CV
    of the job's splits (its ``split``, or its batch ``first``..``last``)."""
    w = wildcards
    splits = w.split if hasattr(w, "split") else f"splits_{w.first}-{w.last}"
    return [
        f"results/cv/{w.experiment}/{w.dataset}/{alg}/{splits}/{i}.json"
        for alg, n in chunks.items()
        if n > 1
        for i in range(n)
    ]


def figures_of_kind(experiments: Iterable[Mapping], *kinds: str) -> str:
    """A wildcard constraint matching exactly the figure names of these kinds,
    over all experiments (each figure rule builds its own kind)."""
    names = sorted(
        {
            fig
            for exp in experiments
            for fig, spec in exp.get("figures", {}).items()
            if spec.get("kind", "weights") in kinds
        }
    )
    return "|".join(names) if names else "(?!)"


def timing_points(exp: Mapping, figure: str) -> list[str]:
    """The point files a timing figure reads: its own values and those of the
    figure it is drawn beside (``compare_with``, e.g. the dense curve)."""
    spec = exp["figures"][figure]
    figures = [figure] + ([spec["compare_with"]] if "compare_with" in spec else [])
    return [
        f"results/timing/{exp['name']}/{fig}/{value}.json"
        for fig in figures
        for value in exp["figures"][fig]["values"]
    ]


def unusable_target(name: str) -> str:
    """The one target of an experiment whose file cannot be used: its job fails
    with the file's error (rule ``unusable_experiment``), and only it."""
    return f"results/unusable/{name}.txt"


def built_targets(experiments: Mapping[str, Mapping], exists) -> list[str]:
    """The targets of every experiment (:func:`experiment_targets`) that are on
    disk (``exists(path)``): what ``snakemake --report report.html built``
    reports beside the default target."""
    return [path for path in experiment_targets(experiments, list(experiments)) if exists(path)]


def experiment_targets(
    experiments: Mapping[str, Mapping],
    names: str | Iterable[str],
    unusable: Iterable[str] = (),
) -> list[str]:
    """What building an experiment means: its tables, its results figure and
    every figure of its ``figures`` section; for a name among ``unusable``
    (a file that did not load) the target that fails naming the file."""
    if isinstance(names, str):
        names = [names]
    unusable = set(unusable)
    return [
        path
        for e in names
        for path in (
            [unusable_target(e)]
            if e in unusable
            else (
                f"results/tables/{e}/results.md",
                f"results/tables/{e}/paper.md",
                f"results/figures/{e}/results.png",
                *(f"results/figures/{e}/{f}.png" for f in experiments[e].get("figures", {})),
            )
        )
    ]

# Configuration, experiments and the rules' input, param and resource functions:
# thin bindings of mkl.workflow (config, targets, hashing, provenance, resources, files) to
# this run's configuration and Snakemake's checkpoints.
import functools
import json
import os
import re
from pathlib import Path

from snakemake.logging import logger

import mkl

if not getattr(mkl, "IS_MKL_RESEARCH", False):
    raise WorkflowError(
        f"`import mkl` found {getattr(mkl, '__file__', '?')}, not this project's library "
        "(Intel's mkl-service installs a module of the same name): pip install -e . first"
    )

from mkl.workflow import experiment, files, hashing, provenance, resources, targets
from mkl.workflow.config import (
    ConfigError,
    check_targets,
    experiment_digest,
    experiments_dir,
    load_config,
    load_experiments,
    load_registry,
    registry_path,
)
from mkl.workflow.dataset_registry import mirror_copies

SCHEMAS = Path(workflow.basedir) / "workflow" / "schemas"
# An experiment file that cannot be used (empty, broken, against the schema)
# fails its own targets alone, naming the file (the unusable_experiment job):
# every other experiment, the quick one included, still runs.
UNUSABLE_EXPERIMENTS = {}
try:
    load_config(config, SCHEMAS)
    EXPERIMENTS_DIR = experiments_dir(config)
    DATASETS = load_registry(registry_path(config), SCHEMAS)
    EXPERIMENTS = load_experiments(EXPERIMENTS_DIR, DATASETS, SCHEMAS, UNUSABLE_EXPERIMENTS)
    check_targets(config, EXPERIMENTS, EXPERIMENTS_DIR, UNUSABLE_EXPERIMENTS)
except ConfigError as exc:
    raise WorkflowError(str(exc))
for _name, _error in UNUSABLE_EXPERIMENTS.items():
    logger.warning(f"{_error}\n(only the targets of experiment {_name!r} fail)")


wildcard_constraints:
    experiment="[A-Za-z0-9_]+",
    dataset="[A-Za-z0-9_]+",
    algorithm="[A-Za-z0-9_]+",
    split="[0-9]+",


# ---------------------------------------------------------------- source hashes
# A stage reruns when the library code it runs changes (mkl.workflow.hashing).
NORMALISE_HASH = hashing.source_hash(hashing.NORMALISE)
SPLIT_HASH = hashing.source_hash(hashing.SPLIT)
KERNELS_HASH = hashing.source_hash(hashing.KERNELS)
TABLES_HASH = hashing.source_hash(hashing.TABLES)
FIGURES_HASH = hashing.source_hash([*hashing.FIGURES, *hashing.TABLES])
FIDELITY_HASH = hashing.source_hash(hashing.FIDELITY)


@functools.cache
def experiment_sha256(name):
    """The hash of the experiment's file (mkl.workflow.provenance): its tables carry it."""
    return provenance.file_sha256(provenance.experiment_file(EXPERIMENTS_DIR, name))


@functools.cache
def experiment_hash(name):
    """The digest of a loaded experiment (mkl.workflow.config.experiment_digest): a job
    that reads the experiment takes its name and this digest as params, and loads it
    (mkl.workflow.jobs.job_experiment), so that its info panel in the report names
    the experiment instead of holding all of it."""
    return experiment_digest(EXPERIMENTS[name])


@functools.cache
def fit_hash(*estimators, extra=hashing.FIT):
    return hashing.fit_hash(*estimators, extra=extra)


def fit_spec(w):
    return experiment.fit_spec(EXPERIMENTS[w.experiment], w.algorithm, w.dataset)


def job_algorithms(w):
    return targets.job_algorithms(w, EXPERIMENTS[w.experiment])


def fit_specs(w):
    """What each algorithm of a fit job fits, by algorithm entry."""
    exp = EXPERIMENTS[w.experiment]
    return {alg: experiment.fit_spec(exp, alg, w.dataset) for alg in job_algorithms(w)}


def fit_job_hash(w):
    return fit_hash(*sorted({spec["estimator"] for spec in fit_specs(w).values()}))


def figure_hash(w, extra=hashing.FIT):
    """A weights figure or timing point fits its series' estimators."""
    exp = EXPERIMENTS[w.experiment]
    series = exp["figures"][w.figure]["series"].values()
    names = {exp["algorithms"][s["algorithm"]].get("estimator", s["algorithm"]) for s in series}
    return fit_hash(*sorted(names), extra=extra)


# ---------------------------------------------------------------- damaged files
# A real run (not a dry run, --lint, --summary or --report) moves a damaged
# input aside when it builds the DAG, so that it is recomputed; the others
# only warn, leaving results/ as it is.
def real_run():
    return workflow.executor_plugin is not None and not workflow.dryrun


_CHECKED = {}


def checked(path):
    """An input path, after making sure that an existing file there is whole."""
    if path not in _CHECKED:
        _CHECKED[path] = True
        reason = files.unreadable_reason(path) if os.path.exists(path) else None
        if reason and real_run():
            dest = files.quarantine(path)
            logger.warning(f"{path} is damaged ({reason}): moved to {dest}, recomputing it")
        elif reason:
            logger.warning(f"{path} is damaged ({reason}): a run will move it aside and recompute it")
    return path


def checked_input(pattern):
    """An input function: ``pattern`` formatted with the job's wildcards, checked."""
    return lambda w: checked(pattern.format(**w))


def remove_stale_temporaries(root):
    stale = files.stale_temporaries(root)
    for path in stale:
        path.unlink(missing_ok=True)
    if stale:
        logger.info(f"removed {len(stale)} temporary file(s) left by an interrupted run")


# ---------------------------------------------------------------- targets
def fidelity_experiments():
    """The experiments whose tables the fidelity report reads: those with a
    paper section (not a sensitivity study's, fidelity: false) that the
    configuration builds, and those already run."""
    return [
        e
        for e, exp in EXPERIMENTS.items()
        if experiment.supplies_fidelity(exp)
        and (e in config["experiments"] or os.path.exists(f"results/tables/{e}/results.csv"))
    ]


def fidelity_manifests(wildcards):
    """Download manifests of the fidelity report's datasets: built for the
    experiments the configuration builds, read where they exist for the others."""
    built = [e for e in config["experiments"] if e in EXPERIMENTS]  # not an unusable file's
    datasets = {ds for e in built for ds in EXPERIMENTS[e]["datasets"]}
    found = {
        ds
        for exp in EXPERIMENTS.values()
        for ds in exp["datasets"]
        if os.path.exists(f"results/raw/{ds}/manifest.json")
    }
    return [download_manifest(ds) for ds in sorted(datasets)] + [
        f"results/raw/{ds}/manifest.json" for ds in sorted(found - datasets)
    ]


def download_manifest(dataset):
    """The download checkpoint's output: whether (and why not) a dataset is available."""
    return checkpoints.download.get(dataset=dataset).output[0]


def dataset_available(dataset):
    with open(download_manifest(dataset)) as fh:
        return json.load(fh).get("status", "available") != "unavailable"


def fit_files(experiment_name):
    """The fit records of the experiment's available datasets. Evaluated after
    the download checkpoint, so an unavailable dataset drops out of the DAG
    (and is reported as such by the aggregate) instead of failing the run."""
    exp = EXPERIMENTS[experiment_name]
    available = [ds for ds in exp["datasets"] if dataset_available(ds)]
    per_job = targets.splits_per_job(exp, config)
    paths = targets.fit_files(exp, available, per_job, targets.batch_algorithms(exp, config))
    return [checked(p) for p in paths]


def slice_fit_files(w):
    """The fit records of a table slice: its dataset's, or its algorithm's on it."""
    exp = EXPERIMENTS[w.experiment]
    per_job = targets.splits_per_job(exp, config)
    batch = targets.batch_algorithms(exp, config)
    algorithm = getattr(w, "algorithm", None)
    try:
        paths = targets.slice_fit_files(
            exp, w.dataset, algorithm, dataset_available, per_job, batch
        )
    except ValueError as exc:
        raise WorkflowError(str(exc))
    return [checked(p) for p in paths]


def built_targets():
    """Every experiment's targets already on disk: `built` reports them all."""
    return targets.built_targets(EXPERIMENTS, os.path.exists)


def bank_files(w):
    return [checked(p) for p in targets.bank_files(w)]


def grid_chunks(w):
    return targets.grid_chunks(EXPERIMENTS[w.experiment], config, w.algorithm, w.dataset)


def job_grid_chunks(w):
    """How many CV chunks each algorithm of a fit job joins per split."""
    exp = EXPERIMENTS[w.experiment]
    return {alg: targets.grid_chunks(exp, config, alg, w.dataset) for alg in job_algorithms(w)}


def cv_chunk_files(w):
    return [checked(p) for p in targets.cv_chunk_files(w, job_grid_chunks(w))]


def figures_of_kind(*kinds):
    return targets.figures_of_kind(EXPERIMENTS.values(), *kinds)


def experiment_targets(names):
    return targets.experiment_targets(EXPERIMENTS, names, UNUSABLE_EXPERIMENTS)


# ---------------------------------------------------------------- resources
def kernels_mem_mb(w, input, attempt):
    spec = experiment.kernels(EXPERIMENTS[w.experiment], w.dataset)
    return resources.kernels_mem_mb(spec, input.data, input.splits, int(w.split), attempt)


def fit_mem_mb(w, input, attempt):
    banks = [input.bank] if isinstance(input.bank, str) else list(input.bank)
    return resources.fit_mem_mb(banks, attempt)


def fit_runtime(w, input, attempt):
    n_fits = len(targets.job_splits(w)) * len(job_algorithms(w))
    return resources.fit_runtime(n_fits, input.size_mb, attempt)


def timing_mem_mb(w, attempt):
    figure = EXPERIMENTS[w.experiment]["figures"][w.figure]
    return resources.timing_mem_mb(figure, w.value, attempt)


def timing_figure_points(w):
    return targets.timing_points(EXPERIMENTS[w.experiment], w.figure)

# Configuration loading and validation, and the functions that list targets.
import json
import os
import yaml
from pathlib import Path

from snakemake.logging import logger
from snakemake.utils import validate

import mkl
import mkl._io
import mkl.evaluate
import mkl.experiment
import mkl.kernels

if not getattr(mkl, "IS_MKL_RESEARCH", False):
    raise WorkflowError(
        f"`import mkl` found {getattr(mkl, '__file__', '?')}, not this project's library "
        "(Intel's mkl-service installs a module of the same name): pip install -e . first"
    )

validate(config, "../schemas/config.schema.yaml")
# --config key=value gives strings: read the boolean as a boolean
config["temporary_banks"] = str(config.get("temporary_banks", False)).lower() == "true"

EXPERIMENTS_DIR = Path(config.get("experiments_dir", "config/experiments"))
REGISTRY_FILE = Path(config.get("registry", "config/datasets.yaml"))
# Library code each stage depends on: a change reruns that stage and what follows.
# Modules that only build the DAG (experiment), make data (synthetic: its output
# file is tracked instead), time solvers (timing) or write tables (report) are
# left out of the fit stage's hash, so changing them does not refit anything.
KERNELS_SOURCE_HASH = mkl.source_hash("kernels", "bank", "datasets", "similarity", "_io")
FIT_SOURCE_HASH = mkl.source_hash(
    exclude=("report", "experiment", "synthetic", "timing", "datasets")
)
REPORT_SOURCE_HASH = mkl.source_hash("report", "evaluate", "experiment", "_io", exclude=())
TIMING_SOURCE_HASH = mkl.source_hash(exclude=("report", "experiment", "synthetic"))
ALL_SOURCE_HASH = mkl.source_hash(exclude=())  # stages that fit and plot


def _load_yaml(path):
    with open(path) as fh:
        return yaml.safe_load(fh)


DATASETS = _load_yaml(REGISTRY_FILE)
validate(DATASETS, "../schemas/datasets.schema.yaml")


def _load_experiment(path):
    """Validate an experiment file, expand its sweeps, check its cross-references."""
    exp = _load_yaml(path)
    validate(exp, "../schemas/experiment.schema.yaml")
    if exp["name"] != path.stem:
        raise WorkflowError(f"{path}: name {exp['name']!r} differs from the file name")
    for ds in exp["datasets"]:
        if ds not in DATASETS:
            raise WorkflowError(f"{path}: dataset {ds!r} is not in {REGISTRY_FILE}")
    for fig, spec in exp.get("figures", {}).items():
        if "dataset" in spec and spec["dataset"] not in DATASETS:
            raise WorkflowError(
                f"{path}: figure {fig!r} uses {spec['dataset']!r}, not in {REGISTRY_FILE}"
            )
    for alg, spec in exp["algorithms"].items():
        if spec.get("estimator", alg) not in mkl.ALGORITHMS:
            raise WorkflowError(
                f"{path}: algorithm {alg!r} is not in mkl's registry "
                f"({', '.join(sorted(mkl.ALGORITHMS))})"
            )
    try:
        exp = mkl.experiment.expand(exp)
        mkl.experiment.check(exp)
    except ValueError as exc:
        raise WorkflowError(f"{path}: {exc}")
    return exp


EXPERIMENTS = {p.stem: _load_experiment(p) for p in sorted(EXPERIMENTS_DIR.glob("*.yaml"))}
for _name in config["experiments"]:
    if _name not in EXPERIMENTS:
        raise WorkflowError(f"experiment {_name!r} has no file {EXPERIMENTS_DIR}/{_name}.yaml")


wildcard_constraints:
    experiment="[A-Za-z0-9_]+",
    dataset="[A-Za-z0-9_]+",
    algorithm="[A-Za-z0-9_]+",
    split="[0-9]+",


def remove_stale_temporaries(root):
    stale = list(Path(root).rglob(".*.tmp")) if Path(root).is_dir() else []
    for path in stale:
        path.unlink(missing_ok=True)
    if stale:
        logger.info(f"removed {len(stale)} temporary file(s) left by an interrupted run")


_CHECKED = {}


def checked(path):
    """An input path, after making sure that an existing file there is whole:
    a damaged one (truncated HDF5, unparsable JSON) is moved to
    results/quarantine/ with a warning, so this run recomputes it."""
    if path not in _CHECKED:
        reason = mkl._io.unreadable_reason(path) if os.path.exists(path) else None
        if reason:
            dest = mkl._io.quarantine(path)
            logger.warning(f"{path} is damaged ({reason}): moved to {dest}, recomputing it")
        _CHECKED[path] = True
    return path


def checked_input(pattern):
    """An input function: ``pattern`` formatted with the job's wildcards, checked."""
    return lambda w: checked(pattern.format(**w))


def download_manifest(dataset):
    """The download checkpoint's output: whether (and why not) a dataset is available."""
    return checkpoints.download.get(dataset=dataset).output[0]


def dataset_available(dataset):
    with open(download_manifest(dataset)) as fh:
        return json.load(fh).get("status", "available") != "unavailable"


def splits_per_job(experiment):
    """How many splits of one (dataset, algorithm) a fit job does: config
    splits_per_job, else the experiment's execution.splits_per_job, else 1."""
    exp = EXPERIMENTS[experiment]
    return config.get("splits_per_job", exp.get("execution", {}).get("splits_per_job", 1))


def fit_files(experiment):
    """The fit records of the experiment's available datasets: one file per
    split, or with splits_per_job = b > 1 one file per b consecutive splits
    (splits_{first}-{last}.json). Evaluated after the download checkpoint, so an
    unavailable dataset drops out of the DAG (and is reported as such by the
    aggregate) instead of failing the run."""
    exp = EXPERIMENTS[experiment]
    available = [ds for ds in exp["datasets"] if dataset_available(ds)]
    per_job = splits_per_job(experiment)
    if per_job == 1:
        return [
            checked(f"results/fits/{experiment}/{ds}/{alg}/{split}.json")
            for ds, alg, split in mkl.experiment.fit_jobs(exp, available)
        ]
    return [
        checked(f"results/fits/{experiment}/{ds}/{alg}/splits_{first}-{last}.json")
        for ds, alg, first, last in mkl.experiment.fit_batches(exp, available, per_job)
    ]


def job_splits(w):
    """The splits a fit job works on: its split, or its batch first..last."""
    if hasattr(w, "split"):
        return [int(w.split)]
    return list(range(int(w.first), int(w.last) + 1))


def bank_files(w):
    return [
        checked(f"results/kernels/{w.experiment}/{w.dataset}/{split}.h5") for split in job_splits(w)
    ]


def grid_chunks(w):
    """How many CV jobs the fit of (experiment, dataset, algorithm) is cut into:
    config grid_chunks, else the experiment's execution.grid_chunks, else 1; at
    most one per grid point, and 1 when there is no grid to cross-validate."""
    exp = EXPERIMENTS[w.experiment]
    wanted = config.get("grid_chunks", exp.get("execution", {}).get("grid_chunks", 1))
    entry = mkl.experiment.algorithm(exp, w.algorithm, w.dataset)
    points = len(mkl.evaluate.grid_points(entry.get("grid", {})))
    return 1 if points < 2 else min(wanted, points)


def cv_chunk_files(w):
    """The CV chunks a fit job joins: k per split, split by split."""
    k = grid_chunks(w)
    if k == 1:
        return []
    return [
        checked(f"results/cv/{w.experiment}/{w.dataset}/{w.algorithm}/{split}/{i}.json")
        for split in job_splits(w)
        for i in range(k)
    ]


# Cluster resources, from the sizes of the job's inputs (a retry gets more).
BASE_MEM_MB = 600  # Python, numpy, the libraries


def bank_mb(w, input):
    """The size of the kernel bank a kernels job writes: kernels x n_train x
    (n_train + n_test) x item size, from the data and split files' headers."""
    import h5py

    exp = EXPERIMENTS[w.experiment]
    spec = mkl.experiment.kernels(exp, w.dataset)
    with h5py.File(input.data, "r") as f:
        n_features = f["X"].shape[1]
        n_similarities = f["S"].shape[0] if "S" in f else 0
    with h5py.File(input.splits, "r") as f:
        n_train, n_test = len(f[f"{w.split}/train"]), len(f[f"{w.split}/test"])
    if "similarity" in spec:
        m = max(n_similarities, 1)
    else:
        singles = range(min(spec.get("feature_limit", n_features), n_features))
        m = len(mkl.kernels.expand_bank_spec(spec, n_features, single_features=singles))
    itemsize = 4 if spec.get("dtype") == "float32" else 8
    eig = 2 * m * n_train * n_train * 8 if spec.get("eigendecompose") else 0
    return (m * n_train * (n_train + n_test) * itemsize + eig) / 2**20


def kernels_mem_mb(w, input, attempt):
    return int(BASE_MEM_MB + 2.5 * bank_mb(w, input) * attempt)


def fit_mem_mb(w, input, attempt):
    """One bank in memory (a batch loads its splits' banks in turn) plus the
    inner-CV fold blocks sliced from it."""
    banks = [input.bank] if isinstance(input.bank, str) else list(input.bank)
    largest = max((os.path.getsize(b) for b in banks if os.path.exists(b)), default=0) / 2**20
    return int(BASE_MEM_MB + 2.5 * largest * attempt)


def fit_runtime(w, input, attempt):
    """Minutes: generous, since MKL solvers differ by orders of magnitude."""
    return int((20 * len(job_splits(w)) + input.size_mb / 5) * attempt)


def timing_mem_mb(w, attempt):
    spec = EXPERIMENTS[w.experiment]["figures"][w.figure]
    n, m = (int(w.value), spec["kernels"]) if spec["vary"] == "n" else (spec["n"], int(w.value))
    return int(BASE_MEM_MB + 3 * m * n * n * 8 / 2**20 * attempt)


def figures_of_kind(*kinds):
    """A wildcard constraint matching exactly the figure names of these kinds,
    over all experiments (each figure rule builds its own kind)."""
    names = sorted(
        {
            fig
            for exp in EXPERIMENTS.values()
            for fig, spec in exp.get("figures", {}).items()
            if spec.get("kind", "weights") in kinds
        }
    )
    return "|".join(names) if names else "(?!)"


def mirror_copies(dataset):
    """The mirror files of a dataset that exist now: a new copy reruns its download."""
    found = []
    for source in DATASETS[dataset].get("sources", []):
        for f in source.get("files", [source]):
            if f.get("mirror"):
                for m in config.get("mirrors", []):
                    if (Path(m) / f["mirror"]).is_file():
                        found.append(str(Path(m) / f["mirror"]))
    return found


def experiment_targets(experiments):
    if isinstance(experiments, str):
        experiments = [experiments]
    return [
        path
        for e in experiments
        for path in (
            f"results/tables/{e}/results.md",
            f"results/tables/{e}/paper.md",
            f"results/figures/{e}/accuracy.png",
            *(f"results/figures/{e}/{f}.png" for f in EXPERIMENTS[e].get("figures", {})),
        )
    ]

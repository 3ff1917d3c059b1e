"""Runs the Snakemake workflow end to end on a tiny experiment in a temporary directory."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from mkl.workflow.tables import read_fit_records

from ..conftest import MIRROR, REPO, needs_mirror

pytestmark = pytest.mark.workflow

TINY = {
    "name": "tiny",
    "description": "two datasets, two splits, a four-kernel bank",
    "datasets": ["gmkl_toy1", "sonar"],
    "protocol": {"repetitions": 2, "train_fraction": 0.5, "inner_folds": 3, "seed": 1},
    "kernels": {
        "families": [
            {"family": "gaussian", "widths": [1.0, 4.0]},
            {"family": "polynomial", "degrees": [2]},
            {"family": "linear"},
        ],
        "features": ["all"],
        "normalise": "unit_trace",
        "dtype": "float32",
    },
    "algorithms": {
        "uniform": {"exclude": {"family": "linear"}, "grid": {"C": [1, 100]}},
        "linear": {"select": {"family": "linear", "feature": -1}, "grid": {"C": [0.1, 10]}},
        "easymkl": {"exclude": {"family": "linear"}, "grid": {"lam": [0.1, 0.9]}},
        "memo": {  # on one dataset: what is tested is its weights figure
            "datasets": ["gmkl_toy1"],
            "exclude": {"family": "linear"},
            "params": {"C": 10},
            "grid": {"theta": [0, 1]},
        },
        "easymkl_lam": {
            "estimator": "easymkl",
            "datasets": ["gmkl_toy1"],
            "exclude": {"family": "linear"},
            "sweep": {"lam": [0.0, 0.5]},
        },
    },
    "overrides": {"sonar": {"protocol": {"train_fraction": 0.6}}},
    # every algorithm and both splits of a dataset in one fit job, as the quick
    # experiment runs (a job's start-up, about 4 CPU-s of imports and compiling, is
    # most of a tiny fit); one job per algorithm and split is SMALL's
    "execution": {"splits_per_job": 2, "batch_algorithms": True},
    "figures": {
        "lam_curve": {
            "kind": "sweep",
            "sweep": "easymkl_lam",
            "datasets": ["gmkl_toy1"],
            "metrics": ["accuracy", "n_selected"],
        },
        "by_dataset": {
            "kind": "datasets",
            "datasets": {"gmkl_toy1": 1.0, "sonar": 2.0},
            "algorithms": ["uniform", "easymkl"],
            "metrics": ["accuracy", "seconds"],
        },
        "timing": {
            "kind": "timing",
            "dataset": "gmkl_toy1",
            "vary": "n",
            "values": [40, 60],
            "n": 50,
            "kernels": 3,
            "widths": [1.0, 4.0],
            "repetitions": 2,
            "series": {
                "sum": {"algorithm": "uniform", "params": {"C": 1}},
                "EasyMKL": {"algorithm": "easymkl", "params": {"lam": 0.5, "C": 1}},
            },
        },
        "by_rank": {
            "kind": "timing",
            "dataset": "gmkl_toy1",
            "vary": "rank",
            "values": [10, "dense"],
            "n": 50,
            "kernels": 2,
            "widths": [1.0, 4.0],
            "representation": "nystroem",
            "test_points": 40,
            "repetitions": 1,
            "series": {"sum": {"algorithm": "uniform", "params": {"C": 1}}},
        },
        "weights": {
            "dataset": "gmkl_toy1",
            "series": {
                "MEMO": {"algorithm": "memo", "params": {"theta": 0.0}},
                "EasyMKL": {"algorithm": "easymkl", "params": {"lam": 0.5}},
            },
        },
    },
    "paper": {
        "name": "yang2011_gmkl",
        "tables": {"table4": ["gmkl_toy1"], "table5": ["sonar"]},
        "datasets": {"gmkl_toy1": "toy1"},
        "methods": {"uniform": "uniform"},
    },
}


def batch_record(path, split, algorithm=None):
    """The record of ``split`` (and ``algorithm``) in a fit job's file of several."""
    return next(
        r
        for r in read_fit_records(path)
        if r["split"] == split and algorithm in (None, r["algorithm"])
    )


def snakemake_command(workdir, *args):
    """The command line of a local run of the workflow in ``workdir``, on 2 cores."""
    return [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "-d",
        str(workdir),
        "--cores",
        "2",
        *args,
    ]


def snakemake(workdir, *args):
    return subprocess.run(
        snakemake_command(workdir, *args), capture_output=True, text=True, timeout=600
    )


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "config" / "experiments").mkdir(parents=True)
    shutil.copy(REPO / "config" / "datasets.yaml", tmp_path / "config")
    shutil.copytree(REPO / "resources", tmp_path / "resources")
    (tmp_path / "config" / "experiments" / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    config = {"experiments": ["tiny"], "mirrors": [str(tmp_path / "resources" / "datasets")]}
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return tmp_path


@pytest.mark.workflow(seconds=60)
def test_tiny_experiment_end_to_end(workdir):
    run = snakemake(workdir)
    assert run.returncode == 0, run.stderr[-3000:]
    summary = pd.read_csv(workdir / "results" / "tables" / "tiny" / "results.csv")
    # 2 datasets x 3 algorithms, memo and the 2-point sweep on gmkl_toy1
    assert len(summary) == 9
    sweep = summary[summary["algorithm"].str.startswith("easymkl_lam_")]
    assert sorted(sweep["algorithm"]) == ["easymkl_lam_0", "easymkl_lam_0p5"]
    assert set(sweep["dataset"]) == {"gmkl_toy1"}
    assert summary["accuracy_mean"].between(0, 1).all()
    assert summary["n_splits"].eq(2).all()
    assert summary["spectral_ratio_mean"].ge(1).all()  # tr K / ||K||_F of the learned kernels
    assert summary.loc[summary["algorithm"] == "uniform", "n_kernels"].eq(3).all()
    assert summary.loc[summary["algorithm"] == "linear", "n_kernels"].eq(1).all()
    paper = pd.read_csv(workdir / "results" / "tables" / "tiny" / "paper.csv")
    assert list(paper["dataset"]) == ["gmkl_toy1", "sonar"]
    md = (workdir / "results" / "tables" / "tiny" / "results.md").read_text()
    assert "nan" not in md.lower() and "±" in md
    wide = (workdir / "results" / "tables" / "tiny" / "paper_tables.md").read_text()
    assert "## table4" in wide and "(66.3 ± 5.3)" in wide  # ours (the paper's toy1 uniform)
    assert "tabular" in (workdir / "results" / "tables" / "tiny" / "paper_tables.tex").read_text()
    # the sonar override: 60% of its 208 points train, gmkl_toy1 keeps 50% of 300
    fit = batch_record(workdir / "results/fits/tiny/sonar/splits_0-1.json", 0, "uniform")
    assert fit["n_train"] == int(0.6 * 208)  # scikit-learn rounds the training part down
    fit = batch_record(workdir / "results/fits/tiny/gmkl_toy1/splits_0-1.json", 1, "uniform")
    assert fit["n_train"] == 150
    # one fit job per dataset: its records, algorithm by algorithm (in the order of
    # the experiment file, whose keys yaml.safe_dump sorted), split by split
    records = read_fit_records(workdir / "results/fits/tiny/sonar/splits_0-1.json")
    assert [(r["algorithm"], r["split"]) for r in records] == [
        (alg, split) for alg in ("easymkl", "linear", "uniform") for split in (0, 1)
    ]
    assert (
        sorted(p.name for p in (workdir / "results/fits/tiny").rglob("*.json"))
        == ["splits_0-1.json"] * 2
    )
    assert "| -" in (workdir / "results/tables/tiny/results.md").read_text()  # sweep not on sonar
    figures = workdir / "results" / "figures" / "tiny"
    curve = json.loads((figures / "lam_curve.json").read_text())
    assert {(p["metric"], p["x"]) for p in curve["points"]} == {
        (m, x) for m in ("accuracy", "n_selected") for x in (0.0, 0.5)
    }
    per_split = pd.read_csv(workdir / "results" / "tables" / "tiny" / "per_split.csv")
    acc = per_split[per_split["algorithm"] == "easymkl_lam_0p5"]["accuracy"]
    point = [p for p in curve["points"] if p["metric"] == "accuracy" and p["x"] == 0.5][0]
    assert point["mean"] == pytest.approx(acc.mean()) and point["n"] == 2
    by_ds = json.loads((figures / "by_dataset.json").read_text())
    assert {(p["line"], p["x"]) for p in by_ds["points"] if p["metric"] == "seconds"} == {
        (a, x) for a in ("uniform", "easymkl") for x in (1.0, 2.0)
    }
    timing = json.loads((figures / "timing.json").read_text())
    assert len(timing["records"]) == 2 * 2 * 2  # 2 sizes x 2 repetitions x 2 series
    assert {r["n"] for r in timing["records"]} == {40, 60}
    assert all(r["seconds"] > 0 and r["floor_seconds"] > 0 for r in timing["records"])
    assert "| sum " in (figures / "timing.md").read_text()
    by_rank = json.loads((figures / "by_rank.json").read_text())
    assert {(r["representation"], r["series"]) for r in by_rank["records"]} == {
        ("nystroem-10", "sum"),
        ("dense", "sum"),
    }
    assert all(0 <= r["test_accuracy"] <= 1 for r in by_rank["records"])
    assert "| sum (dense) | dense" in (figures / "by_rank.md").read_text()
    for name in ("lam_curve", "by_dataset", "timing", "by_rank"):
        assert (figures / f"{name}.png").stat().st_size > 1000
        assert (figures / f"{name}.pdf").stat().st_size > 1000
    weights = json.loads((workdir / "results" / "figures" / "tiny" / "weights.json").read_text())
    assert set(weights["weights"]) == {"MEMO", "EasyMKL"} and len(weights["kernels"]) == 3
    for w in weights["weights"].values():
        assert abs(sum(w) - 1) < 1e-9 and min(w) >= 0
    assert (workdir / "results" / "figures" / "tiny" / "weights.pdf").stat().st_size > 1000
    for ext in ("png", "pdf"):
        assert (workdir / "results" / "figures" / "tiny" / f"results.{ext}").stat().st_size > 1000
    # every job wrote one log; nothing temporary left behind; nothing written elsewhere
    assert not list((workdir / "results").rglob("*.tmp"))
    assert {p.name for p in workdir.iterdir()} == {"config", "resources", "results", ".snakemake"}
    # a second run has nothing to do
    again = snakemake(workdir, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr
    # the HTML report builds
    rep = snakemake(workdir, "--report", str(workdir / "report.html"))
    assert rep.returncode == 0, rep.stderr[-2000:]
    assert (workdir / "report.html").stat().st_size > 10000


TASKS = {
    "reg": {
        "name": "reg",
        "task": "regression",
        "datasets": ["diabetes"],
        "protocol": {"repetitions": 2, "train_fraction": 0.5, "inner_folds": 2, "seed": 1},
        "execution": {"splits_per_job": 2},
        "kernels": {
            "families": [{"family": "gaussian", "widths": [0.1, 1.0]}, {"family": "linear"}],
            "features": ["all"],
            "normalise": "unit_diagonal",
        },
        "algorithms": {
            "svr_rbf": {
                "estimator": "linear",
                "select": {"family": "gaussian"},
                "grid": {"kernel_index": [0, 1], "C": [10, 100]},
                "params": {"epsilon": 20},
            },
            "level": {"grid": {"C": [10, 100], "epsilon": [20]}},
        },
    },
    "nov": {
        "name": "nov",
        "task": "novelty",
        "datasets": ["gmkl_toy1"],
        "protocol": {"repetitions": 2, "train_fraction": 0.5, "inner_folds": 2, "seed": 1},
        "execution": {"splits_per_job": 2, "batch_algorithms": True},
        "kernels": {
            "families": [{"family": "gaussian", "widths": [0.1, 1.0]}],
            "features": ["all"],
        },
        "algorithms": {"uniform": {"grid": {"nu": [0.1, 0.5]}}, "simplemkl": {}},
    },
}


def _add_unavailable_dataset(workdir):
    """A dataset ``ghost`` in the registry whose only source cannot be reached."""
    registry = yaml.safe_load((workdir / "config" / "datasets.yaml").read_text())
    registry["ghost"] = {
        "title": "not obtainable offline",
        "sources": [
            {"format": "pmlb", "url": "http://127.0.0.1:9/ghost.tsv.gz", "sha256": "0" * 64}
        ],
    }
    (workdir / "config" / "datasets.yaml").write_text(yaml.safe_dump(registry))


@pytest.mark.workflow(seconds=40)
def test_regression_and_novelty_experiments_end_to_end(workdir):
    """task: regression on diabetes (from the installed scikit-learn: shuffled
    splits, RMSE tables, an R^2 figure) and task: novelty on GMKL's toy data
    (one-class fits on each training part's largest class, AUC tables). The
    novelty experiment also lists ``ghost``, a dataset that cannot be
    downloaded: an unavailable dataset is reported, not fatal
    (:func:`_check_unavailable_dataset`, on the same run)."""
    _add_unavailable_dataset(workdir)
    for name, exp in TASKS.items():
        if name == "nov":
            exp = {**exp, "datasets": ["ghost", *exp["datasets"]]}
        (workdir / "config" / "experiments" / f"{name}.yaml").write_text(yaml.safe_dump(exp))
    config = yaml.safe_load((workdir / "config" / "config.yaml").read_text())
    (workdir / "config" / "config.yaml").write_text(
        yaml.safe_dump({**config, "experiments": ["reg", "nov"]})
    )
    run = snakemake(workdir, "--config", "download_timeout=2")
    assert run.returncode == 0, run.stderr[-3000:]
    _check_unavailable_dataset(workdir, run)
    tables = workdir / "results" / "tables"
    reg = pd.read_csv(tables / "reg" / "results.csv")
    assert set(reg["algorithm"]) == {"svr_rbf", "level"} and reg["n_splits"].eq(2).all()
    assert reg["rmse_mean"].between(40, 90).all() and reg["accuracy_mean"].isna().all()
    assert "test RMSE, mean ± std over splits" in (tables / "reg" / "results.md").read_text()
    fit = batch_record(workdir / "results/fits/reg/diabetes/level/splits_0-1.json", 0)
    assert set(fit["test"]) == {"rmse", "mae", "r2"} and fit["n_train"] == 221
    assert fit["selected_params"]["epsilon"] == 20
    nov = pd.read_csv(tables / "nov" / "results.csv")
    assert nov["auc_mean"].between(0, 1).all() and nov["n_splits"].eq(2).all()
    assert "test AUC (%)" in (tables / "nov" / "results.md").read_text()
    fit = batch_record(workdir / "results/fits/nov/gmkl_toy1/splits_0-1.json", 1, "uniform")
    assert set(fit["test"]) == {"auc"} and fit["selected_params"]["nu"] in (0.1, 0.5)
    for name in TASKS:
        assert (workdir / "results" / "figures" / name / "results.png").stat().st_size > 1000


def _check_unavailable_dataset(workdir, run):
    """An unavailable dataset is reported, not fatal (on the run of the test
    above): ``ghost`` cannot be downloaded; the run says so once and finishes
    the other datasets' fits, the tables say which dataset is missing, and
    the missing dataset is settled (a second run has nothing to do)."""
    lines = [ln for ln in run.stderr.splitlines() if ln.startswith("error in rule download")]
    assert len(lines) == 1
    assert "dataset 'ghost' is not available: tried http://127.0.0.1:9/ghost.tsv.gz" in lines[0]
    fits = workdir / "results" / "fits" / "nov"
    assert not (fits / "ghost").exists()
    records = read_fit_records(fits / "gmkl_toy1" / "splits_0-1.json")  # one job: both
    assert [(r["algorithm"], r["split"]) for r in records] == [  # algorithms, both splits
        (alg, split) for alg in sorted(TASKS["nov"]["algorithms"]) for split in (0, 1)
    ]
    md = (workdir / "results" / "tables" / "nov" / "results.md").read_text()
    assert "| ghost     | not available" in md and "Not available:\n- ghost: dataset 'ghost'" in md
    again = snakemake(workdir, "-n", "--config", "download_timeout=2")
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.workflow(seconds=4)
def test_an_empty_experiment_file_fails_its_own_target_alone(workdir):
    """Issue 60: an empty file beside a good one. The workflow still loads
    (a dry run plans the good experiment's jobs), and the empty one's target
    fails, naming the file and the problem."""
    (workdir / "config" / "experiments" / "mine.yaml").write_text("")
    run = snakemake(workdir, "mine", "tiny", "--dry-run")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "unusable_experiment" in run.stdout and "rule aggregate" in run.stdout
    run = snakemake(workdir, "mine")
    assert run.returncode != 0
    assert (
        "config/experiments/mine.yaml: an experiment file must be a mapping, the file holds empty"
    ) in run.stderr


@pytest.mark.workflow(seconds=5)
def test_lint_is_clean():
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", "--lint"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Congratulations, your workflow is in a good condition!" in run.stdout + run.stderr, (
        run.stdout[-3000:] + run.stderr[-3000:]
    )


TINY_SIMILARITY = {
    "name": "tiny_sim",
    "description": "Chen et al.'s Aural Sonar matrix and generated similarities for sonar",
    "datasets": ["auralsonar", "sonar"],
    "protocol": {
        "repetitions": 2,
        "train_fraction": 0.7,
        "inner_folds": 3,
        "seed": 3,
        "balanced_classes": True,
    },
    "execution": {"splits_per_job": 2, "batch_algorithms": True},
    "kernels": {
        "similarity": {"generator": "perturbed_gaussian", "width": 4.0, "noise": 0.1, "seed": 0},
        "eigendecompose": True,
    },
    "algorithms": {
        "denoise": {"grid": {"C": [0.1, 10]}},
        "shift": {"params": {"C": 1}},  # (C set: no default C grid to cross-validate)
        "similarity_features": {"params": {"C": 1}},
        # the kernel learners on the measured similarities only (the generated
        # ones are the bank's test)
        "indsvm": {"datasets": ["auralsonar"], "params": {"C": 1, "max_iter": 30}},
        "eskl": {"datasets": ["auralsonar"], "params": {"C": 1, "loss": "l1", "max_iter": 20}},
        "emkl": {"datasets": ["auralsonar"], "params": {"C": 1, "max_iter": 5}},
        "rekl": {"datasets": ["auralsonar"], "params": {"C": 1, "max_iter": 10}},
    },
}


@needs_mirror()
@pytest.mark.workflow(seconds=35)
def test_similarity_experiment_end_to_end(workdir):
    from mkl.banks.kernel_bank import KernelBank

    (workdir / "config" / "experiments" / "tiny_sim.yaml").write_text(
        yaml.safe_dump(TINY_SIMILARITY)
    )
    config = {
        "experiments": ["tiny_sim"],
        "mirrors": [str(workdir / "resources" / "datasets"), str(MIRROR)],
    }
    (workdir / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    run = snakemake(workdir)
    assert run.returncode == 0, run.stderr[-3000:]
    summary = pd.read_csv(workdir / "results" / "tables" / "tiny_sim" / "results.csv")
    assert len(summary) == 10  # 2 datasets x 3 algorithms, 4 on auralsonar
    assert summary["accuracy_mean"].between(0.5, 1).all()
    for dataset, source in (("auralsonar", "AuraSonar:A"), ("sonar", "perturbed_gaussian")):
        bank = KernelBank.load(workdir / "results" / "kernels" / "tiny_sim" / dataset / "0.h5")
        assert source in bank.attrs["similarities"]
        assert bank.eigenvalues.shape == bank.train.shape[:2]
        assert np.bincount(bank.y_train).tolist()[0] == np.bincount(bank.y_train).tolist()[1]
        assert bank.eigenvalues.min() < 0  # indefinite


SMALL = {
    "name": "small",
    "description": "one dataset, two splits, grids to cut into chunks",
    "datasets": ["gmkl_toy1"],
    "protocol": {"repetitions": 2, "train_fraction": 0.5, "inner_folds": 3, "seed": 3},
    "kernels": {
        "families": [{"family": "gaussian", "widths": [1.0, 4.0]}, {"family": "linear"}],
        "features": ["all"],
        "normalise": "unit_trace",
    },
    "algorithms": {
        "uniform": {"grid": {"C": [0.1, 1, 10, 100]}},
        "easymkl": {"grid": {"lam": [0.0, 0.5, 1.0]}},
        "level": {"params": {"C": 10}},
    },
}


def _small_workdir(root, experiment=SMALL, **config):
    root.mkdir()
    (root / "config" / "experiments").mkdir(parents=True)
    shutil.copy(REPO / "config" / "datasets.yaml", root / "config")
    shutil.copy(REPO / "resources" / "paper_results.csv", root / "paper_results.csv")
    (root / "config" / "experiments" / "small.yaml").write_text(yaml.safe_dump(experiment))
    cfg = {"experiments": ["small"], "paper_results": "paper_results.csv", **config}
    (root / "config" / "config.yaml").write_text(yaml.safe_dump(cfg))
    return root


def _tables(root):
    tables = root / "results" / "tables" / "small"
    per_split = pd.read_csv(tables / "per_split.csv").drop(columns=["seconds"])
    return (tables / "results.md").read_text(), per_split


@pytest.mark.workflow(seconds=80)
def test_grid_chunks_fan_out_without_changing_the_tables(batched_run, small_run):
    """The CV of every grid in 1 job (the shared small run) or in k = 2 jobs
    (the batched run, whose fit jobs join their splits' chunks): for each split
    of both, the same CV scores at every grid point, the same selections, test
    metrics and per-split table, with chunks of equal (uniform's 4 points) and
    unequal sizes (easymkl's 3). The batched run draws a third split, so its
    summary table is not the small run's:
    test_splits_per_job_batches_fits_without_changing_the_tables checks it
    split by split too. (k is capped at the grid's size: test_machinery.py's
    test_grid_chunks_at_most_one_per_grid_point.)"""
    assert not (small_run / "results" / "cv").exists()
    cv = batched_run / "results" / "cv" / "small" / "gmkl_toy1"
    # uniform and easymkl: 2 chunks, level (no grid): none; for each batch of
    # splits (0-1 and 2-2), a chunk's file holding the CV of the batch's splits
    chunks = {
        alg: [len(list((cv / alg / b).glob("*.json"))) for b in ("splits_0-1", "splits_2-2")]
        for alg in SMALL["algorithms"]
    }
    assert chunks == {"uniform": [2, 2], "easymkl": [2, 2], "level": [0, 0]}
    chunk = json.loads((cv / "easymkl" / "splits_0-1" / "1.json").read_text())
    assert set(chunk["records"]) == {"0", "1"} and chunk["indices"] == [2]  # of 3 points
    fits = "results/fits/small/gmkl_toy1"
    for alg in ("uniform", "easymkl"):
        for split in (0, 1):
            chunked = batch_record(batched_run / fits / "splits_0-1.json", split, alg)
            one_job = json.loads((small_run / fits / alg / f"{split}.json").read_text())
            assert [(g["params"], g["fold_scores"]) for g in chunked["grid"]] == [
                (g["params"], g["fold_scores"]) for g in one_job["grid"]
            ], f"{alg}, split {split}: the CV of the grid in chunks differs from one job's"
            assert chunked["selected_params"] == one_job["selected_params"]
            assert chunked["test"] == one_job["test"]
    _, per_split = _tables(batched_run)
    _, per_split_one = _tables(small_run)
    assert_same_fits(per_split[per_split["split"] < 2], per_split_one)


def small_reference_run(root):
    """One uninterrupted run of ``SMALL`` in ``root`` (the shared ``small_run``)."""
    _small_workdir(root)
    run = snakemake(root)
    assert run.returncode == 0, run.stderr[-3000:]


def batched_small_run(root):
    """``SMALL`` on 3 splits, two per fit job (batches 0-1 and 2-2), each job
    fitting every algorithm (``batch_algorithms``), with the grids also cut
    into 2 CV chunks (a job joins its algorithms' and splits' chunks) and
    temporary banks, in ``root``; then a dry run, its output in
    ``root.parent / "rerun.log"`` (the shared ``batched_run``). One run shows
    what batching, CV chunks and temporary banks must leave unchanged (about
    45 CPU-s less than a separate run for the chunks). Each CV chunk is a job
    of the fit job's batch of splits (about 3 CPU-s of start-up each: 2
    chunks, not 4, make 8 chunk jobs, not 14; a job per split would make 12).
    The run also has ``BROKEN``, an algorithm whose every fit fails, and keeps
    its output in ``root.parent / "run.log"``."""
    three_splits = {
        **SMALL,
        "protocol": {**SMALL["protocol"], "repetitions": 3},
        "algorithms": {**SMALL["algorithms"], **BROKEN},
    }
    _small_workdir(
        root,
        experiment=three_splits,
        splits_per_job=2,
        batch_algorithms=True,
        grid_chunks=2,
        temporary_banks=True,
    )
    run = snakemake(root)
    (root.parent / "run.log").write_text(run.stdout + run.stderr)
    assert run.returncode == 0, run.stderr[-3000:]
    again = snakemake(root, "-n")
    (root.parent / "rerun.log").write_text(again.stdout + again.stderr)


# an algorithm whose every fit fails (lam = 2 is refused), in the batched run:
# test_a_failing_fit_is_marked_and_the_others_finish
BROKEN = {"broken": {"estimator": "easymkl", "params": {"lam": 2.0}}}


def assert_same_fits(per_split, reference):
    """The per-split table, without the failing algorithm's rows, has the
    reference's rows and values (those rows' empty cells made integer columns
    float and boolean ones object: dtypes are not compared)."""
    working = per_split[~per_split["algorithm"].isin(BROKEN)].reset_index(drop=True)
    pd.testing.assert_frame_equal(working, reference, check_dtype=False)


@pytest.mark.workflow(seconds=1)
def test_splits_per_job_batches_fits_without_changing_the_tables(batched_run, small_run):
    """3 splits, two per job (batches 0-1 and 2-2), every algorithm in the
    job (``batch_algorithms``), with the grids also cut into CV chunks, so a
    job joins its algorithms' and splits' chunks: splits 0 and 1 have the
    records of the shared run's one job per algorithm and split (the seeds of
    the first splits do not depend on how many are drawn); a rerun has nothing
    to do."""
    root = batched_run
    fits = root / "results" / "fits" / "small" / "gmkl_toy1"
    assert sorted(p.name for p in fits.rglob("*.json")) == ["splits_0-1.json", "splits_2-2.json"]
    # the grids in CV chunks (uniform 2, easymkl 2; level has none), x 2 batches
    assert len(list((root / "results" / "cv").rglob("*.json"))) == 2 * (2 + 2)
    batch = read_fit_records(fits / "splits_0-1.json")
    algorithms = ["broken", "easymkl", "level", "uniform"]  # the experiment file's (sorted)
    assert [(r["algorithm"], r["split"]) for r in batch] == [
        (alg, split) for alg in algorithms for split in (0, 1)
    ]
    _, per_split = _tables(root)
    _, per_split_one = _tables(small_run)
    assert sorted(per_split["split"].unique()) == [0, 1, 2]
    assert_same_fits(per_split[per_split["split"] < 2], per_split_one)
    again = (root.parent / "rerun.log").read_text()
    assert "Nothing to be done" in again, f"a rerun of the batched run has jobs to do: {again}"


@pytest.mark.workflow(seconds=1)
def test_temporary_banks_are_removed_after_use(batched_run):
    """With ``temporary_banks``, the batched run (test above) finished its
    tables and left no kernel bank behind, and a rerun does not rebuild the
    removed banks: it has nothing to do."""
    root = batched_run
    assert (root / "results" / "tables" / "small" / "results.md").exists()
    banks = list((root / "results" / "kernels").rglob("*.h5"))
    assert not banks, f"temporary banks left behind: {banks}"
    again = (root.parent / "rerun.log").read_text()
    assert "Nothing to be done" in again, f"a rerun rebuilds the temporary banks: {again}"


@pytest.mark.workflow(seconds=1)
def test_a_failing_fit_is_marked_and_the_others_finish(batched_run):
    """An algorithm whose every fit fails (``broken``: lam = 2 is refused) in the
    batched run, in the jobs that fit the other algorithms too: the run goes on
    and succeeds, the error is printed, each
    failed split is a record with its error, and the tables mark the
    algorithm failed beside the others' results."""
    root = batched_run
    said = (root.parent / "run.log").read_text()
    assert "error in rule fit" in said and "lam" in said
    fits = root / "results/fits/small/gmkl_toy1"
    records = read_fit_records(fits / "splits_0-1.json") + read_fit_records(
        fits / "splits_2-2.json"
    )
    records = [r for r in records if r["algorithm"] == "broken"]
    assert [r["split"] for r in records] == [0, 1, 2]
    for record in records:
        assert record["status"] == "failed" and "InputError" in record["error"]
    md = (root / "results/tables/small/results.md").read_text()
    assert "| failed" in md and "Failed fits (the error of each):" in md
    summary = pd.read_csv(root / "results/tables/small/results.csv")
    ok = summary[summary["algorithm"] != "broken"]
    assert ok["accuracy_mean"].between(0, 1).all() and ok["n_failed"].eq(0).all()
    broken = summary[summary["algorithm"] == "broken"].iloc[0]
    assert broken["n_failed"] == 3 and broken["n_splits"] == 0

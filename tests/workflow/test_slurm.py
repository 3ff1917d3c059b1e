"""The cluster profile on a real SLURM: a single-node SLURM started on
localhost (tests/slurm_cluster.py, installed from Debian's packages when
missing), a cut-down small experiment run through ``profiles/slurm`` with
SLURM's own sbatch/squeue, and its per-split results compared with the
shared local run's (tests/workflow/conftest.py)."""

import os
import signal
import subprocess
import sys

import pandas as pd
import pytest

from ..conftest import REPO
from .slurm_cluster import LocalSlurm, install_if_missing
from .test_snakemake import SMALL, _small_workdir, _tables

pytestmark = [pytest.mark.workflow, pytest.mark.slurm]


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    why = install_if_missing()
    if why:
        if os.environ.get("MKL_REQUIRE_SLURM"):
            pytest.fail(why)
        pytest.skip(why)
    cluster = LocalSlurm(tmp_path_factory.mktemp("slurm"))
    # a SIGTERM (a CI timeout) unwinds like an error, so the daemons are stopped
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        signal.signal(signal.SIGTERM, previous)


# The small experiment cut to what the profile has to show: one split, a grid
# that --config grid_chunks=2 cuts into CV chunks (uniform's), which join their
# fit inside the profile's group of fit jobs, and a fit without a grid
# (level's), beside the jobs that run alone (normalise, split, kernels); the
# Snakefile's localrules (download, the tables and figures) run in Snakemake's
# own process. Each SLURM job starts Snakemake twice (the batch script, then
# its step: about 5 CPU-s) besides its own work: the daemons and jobs took 48
# CPU-s for this experiment's jobs, 92 for the whole small experiment's, before
# the localrules.
ON_SLURM = dict(
    SMALL,
    protocol={**SMALL["protocol"], "repetitions": 1},
    algorithms={name: SMALL["algorithms"][name] for name in ("uniform", "level")},
)


@pytest.mark.workflow(seconds=70)
def test_small_experiment_through_the_slurm_profile(tmp_path, slurm, small_run):
    """The experiment through profiles/slurm (grids in CV chunks), every job
    known to SLURM as completed, and the same per-split results as the shared
    local run of the small experiment (each grid's CV in its fit job; its
    first split is this run's only one, drawn from the same seed)."""
    root = _small_workdir(tmp_path / "slurm", ON_SLURM)
    cmd = [
        sys.executable, "-m", "snakemake",
        "-s", str(REPO / "Snakefile"),
        "-d", str(root),
        "--profile", str(REPO / "profiles" / "slurm"),
        "--default-resources", "slurm_partition=debug", "mem_mb=1000", "runtime=30",
        "--slurm-no-account",
        "--slurm-status-command", "squeue",
        "--slurm-init-seconds-before-status-checks", "1",
        "--jobs", "4",
        "--cores", "2",  # per group job: the node has 2 CPUs
        "--config", "grid_chunks=2",
    ]  # fmt: skip
    run = subprocess.run(cmd, env=slurm.env, capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    # the jobs ran under SLURM: it knows them, finished
    jobs = subprocess.run(
        ["squeue", "-h", "-t", "all", "-o", "%T %j"], env=slurm.env, capture_output=True, text=True
    ).stdout.split("\n")
    states = [line.split()[0] for line in jobs if line.strip()]
    assert states and set(states) == {"COMPLETED"}, jobs
    assert len(list((root / "results" / "cv").rglob("*.json"))) == 2, "uniform's 2 CV chunks"
    _, per_split = _tables(root)
    _, per_split_local = _tables(small_run)
    local = per_split_local[
        (per_split_local["split"] == 0) & per_split_local["algorithm"].isin(ON_SLURM["algorithms"])
    ]
    pd.testing.assert_frame_equal(per_split, local.reset_index(drop=True))


@pytest.mark.workflow(seconds=4)
@pytest.mark.parametrize("profile", ["slurm", "generic"])
def test_cluster_profiles_plan_the_paper_runs(tmp_path, profile):
    """Each profile is valid for its executor and groups the fits into batches
    (a dry run: nothing is submitted)."""
    root = _small_workdir(tmp_path / profile)
    cmd = [
        sys.executable, "-m", "snakemake",
        "-s", str(REPO / "Snakefile"),
        "-d", str(root),
        "--profile", str(REPO / "profiles" / profile),
        "-n",
    ]  # fmt: skip
    if profile == "slurm":
        cmd += ["--slurm-no-account"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    assert "download" in run.stdout + run.stderr

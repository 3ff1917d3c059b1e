"""The cluster profile on a real SLURM: a single-node SLURM started on
localhost (tests/slurm_cluster.py, installed from Debian's packages when
missing), the small experiment run through ``profiles/slurm`` with SLURM's
own sbatch/squeue, and its tables compared with a local run's."""

import os
import signal
import subprocess
import sys

import pandas as pd
import pytest

from ..conftest import REPO
from .slurm_cluster import LocalSlurm, install_if_missing
from .test_snakemake import _small_workdir, _tables

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


def test_small_experiment_through_the_slurm_profile(tmp_path, slurm, small_run):
    local = small_run  # the same experiment run locally (tests/workflow/conftest.py)
    root = _small_workdir(tmp_path / "slurm")
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
    md, per_split = _tables(root)
    md_local, per_split_local = _tables(local)
    assert md == md_local
    pd.testing.assert_frame_equal(per_split, per_split_local)


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

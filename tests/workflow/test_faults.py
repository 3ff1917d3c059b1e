"""Faults: damaged outputs are detected and recomputed, a run killed with
SIGKILL resumes without redoing finished work. (A failing fit does not stop
the others and the table marks it: test_snakemake.py, on the batched run.)"""

import os
import signal
import subprocess
import sys
import time

import h5py
import pandas as pd
import pytest

from ..conftest import REPO
from .conftest import copy_run
from .test_caching import scheduled, snapshot
from .test_snakemake import _small_workdir, _tables, snakemake

pytestmark = pytest.mark.workflow


@pytest.fixture
def reference(small_run):
    """The tables of one uninterrupted run of the small experiment."""
    return _tables(small_run)


def _assert_same_tables(root, reference):
    md, per_split = _tables(root)
    assert md == reference[0]
    pd.testing.assert_frame_equal(per_split, reference[1])


@pytest.mark.workflow(seconds=10)
def test_truncated_bank_and_garbled_fit_are_recomputed(tmp_path, small_run, reference):
    root = copy_run(small_run, tmp_path / "run")
    bank = root / "results/kernels/small/gmkl_toy1/0.h5"
    data = bank.read_bytes()
    bank.write_bytes(data[: len(data) // 2])  # a disk that filled up
    fit = root / "results/fits/small/gmkl_toy1/uniform/1.json"
    fit.write_text('{"dataset": "gmkl_toy1", "test": {"accur')
    run = snakemake(root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "0.h5 is damaged" in run.stderr and "1.json is damaged" in run.stderr
    quarantined = sorted(p.name.split(".")[0] for p in (root / "results/quarantine").rglob("*.*"))
    assert quarantined == ["0", "1"]
    _assert_same_tables(root, reference)
    # everything is whole again: nothing left to do
    assert "Nothing to be done" in "".join((lambda r: r.stdout + r.stderr)(snakemake(root, "-n")))


@pytest.mark.workflow(seconds=19)
def test_bank_damaged_inside_is_caught_by_its_checksum(tmp_path, small_run, reference):
    root = copy_run(small_run, tmp_path / "run")
    bank = root / "results/kernels/small/gmkl_toy1/1.h5"
    with h5py.File(bank, "r") as f:
        offset = f["train"].id.get_offset()
        nbytes = f["train"].id.get_storage_size()
    with open(bank, "r+b") as fh:  # the file still opens; its kernel values are wrong
        fh.seek(offset + nbytes // 2)
        fh.write(b"\x7f" * 64)
    (root / "results/fits/small/gmkl_toy1/easymkl/1.json").unlink()  # to be refitted
    run = snakemake(root)
    assert run.returncode != 0
    assert "does not match its checksum" in run.stderr and "run again to recompute" in run.stderr
    assert not bank.exists() and list((root / "results/quarantine").rglob("1.h5.*"))
    run = snakemake(root)
    assert run.returncode == 0, run.stderr[-3000:]
    _assert_same_tables(root, reference)


@pytest.mark.workflow(seconds=37)
def test_sigkill_mid_run_resumes_without_recomputing_finished_jobs(tmp_path, reference):
    """A run on 1 core killed (with its job) once the first fit file is written:
    after --unlock, a dry run plans the other fit jobs and changes nothing, and
    the resumed run keeps the finished fits and ends with the reference's tables.
    The fits run two splits per job, as the shipped experiments' do: 3 fit jobs
    instead of 6 (about 5 CPU-s less), still a kill between the first and the last."""
    root = _small_workdir(tmp_path / "run", splits_per_job=2)
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(root)]
    proc = subprocess.Popen(
        [*cmd, "--cores", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the kill reaches the running job too
    )
    fits = root / "results" / "fits" / "small"
    deadline = time.time() + 300
    while time.time() < deadline and not list(fits.rglob("*.json")):
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = {p: p.stat().st_mtime_ns for p in fits.rglob("*.json")}
    assert 1 <= len(done) < 3, "the kill should land between the first and the last fit job"
    unlock = subprocess.run([*cmd, "--unlock"], capture_output=True, text=True, timeout=120)
    assert unlock.returncode == 0, unlock.stderr[-2000:]
    # a dry run on the killed run's results/ plans the rest and changes nothing
    before = snapshot(root)
    plan = scheduled(snakemake(root, "-n"))
    assert plan.get("fit", 0) + plan.get("fit_batch", 0) == 3 - len(done)
    assert snapshot(root) == before
    run = snakemake(root)
    assert run.returncode == 0, run.stderr[-3000:]
    for path, mtime in done.items():
        assert path.stat().st_mtime_ns == mtime, f"{path} was recomputed"
    assert len(list(fits.rglob("*.json"))) == 3  # uniform, easymkl, level: splits 0-1 each
    assert not list((root / "results").rglob(".*.tmp"))  # a killed job's temporary file is gone
    _assert_same_tables(root, reference)

"""Finished runs shared by the workflow tests that only read them (or copy
them before changing anything), instead of computing the same run again in
each test (about 25 CPU-s a run of the small experiment): one uninterrupted
run of the small experiment, and the batched run of
test_snakemake.py's tests of ``splits_per_job`` and ``temporary_banks``."""

import fcntl
import shutil

import pytest

from .test_snakemake import batched_small_run, small_reference_run


def shared_run(tmp_path_factory, worker_id, name, make):
    """The directory ``make(root)`` fills, made once per test session.

    Under pytest-xdist each worker has its own session: the run is made once,
    in the directory the workers share, by the first worker that asks for it;
    the others wait on a lock, then read it. A worker whose ``make`` failed
    leaves no mark of completion, and the next one to ask makes it again."""
    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent
    root, done = shared / name / "run", shared / name / "done"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(root.parent, ignore_errors=True)  # an earlier worker failed here
            root.parent.mkdir()
            make(root)
            done.touch()
    return root


@pytest.fixture(scope="session")
def small_run(tmp_path_factory, worker_id):
    """The directory of one uninterrupted run of ``SMALL``; read it, or
    :func:`copy_run` it before changing anything."""
    return shared_run(tmp_path_factory, worker_id, "small_reference", small_reference_run)


@pytest.fixture(scope="session")
def batched_run(tmp_path_factory, worker_id):
    """The directory of a run of ``SMALL`` on 3 splits, two per fit job, its
    grids in 2 CV chunks, its banks temporary and one algorithm failing, with
    its output (``run.log`` beside it) and a dry run's after it
    (``rerun.log``); read them only."""
    return shared_run(tmp_path_factory, worker_id, "batched", batched_small_run)


def copy_run(src, dst):
    """A finished run's directory, modification times kept, so that Snakemake
    finds it as up to date as the original."""
    shutil.copytree(src, dst, symlinks=True)
    return dst

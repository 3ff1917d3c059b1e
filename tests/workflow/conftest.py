"""One completed run of the small experiment, shared by the workflow tests that
start from (or compare with) a finished run: each copies it, instead of
computing the same run again (about 20 s of jobs each)."""

import fcntl
import shutil

import pytest

from .test_snakemake import _small_workdir, snakemake


@pytest.fixture(scope="session")
def small_run(tmp_path_factory, worker_id):
    """The directory of one uninterrupted run of ``SMALL``; read it, or
    :func:`copy_run` it before changing anything.

    Under pytest-xdist each worker has its own session: the run is made once,
    in the directory the workers share, by the first worker that asks for it;
    the others wait on a lock, then read it."""
    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent
    root, done = shared / "small_reference" / "run", shared / "small_reference" / "done"
    with open(shared / "small_reference.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(root.parent, ignore_errors=True)  # an earlier worker failed here
            root.parent.mkdir()
            _small_workdir(root)
            run = snakemake(root)
            assert run.returncode == 0, run.stderr[-3000:]
            done.touch()
    return root


def copy_run(src, dst):
    """A finished run's directory, modification times kept, so that Snakemake
    finds it as up to date as the original."""
    shutil.copytree(src, dst, symlinks=True)
    return dst

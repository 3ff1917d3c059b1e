"""One completed run of the small experiment, shared by the workflow tests that
start from (or compare with) a finished run: each copies it, instead of
computing the same run again (about 40 s of jobs each)."""

import shutil

import pytest

from .test_snakemake import _small_workdir, snakemake


@pytest.fixture(scope="session")
def small_run(tmp_path_factory):
    """The directory of one uninterrupted run of ``SMALL``; read it, or
    :func:`copy_run` it before changing anything."""
    root = _small_workdir(tmp_path_factory.mktemp("small_reference") / "run")
    run = snakemake(root)
    assert run.returncode == 0, run.stderr[-3000:]
    return root


def copy_run(src, dst):
    """A finished run's directory, modification times kept, so that Snakemake
    finds it as up to date as the original."""
    shutil.copytree(src, dst, symlinks=True)
    return dst

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings
from threadpoolctl import threadpool_limits

# CI runs a fixed set of examples (reproducible); developers explore randomly.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# The end-to-end tests start hundreds of Python processes (Snakemake's jobs).
# With PYTHONDONTWRITEBYTECODE set, as on the machines here, none keeps the
# modules it compiles and each compiles them from source again: the small
# experiment's run took 40.6 CPU-s instead of 33.4, and README command 1 in a
# fresh environment (whose scikit-learn, SciPy, pandas and Snakemake nothing
# has compiled yet) 467 instead of 293. The processes these tests start may
# write them (into __pycache__/ directories, ignored in the repository).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# BLAS and OpenMP on one thread, in every worker and every process the tests
# start, as scikit-learn's test suite does under pytest-xdist: the workers
# (-n auto: one per CPU) already fill the CPUs, and OpenBLAS's
# threads spin while they wait for work, taking the CPU from the others. The
# unit tests took 244 CPU-s with OpenBLAS's default threads on 2 CPUs and
# 155 on one, back to back (SpicyMKL's small LAPACK calls were up to 10 times
# slower). A thread count set by the caller is kept; the workflow's jobs set
# their own (mkl.workflow.jobs, from the rule's threads). NumPy is loaded by
# now: its BLAS is limited here, the processes started later by the variables.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
threadpool_limits(limits=int(os.environ["OPENBLAS_NUM_THREADS"]), user_api="blas")

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MKL_SHARED_DIR", REPO.parent / "shared"))
MIRROR = SHARED / "datasets"


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def random_problem(rng, n=40, d=5, M=4):
    """Features, labels in {-1,+1} and a bank of M Gaussian kernels of different widths."""
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n) > 0.4, 1, -1)
    widths = np.geomspace(0.5, 4.0, M)
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.stack([np.exp(-sq / (2 * w**2)) for w in widths])
    return X, y, K


def single_feature_bank(seed, n=40, d=8, widths=(0.5, 1.0, 2.0, 4.0)):
    """Yang et al.'s construction in small: Gaussian kernels on all features and
    on each single one, unit trace (36 kernels); the label depends on feature 0."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    bank = []
    for view in [X] + [X[:, [j]] for j in range(d)]:
        sq = ((view[:, None, :] - view[None, :, :]) ** 2).sum(-1)
        for w in widths:
            k = np.exp(-sq / (2 * w**2 * view.shape[1]))
            bank.append(k / np.trace(k))
    return np.stack(bank), y


@pytest.fixture
def problem(rng):
    return random_problem(rng)


def needs_mirror():
    return pytest.mark.skipif(
        not MIRROR.is_dir(), reason=f"dataset mirror {MIRROR} not present (set MKL_SHARED_DIR)"
    )


def pytest_collection_modifyitems(items):
    """The longest tests first, so that none starts last and runs alone at the
    end: the end-to-end runs (``workflow``: those in fresh virtual
    environments, then the SLURM run, then the others), then the rest (the
    ``slow`` scikit-learn checks of every family first), each group in the
    files' order; and each end-to-end test followed by one of the rest.

    pyproject's ``--dist load --maxschedchunk 2`` hands tests to the workers
    two at a time, and a worker runs what it was handed in turn: with two
    end-to-end tests next to each other, one worker got both. So it went for
    the two fresh-environment tests, 355 s and 115 s one after the other on one
    worker, 470 s of the suite's 520. Interleaved, a worker holds one
    end-to-end test at a time, and takes the next when it is done with it.

    Ranking every ``slow`` test first, as before, put the 489 scikit-learn
    checks (a second or less each) ahead of the end-to-end runs, which then
    queued up on one worker: it ran them one after the other for 11 of the
    suite's 16.5 minutes, while the other two workers had finished.

    Within each group of end-to-end tests, the longest first, by their
    ``workflow(seconds=...)`` marks: about what each takes in the suite, a
    shared run (tests/workflow/conftest.py) counted in the test that comes
    first among those that read it, so that the shared runs are made early
    and their readers, which come last, do not wait for them (in file order,
    the readers of the batched run came last but its maker just before them:
    one worker waited 25 s for it at the end of the suite)."""

    def rank(item):
        marked = {m for m in ("workflow", "slow", "slurm") if item.get_closest_marker(m)}
        if "workflow" in marked:
            group = 0 if "slow" in marked else 1 if "slurm" in marked else 2
            return group, -item.get_closest_marker("workflow").kwargs.get("seconds", 0)
        return (3 if "slow" in marked else 4), 0

    items.sort(key=rank)
    long = [item for item in items if rank(item)[0] <= 2]
    rest = items[len(long) :]
    n = min(len(long), len(rest))
    interleaved = [item for pair in zip(long[:n], rest[:n], strict=True) for item in pair]
    items[:] = interleaved + long[n:] + rest[n:]


def pytest_configure(config):
    """A parallel run's controller (not an xdist worker; not a run with -n 0)
    starts the numba warm-up (tests/numba_warm_up.py) in the background: the
    workers start beside it, and the processes that reach a solver after it
    finished load it from the cache instead of each compiling it. An
    optimisation only: its failure or its absence changes no result."""
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return
    config._numba_warm_up = subprocess.Popen(
        [sys.executable, "-m", "tests.numba_warm_up"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def pytest_unconfigure(config):
    warm_up = getattr(config, "_numba_warm_up", None)
    if warm_up is not None:  # done long before a whole suite's end; a short run stops it
        warm_up.terminate()
        warm_up.wait()


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker per CPU this process may use. A spare worker
    kept the CPUs busy while the end-to-end tests waited on subprocesses (a
    SLURM queue's status checks, Snakemake's serial stages), but since the
    quick and tiny runs fit per dataset, the CPUs are rarely idle, and a third
    worker on 2 CPUs cost more in contention than it filled. On one host
    (2026-11-26), with three workers: 570 s and 1065-1069 CPU-s (two runs, the
    host at 0.64 of its usual speed); with two: 543 s and 957 CPU-s (at 0.64),
    592 s and 1066 CPU-s (at 0.58). Again once the README's test had one
    environment (one long test), the same commit back to back at about 0.7:
    three workers 401 s and 747 CPU-s, two 400 s and 703 CPU-s."""
    try:
        cpus = len(os.sched_getaffinity(0))  # the CPUs this process may use
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return cpus

"""Cached stages are trustworthy: a dry run, ``--lint`` and ``--report`` change
nothing under results/ and work on a partial results/ (after the downloads
alone, after a SIGKILL: see test_faults.py); editing the library reruns exactly
the stages whose code changed."""

import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from ..conftest import REPO
from .conftest import copy_run
from .test_snakemake import SMALL, _small_workdir, snakemake

pytestmark = pytest.mark.workflow

ONE_FIT = dict(
    SMALL,
    protocol={**SMALL["protocol"], "repetitions": 1},
    algorithms={"uniform": {"params": {"C": 1}}},
)


def snapshot(root):
    """Every file under results/ with its size and modification time."""
    results = root / "results"
    return {
        str(p.relative_to(results)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in results.rglob("*")
        if p.is_file()
    }


def scheduled(run) -> dict[str, int]:
    """The rules a dry run would run, from its "Job stats" table."""
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    text = run.stdout + run.stderr
    if "Nothing to be done" in text:
        return {}
    stats = text[text.index("Job stats:") :]
    rows = re.findall(r"^(\w+)\s+(\d+)\s*$", stats, flags=re.M)
    return {rule: int(n) for rule, n in rows if rule != "total"}


@pytest.mark.workflow(seconds=32)
def test_dry_runs_lint_and_report_leave_results_alone(tmp_path, small_run):
    root = _small_workdir(tmp_path / "run", ONE_FIT)
    # downloads done, nothing else (an interrupted first run, or --until download):
    # every input and resource function must cope with the missing data files
    run = snakemake(root, "--until", "download")
    assert run.returncode == 0, run.stderr[-3000:]
    before = snapshot(root)
    plan = scheduled(snakemake(root, "-n"))
    assert {"normalise", "split", "kernels", "fit", "aggregate"} <= set(plan)
    assert snapshot(root) == before
    # a complete run: a dry run has nothing to do, and none of them writes
    root = copy_run(small_run, tmp_path / "complete")
    before = snapshot(root)
    assert scheduled(snakemake(root, "-n")) == {}
    assert snakemake(root, "--lint").returncode == 0
    report = snakemake(root, "--report", str(tmp_path / "report.html"))
    assert report.returncode == 0, report.stderr[-3000:]
    assert snapshot(root) == before
    # a damaged output is reported by a dry run and moved aside only by a real run
    fit = root / "results/fits/small/gmkl_toy1/uniform/0.json"
    fit.write_text('{"dataset": "gmkl_toy1", "te')
    before = snapshot(root)
    dry = snakemake(root, "-n")
    said = dry.stdout + dry.stderr
    assert "0.json is damaged" in said and "a run will move it aside" in said
    scheduled(dry)  # plans (the tables, newer than the edited file), does not fail
    assert snapshot(root) == before and not (root / "results/quarantine").exists()
    run = snakemake(root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert list((root / "results/quarantine").rglob("0.json.*"))


@pytest.fixture
def repo_copy(tmp_path):
    """The project's tracked files copied, to edit its code; run with
    PYTHONPATH pointing at the copy so that ``import mkl`` finds the copy."""
    files = subprocess.run(
        ["git", "ls-files", "mkl", "workflow", "envs", "Snakefile", "profiles", "pyproject.toml"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    copy = tmp_path / "repo"
    for f in files:
        (copy / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, copy / f)
    return copy


def _dry_run(copy, root):
    cmd = [sys.executable, "-m", "snakemake", "-s", str(copy / "Snakefile"), "-d", str(root)]
    env = {**os.environ, "PYTHONPATH": str(copy)}
    return subprocess.run(
        [*cmd, "-n"], capture_output=True, text=True, env=env, timeout=600, cwd=root
    )


@pytest.mark.workflow(seconds=36)
def test_editing_code_reruns_exactly_the_stages_that_run_it(tmp_path, repo_copy, small_run):
    # the shared run, made with the checkout's code: the copy's code is the same
    root = copy_run(small_run, tmp_path / "run")
    env = {**os.environ, "PYTHONPATH": str(repo_copy)}
    probe = subprocess.run(
        [sys.executable, "-c", "import mkl; print(mkl.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,  # not the checkout's directory, which would come first on sys.path
    )
    assert probe.stdout.strip() == str(repo_copy / "mkl" / "__init__.py")
    assert scheduled(_dry_run(repo_copy, root)) == {}

    def edit(module, text="\n# an edit\n"):
        path = repo_copy / "mkl" / module
        original = path.read_text()
        path.write_text(original + text)
        try:
            return scheduled(_dry_run(repo_copy, root))
        finally:
            path.write_text(original)

    # a parser: the data are normalised again, and everything after them follows
    after_parser = edit("workflow/parsers.py")
    assert {"normalise", "split", "kernels", "fit", "aggregate", "figures"} <= set(after_parser)
    assert "download" not in after_parser
    # table code: the tables, the figures drawn from them and the fidelity report
    assert set(edit("workflow/tables.py")) - {"all"} == {"aggregate", "figures", "fidelity"}
    # a solver the experiment does not use: nothing (so the edits before it were undone too)
    assert edit("algorithms/smkl.py") == {}
    # not the tables (the fidelity report draws its figure)
    assert set(edit("workflow/figures.py")) - {"all"} == {"figures", "fidelity"}
    # the SVM every fit uses: the fits and what is made of them, not the data or banks
    after_svm = edit("solvers/libsvm.py")
    assert {"fit", "aggregate"} <= set(after_svm)
    assert not {"download", "normalise", "split", "kernels"} & set(after_svm)
    # the experiment file's figures section only: not the fits
    exp = root / "config/experiments/small.yaml"
    spec = yaml.safe_load(exp.read_text())
    spec["description"] = "a new caption"
    exp.write_text(yaml.safe_dump(spec))
    assert not {"fit", "kernels", "normalise"} & set(scheduled(_dry_run(repo_copy, root)))

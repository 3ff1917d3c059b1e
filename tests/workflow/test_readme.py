"""The README, run as written: its two-layer installs in fresh virtual
environments, command 1 (the quick experiment), the report, a dry run of every
target it lists, its benchmark commands' options, and every code example.

The commands are parsed from README.md, never restated here, so a README that
drifts from the project fails this test. A command that fails names itself and
its last error line."""

from __future__ import annotations

import ast
import base64
import io
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import time
import tokenize
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from ..conftest import REPO, SHARED
from .report_browser import install_if_missing, walk_report

README = (REPO / "README.md").read_text()
DESIGN = (REPO / "docs" / "design.md").read_text()
LIBRARY = (REPO / "docs" / "library.md").read_text()  # the library's examples beyond the README's
QUICK_TABLES = ("results.md", "paper.md", "paper_tables.md")
# the tables as the report shows them (pages drawn from the same data)
QUICK_REPORT_TABLES = ("results.html", "paper.html", "paper_tables.html")
QUICK_FIGURE = "results.png"
# the libraries the workflow extra adds: none may be importable beside the library alone
WORKFLOW_ONLY = ("snakemake", "pandas", "matplotlib", "yaml", "tabulate", "rdata")


# --- reading the README ---------------------------------------------------------------


@dataclass
class Block:
    lang: str
    code: str
    section: str  # the "## " heading it is under


def sections(text: str = README) -> dict[str, str]:
    """Each "## " section's text (subsections included), by its heading."""
    parts = re.split(r"^## +(.+)$", text, flags=re.M)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2], strict=True)}


def code_blocks(text: str = README) -> list[Block]:
    return [
        Block(lang, code, title)
        for title, body in sections(text).items()
        for lang, code in re.findall(r"^```(\w*)\n(.*?)^```", body, flags=re.M | re.S)
    ]


def command_1(text: str = README) -> tuple[str, str]:
    """The line after the ``# 1.`` comment of the "Two commands" block, split at ``&&``."""
    block = next(b for b in code_blocks(text) if b.section == "Two commands" and b.lang == "bash")
    lines = block.code.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# 1."))
    line = next(ln for ln in lines[start + 1 :] if ln.strip() and not ln.startswith("#"))
    install, run = (part.strip() for part in line.split("&&"))
    return install, run


def library_installs(text: str = README) -> list[str]:
    """The ``pip install`` lines of the library section, in order: the first
    installs the library alone, the others its optional extras (``plot``)."""
    for block in code_blocks(text):
        if block.section == "The library" and block.lang == "bash":
            lines = [
                shlex.join(shlex.split(line, comments=True))
                for line in block.code.splitlines()
                if line.startswith("pip install")
            ]
            if lines:
                return lines
    raise AssertionError("the library section has no `pip install` command")


def library_examples(text: str = README, page: str = LIBRARY) -> list[str]:
    """The python blocks of the README's library section, then every python
    block of docs/library.md (the page it sends the library's reader to)."""
    ours = [b.code for b in code_blocks(text) if b.section == "The library" and b.lang == "python"]
    return ours + [b.code for b in code_blocks(page) if b.lang == "python"]


def target_table(text: str = README) -> list[str]:
    """First column of every table whose header's first cell is "target"."""
    targets, in_table = [], False
    for line in text.splitlines():
        if not line.startswith("|"):
            in_table = False
            continue
        first = line.strip("|").split("|")[0].strip()
        if first == "target":
            in_table = True
        elif in_table and first.startswith("`"):
            targets.append(first.strip("`"))
    return targets


def snakemake_commands(text: str = README) -> list[str]:
    """Every ``snakemake ...`` command: lines of bash blocks and inline code spans."""
    found = []
    for block in code_blocks(text):
        if block.lang == "bash":
            found += [ln for ln in block.code.splitlines() if ln.startswith("snakemake")]
    found += re.findall(r"`(snakemake(?: [^`]*)?)`", re.sub(r"```.*?```", "", text, flags=re.S))
    commands = []
    for command in found:
        command = shlex.join(shlex.split(command, comments=True))
        if command not in commands:
            commands.append(command)
    return commands


def benchmark_commands(texts: tuple[str, ...] = (README, DESIGN)) -> list[str]:
    """Every ``python benchmarks/...`` command of the README and docs/design.md
    (where the measurements are): lines of bash blocks and inline code spans."""
    found = []
    for text in texts:
        found += [
            line
            for block in code_blocks(text)
            if block.lang == "bash"
            for line in block.code.splitlines()
            if line.startswith("python benchmarks/")
        ]
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        found += re.findall(r"`(python benchmarks/[^`]*)`", prose)
    return list(dict.fromkeys(shlex.join(shlex.split(c, comments=True)) for c in found))


# --- what the examples print ----------------------------------------------------------

# a number as printed: digits, a decimal part, an exponent; not the digits of a name (float32)
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?!\w)")

# runs one example, recording by line what each print call of the example writes (the
# example's own print: a name in its globals, so that nothing else sees it)
PRINT_RECORDER = """\
import json, runpy, sys

example, record = sys.argv[1], sys.argv[2]
printed = []


def recording_print(*args, sep=None, **kwargs):
    line = sys._getframe(1).f_lineno
    printed.append([line, (" " if sep is None else sep).join(map(str, args))])
    print(*args, sep=sep, **kwargs)


try:
    runpy.run_path(example, init_globals={"print": recording_print}, run_name="__main__")
finally:
    with open(record, "w") as fh:
        json.dump(printed, fh)
"""


def print_claims(code: str) -> dict[int, str]:
    """What an example says its print calls write: by each call's line, the
    comment on that line and the comment lines right below it. A print call
    over several lines, and a number in any other comment (a claim nothing
    would check), are refused."""
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    comments = {
        t.start[0]: t.string.lstrip("#").strip() for t in tokens if t.type == tokenize.COMMENT
    }
    lines = code.splitlines()
    claims, claiming = {}, set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
            assert node.lineno == node.end_lineno, f"line {node.lineno}: a print over several lines"
            line = node.lineno
            said = [comments.get(line, "")]
            while line < len(lines) and lines[line].lstrip().startswith("#"):
                line += 1  # the next line, a comment alone: the output continued
                said.append(comments[line])
            claims[node.lineno] = " ".join(filter(None, said))
            claiming.update(range(node.lineno, line + 1))
    for line, comment in comments.items():
        assert line in claiming or not NUMBER.search(comment), (
            f"line {line}: a number in a comment that shows no print's output: {comment!r}"
        )
    return claims


def check_printed(code: str, printed: list[tuple[int, str]]) -> list[str]:
    """Each print call of ``code`` against its comments (:func:`print_claims`):
    the numbers it wrote, over all its calls in order, are those its comments
    show, digit for digit; a print that never ran fails too."""
    written: dict[int, list[str]] = {}
    for line, text in printed:
        written.setdefault(line, []).append(text)
    failures = []
    for line, said in print_claims(code).items():
        if line not in written:
            failures.append(f"line {line}: the print never ran")
        elif NUMBER.findall(" ".join(written[line])) != NUMBER.findall(said):
            shown = " / ".join(written[line])
            failures.append(f"line {line} printed {shown!r}; its comment says {said!r}")
    return failures


def run_example(code: str, workdir: Path, name: str, run) -> list[tuple[int, str]]:
    """Run an example as ``run(command)`` does in ``workdir`` (here, or in a
    fresh environment), with :data:`PRINT_RECORDER`; what its prints wrote."""
    script, record = workdir / f"{name}.py", workdir / f"{name}.printed.json"
    recorder = workdir / "print_recorder.py"
    script.write_text(code)
    recorder.write_text(PRINT_RECORDER)
    run(shlex.join(["python", str(recorder), str(script), str(record)]))
    return [tuple(entry) for entry in json.loads(record.read_text())]


# --- running commands in a fresh environment ------------------------------------------

_ERROR_LINES = [
    re.compile(r"^\w*(Error|Exception|Exit)\b.*:"),  # a Python exception's last line
    re.compile(r"^(ERROR|error)\b"),  # pip, Snakemake's one-line job errors
    re.compile(r"^(Error|WorkflowError|MissingInput)"),
    re.compile(r"error|exception|failed|not found|no such", re.I),
]


def last_error_line(output: str) -> str:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for pattern in _ERROR_LINES:
        for line in reversed(lines):
            if pattern.search(line):
                return line
    return lines[-1] if lines else "(no output)"


@dataclass
class Step:
    cmd: str
    seconds: float
    returncode: int
    output: str

    @property
    def message(self) -> str:
        return f"{self.cmd!r} failed: {last_error_line(self.output)}"


@dataclass
class Env:
    """A fresh virtual environment (no system site-packages) and a copy of the repository."""

    venv: Path
    repo: Path

    @property
    def environ(self) -> dict[str, str]:
        # a user's shell: none of the test machine's Python settings (tests/conftest.py
        # has already removed PYTHONDONTWRITEBYTECODE from every process the tests start)
        drop = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE")
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in drop and not k.startswith(("CONDA_", "PYTEST_"))
        }
        env["VIRTUAL_ENV"] = str(self.venv)
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        # no byte-compiling of every installed module at install time (about 20 s of
        # command 1's install): Python compiles the modules a run imports when it
        # first imports them and keeps them; what is installed and run is the same
        env["PIP_COMPILE"] = "0"
        return env

    def run(self, cmd: str, cwd: Path | None = None, timeout: float = 600) -> Step:
        """``cmd`` as a user types it in the activated environment (its own
        ``pip``, ``snakemake`` and ``python`` come first on PATH)."""
        start, cpu = time.monotonic(), _children_cpu()
        try:
            proc = subprocess.run(
                shlex.split(cmd),
                cwd=cwd or self.repo,
                env=self.environ,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=timeout,
            )
            step = Step(cmd, time.monotonic() - start, proc.returncode, proc.stdout)
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
            step = Step(
                cmd, time.monotonic() - start, -9, f"{out}\nError: timed out after {timeout} s"
            )
        except OSError as exc:  # the command is not installed
            step = Step(cmd, time.monotonic() - start, -1, f"OSError: {exc}")
        cpu = _children_cpu() - cpu
        print(f"[{step.seconds:7.1f} s, {cpu:7.1f} CPU-s] rc={step.returncode} {cmd}", flush=True)
        return step

    def must(self, cmd: str, cwd: Path | None = None, timeout: float = 600) -> Step:
        step = self.run(cmd, cwd, timeout)
        if step.returncode != 0:
            pytest.fail(step.message, pytrace=False)
        return step


def _children_cpu() -> float:
    """User and system CPU seconds of the finished child processes, so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _copy_repository(dest: Path) -> Path:
    """The repository's files (tracked, and new ones not ignored): no results/, no .snakemake/."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            check=True,
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout
        ignore = shutil.ignore_patterns(
            ".git", "results", ".snakemake", "*.egg-info", "__pycache__", ".*cache", "build"
        )
        shutil.copytree(REPO, dest, ignore=ignore, symlinks=True)
        return dest
    for name in filter(None, listed.split("\0")):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def _fresh_env(root: Path, name: str, repo: Path) -> Env:
    venv = root / name
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    return Env(venv=venv, repo=repo)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> tuple[Path, Path]:
    """A copy of the repository with the dataset mirror beside it, as ../shared."""
    root = tmp_path_factory.mktemp("readme")
    repo = _copy_repository(root / "repo")
    if SHARED.is_dir():  # config.yaml's second mirror, ../shared/datasets
        (root / "shared").symlink_to(SHARED.resolve(), target_is_directory=True)
    return root, repo


# --- the README's own consistency (fast) ----------------------------------------------


def test_readme_commands_are_found():
    install, run = command_1()
    assert install.startswith("pip install") and ".[workflow]" in shlex.split(install)
    assert run.startswith("snakemake")
    first, *extras = library_installs()
    assert shlex.split(first)[-1] == "."
    assert all(shlex.split(extra)[-1].startswith(".[") for extra in extras)
    assert library_examples(), "the library section has no python example"
    assert len(library_examples()) > len(library_examples(page="")), "docs/library.md has none"
    assert {"quick", "yang2011_gmkl", "kloft2009_lpmkl"} <= set(target_table())
    for target in target_table():
        assert (REPO / "config" / "experiments" / f"{target}.yaml").is_file(), target


def test_commands_that_only_name_targets_join_one_dry_run():
    assert _plain_targets("snakemake --cores 2 quick fidelity") == ["quick", "fidelity"]
    assert _plain_targets("snakemake kundu2010_similarity") == ["kundu2010_similarity"]
    for command in ("snakemake", "snakemake -n", "snakemake --unlock", "snakemake --cores 2"):
        assert _plain_targets(command) is None, command
    assert _plain_targets("snakemake --cores 2 --report r.html quick") is None


def test_readme_paths_exist():
    """Every repository path the README, and the documents it sends readers to
    (config/README.md, docs/results.md, docs/library.md), name in backticks
    or links exists."""
    linked = [
        "config/README.md",
        "docs/results.md",
        "docs/library.md",
        "docs/design.md",
        "docs/protocols.md",
    ]
    assert all(f"]({doc})" in README for doc in linked)
    text = README + "".join((REPO / doc).read_text() for doc in linked[:3])
    spans = re.findall(r"`([^`\s]+)`", text)
    roots = ("mkl/", "tests/", "docs/", "workflow/", "config/", "profiles/", "benchmarks/")
    named = {s.rstrip(".,:;") for s in spans if s.startswith(roots) and "{" not in s}
    named |= {"resources/datasets/README.md", *linked}
    missing = sorted(p for p in named if not (REPO / p).exists())
    assert not missing, f"README names paths that do not exist: {missing}"


def test_readme_module_names_exist():
    """Every dotted ``mkl.…`` name the README gives in backticks imports."""
    import importlib

    names = set(re.findall(r"`(mkl(?:\.\w+)+)`", README + LIBRARY))
    assert names
    for name in sorted(names):
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ModuleNotFoundError:
                continue
            for attr in parts[i:]:
                assert hasattr(obj, attr), f"README names {name}, which does not exist"
                obj = getattr(obj, attr)
            break


def test_python_examples_run_here(tmp_path, request):
    """Every ```python block of the README and of docs/library.md, in the
    current environment. When this session also runs the fresh-environment
    test below, that test runs the library's blocks (the README's library
    section and docs/library.md, with the library alone installed, the
    stricter check), and only the other sections' blocks run here: each
    block runs once per session."""
    page = [Block(b.lang, b.code, "The library") for b in code_blocks(LIBRARY)]
    blocks = [b for b in code_blocks() + page if b.lang == "python"]
    assert blocks
    library_alone = test_the_library_alone_then_command_1_in_a_fresh_environment.__name__
    if any(item.name == library_alone for item in request.session.items):
        blocks = [b for b in blocks if b.section != "The library"]
        if not blocks:
            pytest.skip(f"every python block is in the library section: {library_alone} runs them")

    def run(command: str) -> None:  # with this interpreter, as the command's python
        proc = subprocess.run(
            [sys.executable, *shlex.split(command)[1:]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode != 0:
            pytest.fail(f"{command!r} failed: {last_error_line(proc.stderr)}")

    for i, block in enumerate(blocks):
        failures = check_printed(block.code, run_example(block.code, tmp_path, f"block{i}", run))
        assert not failures, f"README python block {i}: " + "; ".join(failures)


def test_yaml_bank_example_is_the_bank_it_describes():
    """The README's compact bank specification expands to 13 (d + 1) kernels."""
    yaml = pytest.importorskip("yaml")
    from mkl.kernels.specs import expand_bank_spec

    banks = [
        yaml.safe_load(b.code)
        for b in code_blocks()
        if b.lang == "yaml" and b.section == "The workflow"
    ]
    spec = next(bank["kernels"] for bank in banks if set(bank) == {"kernels"})
    assert "13 (d + 1)" in README
    for d in (1, 8, 60):
        assert len(expand_bank_spec(spec, n_features=d)) == 13 * (d + 1)


def test_printed_numbers_are_checked_digit_for_digit():
    code = (
        "x = 0.97649\n"
        'print(f"accuracy {x:.3f}, float32")  # accuracy 0.976, float32\n'
        "for k in (1, 2):\n"
        "    print([k, -k])\n"
        "# [1, -1]\n"
        "#  [2, -2]: the commentary after it holds no number\n"
        "y = x  # a comment without one\n"
    )
    printed = [(2, "accuracy 0.976, float32"), (4, "[1, -1]"), (4, "[2, -2]")]
    assert check_printed(code, printed) == []
    assert check_printed(code, [(2, "accuracy 0.977, float32"), *printed[1:]]) == [
        "line 2 printed 'accuracy 0.977, float32'; its comment says 'accuracy 0.976, float32'"
    ]
    assert check_printed(code, printed[:2]) == [
        "line 4 printed '[1, -1]'; its comment says '[1, -1] [2, -2]: the commentary after it "
        "holds no number'"
    ]
    assert check_printed(code, printed[1:]) == ["line 2: the print never ran"]
    assert check_printed("print(0.5)\n", [(1, "0.5")]) == [
        "line 1 printed '0.5'; its comment says ''"
    ]
    with pytest.raises(AssertionError, match="a number in a comment that shows no print's output"):
        print_claims("x = 1  # about 2 seconds\n")
    with pytest.raises(AssertionError, match="a print over several lines"):
        print_claims("print(\n    1\n)  # 1\n")


def test_the_own_dataset_how_to_reads_its_file_and_loads_its_experiment(tmp_path):
    """The "Add your own dataset" section as a user follows it: its file under a
    mirror folder, its registry entry and experiment file beside the shipped
    configuration (both validated, the experiment checked against the
    registry), the file fetched from the mirror and parsed with the entry's
    options, every class found and the missing value imputed."""
    yaml = pytest.importorskip("yaml")
    from mkl.workflow.config import load_experiment, load_registry
    from mkl.workflow.dataset import build_dataset
    from mkl.workflow.fetch import fetch

    blocks = [b for b in code_blocks() if b.section == "Add your own dataset"]
    (table,) = [b.code for b in blocks if b.lang == "csv"]
    entry_block, experiment_block = [b.code for b in blocks if b.lang == "yaml"]
    ((name, entry),) = yaml.safe_load(entry_block).items()
    experiment = yaml.safe_load(experiment_block)
    assert f"`snakemake --cores 2 <name>` (here `{experiment['name']}`)" in README

    registry_file = tmp_path / "datasets.yaml"
    registry_file.write_text((REPO / "config" / "datasets.yaml").read_text() + "\n" + entry_block)
    registry = load_registry(registry_file, REPO / "workflow" / "schemas")
    experiment_file = tmp_path / f"{experiment['name']}.yaml"
    experiment_file.write_text(experiment_block)
    loaded = load_experiment(experiment_file, registry, REPO / "workflow" / "schemas")
    assert loaded["datasets"] == [name]

    (source,) = entry["sources"]
    mirror = tmp_path / "mirror"
    (mirror / source["mirror"]).parent.mkdir(parents=True)
    (mirror / source["mirror"]).write_text(table)
    fetch(name, registry[name], tmp_path / "raw", mirrors=[mirror])
    data = build_dataset(name, registry[name], tmp_path / "raw")
    header, *rows = [line.split(",") for line in table.splitlines()]
    label = header.index(source["options"]["label_column"])
    assert data.X.shape == (len(rows), len(header) - 1)
    assert np.isfinite(data.X).all()  # the missing value imputed
    assert sorted(data.classes) == sorted({row[label] for row in rows})


def test_a_failing_command_names_itself_and_its_last_error_line(tmp_path):
    env = Env(venv=Path(sys.prefix), repo=tmp_path)
    cmd = "python -c 'import json; import no_such_module'"
    with pytest.raises(pytest.fail.Exception) as failed:
        env.must(cmd)
    assert (
        str(failed.value)
        == f"{cmd!r} failed: ModuleNotFoundError: No module named 'no_such_module'"
    )
    pip_output = "Looking in indexes: ...\nERROR: No matching distribution found for nosuchpkg\n"
    assert last_error_line(pip_output) == "ERROR: No matching distribution found for nosuchpkg"


# --- the README in a fresh environment (slow) ------------------------------------------


@pytest.mark.workflow(seconds=390)
@pytest.mark.slow
def test_the_library_alone_then_command_1_in_a_fresh_environment(sandbox, tmp_path):
    """The README's two layers, as a user meets them, in one fresh virtual
    environment: first the library section's installs (the library alone:
    none of the workflow's dependencies importable; its optional ``plot``
    extra adds no workflow) and its examples; then command 1 (the workflow
    extra, the quick experiment), the report (its HTML clicked through in
    Chromium), a dry run of every target and the benchmarks' options.
    Command 1 installs on top of the library: what the library section
    installed is the library's dependencies and its optional extras, which
    the workflow extra holds too
    (test_packaging.py's test_the_workflow_extra_holds_every_optional_library_extra;
    test_workflow_layer_imports_are_in_the_workflow_extra holds every import
    of the workflow layer to it), so command 1 needs nothing that only the
    library section brought. One environment, not two: the shared
    dependencies are installed once and the solvers compiled once (measured
    alone: 265 CPU-s, against 236 + 81 for two environments)."""
    root, repo = sandbox
    env = _fresh_env(root, "venv", repo)
    _check_library_alone(env, tmp_path)
    install, run = command_1()
    env.must(install, timeout=1800)
    before = {p.name for p in repo.iterdir()}
    env.must(run, timeout=3600)
    # the README's promise: nothing written outside results/ (and .snakemake/)
    assert {p.name for p in repo.iterdir()} - before <= {"results", ".snakemake"}
    _check_quick_results(env)
    failures = _check_report(env) + _check_report_in_browser(env, tmp_path)
    failures += _check_dry_runs(env) + _check_benchmarks(env)
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)
    shutil.rmtree(env.venv, ignore_errors=True)  # 0.6 GB; kept when the test fails


def _check_library_alone(env: Env, workdir: Path):
    """The library section's installs and examples (run in ``workdir``): the
    first install is the library alone, the optional extras add no workflow."""
    first, *extras = library_installs()
    env.must(first, timeout=1800)
    probe = f"import importlib.util as u; print([m for m in {WORKFLOW_ONLY!r} if u.find_spec(m)])"
    step = env.must(f"python -c {shlex.quote(probe)}", cwd=workdir)
    assert step.output.strip() == "[]", f"not the library alone: {step.output}"
    for extra in extras:  # the optional extras the examples use (plot: matplotlib)
        env.must(extra, timeout=1800)
    step = env.must(f"python -c {shlex.quote(probe)}", cwd=workdir)
    assert "snakemake" not in step.output, f"an extra installed the workflow: {step.output}"
    for i, code in enumerate(library_examples()):
        printed = run_example(
            code, workdir, f"library_example_{i}", lambda cmd: env.must(cmd, cwd=workdir)
        )
        failures = check_printed(code, printed)
        assert not failures, f"the library section's example {i}: " + "; ".join(failures)


def _check_quick_results(env: Env):
    tables = env.repo / "results" / "tables" / "quick"
    figures = env.repo / "results" / "figures" / "quick"
    for name in QUICK_TABLES:
        assert (tables / name).is_file(), f"command 1 did not write {tables / name}"
    md = (tables / "results.md").read_text()
    assert "±" in md and "nan" not in md.lower()
    assert (figures / QUICK_FIGURE).stat().st_size > 1000
    assert (figures / "results.pdf").stat().st_size > 1000
    # the fidelity report: quick's cells compared, the papers not run listed as such
    fidelity = (env.repo / "results" / "tables" / "fidelity.md").read_text()
    assert "| quick " in fidelity and "not run: experiment kundu2010_similarity" in fidelity
    assert (env.repo / "results" / "figures" / "fidelity.png").stat().st_size > 1000


def _check_report(env: Env) -> list[str]:
    """The README's ``snakemake --report`` command; the HTML embeds the quick tables and figure."""
    commands = [c for c in snakemake_commands() if "--report" in c]
    if not commands:
        return ["the README names no `snakemake --report` command"]
    failures = []
    for command in commands:
        step = env.run(command, timeout=900)
        if step.returncode != 0:
            failures.append(step.message)
            continue
        html_name = _report_html(command)
        html = (env.repo / html_name).read_text(errors="replace")
        # Snakemake 9 embeds each report() item as a data URI, keyed by its path
        items = [env.repo / "results" / "tables" / "quick" / n for n in QUICK_REPORT_TABLES]
        items.append(env.repo / "results" / "figures" / "quick" / QUICK_FIGURE)
        for item in items:
            key = item.relative_to(env.repo).as_posix()
            pattern = rf"filename={re.escape(item.name)};base64,([A-Za-z0-9+/=]+)"
            embedded = [base64.b64decode(e) for e in re.findall(pattern, html)]
            if f'"{key}": {{' not in html or item.read_bytes() not in embedded:
                failures.append(f"{command!r}: {html_name} does not embed {key} as it is on disk")
    return failures


def _report_html(command: str) -> str:
    """The HTML file a README ``snakemake --report FILE ...`` command writes."""
    words = shlex.split(command)
    return words[words.index("--report") + 1]


def _check_report_in_browser(env: Env, screenshots: Path) -> list[str]:
    """The README report command's HTML opened in Debian's Chromium and clicked
    through as a reader does (report_browser.walk_report): every table of the
    quick run shows its cells as text, the cells beyond two paper sd marked,
    and every figure loads. Chromium and Selenium are installed where missing
    (root); where they cannot be, the check is skipped with a warning, or
    fails under ``MKL_REQUIRE_BROWSER``."""
    why = install_if_missing()
    if why:
        if os.environ.get("MKL_REQUIRE_BROWSER"):
            return [f"the report could not be opened in a browser: {why}"]
        warnings.warn(f"the report was not opened in a browser: {why}", stacklevel=1)
        return []
    built = [
        env.repo / _report_html(c) for c in snakemake_commands() if "--report" in c
    ]  # _check_report fails a README without one, or a command that did not build it
    built = [html for html in built if html.is_file()]
    if not built:
        return []
    seen = walk_report(built[0], env.repo, screenshots)
    tables = [f"results/tables/quick/{n}.html" for n in ("results", "paper", "paper_tables")]
    figures = ["results/figures/quick/results.png", "results/figures/fidelity.png"]
    expected = sorted([*tables, *figures, "results/tables/fidelity.html"])
    if sorted(seen) != expected:
        return [f"the report's items in Chromium: {sorted(seen)}, expected {expected}"]
    return []


def _plain_targets(command: str) -> list[str] | None:
    """The targets of a ``snakemake [--cores N] target ...`` command; None for
    any other (no target, or options beyond ``--cores``)."""
    words = shlex.split(command)[1:]
    if words[:1] == ["--cores"]:
        words = words[2:]
    if not words or any(w.startswith("-") for w in words):
        return None
    return words


def _check_dry_runs(env: Env) -> list[str]:
    """``snakemake -n`` of every target of the experiments table and of every
    README command that only names targets (``snakemake --cores 2 quick``), in
    one command: a DAG costs seconds each; when it fails, each target alone
    names the culprit. Then every other snakemake command of the README (but
    cluster-profile commands, which need a cluster, and commands with
    <placeholders>), as a dry run where it would compute."""
    failures, targets, dry = [], target_table(), []
    for command in snakemake_commands():
        words = shlex.split(command)
        if "--report" in words or "--profile" in words or re.search(r"<\w+>", command):
            continue
        named = _plain_targets(command)
        if named is not None:
            targets += named
            continue
        if not {"--unlock", "-n", "--dry-run", "--lint"} & set(words):
            words.insert(1, "-n")
        dry.append(shlex.join(words))
    targets = list(dict.fromkeys(targets))
    step = env.run(shlex.join(["snakemake", "-n", "--cores", "2", *targets]), timeout=900)
    if step.returncode != 0:
        for target in targets:
            alone = env.run(f"snakemake -n --cores 2 {target}", timeout=900)
            if alone.returncode != 0:
                failures.append(alone.message)
        failures = failures or [step.message]
    for command in dict.fromkeys(dry):
        step = env.run(command, timeout=900)
        if step.returncode != 0:
            failures.append(step.message)
        elif command == "snakemake -n" and "Nothing to be done" not in step.output:
            # command 1 built the default target (quick and the fidelity report)
            failures.append(f"{command!r} after command 1 has jobs to do: {step.output[-1500:]}")
    return failures


def _check_benchmarks(env: Env) -> list[str]:
    """Each benchmark command starts in command 1's environment and knows its options."""
    failures, helps = [], {}
    for command in benchmark_commands():
        words = shlex.split(command)
        script = shlex.join(words[:2])
        if script not in helps:
            helps[script] = env.run(f"{script} --help", timeout=300)
        step = helps[script]
        if step.returncode != 0:
            failures.append(step.message)
            continue
        unknown = [w for w in words[2:] if w.startswith("--") and w not in step.output]
        if unknown:
            failures.append(f"{command!r}: options not in its --help: {unknown}")
    return list(dict.fromkeys(failures))

"""The two layers: the library (``mkl``, less ``mkl.workflow``) installs and
imports with its own runtime dependencies; the workflow layer's come with the
``workflow`` extra; nothing in the library imports the workflow layer; and the
test extra, which installs more, cannot hide a missing runtime dependency."""

import ast
import re
import subprocess
import sys

import pytest

from .conftest import REPO

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")

# import name -> distribution name, where they differ
DISTRIBUTION = {"sklearn": "scikit-learn", "yaml": "pyyaml"}
# installed with a dependency above (not imported directly from PyPI names)
PROVIDED = {"threadpoolctl": "scikit-learn", "highspy": "scipy"}
LIBRARY_DEPENDENCIES = {"numpy", "scipy", "scikit-learn", "h5py", "clarabel", "highspy", "numba"}


def _modules(folder):
    for path in sorted(folder.rglob("*.py")):
        yield path, ast.parse(path.read_text())


def _imports(tree) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def _third_party(paths_and_trees) -> set[str]:
    tops = {n.split(".")[0] for _, tree in paths_and_trees for n in _imports(tree)}
    return {n for n in tops if n not in sys.stdlib_module_names and n != "mkl"}


def _library():
    return [(p, t) for p, t in _modules(REPO / "mkl") if "workflow" not in p.parts]


def _requirement_names(reqs) -> set[str]:
    return {re.split(r"[\s;\[<>=!~]", r, maxsplit=1)[0].lower() for r in reqs}


def _project():
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _undeclared(imports, declared) -> set[str]:
    return {
        name
        for name in imports
        if DISTRIBUTION.get(name, name).lower() not in declared
        and PROVIDED.get(name, "").lower() not in declared
    }


def test_library_dependencies_are_the_runtime_dependencies():
    """The library imports its dependencies, and the ``plot`` extra's
    (matplotlib, for mkl.plot_weights) only inside the functions that draw."""
    declared = _requirement_names(_project()["dependencies"])
    assert declared == LIBRARY_DEPENDENCIES
    optional = _requirement_names(_project()["optional-dependencies"]["plot"])
    missing = _undeclared(_third_party(_library()), declared | optional)
    assert not missing, f"imported by the library but not in [project] dependencies: {missing}"
    for path, tree in _library():
        module_level = ast.Module(
            body=[st for st in tree.body if isinstance(st, (ast.Import, ast.ImportFrom))],
            type_ignores=[],
        )
        at_import = {n.split(".")[0] for n in _imports(module_level)}
        assert not at_import & optional, f"{path} imports {at_import & optional} at import time"


def test_workflow_layer_imports_are_in_the_workflow_extra():
    declared = _requirement_names(_project()["dependencies"])
    declared |= _requirement_names(_project()["optional-dependencies"]["workflow"])
    workflow_code = list(_modules(REPO / "mkl" / "workflow"))
    workflow_code += list(_modules(REPO / "workflow" / "scripts"))
    missing = _undeclared(_third_party(workflow_code), declared)
    assert not missing, f"imported by the workflow layer, not in the workflow extra: {missing}"


def test_the_workflow_extra_holds_every_optional_library_extra():
    """Command 1 (the workflow extra) brings what the library section's
    optional installs bring (``plot``: matplotlib): test_readme.py runs
    command 1 in the environment where the library section's installs ran,
    which is a fresh machine's only if command 1 needs nothing they alone
    installed."""
    workflow = _requirement_names(_project()["optional-dependencies"]["workflow"])
    plot = _requirement_names(_project()["optional-dependencies"]["plot"])
    assert plot <= workflow, f"in the plot extra, not in the workflow extra: {plot - workflow}"


def test_nothing_in_the_library_imports_the_workflow_layer():
    offenders = []
    for path, tree in _library():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.level
                and (node.module or "").startswith("workflow")
            ):
                offenders.append(str(path.relative_to(REPO)))
        if any(n.startswith("mkl.workflow") for n in _imports(tree)):
            offenders.append(str(path.relative_to(REPO)))
    assert not offenders, f"library modules importing mkl.workflow: {sorted(set(offenders))}"


def _loaded_after(code: str, watch: set[str]) -> list[str]:
    probe = f"{code}\nimport sys\nprint(sorted({{m.split('.')[0] for m in sys.modules}} & {watch}))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return eval(out.stdout.strip())


WORKFLOW_DEPENDENCIES = {"snakemake", "pandas", "matplotlib", "yaml", "rdata"}


def test_importing_the_library_loads_none_of_the_workflow_dependencies():
    assert _loaded_after("import mkl", WORKFLOW_DEPENDENCIES | {"sklearn"}) == []
    # scikit-learn itself imports pandas when it is installed (sklearn.utils.fixes):
    # the estimators load nothing else of the workflow's
    code = "import mkl, mkl.algorithms, mkl.model_selection, mkl.datasets; mkl.ALGORITHMS"
    assert _loaded_after(code, WORKFLOW_DEPENDENCIES - {"pandas"}) == []


def test_data_and_kernel_jobs_start_without_the_estimators():
    """The workflow's download, normalise, split and kernel jobs import these
    modules only: they must not pull in scikit-learn, pandas or scipy (about
    1.4 s a job)."""
    code = (
        "import mkl, mkl.banks.kernel_bank, mkl.kernels.specs, mkl.kernels.spectra, mkl._io, "
        "mkl.workflow.jobs, "
        "mkl.workflow.fetch, mkl.workflow.dataset, mkl.workflow.splits"
    )
    assert _loaded_after(code, {"sklearn", "pandas", "scipy"}) == []
    # and the estimators are still one attribute away
    import mkl

    assert "easymkl" in mkl.ALGORITHMS and issubclass(mkl.ALGORITHMS["easymkl"], mkl.BaseMKL)


def _module_name(path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(path) -> str:
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rsplit(".", 1)[0]


def _internal_imports(path, tree, modules: set[str]) -> set[str]:
    """The mkl modules a module imports, at its top or inside a function (a
    deferred import closes a circle as well): ``from .x import y`` is module
    ``pkg.x.y`` when that is a module, else ``pkg.x``."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(path).split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                if f"{module}.{alias.name}" in modules:
                    found.add(f"{module}.{alias.name}")
                elif module in modules:
                    found.add(module)
    return found


def test_no_import_circle_between_the_library_modules():
    """No module of mkl imports, directly or through others, one that imports it
    back, deferred imports included (the house's drawing: 0 circles)."""
    trees = dict(_modules(REPO / "mkl"))
    modules = {_module_name(p) for p in trees}
    graph = {_module_name(p): _internal_imports(p, t, modules) for p, t in trees.items()}
    packages = {_module_name(p) for p in trees if p.name == "__init__.py"}
    graph = {m: {d for d in deps if d not in packages} for m, deps in graph.items()}
    state, circles = {}, []

    def visit(module, trail):
        state[module] = "open"
        for dep in sorted(graph.get(module, ())):
            if state.get(dep) == "open":
                circles.append(trail[trail.index(dep) :] + [dep])
            elif dep not in state:
                visit(dep, trail + [dep])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not circles, f"import circles: {circles}"

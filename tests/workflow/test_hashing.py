"""Source hashes follow each stage's import closure: editing a module changes
the hashes of exactly the stages that run it."""

import ast
import shutil
from pathlib import Path

import pytest

import mkl
from mkl.workflow import hashing

from ..conftest import REPO


@pytest.fixture
def tree(tmp_path):
    """A copy of the package to edit."""
    root = tmp_path / "mkl"
    shutil.copytree(REPO / "mkl", root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def stage_hashes(root):
    return {
        "normalise": hashing.source_hash(hashing.NORMALISE, root),
        "split": hashing.source_hash(hashing.SPLIT, root),
        "kernels": hashing.source_hash(hashing.KERNELS, root),
        "fit_uniform": hashing.fit_hash("uniform", root=root),
        "fit_smkl": hashing.fit_hash("smkl", root=root),
        "fit_level": hashing.fit_hash("level", root=root),
        "tables": hashing.source_hash(hashing.TABLES, root),
    }


def changed_after(root, module_file, text="\n# an edit\n"):
    before = stage_hashes(root)
    with open(root / module_file, "a") as fh:
        fh.write(text)
    after = stage_hashes(root)
    return sorted(k for k in before if before[k] != after[k])


def test_closure_of_an_algorithm_family_is_its_own_code():
    uniform = hashing.closure(["mkl.algorithms.baselines"])
    assert {
        "mkl.algorithms.base",
        "mkl.solvers.inner",
        "mkl.solvers.libsvm",
        "mkl.banks.algebra",
    } <= uniform
    assert "mkl.algorithms.smkl" not in uniform and "mkl.algorithms.l1" not in uniform
    assert not any(m.startswith("mkl.workflow") for m in uniform)
    level = hashing.closure(["mkl.algorithms.l1"])
    assert {"mkl.algorithms.wrapper", "mkl.algorithms.domains"} <= level


@pytest.mark.parametrize(
    "module_file, stages",
    [
        ("workflow/parsers.py", ["normalise"]),
        # the fit jobs read their folds through it
        ("workflow/splits.py", ["fit_level", "fit_smkl", "fit_uniform", "split"]),
        ("algorithms/smkl.py", ["fit_smkl"]),
        ("algorithms/domains.py", ["fit_level"]),
        ("solvers/libsvm.py", ["fit_level", "fit_smkl", "fit_uniform"]),
        ("banks/algebra.py", ["fit_level", "fit_smkl", "fit_uniform"]),
        # the text parsers keep a vocabulary by kernels.specs.most_frequent_features
        ("kernels/specs.py", ["fit_level", "fit_smkl", "fit_uniform", "kernels", "normalise"]),
        ("kernels/dense.py", ["kernels"]),
        # the registry names every family but imports none of them; the tables
        # stage checks experiment files against it
        ("algorithms/registry.py", ["fit_level", "fit_smkl", "fit_uniform", "tables"]),
        ("workflow/tables.py", ["tables"]),
        # the tables' pages in the report
        ("workflow/report_pages.py", ["tables"]),
        ("workflow/figures.py", []),
    ],
)
def test_an_edit_changes_the_hashes_of_the_stages_that_run_it(tree, module_file, stages):
    assert changed_after(tree, module_file) == stages


def test_the_record_tool_is_no_part_of_the_fidelity_stage(tree):
    """Editing the maintainer's record tool (mkl.workflow.record) reruns no
    fidelity job; editing the stage's own module does."""
    assert "mkl.workflow.record" not in hashing.closure(hashing.FIDELITY, tree)
    before = hashing.source_hash(hashing.FIDELITY, tree)
    with open(tree / "workflow" / "record.py", "a") as fh:
        fh.write("\n# an edit\n")
    assert hashing.source_hash(hashing.FIDELITY, tree) == before
    with open(tree / "workflow" / "fidelity.py", "a") as fh:
        fh.write("\n# an edit\n")
    assert hashing.source_hash(hashing.FIDELITY, tree) != before


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="unknown algorithm 'nope'"):
        hashing.fit_hash("nope")
    with pytest.raises(ValueError, match="not a module of the mkl package"):
        hashing.module_path("numpy.linalg")


def _defined_in(init: Path) -> set[str]:
    """The names a package's ``__init__`` defines itself (not those it imports)."""
    names = set()
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def _package_imports(path: Path, root: Path):
    """(line, package, names) of each ``from <package> import names`` in a module
    of the library whose names are neither submodules of that package nor
    defined in its ``__init__`` itself (a re-export hides the defining module)."""
    module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        target = node.module or ""
        if node.level:
            parts = package.split(".")
            target = ".".join(parts[: len(parts) - node.level + 1] + ([target] if target else []))
        init = root.parent.joinpath(*target.split("."), "__init__.py")
        if target.split(".")[0] != "mkl" or not init.is_file():
            continue
        defined = _defined_in(init)
        hidden = [
            a.name
            for a in node.names
            if not (init.parent / f"{a.name}.py").is_file()
            and not (init.parent / a.name / "__init__.py").is_file()
            and a.name not in defined
        ]
        if hidden:
            yield node.lineno, target, hidden


def test_the_library_imports_concrete_modules_never_a_package_reexport():
    """The source hashes follow imports but not a package ``__init__``'s own
    (mkl.workflow.hashing): a name imported through a package's re-export would
    hide the module that defines it, and editing that module would not rerun
    the stages that run it. So every import inside ``mkl`` names the module."""
    root = Path(mkl.__file__).resolve().parent
    found = [
        f"{path.relative_to(root.parent)}:{line}: from {target} import {', '.join(names)}"
        for path in sorted(root.rglob("*.py"))
        for line, target, names in _package_imports(path, root)
    ]
    assert found == []

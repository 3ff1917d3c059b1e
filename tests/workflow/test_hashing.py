"""Source hashes follow each stage's import closure: editing a module changes
the hashes of exactly the stages that run it."""

import shutil

import pytest

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
    assert {"mkl.base", "mkl.svm", "mkl.kernels", "mkl.algorithms"} <= uniform
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
        ("svm.py", ["fit_level", "fit_smkl", "fit_uniform"]),
        ("kernels.py", ["fit_level", "fit_smkl", "fit_uniform", "kernels"]),
        ("workflow/tables.py", ["tables"]),
        ("workflow/figures.py", []),
    ],
)
def test_an_edit_changes_the_hashes_of_the_stages_that_run_it(tree, module_file, stages):
    assert changed_after(tree, module_file) == stages


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="unknown algorithm 'nope'"):
        hashing.fit_hash("nope")
    with pytest.raises(ValueError, match="not a module of the mkl package"):
        hashing.module_path("numpy.linalg")

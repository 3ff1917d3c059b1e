"""The library's imports are covered by its runtime dependencies (the test
extra installs more, so a missing runtime dependency would otherwise pass CI)."""

import ast
import re
import sys

import pytest

from .conftest import REPO

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")

# import name -> distribution name, where they differ
DISTRIBUTION = {"sklearn": "scikit-learn", "yaml": "pyyaml"}
# installed with the dependencies above (not imported directly from PyPI names)
PROVIDED = {"threadpoolctl": "scikit-learn"}


def _third_party_imports():
    names = set()
    for path in (REPO / "mkl").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "mkl"}


def runtime_requirements() -> set[str]:
    """Distribution names of pyproject.toml's runtime (not extra) dependencies."""
    reqs = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    return {re.split(r"[\s;\[<>=!~]", r, maxsplit=1)[0].lower() for r in reqs}


def test_runtime_dependencies_cover_the_library_imports():
    declared = runtime_requirements()
    missing = {
        name
        for name in _third_party_imports()
        if DISTRIBUTION.get(name, name).lower() not in declared
        and PROVIDED.get(name, "").lower() not in declared
    }
    assert not missing, f"imported by mkl/ but not in [project] dependencies: {sorted(missing)}"


def test_data_and_kernel_modules_start_without_the_estimators():
    """The workflow's download, split and kernel jobs import these modules only:
    they must not pull in scikit-learn, pandas or scipy (about 1.4 s a job)."""
    import subprocess

    code = (
        "import sys, mkl, mkl.bank, mkl.datasets, mkl.kernels, mkl.similarity, mkl._io;"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'pandas', 'scipy'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    # and the estimators are still one attribute away
    import mkl

    assert "easymkl" in mkl.ALGORITHMS and issubclass(mkl.ALGORITHMS["easymkl"], mkl.MKLClassifier)

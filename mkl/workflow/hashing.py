"""Source hashes: what makes Snakemake rerun a stage when the library code it
runs changes, and only then.

Snakemake reruns a job when its params change (``--rerun-triggers params``,
on by default) and tracks a rule's own script, but not the modules that
script imports. Each rule therefore takes, as a param, the hash of the source
files it can execute: the *import closure* of its entry modules within the
``mkl`` package, read from the files' import statements (module level and
inside functions). A package's ``__init__.py`` is hashed as text but its own
imports are not followed: ``mkl/__init__.py`` names every public class (loaded
on first use), and a fit of one family runs only its own.

    >>> from mkl.workflow.hashing import closure
    >>> "mkl.algorithms.smkl" in closure(["mkl.algorithms.baselines"])
    False
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import mkl

ROOT = Path(mkl.__file__).resolve().parent  # the mkl package directory
PACKAGE = "mkl"


def module_path(name: str, root: Path = ROOT) -> Path:
    """The source file of module ``name`` (``mkl.x.y``) under ``root``."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        raise ValueError(f"{name!r} is not a module of the {PACKAGE} package")
    base = root.joinpath(*parts[1:])
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    path = base.with_suffix(".py")
    if not path.is_file():
        raise ValueError(f"no module {name!r} (looked for {path})")
    return path


def _module_index(root: Path) -> dict[str, Path]:
    """Every module of the package under ``root``, by name, with its source
    file (a package's is its ``__init__.py``): one scan of the directory tree,
    instead of two stat calls per name looked up."""
    index = {}
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if d != "__pycache__"]
        parts = [PACKAGE, *Path(directory).relative_to(root).parts]
        for file in files:
            if file.endswith(".py"):
                stem = file[: -len(".py")]
                name = ".".join(parts if stem == "__init__" else [*parts, stem])
                index[name] = Path(directory, file)
    return index


# the fields of a statement that hold statements (bodies of functions, classes,
# loops, with, try and match blocks; except handlers and match cases hold bodies)
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _import_nodes(tree: ast.AST):
    """The import statements of a module, anywhere but under ``if TYPE_CHECKING:``
    (imports for type annotations only, never run). An import is a statement,
    so only statements are visited, never expressions (every Snakemake start
    hashes the stages' modules)."""
    todo = list(tree.body)
    while todo:  # a stack, not recursion
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo.extend(node.orelse)
            continue
        for name in _BODIES:
            todo.extend(getattr(node, name, ()))


@functools.cache
def _direct_imports(name: str, source: str, modules: frozenset[str]) -> frozenset[str]:
    """The modules of the package that module ``name`` (not a package: their
    imports are not followed) imports; ``source`` is its text, ``modules`` the
    names of the package's modules."""
    package = name.rpartition(".")[0]
    found = set()
    for node in _import_nodes(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # `from .x import y` may import module x.y or name y of module x
            targets = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for target in targets:
            if target.split(".")[0] != PACKAGE:
                continue
            # importing a.b.c runs a/__init__, a/b/__init__ and a/b/c
            parts = target.split(".")
            for k in range(1, len(parts) + 1):
                prefix = ".".join(parts[:k])
                if prefix in modules:
                    found.add(prefix)
    found.discard(name)
    return frozenset(found)


def closure(entries: Iterable[str], root: Path = ROOT) -> set[str]:
    """The modules of the package that ``entries`` run: the entries, what they
    import, and so on (the imports of package ``__init__`` files not followed)."""
    return set(_closure_files(entries, root))


def _closure_files(entries: Iterable[str], root: Path) -> dict[str, Path]:
    """:func:`closure`'s modules with their source files."""
    index = _module_index(root)
    modules = frozenset(index)
    seen: dict[str, Path] = {}
    todo = list(entries)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in index:
            module_path(name, root)  # raises ValueError naming what is missing
        seen[name] = path = index[name]
        parts = name.split(".")  # importing a.b.c first runs a/__init__ and a/b/__init__
        todo.extend(".".join(parts[:k]) for k in range(1, len(parts)))
        if path.name == "__init__.py":
            continue  # hashed as text, its imports not followed
        todo.extend(_direct_imports(name, path.read_text(), modules) - seen.keys())
    return seen


def source_hash(entries: Iterable[str], root: Path = ROOT) -> str:
    """sha256 (16 hex digits) over the sources of the import closure of ``entries``."""
    h = hashlib.sha256()
    files = _closure_files(entries, root)
    for name in sorted(files):
        h.update(name.encode())
        h.update(b"\0")
        h.update(files[name].read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:16]


def estimator_module(registry_name: str) -> str:
    """The module that defines the estimator of a registry name."""
    from mkl.algorithms.registry import algorithm_info
    from mkl.exceptions import InputError

    try:
        return f"mkl.algorithms.{algorithm_info(registry_name).module}"
    except InputError:
        raise ValueError(f"unknown algorithm {registry_name!r}") from None


# the entry modules of each stage (their scripts are tracked by Snakemake itself)
NORMALISE = ("mkl.workflow.dataset",)
SPLIT = ("mkl.workflow.splits",)
KERNELS = ("mkl.workflow.banks",)
FIT = ("mkl.workflow.evaluation", "mkl.algorithms.registry")  # plus the estimator's module
TABLES = ("mkl.workflow.tables",)
FIGURES = ("mkl.workflow.figures",)
FIDELITY = ("mkl.workflow.fidelity",)
TIMING = ("mkl.workflow.timing", "mkl.workflow.timing_settings", "mkl.algorithms.registry")


def fit_hash(*registry_names: str, extra: Iterable[str] = FIT, root: Path = ROOT) -> str:
    """The hash of what fitting the named estimators runs (the fit stage, a
    weights figure, a timing point): ``extra`` and each estimator's module."""
    return source_hash([*extra, *(estimator_module(n) for n in registry_names)], root)

"""Where a result came from: the experiment file it was run from and the code
that ran it, recorded beside every row of the fidelity record
(``docs/fidelity.csv``) so that a row can be traced to, and checked against,
the configuration in the repository.

* ``config_sha256``: the first 16 hex digits of the SHA-256 of the experiment
  file's bytes (``config/experiments/<experiment>.yaml``), taken when the
  experiment's tables are aggregated. Snakemake refits only the jobs whose
  parameters changed, so the tables aggregated after an edit are what the
  edited file produces, and carry its hash.
* ``code_version``: the short commit of the git checkout the ``mkl`` package
  runs from (``-dirty`` when tracked files differ from it), else
  ``mkl <version>``; taken by each fit job and kept in its record.
"""

from __future__ import annotations

import functools
import hashlib
import os
import subprocess
from pathlib import Path

HASH_DIGITS = 16


def file_sha256(path: str | os.PathLike) -> str:
    """The first HASH_DIGITS hex digits of the SHA-256 of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:HASH_DIGITS]


def experiment_file(directory: str | os.PathLike, experiment: str) -> Path:
    """The file an experiment is read from (``mkl.workflow.config.load_experiments``)."""
    return Path(directory) / f"{experiment}.yaml"


@functools.cache
def code_version() -> str:
    """The short commit of the checkout holding the running ``mkl`` package,
    with ``-dirty`` if a tracked file differs from it; ``mkl <version>`` for an
    installed copy (no git checkout, or no git)."""
    import mkl

    root = Path(mkl.__file__).resolve().parent.parent

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()

    try:
        if Path(git("rev-parse", "--show-toplevel")).resolve() != root:
            raise ValueError("the package is not at the top of a checkout")
        commit = git("rev-parse", "--short=7", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, ValueError, subprocess.SubprocessError):
        return f"mkl {mkl.__version__}"
    return commit + ("-dirty" if dirty else "")

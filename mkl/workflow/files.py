"""The workflow's outputs on disk: damaged files found and moved aside, and the
leftovers of killed jobs removed.

Files damaged after they were written (truncated by a full disk, overwritten,
bit rot) are caught by :func:`unreadable_reason` (cheap: headers only) and by
the checksums a kernel bank carries (``mkl.banks.kernel_bank``, checked when a job reads
it); either way the file is moved aside by :func:`quarantine`, so that the
workflow recomputes it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


def unreadable_reason(path: str | os.PathLike) -> str | None:
    """Why an existing output cannot be used (None if it looks whole): an HDF5
    file that HDF5 cannot open (truncation shows up here: its end-of-file
    address is past the real end) or that lacks its format attribute, a JSON
    file that does not parse. Reads headers only, never the data."""
    path = Path(path)
    try:
        if path.suffix == ".h5":
            import h5py

            with h5py.File(path, "r") as f:
                if not len(f.attrs):  # every writer here stores provenance attributes
                    return "an HDF5 file without attributes"
        elif path.suffix == ".json":
            with open(path) as fh:
                json.load(fh)
    except (OSError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def quarantine(path: str | os.PathLike, results: str | os.PathLike = "results") -> Path:
    """Move a damaged output to ``results/quarantine/`` (its relative path plus
    a time stamp), so that it is recomputed and can still be inspected."""
    path = Path(path)
    results = Path(results)
    try:
        rel = path.resolve().relative_to(results.resolve())
    except ValueError:
        rel = Path(path.name)
    dest = results / "quarantine" / rel.parent / f"{rel.name}.{time.strftime('%Y%m%dT%H%M%S')}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.replace(path, dest)
    return dest


def stale_temporaries(root: str | os.PathLike) -> list[Path]:
    """Temporary files (``.{name}.*.tmp``, see ``mkl._io.atomic_path``) under
    ``root``: left by killed jobs, never read as outputs."""
    root = Path(root)
    return sorted(root.rglob(".*.tmp")) if root.is_dir() else []

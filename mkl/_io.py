"""Atomic file writing: every output is written under a temporary name in the
destination folder and renamed into place, so an interrupted job never leaves
a half-written file that a later run would mistake for a finished one.

Files damaged after they were written (truncated by a full disk, overwritten,
bit rot) are caught by :func:`unreadable_reason` (cheap: the workflow runs it
on every existing intermediate file when it builds the DAG) and by the
checksums a kernel bank carries (checked when it is read); either way the file
is moved aside by :func:`quarantine`, so that the workflow recomputes it."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success.

    On any exception the temporary file is removed and ``path`` is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


def write_json(path: str | os.PathLike, obj) -> None:
    """Write ``obj`` as indented JSON, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=1, allow_nan=False) + "\n")


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write a text file atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)


class CorruptFile(ValueError):
    """An output file that exists but cannot be what its producer wrote."""

    def __init__(self, path: str | os.PathLike, message: str):
        super().__init__(message)
        self.path = Path(path)


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


def crc32(a) -> int:
    """CRC-32 of an array's bytes (C order), in blocks so a memory map is
    streamed from disk rather than copied."""
    import zlib

    import numpy as np

    flat = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    value, block = 0, 1 << 26
    for start in range(0, flat.size, block):
        value = zlib.crc32(flat[start : start + block], value)
    return value

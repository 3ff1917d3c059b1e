"""Atomic file writing: every output is written under a temporary name in the
destination folder and renamed into place, so an interrupted job never leaves
a half-written file that a later run would mistake for a finished one.

A kernel bank carries a checksum of its blocks (:func:`crc32`), checked when it
is read: a file damaged after it was written raises :class:`CorruptFile`
instead of giving wrong kernels (the workflow then moves it aside:
``mkl.workflow.files``)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
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


def crc32(a, value: int = 0) -> int:
    """CRC-32 of an array's bytes (C order), in blocks so a memory map is
    streamed from disk rather than copied; ``value``: the CRC-32 of the bytes
    before these (an array read block by block: its blocks in order)."""
    import zlib

    import numpy as np

    flat = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    block = 1 << 26
    for start in range(0, flat.size, block):
        value = zlib.crc32(flat[start : start + block], value)
    return value

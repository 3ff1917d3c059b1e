"""Downloads checked by sha256: each file of a registry source is looked for in
every mirror folder (config ``mirrors``), then in an installed package
(``package_file: sklearn.datasets.data/breast_cancer.csv``), then at each URL;
the first copy whose sha256 matches is written atomically to the destination.
If none does, :class:`DatasetUnavailable` names the dataset and every place
tried with its reason.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import os
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from .._io import atomic_path, write_json
from .dataset_registry import source_files

CHUNK = 1 << 20


class DatasetUnavailable(RuntimeError):
    """No source of a dataset could be obtained and verified."""


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _copy_verified(read, dest: Path, expected: str | None) -> str | None:
    """Stream ``read`` into ``dest`` atomically if its sha256 is ``expected``
    (any bytes when the registry knows no checksum); otherwise leave nothing
    behind and return the reason."""
    h = hashlib.sha256()
    try:
        with atomic_path(dest) as tmp:
            with open(tmp, "wb") as out:
                while chunk := read(CHUNK):
                    h.update(chunk)
                    out.write(chunk)
            if expected is not None and h.hexdigest() != expected:
                raise _ChecksumMismatch(
                    f"sha256 mismatch: expected {expected}, got {h.hexdigest()}"
                )
    except _ChecksumMismatch as exc:
        return str(exc)
    return None


class _ChecksumMismatch(Exception):
    pass


def _try_file(file: Mapping, dest: Path, mirrors: Sequence, timeout: float) -> list[str]:
    """Try every place for one file; return the failures (empty on success)."""
    tried = []
    candidates: list[tuple[str, str]] = []  # (where, 'path' | 'url')
    if file.get("mirror"):
        for m in mirrors:
            candidates.append((str(Path(m) / file["mirror"]), "path"))
    if file.get("package_file"):
        pkg, _, rel = file["package_file"].partition("/")
        try:
            candidates.append((str(importlib.resources.files(pkg) / rel), "path"))
        except ModuleNotFoundError:
            tried.append(f"package {pkg}: not installed")
    for url in [file["url"]] if isinstance(file.get("url"), str) else file.get("url") or []:
        candidates.append((url, "url"))
    for where, kind in candidates:
        try:
            if kind == "path":
                if not os.path.isfile(where):
                    tried.append(f"{where}: not found")
                    continue
                with open(where, "rb") as fh:
                    reason = _copy_verified(fh.read, dest, file["sha256"])
            else:
                with urllib.request.urlopen(where, timeout=timeout) as resp:
                    reason = _copy_verified(resp.read, dest, file["sha256"])
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
        if reason is None:
            return []
        tried.append(f"{where}: {reason}")
    if not candidates:
        tried.append("no copy is known (not in any mirror, no download url)")
    if file.get("canonical_url"):  # where to get it by hand (never fetched: see the registry)
        tried.append(f"canonical source: {file['canonical_url']}")
    return tried


def fetch(
    name: str,
    entry: Mapping,
    dest_dir: str | os.PathLike,
    mirrors: Sequence[str | os.PathLike] = (),
    timeout: float = 30.0,
) -> dict:
    """Obtain the raw files of one dataset into ``dest_dir`` and write
    ``dest_dir/manifest.json`` (format, options, files with sha256) last.

    Returns the manifest. Generated datasets need no files."""
    dest_dir = Path(dest_dir)
    tried: list[str] = []
    for source in entry.get("sources", []):
        if source.get("format") == "generated":
            manifest = {"dataset": name, "format": "generated", "source": dict(source), "files": []}
            write_json(dest_dir / "manifest.json", manifest)
            return manifest
        files = source_files(source)
        ok = True
        for f in files:
            failures = _try_file(f, dest_dir / f["name"], mirrors, timeout)
            if failures:
                tried.extend(failures)
                ok = False
                break
        if ok:
            manifest = {
                "dataset": name,
                "format": source["format"],
                "options": dict(source.get("options", {})),
                "files": [
                    {
                        "name": f["name"],
                        # a file without a registry checksum is pinned by what was fetched
                        "sha256": f["sha256"] or sha256_file(dest_dir / f["name"]),
                        "verified": f["sha256"] is not None,
                        "url": f.get("url") or f.get("canonical_url"),
                    }
                    for f in files
                ],
            }
            write_json(dest_dir / "manifest.json", manifest)
            return manifest
    if not entry.get("sources"):
        tried.append("the registry lists no source")
    raise DatasetUnavailable(f"dataset {name!r} is not available: tried " + "; ".join(tried))

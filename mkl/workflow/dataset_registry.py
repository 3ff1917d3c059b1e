"""The dataset registry (``config/datasets.yaml``): one entry per dataset,
naming its sources in order (a parser format, its files with sha256 and the
places to find them), its label mapping and its preprocessing.

Registry entry::

    ionosphere:
      title: Ionosphere (UCI)
      citation: Sigillito et al. 1989; UCI Machine Learning Repository (CC BY 4.0)
      sources:                       # tried in order until one verifies
        - format: pmlb               # parser, see mkl.workflow.parsers.PARSERS
          files:
            - url: https://github.com/EpistasisLab/pmlb/raw/master/datasets/ionosphere/ionosphere.tsv.gz
              mirror: ionosphere/pmlb_ionosphere.tsv.gz   # path inside a mirror folder
              sha256: adb6fc87...
          options: {}                # parser options
      drop_constant: true            # drop features constant over all samples
      labels: {positive: ["g"]}      # or {map: {raw: class}}; optional

The file is read and validated against ``workflow/schemas/datasets.schema.yaml``
by :func:`mkl.workflow.config.load_registry`; this module lists an entry's
source files and the mirror copies of them that exist.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path


def source_files(source: Mapping) -> list[dict]:
    """The files of one source, each with a ``name`` (its file name in
    ``results/raw/{dataset}/``) and a ``sha256`` (None where the registry
    knows none). A source may list ``files`` or be a single file itself."""
    files = source.get("files")
    if files is None:
        keys = ("url", "canonical_url", "mirror", "sha256", "package_file", "name")
        files = [{k: source[k] for k in keys if k in source}]
    out = []
    for f in files:
        f = dict(f)
        # a file known only by its canonical page (no copy obtainable offline, its
        # layout unverified) is still listed, so its failure names where to look
        where = f.get("mirror") or f.get("package_file") or f.get("url") or f.get("canonical_url")
        if where is None:
            raise ValueError(
                f"registry file entry {f} names no mirror path, package file, url or canonical url"
            )
        f.setdefault("sha256", None)  # unknown: accepted once, its hash recorded
        f.setdefault("name", Path(where if isinstance(where, str) else where[0]).name)
        out.append(f)
    return out


def mirror_copies(entry: Mapping, mirrors: Sequence[str | os.PathLike]) -> list[str]:
    """The mirror files of a dataset that exist now (a new copy reruns its download)."""
    found = []
    for source in entry.get("sources", []):
        if source.get("format") == "generated":
            continue
        for f in source_files(source):
            if f.get("mirror"):
                for m in mirrors:
                    if (Path(m) / f["mirror"]).is_file():
                        found.append(str(Path(m) / f["mirror"]))
    return found

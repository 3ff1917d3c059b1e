"""The normalise stage: raw files -> ``results/data/{dataset}.h5``.

:func:`build_dataset` parses the files a download fetched (``mkl.workflow.parsers``),
or calls a generator of ``mkl.datasets``, maps the labels and applies the
registry entry's preprocessing (``mkl.workflow.preprocessing``); :class:`Dataset`
is the file it writes: features ``X`` (or similarity matrices ``S``), class
codes ``y`` and class names -- or, for an entry with ``target: real``, the
real targets of a regression and no classes -- and provenance attributes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from .. import datasets as toy_data
from .._io import atomic_path
from .fetch import sha256_file
from .parsers import PARSERS, SIMILARITY_PARSERS
from .preprocessing import libsvm_gene_normalisation, map_labels


@dataclass
class Dataset:
    """Features X (n, d) -- (n, 0) for a similarity dataset -- labels, class
    names and provenance; ``S`` (m, n, n) holds precomputed similarity
    matrices over the examples when the source provides them. A regression
    dataset (``attrs["target"] == "real"``) has real ``y`` and no classes."""

    X: np.ndarray
    y: np.ndarray  # integer class codes 0..k-1, or real targets
    classes: list[str]

    @property
    def real_target(self) -> bool:
        """Whether y holds the real targets of a regression (not class codes)."""
        return self.attrs.get("target") == "real"

    attrs: dict
    S: np.ndarray | None = None
    similarity_names: list[str] | None = None

    def save(self, path: str | os.PathLike) -> None:
        with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
            f.create_dataset("X", data=self.X)
            if self.S is not None:
                f.create_dataset("S", data=self.S)
                names = self.similarity_names or [str(i) for i in range(len(self.S))]
                f.create_dataset(
                    "similarity_names",
                    data=np.array(names, dtype=object),
                    dtype=h5py.string_dtype(),
                )
            f.create_dataset("y", data=self.y)
            f.create_dataset(
                "classes", data=np.array(self.classes, dtype=object), dtype=h5py.string_dtype()
            )
            for k, v in self.attrs.items():
                f.attrs[k] = v

    @classmethod
    def load(cls, path: str | os.PathLike) -> Dataset:
        def strings(ds):
            return [c.decode() if isinstance(c, bytes) else c for c in ds[()]]

        with h5py.File(path, "r") as f:
            return cls(
                X=f["X"][()],
                y=f["y"][()],
                classes=strings(f["classes"]),
                attrs=dict(f.attrs),
                S=f["S"][()] if "S" in f else None,
                similarity_names=strings(f["similarity_names"]) if "S" in f else None,
            )


def build_dataset(name: str, entry: Mapping, raw_dir: str | os.PathLike) -> Dataset:
    """Parse the files fetched into ``raw_dir`` (see :func:`fetch`), keep the
    first ``first_rows`` rows if the entry says so, map labels, drop rows
    without a label mapping and, if asked, constant features."""
    raw_dir = Path(raw_dir)
    manifest = json.loads((raw_dir / "manifest.json").read_text())
    fmt = manifest["format"]
    S, sim_names = None, None
    if fmt == "generated":
        src = manifest["source"]
        gen = toy_data.GENERATORS.get(src.get("generator"))
        if gen is None:
            raise ValueError(f"dataset {name!r}: unknown generator {src.get('generator')!r}")
        X, y_raw = gen(**src.get("params", {}))
        provenance = {
            "source": f"generated:{src['generator']}",
            "params": json.dumps(src.get("params", {})),
        }
    else:
        if fmt not in PARSERS and fmt not in SIMILARITY_PARSERS:
            known = sorted([*PARSERS, *SIMILARITY_PARSERS])
            raise ValueError(f"dataset {name!r}: unknown format {fmt!r}; known: {known}")
        paths = [raw_dir / f["name"] for f in manifest["files"]]
        for f, p in zip(manifest["files"], paths, strict=True):
            if sha256_file(p) != f["sha256"]:
                raise ValueError(
                    f"dataset {name!r}: {p} does not match its sha256; delete it to refetch"
                )
        if fmt in SIMILARITY_PARSERS:
            S, y_raw, sim_names = SIMILARITY_PARSERS[fmt](paths, **manifest.get("options", {}))
            X = np.empty((len(y_raw), 0))
        else:
            X, y_raw = PARSERS[fmt](paths, **manifest.get("options", {}))
        provenance = {
            "source": " ; ".join(str(f.get("url")) for f in manifest["files"]),
            "sha256": " ".join(f["sha256"] for f in manifest["files"]),
        }
    if entry.get("first_rows") is not None:  # a published file that is the first rows of ours
        X, y_raw, S = _first_rows(name, int(entry["first_rows"]), X, y_raw, S)
        provenance["first_rows"] = int(entry["first_rows"])
    real = entry.get("target", "classes") == "real"
    if real:  # a regression: the targets as they are, no classes
        try:
            y, classes = np.asarray(y_raw, dtype=np.float64), []
        except (TypeError, ValueError):
            raise ValueError(
                f"dataset {name!r}: target: real, but the targets are not numbers"
            ) from None
        if not np.isfinite(y).all():
            raise ValueError(f"dataset {name!r}: the targets contain NaN or inf")
        keep = np.ones(len(y), dtype=bool)
    else:
        y, classes = map_labels(y_raw, entry.get("labels"), features=_listed_features(X, entry))
        keep = y >= 0
    X, y = X[keep], y[keep]
    if S is not None:
        S = S[:, keep][:, :, keep]
    dropped = []
    if entry.get("drop_features"):
        dropped = [int(j) for j in entry["drop_features"]]
    if entry.get("drop_constant"):
        dropped += [int(j) for j in np.flatnonzero(np.ptp(X, axis=0) == 0) if j not in dropped]
    if dropped:
        X = np.delete(X, dropped, axis=1)
    if entry.get("preprocess") == "libsvm_gene":
        X = libsvm_gene_normalisation(X)
    elif entry.get("preprocess") is not None:
        raise ValueError(f"dataset {name!r}: unknown preprocess {entry['preprocess']!r}")
    if not np.isfinite(X).all():
        raise ValueError(f"dataset {name!r}: features contain NaN or inf after parsing")
    attrs = {
        "dataset": name,
        "format": fmt,
        "parser_options": json.dumps(manifest.get("options", {})),
        "dropped_features": json.dumps(dropped),
        **provenance,
    }
    if real:
        if np.ptp(y) == 0:
            raise ValueError(f"dataset {name!r}: the targets are all equal")
        attrs["target"] = "real"
    else:
        counts = np.bincount(y, minlength=len(classes))
        if (counts > 0).sum() < 2:
            raise ValueError(f"dataset {name!r}: fewer than two classes after label mapping")
        attrs["class_counts"] = json.dumps(counts.tolist())
    if S is not None:
        attrs["similarities"] = json.dumps(sim_names)
    return Dataset(X=X, y=y, classes=list(classes), attrs=attrs, S=S, similarity_names=sim_names)


def _first_rows(name: str, n: int, X: np.ndarray, y_raw: np.ndarray, S: np.ndarray | None):
    """The first ``n`` examples (rows of X, labels, rows and columns of S)."""
    if n < 1 or n > len(y_raw):
        raise ValueError(f"dataset {name!r}: first_rows {n} outside 1..{len(y_raw)} (rows parsed)")
    return X[:n], y_raw[:n], None if S is None else S[:, :n, :n]


def _listed_features(X: np.ndarray, entry: Mapping) -> np.ndarray:
    """X without the entry's ``drop_features`` (the features the experiments
    see, before any constant one is dropped): what a label rule may read."""
    dropped = [int(j) for j in entry.get("drop_features") or []]
    return np.delete(X, dropped, axis=1) if dropped else X

"""Datasets: the registry (``config/datasets.yaml``), downloads checked by sha256,
parsers for the raw formats, feature scaling with training statistics, seeded
stratified splits with inner CV folds (the synthetic data are in ``synthetic``).

Registry entry (one per dataset)::

    ionosphere:
      title: Ionosphere (UCI)
      citation: Sigillito et al. 1989; UCI Machine Learning Repository (CC BY 4.0)
      sources:                       # tried in order until one verifies
        - format: pmlb               # parser, see PARSERS
          files:
            - url: https://github.com/EpistasisLab/pmlb/raw/master/datasets/ionosphere/ionosphere.tsv.gz
              mirror: ionosphere/pmlb_ionosphere.tsv.gz   # path inside a mirror folder
              sha256: adb6fc87...
          options: {}                # parser options
      drop_constant: true            # drop features constant over all samples
      labels: {positive: ["g"]}      # or {map: {raw: class}}; optional

Each file is looked for in every mirror folder (config ``mirrors``), then in an
installed package (``package_file: sklearn.datasets.data/breast_cancer.csv``),
then at each URL; the first copy whose sha256 matches is written atomically to
the destination. If none does, :class:`DatasetUnavailable` names the dataset
and every place tried with its reason.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import io
import json
import os
import struct
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from . import synthetic
from ._io import atomic_path, write_json

CHUNK = 1 << 20


class DatasetUnavailable(RuntimeError):
    """No source of a dataset could be obtained and verified."""


# --------------------------------------------------------------------------- #
# Registry                                                                    #
# --------------------------------------------------------------------------- #
def load_registry(path: str | os.PathLike) -> dict:
    import yaml

    with open(path) as fh:
        reg = yaml.safe_load(fh) or {}
    if not isinstance(reg, dict):
        raise ValueError(f"dataset registry {path} must map dataset names to entries")
    return reg


def registry_entry(registry: Mapping, name: str) -> Mapping:
    try:
        return registry[name]
    except KeyError:
        raise ValueError(
            f"dataset {name!r} is not in the registry; known: {', '.join(sorted(registry))}"
        ) from None


def _source_files(source: Mapping) -> list[dict]:
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


# --------------------------------------------------------------------------- #
# Download                                                                    #
# --------------------------------------------------------------------------- #
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
        files = _source_files(source)
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


# --------------------------------------------------------------------------- #
# Parsers: files -> (X, raw labels)                                           #
# --------------------------------------------------------------------------- #
def _open_text(path: Path) -> io.TextIOBase:
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"))
    return open(path)


def parse_pmlb(paths: Sequence[Path], target: str = "target") -> tuple[np.ndarray, np.ndarray]:
    """PMLB tab-separated (gzipped) table with a header and a target column."""
    import pandas as pd  # here, not at the top: kernel jobs never parse text

    df = pd.read_csv(paths[0], sep="\t")
    if target not in df.columns:
        raise ValueError(f"{paths[0]}: no target column {target!r}")
    y = df.pop(target).to_numpy()
    return df.to_numpy(dtype=np.float64), y


def parse_libsvm(
    paths: Sequence[Path], n_features: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """LIBSVM sparse text ``label idx:val ...`` (all files concatenated)."""
    from sklearn.datasets import load_svmlight_files

    parts = load_svmlight_files([str(p) for p in paths], n_features=n_features)
    Xs, ys = parts[0::2], parts[1::2]
    X = np.vstack([x.toarray() for x in Xs])
    return X, np.concatenate(ys)


def parse_table(
    paths: Sequence[Path],
    label_column: int | str = -1,
    delimiter: str | None = ",",
    header: bool = False,
    missing: str | None = None,
    missing_policy: str = "drop",
) -> tuple[np.ndarray, np.ndarray]:
    """Delimited text (UCI csv, LIBSVM dense, whitespace tables): one row per
    sample; ``label_column`` by index or header name; ``missing`` marks an
    unknown value and ``missing_policy`` drops those rows or imputes the
    column mean."""
    import pandas as pd  # here, not at the top: kernel jobs never parse text

    sep = r"\s+" if delimiter in (None, "whitespace") else delimiter
    frames = [
        pd.read_csv(p, sep=sep, header=0 if header else None, na_values=missing, engine="python")
        for p in paths
    ]
    df = pd.concat(frames, ignore_index=True)
    df = df.dropna(axis=1, how="all")  # empty columns from trailing delimiters
    col = label_column if isinstance(label_column, str) else df.columns[label_column]
    y = df.pop(col)
    if missing is not None and df.isna().any().any():
        if missing_policy == "drop":
            keep = ~df.isna().any(axis=1)
            df, y = df[keep], y[keep]
        elif missing_policy == "mean":
            df = df.fillna(df.mean(numeric_only=True))
        else:
            raise ValueError(f"missing_policy must be 'drop' or 'mean', got {missing_policy!r}")
    try:
        X = df.to_numpy(dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"{paths[0]}: non-numeric feature values ({exc})") from None
    return X, y.to_numpy()


def parse_sklearn_csv(paths: Sequence[Path]) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled csv: a first line 'n_samples,n_features,class names...',
    then rows of features and an integer class index."""
    with open(paths[0]) as fh:
        head = fh.readline().strip().split(",")
    names = np.array(head[2:], dtype=object)
    data = np.loadtxt(paths[0], delimiter=",", skiprows=1)
    X, codes = data[:, :-1], data[:, -1].astype(int)
    if X.shape != (int(head[0]), int(head[1])):
        raise ValueError(f"{paths[0]}: header says {head[:2]}, data is {X.shape}")
    return X, names[codes] if len(names) else codes


def parse_mat_similarity(
    paths: Sequence[Path], similarity: str | Sequence[str] = "A", labels: str = "C"
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """MATLAB .mat files of precomputed similarities (Chen et al. 2009's format:
    variable ``A``, the n x n similarity, and ``C``, the labels). Every listed
    variable of every file is one similarity matrix over the same examples;
    returns (S of shape (m, n, n), labels, names)."""
    import scipy.io

    names = [similarity] if isinstance(similarity, str) else list(similarity)
    mats, y, out_names = [], None, []
    for p in paths:
        try:
            content = scipy.io.loadmat(str(p))
        except (ValueError, OSError, NotImplementedError, scipy.io.matlab.MatReadError) as exc:
            raise ValueError(f"{p}: not a readable MATLAB file ({exc})") from None
        for var in [*names, labels]:
            if var not in content:
                found = sorted(k for k in content if not k.startswith("__"))
                raise ValueError(f"{p}: no variable {var!r} (has {found})")
        labels_p = np.asarray(content[labels]).ravel()
        if y is None:
            y = labels_p
        elif not np.array_equal(y, labels_p):
            raise ValueError(f"{p}: labels differ from those of {paths[0]}")
        for var in names:
            A = np.asarray(content[var], dtype=np.float64)
            if A.shape != (len(y), len(y)):
                raise ValueError(f"{p}: {var} has shape {A.shape}, expected ({len(y)}, {len(y)})")
            if not np.isfinite(A).all():
                raise ValueError(f"{p}: {var} contains NaN or inf")
            mats.append((A + A.T) / 2)  # an asymmetric score (e.g. BLAST) is symmetrised
            out_names.append(f"{p.stem}:{var}")
    return np.stack(mats), y, out_names


def parse_rdata(
    paths: Sequence[Path], variable: str, x: str = "x", y: str = "y"
) -> tuple[np.ndarray, np.ndarray]:
    """An R workspace (.RData) holding a list ``variable`` with a feature matrix
    ``x`` and labels ``y`` (e.g. West et al. 2001's ``west``), read by the
    ``rdata`` package (pure Python; no R needed)."""
    import rdata

    try:
        content = rdata.conversion.convert(rdata.parser.parse_file(str(paths[0])))
    except Exception as exc:  # rdata raises a variety of parse errors
        raise ValueError(f"{paths[0]}: not a readable R data file ({exc})") from None
    if variable not in content or x not in content[variable] or y not in content[variable]:
        raise ValueError(f"{paths[0]}: no list {variable!r} with entries {x!r} and {y!r}")
    X = np.asarray(content[variable][x], dtype=np.float64)
    labels = np.asarray(content[variable][y], dtype=object)
    return X, labels


def parse_table_and_labels(
    paths: Sequence[Path], delimiter: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels in separate files (UCI's madelon: ``*.data`` with the
    features, ``*.labels`` with one label per line), given as pairs
    data, labels, data, labels, ... and concatenated."""
    import pandas as pd  # here, not at the top: kernel jobs never parse text

    if len(paths) % 2:
        raise ValueError("table_and_labels needs (data file, labels file) pairs")
    sep = r"\s+" if delimiter in (None, "whitespace") else delimiter
    Xs, ys = [], []
    for data, labels in zip(paths[0::2], paths[1::2], strict=True):
        X = pd.read_csv(data, sep=sep, header=None, engine="python").dropna(axis=1, how="all")
        y = pd.read_csv(labels, sep=sep, header=None, engine="python").iloc[:, 0]
        if len(X) != len(y):
            raise ValueError(f"{data}: {len(X)} rows but {labels} has {len(y)} labels")
        Xs.append(X.to_numpy(dtype=np.float64))
        ys.append(y.to_numpy())
    return np.vstack(Xs), np.concatenate(ys)


def parse_idx(paths: Sequence[Path]) -> tuple[np.ndarray, np.ndarray]:
    """MNIST's idx format (gzipped or not): an images file (magic 2051, uint8,
    n x rows x cols) and a labels file (magic 2049), in either order; pixels
    as floats in [0, 255], one row per image."""
    arrays = {}
    for p in paths:
        with gzip.open(p, "rb") if p.suffix == ".gz" else open(p, "rb") as fh:
            data = fh.read()
        if len(data) < 8:
            raise ValueError(f"{p}: too short for an idx file")
        magic, n = struct.unpack(">II", data[:8])
        if magic == 2051:
            rows, cols = struct.unpack(">II", data[8:16])
            body, shape = data[16:], (n, rows * cols)
        elif magic == 2049:
            body, shape = data[8:], (n,)
        else:
            raise ValueError(f"{p}: not an idx images/labels file (magic {magic})")
        if len(body) != int(np.prod(shape)):
            raise ValueError(f"{p}: truncated ({len(body)} bytes for shape {shape})")
        arrays[magic] = np.frombuffer(body, dtype=np.uint8).reshape(shape)
    if set(arrays) != {2049, 2051}:
        raise ValueError("idx parser needs one images file and one labels file")
    X, y = arrays[2051].astype(np.float64), arrays[2049].astype(int)
    if len(X) != len(y):
        raise ValueError(f"{len(X)} images but {len(y)} labels")
    return X, y


def parse_text_archive(
    paths: Sequence[Path],
    classes: Mapping[str, Sequence[str]],
    strip_header: bool = False,
    max_features: int | None = None,
    min_df: int = 1,
    stop_words: str | None = "english",
    encoding: str = "latin-1",
) -> tuple[np.ndarray, np.ndarray]:
    """Documents in a tar archive, one file per document, a folder per class
    (the 20 Newsgroups ``bydate`` archive, the Ohsumed category folders), as
    term-frequency vectors scaled to unit length.

    ``classes`` maps a class name to the archive folders that hold its
    documents (e.g. ``{C01: [ohsumed_single_23/training/C01, .../test/C01]}``);
    only those documents are read, so the vocabulary is the task's own.
    ``strip_header`` drops a news article's header (everything up to the first
    blank line). Terms: scikit-learn's default tokens, lower case, English stop
    words removed, kept if they occur in at least ``min_df`` documents, and the
    ``max_features`` most frequent kept (all if None). No label is used."""
    import tarfile

    from sklearn.feature_extraction.text import TfidfVectorizer

    docs, labels = [], []
    wanted = {
        folder.rstrip("/") + "/": label for label, folders in classes.items() for folder in folders
    }
    try:
        with tarfile.open(paths[0], "r:*") as tar:
            for member in sorted(tar.getmembers(), key=lambda m: m.name):
                if not member.isfile():
                    continue
                folder = member.name.rsplit("/", 1)[0] + "/"
                if folder not in wanted:
                    continue
                text = tar.extractfile(member).read().decode(encoding)
                if strip_header:
                    text = text.split("\n\n", 1)[1] if "\n\n" in text else ""
                docs.append(text)
                labels.append(wanted[folder])
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ValueError(f"{paths[0]}: not a readable tar archive ({exc})") from None
    for label, folders in classes.items():
        if label not in labels:
            raise ValueError(f"{paths[0]}: no documents under {list(folders)} (class {label!r})")
    vectoriser = TfidfVectorizer(
        use_idf=False,
        norm="l2",
        stop_words=stop_words,
        min_df=min_df,
        max_features=max_features,
        dtype=np.float64,
    )
    X = vectoriser.fit_transform(docs).toarray()
    return X, np.asarray(labels, dtype=object)


# parsers whose files hold similarity matrices instead of features
SIMILARITY_PARSERS = {"mat_similarity": parse_mat_similarity}

PARSERS = {
    "rdata": parse_rdata,
    "idx": parse_idx,
    "table_and_labels": parse_table_and_labels,
    "pmlb": parse_pmlb,
    "libsvm": parse_libsvm,
    "table": parse_table,
    "sklearn_csv": parse_sklearn_csv,
    "text_archive": parse_text_archive,
}


# --------------------------------------------------------------------------- #
# Normalise: raw files -> results/data/{dataset}.h5                           #
# --------------------------------------------------------------------------- #
@dataclass
class Dataset:
    """Features X (n, d) -- (n, 0) for a similarity dataset -- labels, class
    names and provenance; ``S`` (m, n, n) holds precomputed similarity
    matrices over the examples when the source provides them."""

    X: np.ndarray
    y: np.ndarray  # integer class codes 0..k-1
    classes: list[str]
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


def map_labels(y_raw: np.ndarray, spec: Mapping | None) -> tuple[np.ndarray, list[str]]:
    """Raw labels -> (integer codes, class names), by the registry's ``labels``:
    ``{positive: [...]}`` (binary: listed values vs the rest), ``{map: {raw: class}}``
    (unlisted values dropped -> code -1), ``{balanced_binary: true}`` (see
    :func:`balanced_binary_classes`), or nothing (classes as found, sorted)."""
    raw = np.array([_label_str(v) for v in y_raw], dtype=object)
    if spec and spec.get("balanced_binary"):
        found = sorted(set(raw), key=_natural_key)
        counts = [int((raw == c).sum()) for c in found]
        positive = [found[i] for i in balanced_binary_classes(counts)]
        names = ["rest", "+".join(positive)]
        return np.isin(raw, positive).astype(int), names
    if spec and "positive" in spec:
        pos = {_label_str(v) for v in spec["positive"]}
        unknown = pos - set(raw)
        if unknown:
            raise ValueError(f"positive label(s) {sorted(unknown)} do not occur in the data")
        names = list(spec.get("names", ["negative", "positive"]))
        return np.isin(raw, list(pos)).astype(int), names
    if spec and "map" in spec:
        mapping = {_label_str(k): str(v) for k, v in spec["map"].items()}
        names = sorted(set(mapping.values()))
        codes = np.array([names.index(mapping[v]) if v in mapping else -1 for v in raw])
        return codes, names
    names = sorted(set(raw), key=_natural_key)
    return np.array([names.index(v) for v in raw]), names


def balanced_binary_classes(counts: Sequence[int]) -> list[int]:
    """A multiclass problem mapped to a binary one "keeping the distribution of
    positive and negative examples balanced" (Lauriola et al. 2018): the set of
    classes whose total is closest to half the examples (exhaustive over the
    subsets; ties: the set listed first when subsets are enumerated by bitmask,
    which favours low class indices). Returns the positive classes' indices."""
    k = len(counts)
    if k < 2:
        raise ValueError("balanced_binary needs at least two classes")
    if k > 20:
        raise ValueError(f"balanced_binary enumerates class subsets; {k} classes are too many")
    half = sum(counts) / 2
    best, best_err = None, np.inf
    for mask in range(1, 2 ** (k - 1)):  # the last class is always negative: no mirror sets
        err = abs(sum(c for i, c in enumerate(counts) if mask >> i & 1) - half)
        if err < best_err:
            best, best_err = mask, err
    return [i for i in range(k) if best >> i & 1]


def _label_str(v) -> str:
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _natural_key(s: str):
    try:
        return (0, float(s), s)
    except ValueError:
        return (1, 0.0, s)


def libsvm_gene_normalisation(X: np.ndarray) -> np.ndarray:
    """What LIBSVM applied to its colon-cancer, leu and duke files: each sample
    standardised to mean 0 and variance 1 over its genes, then each gene to
    mean 0 and variance 1 over the samples (of the whole file, as published)."""
    X = np.asarray(X, dtype=np.float64)
    X = (X - X.mean(1, keepdims=True)) / X.std(1, keepdims=True)
    sd = X.std(0, keepdims=True)
    return (X - X.mean(0, keepdims=True)) / np.where(sd > 0, sd, 1.0)


def build_dataset(name: str, entry: Mapping, raw_dir: str | os.PathLike) -> Dataset:
    """Parse the files fetched into ``raw_dir`` (see :func:`fetch`), map labels,
    drop rows without a label mapping and, if asked, constant features."""
    raw_dir = Path(raw_dir)
    manifest = json.loads((raw_dir / "manifest.json").read_text())
    fmt = manifest["format"]
    S, sim_names = None, None
    if fmt == "generated":
        src = manifest["source"]
        gen = synthetic.GENERATORS.get(src.get("generator"))
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
    y, classes = map_labels(y_raw, entry.get("labels"))
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
    counts = np.bincount(y, minlength=len(classes))
    if (counts > 0).sum() < 2:
        raise ValueError(f"dataset {name!r}: fewer than two classes after label mapping")
    attrs = {
        "dataset": name,
        "format": fmt,
        "parser_options": json.dumps(manifest.get("options", {})),
        "dropped_features": json.dumps(dropped),
        "class_counts": json.dumps(counts.tolist()),
        **provenance,
    }
    if S is not None:
        attrs["similarities"] = json.dumps(sim_names)
    return Dataset(X=X, y=y, classes=list(classes), attrs=attrs, S=S, similarity_names=sim_names)


# --------------------------------------------------------------------------- #
# Feature scaling with training statistics                                    #
# --------------------------------------------------------------------------- #
def scale_features(X_train: np.ndarray, X_test: np.ndarray, how: str = "standardise"):
    """Fit the scaling on the training rows, apply it to both parts.
    standardise: zero mean, unit variance; minmax: training range -> [0, 1];
    minmax_symmetric: training range -> [-1, 1] (the range of LIBSVM's
    ``*_scale`` files, svm-scale's default); none. Features constant on the
    training rows are centred, not divided."""
    if how == "none":
        return X_train, X_test
    if how == "standardise":
        shift, scale = X_train.mean(0), X_train.std(0)
    elif how == "minmax":
        shift, scale = X_train.min(0), np.ptp(X_train, axis=0)
    elif how == "minmax_symmetric":  # centre of the training range -> 0, half its width -> 1
        shift, scale = (X_train.max(0) + X_train.min(0)) / 2, np.ptp(X_train, axis=0) / 2
    else:
        raise ValueError(
            f"unknown feature scaling {how!r}; use standardise, minmax, minmax_symmetric or none"
        )
    scale = np.where(scale > 0, scale, 1.0)
    return (X_train - shift) / scale, (X_test - shift) / scale


# --------------------------------------------------------------------------- #
# Splits                                                                      #
# --------------------------------------------------------------------------- #
@dataclass
class Split:
    train: np.ndarray  # indices into the dataset
    test: np.ndarray
    folds: np.ndarray  # inner-CV fold id of each training point (aligned with train)


def make_splits(
    y: np.ndarray,
    repetitions: int,
    train_fraction: float,
    inner_folds: int,
    seed: int,
    balanced: bool = False,
) -> list[Split]:
    """R seeded stratified train/test splits, each with stratified inner folds.

    ``balanced``: every class is first subsampled (seeded, per split) to the size
    of the smallest one, so train and test hold equal numbers of each class
    (Kundu et al. 2010's protocol); the dropped points are in neither part."""
    from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit

    y = np.asarray(y)
    if not 0 < train_fraction < 1:
        raise ValueError(f"train_fraction must be in (0, 1), got {train_fraction}")
    if repetitions < 1:
        raise ValueError(f"repetitions must be >= 1, got {repetitions}")
    seeds = np.random.SeedSequence(seed).generate_state(repetitions)
    out = []
    for s in seeds:
        if balanced:  # the same number of each class in train, and in test
            rng = np.random.default_rng(int(s))
            classes = np.unique(y)
            k = min(int((y == c).sum()) for c in classes)
            k_train = min(max(round(train_fraction * k), 1), k - 1)
            picks = [rng.permutation(np.flatnonzero(y == c))[:k] for c in classes]
            train = np.sort(np.concatenate([p[:k_train] for p in picks]))
            test = np.sort(np.concatenate([p[k_train:] for p in picks]))
        else:
            sss = StratifiedShuffleSplit(1, train_size=train_fraction, random_state=int(s))
            train, test = next(sss.split(np.zeros(len(y)), y))
            train, test = np.sort(train), np.sort(test)
        present = np.bincount(y[train])
        smallest = present[present > 0].min()
        if smallest < inner_folds:
            raise ValueError(
                f"the training part's smallest class has {smallest} points, "
                f"fewer than inner_folds={inner_folds}"
            )
        folds = np.empty(len(train), dtype=int)
        skf = StratifiedKFold(inner_folds, shuffle=True, random_state=int(s))
        for k, (_, va) in enumerate(skf.split(np.zeros(len(train)), y[train])):
            folds[va] = k
        out.append(Split(train, test, folds))
    return out


def save_splits(path: str | os.PathLike, splits: Sequence[Split], attrs: Mapping) -> None:
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
        for r, sp in enumerate(splits):
            g = f.create_group(str(r))
            g.create_dataset("train", data=sp.train)
            g.create_dataset("test", data=sp.test)
            g.create_dataset("folds", data=sp.folds)
        f.attrs["repetitions"] = len(splits)
        for k, v in attrs.items():
            f.attrs[k] = v


def load_split(path: str | os.PathLike, r: int) -> Split:
    with h5py.File(path, "r") as f:
        if str(r) not in f:
            raise ValueError(f"{path} has no split {r} (it has {f.attrs.get('repetitions')})")
        g = f[str(r)]
        return Split(g["train"][()], g["test"][()], g["folds"][()])

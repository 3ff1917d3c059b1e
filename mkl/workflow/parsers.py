"""Parsers: the raw files of one dataset -> features ``X`` (n, d) and raw
labels (or, for similarity data, matrices ``S`` (m, n, n)). A registry
source's ``format`` names one of :data:`PARSERS` or :data:`SIMILARITY_PARSERS`
and its ``options`` are the parser's keyword arguments. Heavy readers
(pandas, scikit-learn's loaders, scipy.io, rdata) are imported inside the
parser that needs them.
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np


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
    y = df.pop(_label_column(df, label_column, header, paths[0]))
    if missing is None and df.isna().any().any():  # pandas read '', NA, n/a, ... as missing
        raise ValueError(_non_numeric(df, paths, header, missing))
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
    except ValueError:
        raise ValueError(_non_numeric(df, paths, header, missing)) from None
    return X, y.to_numpy()


def _label_column(df, label_column, header: bool, path: Path):
    """The column ``label_column`` names (a header name, or an index from 0,
    negative from the end), refused by name when it is not there."""
    columns = list(df.columns)
    if isinstance(label_column, str):
        if label_column in columns:
            return label_column
        if not header:
            raise ValueError(
                f"{path}: label_column {label_column!r} is a name, but the table is read "
                "without a header (header: false): set header: true, or give the column's "
                f"index (0 to {len(columns) - 1}, or -1 for the last)"
            )
        import difflib

        close = difflib.get_close_matches(label_column, [str(c) for c in columns], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(
            f"{path}: no column named {label_column!r} for label_column{hint}; the header "
            f"names {', '.join(repr(str(c)) for c in columns[:20])}"
            + (f" and {len(columns) - 20} more" if len(columns) > 20 else "")
        )
    if not -len(columns) <= label_column < len(columns):
        raise ValueError(
            f"{path}: label_column {label_column} is not a column: the table has "
            f"{len(columns)} (indices 0 to {len(columns) - 1}, or -1 for the last)"
        )
    return columns[label_column]


def _non_numeric(df, paths: Sequence[Path], header: bool, missing) -> str:
    """The message for a feature value that is not a number: the first such
    value, its column and row (and line, for one file), and the option that
    reads it as missing. Without ``missing``, pandas' own NA spellings ('',
    'NA', 'n/a', 'nan', ...) arrive as NaN, and are such values too."""
    import pandas as pd

    for column in df.columns:
        values = pd.to_numeric(df[column], errors="coerce")
        bad = values.isna() & (df[column].notna() | (missing is None))
        if not bad.any():
            continue
        row = bad.idxmax()
        value = df[column][row]
        if pd.isna(value):  # its text is gone: pandas read it as missing
            shown, marker = "an empty or NA-like field ('', 'NA', 'n/a', 'nan', ...)", "NA"
        else:
            shown, marker = repr(value), value
        # (one file: its data rows in order, a header line above them)
        line = f", line {row + 1 + int(header)} of the file" if len(paths) == 1 else ""
        what = f"named {column!r}" if header else f"{column} (from 0)"
        if missing is not None:
            hint = f"values other than missing: {missing!r} must be numbers"
        elif row == 0 and not header:
            hint = "if the first line names the columns, set the source's options header: true"
        else:
            hint = (
                f"if it marks a missing value, set the source's options missing: {marker!r} "
                "(pandas' NA spellings are then read as missing too) and missing_policy: "
                "drop (those rows) or mean (the column's mean)"
            )
        return f"{paths[0]}: feature column {what} holds {shown} in row {row}{line}; {hint}"
    return f"{paths[0]}: non-numeric feature values"


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
    words removed, kept if they occur in at least ``min_df`` documents; of
    those, the ``max_features`` found in the most documents (ties: the
    alphabetically first; all if None). Each document's term counts over that
    vocabulary are then divided by their Euclidean norm. No label is used."""
    import tarfile

    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.preprocessing import normalize

    from ..kernels.specs import most_frequent_features

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
    if max_features is not None and max_features < 1:
        raise ValueError(f"max_features must be >= 1, got {max_features}")
    # columns in alphabetical order of the terms
    counts = CountVectorizer(stop_words=stop_words, min_df=min_df, dtype=np.float64).fit_transform(
        docs
    )
    if max_features is not None:
        counts = counts[:, most_frequent_features(counts, max_features)]
    X = normalize(counts, norm="l2").toarray()
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

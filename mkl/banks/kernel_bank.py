"""KernelBank: the kernels of one split, stored in one HDF5 file.

Layout of ``results/kernels/{experiment}/{dataset}/{split}.h5``::

    /train      (M, n_train, n_train)  float64 or float32
    /test       (M, n_test, n_train)   same dtype
    /factors    (M,)                   scalar normalisation divisors fitted on the training rows
                                       (NaN in a factor bank: applied to the factors)
    /specs      (M,) compound          family, param, feature, normalise (one row per kernel)
    /y_train, /y_test, /train_index, /test_index
    /eigenvalues (M, n_train), /eigenvectors (M, n_train, n_train)   float64, optional:
                 the eigendecomposition of each training block (similarity banks)
    attrs: provenance (dataset, experiment, split, sha256 of the data file, library version, ...)

A bank of factors (``train`` a :class:`~mkl.banks.factor_bank.FactorBank`, kernels
K_m = Z_m Z_m') stores the side-by-side factor matrices instead of the blocks,
readable by h5py alone::

    /train      group: the training factors Z (n_train, R), attrs format ("dense"
                or "csr") and shape; dense: /train/data (n_train, R); CSR:
                /train/data, /train/indices, /train/indptr (scipy's arrays)
    /test       group: the test factors (n_test, R), the same way
    /ranks      (M,) int64: kernel m owns columns sum(ranks[:m]) .. sum(ranks[:m+1])
    attrs: representation (e.g. "nystroem"), crc32_train_data, crc32_train_indices, ...

Files are written atomically (temporary name, then rename) and datasets are
stored contiguous and uncompressed, so ``KernelBank.load(path, mmap=True)``
maps dense blocks straight from disk without reading or copying anything
(factor banks are read into memory).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import h5py
import numpy as np

from .._io import CorruptFile, atomic_path, crc32
from ..exceptions import InputError
from ..kernels.specs import CALLABLE, KernelSpec
from ..kernels.spectra import Spectra, remember, spectra

# a kernel spec in a bank file; ``keywords`` holds a scikit-learn pairwise
# kernel's parameters as "name=repr(value)" joined by ";" (files written before
# it have no such field: no keywords)
_SPEC_DTYPE = np.dtype(
    [
        ("family", "S32"),
        ("param", "f8"),
        ("feature", "i8"),
        ("normalise", "S16"),
        ("keywords", "S128"),
    ]
)
BANK_FORMAT_VERSION = 1


def is_factor_bank(x) -> bool:
    """Whether ``x`` is a :class:`~mkl.banks.factor_bank.FactorBank` (without importing
    that module, and scipy with it, where no factor bank was ever made)."""
    module = sys.modules.get("mkl.banks.factor_bank")
    return module is not None and isinstance(x, module.FactorBank)


@dataclass
class KernelBank:
    """Training block, test block, kernel specs and labels of one split.

    ``train`` is the (M, n, n) training block, or a FactorBank holding the
    training and test factors (``test`` is then None: ``test_input`` gives
    what to predict on either way).

    NaN/inf: the constructor reads the diagonal of an in-memory training
    block (M n entries; a NaN or inf feature of a row makes that row's
    diagonal entry non-finite) and refuses it, naming the kernel and the
    entry. The rest of the block, and a memory-mapped one, is checked by the
    one validation pass of every fit
    (:func:`mkl.banks.checks.check_training_kernels`), the test block by
    ``predict``: reading all of it here would be one more pass over the bank
    (factors are checked when their FactorBank is made)."""

    train: np.ndarray  # or a FactorBank
    specs: list[KernelSpec]
    y_train: np.ndarray
    test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    factors: np.ndarray | None = None
    train_index: np.ndarray | None = None
    test_index: np.ndarray | None = None
    attrs: dict = field(default_factory=dict)
    eigenvalues: np.ndarray | None = None  # (M, n) of each training block, ascending
    eigenvectors: np.ndarray | None = None  # (M, n, n)

    def __post_init__(self):
        if self.factored:
            M, n = self.train.n_kernels, self.train.n_train
            if self.test is not None:
                raise InputError("a factor bank keeps its test factors in the FactorBank")
            if self.eigenvalues is not None:
                raise InputError("a factor bank stores no eigendecompositions")
            # the FactorBank carries the labels too (fit(bank.train, None) finds them)
            if self.train.y_train is None and len(self.y_train) == n:
                self.train.y_train = np.asarray(self.y_train)
            if self.train.y_test is None and self.y_test is not None:
                self.train.y_test = np.asarray(self.y_test)
        else:
            M, n, n2 = _shape3(self.train, "train")
            if n != n2:
                raise InputError(f"training block must be (M, n, n), got {self.train.shape}")
        if len(self.specs) != M:
            raise InputError(f"{len(self.specs)} kernel specs for {M} kernels")
        if len(self.y_train) != n:
            raise InputError(f"y_train has {len(self.y_train)} labels for {n} training points")
        if not self.factored and not isinstance(self.train, np.memmap):  # a map: by the fit
            _check_diagonal(self.train, self.specs)
        if self.test is not None:
            Mt, nt, ntr = _shape3(self.test, "test")
            if Mt != M or ntr != n:
                raise InputError(f"test block must be ({M}, n_test, {n}), got {self.test.shape}")
            if self.y_test is not None and len(self.y_test) != nt:
                raise InputError(f"y_test has {len(self.y_test)} labels for {nt} test points")
        if self.factors is None:
            self.factors = np.ones(M)
        if self.eigenvalues is not None:
            if self.eigenvalues.shape != (M, n) or self.eigenvectors.shape != (M, n, n):
                raise InputError("stored eigendecompositions do not match the training block")
            _check_spectra(self.train, self.eigenvalues, self.eigenvectors)
            # every algorithm fitted on this block finds them (mkl.kernels.spectra.spectra)
            remember(self.train, Spectra(self.eigenvalues, self.eigenvectors))

    @property
    def factored(self) -> bool:
        """Whether the kernels are given by factors (a FactorBank)."""
        return is_factor_bank(self.train)

    @property
    def n_train(self) -> int:
        return self.train.n_train if self.factored else self.train.shape[1]

    @property
    def n_test(self) -> int | None:
        if self.factored:
            return self.train.n_test
        return None if self.test is None else self.test.shape[1]

    @property
    def test_input(self):
        """What an estimator fitted on ``train`` predicts on: the test block
        (M, n_test, n_train), or the FactorBank with its test factors."""
        if self.n_test is None:
            raise InputError("the kernel bank has no test block")
        return self.train if self.factored else self.test

    def with_spectra(self) -> KernelBank:
        """Compute and keep the eigendecomposition of every training block."""
        if self.factored:
            raise InputError("a factor bank has no eigendecompositions to compute")
        sp = spectra(self.train)
        self.eigenvalues, self.eigenvectors = sp.values, sp.vectors
        return self

    @property
    def n_kernels(self) -> int:
        return self.train.n_kernels if self.factored else self.train.shape[0]

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the training block (M, n, n), so a bank can stand where an
        array is expected (for factors: the shape of the block they represent)."""
        if self.factored:
            return (self.n_kernels, self.n_train, self.n_train)
        return self.train.shape

    def labels(self) -> list[str]:
        return [s.label() for s in self.specs]

    def find(self, **criteria) -> np.ndarray:
        """Indices of kernels whose spec matches every criterion, e.g.
        ``find(family="linear", feature=-1)``."""
        unknown = set(criteria) - set(KernelSpec.__dataclass_fields__)
        if unknown:
            raise InputError(f"unknown kernel spec field(s) {sorted(unknown)}")
        idx = [
            m
            for m, s in enumerate(self.specs)
            if all(getattr(s, k) == v for k, v in criteria.items())
        ]
        return np.asarray(idx, dtype=int)

    def select(
        self,
        indices: Sequence[int] | np.ndarray | None = None,
        include: dict | None = None,
        exclude: dict | None = None,
    ) -> KernelBank:
        """A bank holding only some kernels: by index, or those matching every
        criterion of ``include`` and not all criteria of ``exclude``
        (e.g. ``select(exclude={"family": "linear"})``)."""
        if indices is None:
            keep = np.ones(self.n_kernels, dtype=bool)
            if include:
                keep[:] = False
                keep[self.find(**include)] = True
            if exclude:
                keep[self.find(**exclude)] = False
            indices = np.flatnonzero(keep)
        indices = np.asarray(indices, dtype=int)
        if indices.size == 0:
            raise InputError(f"no kernel in the bank matches include={include} exclude={exclude}")
        return KernelBank(
            train=self.train.select(indices) if self.factored else self.train[indices],
            test=None if self.test is None else self.test[indices],
            specs=[self.specs[i] for i in indices],
            y_train=self.y_train,
            y_test=self.y_test,
            factors=self.factors[indices],
            train_index=self.train_index,
            test_index=self.test_index,
            attrs=dict(self.attrs),
            eigenvalues=None if self.eigenvalues is None else self.eigenvalues[indices],
            eigenvectors=None if self.eigenvectors is None else self.eigenvectors[indices],
        )

    # ------------------------------------------------------------------ I/O
    def save(self, path: str | os.PathLike, dtype=None) -> None:
        """Write atomically; ``dtype=np.float32`` halves the file."""
        dtype = np.dtype(dtype or self.train.dtype)
        if dtype not in (np.float32, np.float64):
            raise InputError(f"bank dtype must be float32 or float64, got {dtype}")
        with atomic_path(path) as tmp:
            with h5py.File(tmp, "w") as f:
                checksums = {}
                if self.factored:  # the factor matrices, each array with a checksum
                    for name in ("train", "test"):
                        Z = getattr(self.train, name)
                        if Z is not None:
                            checksums.update(_write_factors(f, name, Z, dtype))
                    f.create_dataset("ranks", data=np.asarray(self.train.ranks, dtype=np.int64))
                    f.attrs["representation"] = "factors"
                for name in ("train", "test"):  # the kernel blocks carry a checksum
                    block = None if self.factored else getattr(self, name)
                    if block is not None:
                        block = np.asarray(block, dtype=dtype)
                        f.create_dataset(name, data=block)
                        checksums[f"crc32_{name}"] = crc32(block)
                f.create_dataset("factors", data=np.asarray(self.factors, dtype=np.float64))
                f.create_dataset("specs", data=_specs_to_table(self.specs))
                f.create_dataset("y_train", data=np.asarray(self.y_train))
                for name in ("y_test", "train_index", "test_index", "eigenvalues", "eigenvectors"):
                    val = getattr(self, name)
                    if val is not None:
                        f.create_dataset(name, data=np.asarray(val))
                f.attrs["bank_format"] = BANK_FORMAT_VERSION
                for k, v in self.attrs.items():
                    f.attrs[k] = v
                f.attrs.update(checksums)  # last: never a loaded bank's stale ones

    @classmethod
    def load(cls, path: str | os.PathLike, mmap: bool = False, verify: bool = True) -> KernelBank:
        """Read a bank. With ``mmap=True`` the kernel blocks are memory-mapped
        (read-only, no copy), and a factor bank's dense factors stay in the
        file, read by row blocks at every pass (``FactorBank.out_of_core``; the
        file stays open until ``bank.train.close()``); otherwise each block is
        read once into memory. With
        ``verify`` the blocks' checksums are compared with those stored when
        the bank was written: a damaged file raises :class:`CorruptFile`
        instead of giving wrong kernels."""
        path = os.fspath(path)
        try:
            f = h5py.File(path, "r")
        except OSError as exc:
            raise InputError(f"cannot read kernel bank {path!r}: {exc}") from exc
        with f:
            if "train" not in f or "specs" not in f:
                raise InputError(f"{path!r} is not a kernel bank (no 'train'/'specs' datasets)")
            if isinstance(f["train"], h5py.Group):
                if mmap:  # the file stays open: the bank reads it by row blocks
                    return cls._load_factors(path, h5py.File(path, "r"), verify, in_place=True)
                return cls._load_factors(path, f, verify)
            blocks = {
                name: (_memmap(path, f[name]) if mmap else f[name][()])
                for name in ("train", "test")
                if name in f
            }
            if verify:
                for name, block in blocks.items():
                    _verify(path, f, f"crc32_{name}", block, f"the {name} block", f"/{name}")
            optional = ("y_test", "train_index", "test_index", "eigenvalues", "eigenvectors")
            opt = {k: f[k][()] for k in optional if k in f}
            return cls(
                train=blocks["train"],
                test=blocks.get("test"),
                specs=_table_to_specs(f["specs"][()]),
                y_train=f["y_train"][()],
                factors=f["factors"][()],
                attrs={k: _plain(v) for k, v in f.attrs.items()},
                **opt,
            )

    @classmethod
    def _load_factors(
        cls, path: str, f: h5py.File, verify: bool, in_place: bool = False
    ) -> KernelBank:
        """A factor bank's file; ``in_place``: dense factors stay in the file,
        read by row blocks (``mmap=True``)."""
        from .factor_bank import FactorBank

        blocks = {
            name: _read_factors(path, f, name, verify, in_place)
            for name in ("train", "test")
            if name in f
        }
        specs = _table_to_specs(f["specs"][()])
        y_test = f["y_test"][()] if "y_test" in f else None
        factors = FactorBank.from_matrix(
            blocks["train"],
            f["ranks"][()],
            test=blocks.get("test"),
            names=[s.label() for s in specs],
            y_train=f["y_train"][()],
            y_test=y_test,
        )
        opt = {k: f[k][()] for k in ("train_index", "test_index") if k in f}
        return cls(
            train=factors,
            specs=specs,
            y_train=f["y_train"][()],
            y_test=y_test,
            factors=f["factors"][()],
            attrs={k: _plain(v) for k, v in f.attrs.items()},
            **opt,
        )


def _verify(path: str, f: h5py.File, attr: str, array, what: str, dataset: str) -> None:
    """Compare an array's CRC-32 (or the CRC-32 itself, already computed) with
    the one stored in attribute ``attr``; the array is the file's ``dataset``.
    A missing checksum is refused too: ``verify`` promises a checked bank, and
    :meth:`KernelBank.save` writes one for every array it checks."""
    stored = f.attrs.get(attr)
    if stored is None:
        raise CorruptFile(
            path,
            f"kernel bank {path!r}: {what} (dataset {dataset!r}) has no checksum (file "
            f"attribute {attr!r} is missing), so it cannot be verified: rebuild the file "
            "(KernelBank.save writes the checksums; the workflow moves a file it cannot "
            "verify aside and recomputes it), or load it with verify=False to use it "
            "unchecked",
        )
    if (array if isinstance(array, int) else crc32(array)) != int(stored):
        raise CorruptFile(
            path,
            f"kernel bank {path!r}: {what} (dataset {dataset!r}) does not match its "
            "checksum (the file was damaged after it was written)",
        )


def _write_factors(f: h5py.File, name: str, Z, dtype) -> dict:
    """Store a factor matrix (dense, or CSR as scipy's three arrays) under the
    group ``name``; returns the checksums of its arrays."""
    from .row_blocks import RowBlocks

    g = f.create_group(name)
    g.attrs["shape"] = np.asarray(Z.shape, dtype=np.int64)
    if isinstance(Z, RowBlocks):  # factors on disk: copied block by block
        g.attrs["format"] = "dense"
        data = g.create_dataset("data", shape=Z.shape, dtype=dtype)
        value = 0
        for a, b, rows in Z.blocks():
            rows = np.ascontiguousarray(rows, dtype=dtype)
            data[a:b] = rows
            value = crc32(rows, value)
        return {f"crc32_{name}_data": value}
    if isinstance(Z, np.ndarray):
        g.attrs["format"] = "dense"
        arrays = {"data": np.ascontiguousarray(Z, dtype=dtype)}
    else:
        g.attrs["format"] = "csr"
        arrays = {
            "data": np.asarray(Z.data, dtype=dtype),
            "indices": np.asarray(Z.indices, dtype=np.int64),
            "indptr": np.asarray(Z.indptr, dtype=np.int64),
        }
    checksums = {}
    for key, a in arrays.items():
        g.create_dataset(key, data=a)
        checksums[f"crc32_{name}_{key}"] = crc32(a)
    return checksums


def _read_factors(path: str, f: h5py.File, name: str, verify: bool, in_place: bool = False):
    """A stored factor matrix; ``in_place``: dense factors as
    :class:`~mkl.banks.row_blocks.RowBlocks` over the file, their checksum
    taken in the pass that checks them (sparse factors are read)."""
    g = f[name]
    fmt, shape = _plain(g.attrs.get("format")), tuple(int(s) for s in g.attrs["shape"])
    if in_place and fmt == "dense" and g["data"].ndim == 2:
        from .row_blocks import RowBlocks

        blocks = RowBlocks(g["data"])
        if verify:  # the CRC of the scan the bank's checks make anyway
            _verify(
                path,
                f,
                f"crc32_{name}_data",
                blocks.scan().crc32,
                f"the {name} factors' data array",
                f"/{name}/data",
            )
        return blocks
    arrays = {key: g[key][()] for key in g}
    if verify:
        for key, a in arrays.items():
            what = f"the {name} factors' {key} array"
            _verify(path, f, f"crc32_{name}_{key}", a, what, f"/{name}/{key}")
    if fmt == "dense":
        return arrays["data"].reshape(shape)
    if fmt == "csr":
        import scipy.sparse as sp

        return sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape=shape)
    raise InputError(f"{path!r}: unknown factor format {fmt!r} of {name!r}")


def _check_spectra(train: np.ndarray, values: np.ndarray, vectors: np.ndarray) -> None:
    """Stored spectra belong to this training block: K_m u = V_m (lambda_m * V_m'u)
    for a seeded probe u (one pass over the block, not a decomposition)."""
    u = np.random.default_rng(0).standard_normal(train.shape[1])
    for m in range(train.shape[0]):
        direct = train[m].astype(np.float64) @ u
        via = vectors[m] @ (values[m] * (vectors[m].T @ u))
        scale = np.linalg.norm(direct) + np.abs(values[m]).max() * np.linalg.norm(u)
        if np.linalg.norm(direct - via) > 1e-4 * scale:
            raise InputError(
                f"stored eigendecomposition {m} is not that of training block {m} "
                "(stale spectra?): recompute them with KernelBank.with_spectra()"
            )


def _check_diagonal(train: np.ndarray, specs: Sequence[KernelSpec]) -> None:
    """Refuse a training block with NaN or inf on a kernel's diagonal (M n reads)."""
    if train.dtype.kind != "f":  # integers are finite; other dtypes: refused by the fit
        return
    diag = np.einsum("mii->mi", train)
    bad = ~np.isfinite(diag)
    if bad.any():
        m, i = (int(a[0]) for a in np.nonzero(bad))
        raise InputError(
            f"the training block of kernel {m} ({specs[m].label()}) is {float(diag[m, i])} "
            f"at entry ({i}, {i}), on its diagonal: a NaN or inf in the features of training row "
            f"{i} makes its kernel values non-finite; drop or fill that row (or its "
            "missing values) and compute the kernels again"
        )


def _shape3(a, name) -> tuple[int, int, int]:
    if getattr(a, "ndim", None) != 3:
        raise InputError(f"{name} block must be 3-D, got shape {getattr(a, 'shape', None)}")
    return a.shape


def _memmap(path: str, ds: h5py.Dataset) -> np.ndarray:
    offset = ds.id.get_offset()
    if offset is None or ds.chunks is not None or ds.compression is not None:
        return ds[()]  # not contiguous on disk: fall back to reading it
    return np.memmap(path, mode="r", dtype=ds.dtype, shape=ds.shape, offset=offset)


def _specs_to_table(specs: Sequence[KernelSpec]) -> np.ndarray:
    t = np.empty(len(specs), dtype=_SPEC_DTYPE)
    for i, s in enumerate(specs):
        if s.family == CALLABLE:
            raise InputError(
                f"kernel {s.label()} is a callable: a bank file stores kernels by their "
                "spec, not code (save the blocks of a bank of named kernels)"
            )
        param = np.nan if s.param is None else s.param
        keywords = ";".join(f"{key}={value!r}" for key, value in s.keywords)
        t[i] = (s.family.encode(), param, s.feature, s.normalise.encode(), keywords.encode())
    return t


def _table_to_specs(t: np.ndarray) -> list[KernelSpec]:
    with_keywords = "keywords" in t.dtype.names
    return [
        KernelSpec(
            r["family"].decode(),
            None if np.isnan(r["param"]) else float(r["param"]),
            int(r["feature"]),
            r["normalise"].decode(),
            _keywords(r["keywords"].decode()) if with_keywords else (),
        )
        for r in t
    ]


def _keywords(text: str) -> tuple[tuple[str, float], ...]:
    """A stored spec's keywords, "gamma=0.5;coef0=1.0", as (name, value) pairs."""
    pairs = (item.split("=") for item in text.split(";") if item)
    return tuple((key, float(value)) for key, value in pairs)


def _plain(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.generic):
        return v.item()
    return v

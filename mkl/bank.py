"""KernelBank: the kernels of one split, stored in one HDF5 file.

Layout of ``results/kernels/{experiment}/{dataset}/{split}.h5``::

    /train      (M, n_train, n_train)  float64 or float32
    /test       (M, n_test, n_train)   same dtype
    /factors    (M,)                   scalar normalisation divisors fitted on the training rows
    /specs      (M,) compound          family, param, feature, normalise (one row per kernel)
    /y_train, /y_test, /train_index, /test_index
    /eigenvalues (M, n_train), /eigenvectors (M, n_train, n_train)   float64, optional:
                 the eigendecomposition of each training block (similarity banks)
    attrs: provenance (dataset, experiment, split, sha256 of the data file, library version, ...)

Files are written atomically (temporary name, then rename) and datasets are
stored contiguous and uncompressed, so ``KernelBank.load(path, mmap=True)``
maps them straight from disk without reading or copying anything.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import h5py
import numpy as np

from ._io import CorruptFile, atomic_path, crc32
from .exceptions import InputError
from .kernels import KernelSpec
from .similarity import Spectra, remember, spectra

_SPEC_DTYPE = np.dtype(
    [("family", "S32"), ("param", "f8"), ("feature", "i8"), ("normalise", "S16")]
)
BANK_FORMAT_VERSION = 1


@dataclass
class KernelBank:
    """Training block, test block, kernel specs and labels of one split."""

    train: np.ndarray
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
        M, n, n2 = _shape3(self.train, "train")
        if n != n2:
            raise InputError(f"training block must be (M, n, n), got {self.train.shape}")
        if len(self.specs) != M:
            raise InputError(f"{len(self.specs)} kernel specs for {M} kernels")
        if len(self.y_train) != n:
            raise InputError(f"y_train has {len(self.y_train)} labels for {n} training points")
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
            # every algorithm fitted on this block finds them (mkl.similarity.spectra)
            remember(self.train, Spectra(self.eigenvalues, self.eigenvectors))

    def with_spectra(self) -> KernelBank:
        """Compute and keep the eigendecomposition of every training block."""
        sp = spectra(self.train)
        self.eigenvalues, self.eigenvectors = sp.values, sp.vectors
        return self

    @property
    def n_kernels(self) -> int:
        return self.train.shape[0]

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the training block, so a bank can stand where an array is expected."""
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
            train=self.train[indices],
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
                for name in ("train", "test"):  # the kernel blocks carry a checksum
                    block = getattr(self, name)
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
        (read-only, no copy); otherwise each is read once into memory. With
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
            blocks = {
                name: (_memmap(path, f[name]) if mmap else f[name][()])
                for name in ("train", "test")
                if name in f
            }
            if verify:
                for name, block in blocks.items():
                    stored = f.attrs.get(f"crc32_{name}")
                    if stored is not None and crc32(block) != int(stored):
                        raise CorruptFile(
                            path,
                            f"kernel bank {path!r}: the {name} block does not match its "
                            "checksum (the file was damaged after it was written)",
                        )
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
        param = np.nan if s.param is None else s.param
        t[i] = (s.family.encode(), param, s.feature, s.normalise.encode())
    return t


def _table_to_specs(t: np.ndarray) -> list[KernelSpec]:
    return [
        KernelSpec(
            r["family"].decode(),
            None if np.isnan(r["param"]) else float(r["param"]),
            int(r["feature"]),
            r["normalise"].decode(),
        )
        for r in t
    ]


def _plain(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.generic):
        return v.item()
    return v

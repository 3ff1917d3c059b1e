"""Factors larger than memory: a dense (n, R) matrix in an HDF5 dataset, read
by row blocks (docs/design.md, "Factor banks larger than memory").

Every pass the estimators make over a :class:`~mkl.banks.factor_bank.FactorBank`
(Z'v, Z u, the column norms, the coordinate descent's epochs) visits the rows
in order, so the factors need never be in memory at once: :class:`RowBlocks`
reads ``rows_per_block`` rows at a time into one of two buffers it reuses,
the next block being read by a background thread while the caller works on
the current one (h5py releases the GIL while it reads; the solvers' compiled
loops release it too). Resident memory is two blocks, whatever n is.

The first pass (:meth:`RowBlocks.scan`, made when the bank is built) also
gives what the bank's checks and the solvers need of every row: the largest
magnitude (finite, not overflowing), the columns' squared norms (the
kernels' traces) and the CRC-32 of the bytes (the stored checksum of a bank
file), so that building the bank costs one pass.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import numpy as np

from .._io import crc32
from ..exceptions import InputError

# bytes of one block (two are held: the one in use and the one being read)
BLOCK_BYTES = 256 * 2**20


@dataclass(frozen=True)
class Scan:
    """What one pass over every row gives (:meth:`RowBlocks.scan`)."""

    largest: float  # max |z_ij| (NaN if any entry is NaN, inf if any is infinite)
    column_sq_norms: np.ndarray  # ||Z_:j||^2 (R,), float64
    crc32: int  # of the rows' bytes in C order, as mkl._io.crc32 of the array


def _dataset_of(source):
    try:
        import h5py
    except ImportError:  # pragma: no cover - h5py is a dependency of the library
        return None
    return source if isinstance(source, h5py.Dataset) else None


class RowBlocks:
    """The rows of a dense, 2-D float32/float64 HDF5 dataset, read in blocks.

    ``dataset``: an open ``h5py.Dataset`` (contiguous or chunked; a chunked
    dataset is fastest with chunks of whole rows). It is read, never written,
    and must stay unchanged while the bank is in use. ``rows_per_block``: rows
    read at a time (default: BLOCK_BYTES worth).

    ``blocks()`` yields (start, stop, array) in row order; the array is a
    buffer valid only until the next iteration (asking for the next block
    starts reading the one after it into this buffer): a caller copies
    anything it keeps. ``take(rows)`` reads chosen rows into memory (a fold's
    rows for cross-validation), ``read()`` the whole matrix (small checks only).

    The dataset's file stays open while the bank is used; ``close()`` closes
    it. A pickled RowBlocks opens the file again by name, read-only: the
    file must then be closed by its writer (h5py locks a file open for writing).
    """

    def __init__(self, dataset, rows_per_block: int | None = None):
        ds = _dataset_of(dataset)
        if ds is None:
            raise InputError(f"RowBlocks reads an h5py.Dataset, got {type(dataset).__name__}")
        if not ds.id.valid:  # h5py's own error: "identifier is not of specified type"
            raise InputError(
                "the h5py.Dataset given as factors is closed (its file was closed, e.g. by "
                "leaving a `with h5py.File(...)` block): open the file and make the bank "
                "while it is open, and keep it open while the bank is used"
            )
        if ds.ndim != 2:
            raise InputError(f"the factors' dataset must be 2-D (n, R), got shape {ds.shape}")
        if ds.dtype not in (np.float32, np.float64):
            raise InputError(
                f"the factors' dataset must be float32 or float64, got {ds.dtype} "
                "(an out-of-core bank is not converted: write the factors as floats)"
            )
        self._dataset = ds
        self.filename = os.fspath(ds.file.filename)
        self.name = ds.name
        self.shape = tuple(int(s) for s in ds.shape)
        self.dtype = np.dtype(ds.dtype)
        row_bytes = max(self.shape[1], 1) * self.dtype.itemsize
        if rows_per_block is None:
            rows_per_block = max(1, BLOCK_BYTES // row_bytes)
        if not (isinstance(rows_per_block, (int, np.integer)) and rows_per_block >= 1):
            raise InputError(f"rows_per_block must be an integer >= 1, got {rows_per_block!r}")
        self.rows_per_block = int(min(rows_per_block, max(self.shape[0], 1)))
        self._scan: Scan | None = None

    ndim = 2

    @property
    def n_blocks(self) -> int:
        return -(-self.shape[0] // self.rows_per_block)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return (
            f"RowBlocks({self.filename!r}:{self.name}, shape={self.shape}, "
            f"{self.dtype.name}, {self.rows_per_block} rows a block)"
        )

    # pickling (a fitted estimator never keeps its bank, but a bank may cross
    # to a worker process): the file is opened again by name
    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_dataset"]
        return state

    def __setstate__(self, state):
        import h5py

        self.__dict__.update(state)
        self._dataset = h5py.File(self.filename, "r")[self.name]

    def close(self) -> None:
        """Close the dataset's file: the whole h5py File, with anything else
        read from it (h5py shares a file opened twice in one process, so
        every bank reading it from here)."""
        if self._dataset.id.valid:
            self._dataset.file.close()

    # ------------------------------------------------------------ reading
    def _read(self, start: int, stop: int, out: np.ndarray) -> None:
        self._check_open()
        try:
            self._dataset.read_direct(out, np.s_[start:stop], np.s_[0 : stop - start])
        except (RuntimeError, ValueError, OSError):
            self._check_open()  # closed while reading (by another thread): say so
            raise

    def _check_open(self) -> None:
        """Refuse to read from a closed file by name (h5py would say "Invalid
        dataset identifier", or that it cannot get the dataspace)."""
        if not self._dataset.id.valid:
            raise InputError(
                f"the HDF5 file {self.filename} holding the factors {self.name} was closed "
                "while the bank was in use: keep it open until the fit and the predictions "
                "are done (FactorBank.close() closes it then)"
            )

    def blocks(self, order=None):
        """(start, stop, rows start:stop) for every block, in row order (or in
        the order of the block numbers ``order``); the next block is read
        while the caller works on this one."""
        n, step = self.shape[0], self.rows_per_block
        if n == 0:
            return
        buffers = [
            np.empty((step, self.shape[1]), self.dtype) for _ in range(min(2, self.n_blocks))
        ]
        bounds = [(a, min(a + step, n)) for a in range(0, n, step)]
        if order is not None:
            bounds = [bounds[int(k)] for k in order]
        self._read(*bounds[0], buffers[0])
        for k, (a, b) in enumerate(bounds):
            reader = None
            if k + 1 < len(bounds):
                nxt = buffers[(k + 1) % len(buffers)]
                failure: list[BaseException] = []

                def read_next(a1=bounds[k + 1][0], b1=bounds[k + 1][1], out=nxt, failure=failure):
                    try:
                        self._read(a1, b1, out)
                    except BaseException as exc:  # re-raised in the caller's thread
                        failure.append(exc)

                reader = threading.Thread(target=read_next, daemon=True)
                reader.start()
            try:
                yield a, b, buffers[k % len(buffers)][: b - a]
            finally:
                if reader is not None:
                    reader.join()
            if reader is not None and failure:
                raise failure[0]

    def take(self, rows) -> np.ndarray:
        """The rows ``rows`` (integer indices, any order, repeats allowed) in
        memory: read by h5py's selection when they are few, picked from a pass
        over the blocks when they are many (a fold's rows)."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        rows = rows.astype(np.int64, copy=False)
        n = self.shape[0]
        if rows.size and (rows.min() < -n or rows.max() >= n):
            raise InputError(f"row indices must be in [-{n}, {n}) for {n} rows")
        rows = np.where(rows < 0, rows + n, rows)
        unique, where = np.unique(rows, return_inverse=True)
        out = np.empty((unique.size, self.shape[1]), self.dtype)
        if unique.size * 64 > n:
            for a, b, block in self.blocks():
                first, last = np.searchsorted(unique, [a, b])
                out[first:last] = block[unique[first:last] - a]
        else:  # h5py reads increasing indices
            piece = 1 << 16
            self._check_open()
            for s in range(0, unique.size, piece):
                out[s : s + piece] = self._dataset[unique[s : s + piece]]
        if where.size == unique.size and np.array_equal(where, np.arange(where.size)):
            return out  # increasing rows without repeats (a fold's): no second copy
        return out[where]

    def read(self) -> np.ndarray:
        """Every row, in memory."""
        out = np.empty(self.shape, self.dtype)
        for a, b, block in self.blocks():
            out[a:b] = block
        return out

    def scan(self) -> Scan:
        """One pass: the largest magnitude, the columns' squared norms and the
        CRC-32 (computed once, then kept)."""
        if self._scan is None:
            largest = 0.0
            col = np.zeros(self.shape[1])
            crc = 0
            for _, _, block in self.blocks():
                if block.size and not np.isnan(largest):  # a NaN stays the answer
                    top = max(abs(float(block.max())), abs(float(block.min())))
                    largest = top if np.isnan(top) or top > largest else largest
                col += np.einsum("ij,ij->j", block, block, dtype=np.float64)
                crc = crc32(block, crc)
            self._scan = Scan(largest, col, crc)
        return self._scan


def as_row_blocks(Z):
    """``Z`` as :class:`RowBlocks` when it is an h5py.Dataset (or already one); None otherwise."""
    if isinstance(Z, RowBlocks):
        return Z
    if _dataset_of(Z) is not None:
        return RowBlocks(Z)
    return None


def row_blocks(Z):
    """(start, stop, rows) of an in-memory matrix (one block: itself) or of RowBlocks."""
    if isinstance(Z, RowBlocks):
        yield from Z.blocks()
    else:
        yield 0, Z.shape[0], Z


def times(Z, u) -> np.ndarray:
    """Z u in float64 for dense factors in memory or on disk (u in Z's precision)."""
    u = np.asarray(u).astype(Z.dtype)
    out = np.empty(Z.shape[0])
    for a, b, rows in row_blocks(Z):
        out[a:b] = rows @ u
    return out


def transposed_times(Z, v) -> np.ndarray:
    """Z' v in float64 for dense factors in memory or on disk (v in Z's precision)."""
    v = np.asarray(v)
    w = np.zeros(Z.shape[1])
    for a, b, rows in row_blocks(Z):
        w += rows.T @ v[a:b].astype(Z.dtype)
    return w


def columns(Z: RowBlocks, cols) -> np.ndarray:
    """The columns ``cols`` (a slice or indices) of factors on disk, in memory."""
    width = len(range(*cols.indices(Z.shape[1]))) if isinstance(cols, slice) else len(cols)
    out = np.empty((Z.shape[0], width), Z.dtype)
    for a, b, rows in Z.blocks():
        out[a:b] = rows[:, cols]
    return out

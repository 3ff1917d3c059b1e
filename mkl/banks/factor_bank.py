"""FactorBank: kernels given by factors, K_m = Z_m Z_m', so that nothing n x n is
ever formed (docs/design.md, "Factor banks").

A kernel of rank r_m is a matrix Z_m of shape (n, r_m): an exact factor (a
feature column for a rank-one kernel, the features of a linear kernel on a
feature group) or an approximation (Nystroem, random Fourier features; see
:mod:`mkl.banks.factor_builders`). The bank keeps the M factors side by side in one
matrix Z = [Z_1, ..., Z_M] of shape (n, R), R = sum_m r_m, dense (C-contiguous,
float32 or float64) or sparse (CSR), with ``offsets`` such that kernel m owns the
columns ``offsets[m]:offsets[m+1]``. Everything the estimators need is a pass
over Z:

* q_m = beta' K_m beta = ||Z_m' beta||^2 for all m: one product Z' beta;
* the combined kernel's SVM is a linear SVM on Z with column weights theta_m
  (:mod:`mkl.solvers.coordinate_descent`);
* test scores sum_m theta_m K_m(test, train) beta = Z_test (s * Z' beta), with
  s the column weights: the fit keeps w = Z' beta (R numbers), not the training
  factors.

Memory: n R numbers (float32: 1.6 GB at n = 100,000 and 20 kernels of rank 200)
against M n^2 for the dense bank (800 GB there). Factors larger than memory stay
in their HDF5 file (``FactorBank.from_matrix(h5py_dataset, ranks)``,
``KernelBank.load(path, mmap=True)``): every pass then reads them by row
blocks (:mod:`mkl.banks.row_blocks`), and the coordinate descent becomes a
block minimisation (:mod:`mkl.solvers.coordinate_descent`).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from .._validation import as_real_float
from ..exceptions import InputError
from .row_blocks import RowBlocks, as_row_blocks, columns, row_blocks, times, transposed_times

# the spectral ratio of a factored combination needs the (R_active x R_active)
# Gram matrix of its columns; above this many multiply-adds it is not computed
SPECTRAL_RATIO_MAX_FLOPS = 2e9


def _check_magnitude(values, Z, name: str) -> None:
    """Finite, and small enough that K = Z Z' and the solvers' sums over n
    points stay finite in Z's dtype: n r max|z|^2 below the dtype's largest
    value by 1e8 (factors near 1e200 once reached scipy's linprog as inf)."""
    if values.size == 0:
        return
    _check_largest(max(abs(float(values.max())), abs(float(values.min()))), Z, name)


def _check_largest(extreme: float, Z, name: str) -> None:
    """:func:`_check_magnitude` given the largest magnitude ``extreme``."""
    if not np.isfinite(extreme):
        raise InputError(f"{name} contains NaN or inf")
    if extreme == 0.0:
        return
    n, r = Z.shape
    headroom = np.log10(np.finfo(Z.dtype).max) - 8.0
    if 2.0 * np.log10(extreme) + np.log10(max(n, 1) * max(r, 1)) > headroom:
        raise InputError(
            f"{name} has entries up to {extreme:.3g}: kernel values Z Z' and their sums over "
            f"{n} points would overflow {Z.dtype}; rescale the factors (or normalise "
            "the kernels, e.g. to unit trace)"
        )


def _as_factor(Z, name: str):
    """One factor as float32/float64 dense (2-D) or CSR, checked finite and of a
    magnitude the solvers can square and sum; an h5py.Dataset as
    :class:`~mkl.banks.row_blocks.RowBlocks`, checked in one pass (its scan)."""
    blocks = as_row_blocks(Z)
    if blocks is not None:
        _check_largest(blocks.scan().largest, blocks, name)
        return blocks
    if sp.issparse(Z):
        if Z.ndim != 2:
            raise InputError(f"{name} must be 2-D (n_samples, rank), got shape {Z.shape}")
        Z = as_real_float(sp.csr_matrix(Z), name)
        _check_magnitude(Z.data, Z, name)
        return Z
    Z = np.asarray(Z)
    if Z.ndim != 2:
        raise InputError(
            f"{name} must be 2-D (n_samples, rank), got shape {Z.shape}"
            + ("; a rank-one factor is a column: z[:, None]" if Z.ndim == 1 else "")
        )
    Z = as_real_float(Z, name)
    _check_magnitude(Z, Z, name)
    return Z


def _stack(factors: list, sparse: bool, dtype):
    if sparse:
        Z = sp.hstack([sp.csr_matrix(f) for f in factors], format="csr", dtype=dtype)
        Z.sum_duplicates()
        Z.sort_indices()
        return Z
    return np.ascontiguousarray(np.hstack(factors), dtype=dtype)


def _checked_factors(factors: Sequence, name: str):
    """A list of M factors checked (``_as_factor``) with equal row counts, and
    their ranks (M,), whether any is sparse, and the bank's dtype (float32
    when all are, float64 otherwise)."""
    if any(as_row_blocks(Z) is not None for Z in factors):
        raise InputError(
            f"{name}: factors on disk (an h5py.Dataset) are read in place as one "
            "side-by-side matrix: FactorBank.from_matrix(dataset, ranks)"
        )
    factors = [_as_factor(Z, f"{name}[{m}]") for m, Z in enumerate(factors)]
    if not factors:
        raise InputError("a FactorBank needs at least one kernel")
    rows = factors[0].shape[0]
    for m, Z in enumerate(factors):
        if Z.shape[0] != rows:
            raise InputError(f"{name}[{m}] has {Z.shape[0]} rows but {name}[0] has {rows}")
    ranks = np.array([Z.shape[1] for Z in factors], dtype=np.int64)
    sparse = any(sp.issparse(Z) for Z in factors)
    dtype = np.float32 if all(Z.dtype == np.float32 for Z in factors) else np.float64
    return factors, ranks, sparse, dtype


class FactorBank:
    """M kernels given by factors: ``train`` a list of M arrays or ``scipy.sparse``
    matrices of shape (n, r_m) with K_m = Z_m Z_m'; ``test`` the matching
    (n_test, r_m) factors of the test points (K_m(test, train) = T_m Z_m').

    r_m may differ between kernels (r_m = 1 for a rank-one kernel). Factors are
    kept as float32 when all are float32, float64 otherwise; sparse when any is
    sparse. ``names``: optional kernel names (e.g. the specs' labels).
    ``y_train``/``y_test``: optional labels (``fit(bank, None)`` uses ``y_train``).

    ``FactorBank.from_matrix(Z, ranks)`` builds one from the side-by-side
    matrix without splitting it (e.g. one rank-one kernel per column of a
    document-term matrix: ``ranks=1``); ``Z`` may be an ``h5py.Dataset`` larger
    than memory, read by row blocks by every pass (``out_of_core``).
    """

    def __init__(
        self,
        train: Sequence,
        test: Sequence | None = None,
        names: Sequence[str] | None = None,
        y_train=None,
        y_test=None,
    ):
        if isinstance(train, np.ndarray) or sp.issparse(train):
            raise InputError(
                "train must be a list of M factors (n, r_m); for one matrix whose "
                "columns are split into kernels use FactorBank.from_matrix(Z, ranks)"
            )
        train, ranks, sparse, dtype = _checked_factors(train, "train")
        Z_test = None
        if test is not None:
            test, test_ranks, test_sparse, _ = _checked_factors(test, "test")
            if len(test) != len(train):
                raise InputError(f"test has {len(test)} factors but train has {len(train)}")
            mismatch = np.flatnonzero(test_ranks != ranks)
            if mismatch.size:
                m = int(mismatch[0])
                raise InputError(
                    f"test[{m}] has rank {test_ranks[m]} but train[{m}] has rank {ranks[m]}"
                )
            Z_test = _stack(test, test_sparse, dtype)
        self._set(_stack(train, sparse, dtype), ranks, Z_test, names, y_train, y_test)

    @classmethod
    def from_matrix(cls, Z, ranks, test=None, names=None, y_train=None, y_test=None) -> FactorBank:
        """A bank from the side-by-side factors ``Z`` (n, R): ``ranks`` the r_m
        (summing to R), or an integer r for R / r kernels of rank r each.

        ``Z`` (and ``test``) may be an open ``h5py.Dataset`` (dense, 2-D,
        float32/float64): it is not read whole but by row blocks
        (:class:`~mkl.banks.row_blocks.RowBlocks`), once here for the checks
        and the column norms, then by every pass of the estimators; the file
        must stay open and unchanged while the bank is used (``close()``
        closes it). Cross-validation folds (``rows``, ``fold``) and kernel
        subsets (``select``) of such a bank are read into memory."""
        Z = _as_factor(Z, "Z")
        R = Z.shape[1]
        if isinstance(ranks, numbers.Integral):
            if ranks < 1 or R % ranks:
                raise InputError(f"ranks={ranks} does not divide the {R} columns of Z")
            ranks = np.full(R // ranks, ranks)
        ranks = np.asarray(ranks, dtype=np.int64)
        if ranks.ndim != 1 or ranks.size == 0 or (ranks < 1).any() or ranks.sum() != R:
            raise InputError(f"ranks must be positive integers summing to {R} (the columns of Z)")
        if test is not None:
            test = _as_factor(test, "test")
            if test.shape[1] != R:
                raise InputError(f"test has {test.shape[1]} columns but Z has {R}")
        bank = cls.__new__(cls)
        if sp.issparse(Z):
            Z.sum_duplicates()
            Z.sort_indices()
        elif not isinstance(Z, RowBlocks):
            Z = np.ascontiguousarray(Z)
        if isinstance(test, RowBlocks):
            if test.dtype != Z.dtype:
                raise InputError(f"test is {test.dtype} on disk but Z is {Z.dtype}")
        elif test is not None and not sp.issparse(test):
            test = np.ascontiguousarray(test, dtype=Z.dtype)
        bank._set(Z, ranks, test, names, y_train, y_test)
        return bank

    @classmethod
    def of_test_factors(cls, test: Sequence, names=None, y_test=None) -> FactorBank:
        """A bank of test factors alone (a list of M arrays (n_test, r_m)), for
        ``predict`` of an estimator fitted on factors: its decision values
        need only T_m and the w = Z'beta it kept, not the training factors.
        It has no training rows (``n_train`` 0): ``fit`` refuses it."""
        test, ranks, sparse, dtype = _checked_factors(test, "test")
        Z_test = _stack(test, sparse, dtype)
        R = Z_test.shape[1]
        no_rows = sp.csr_matrix((0, R), dtype=dtype) if sparse else np.empty((0, R), dtype)
        bank = cls.__new__(cls)
        bank._set(no_rows, ranks, Z_test, names, None, y_test, test_only=True)
        return bank

    def _set(self, Z, ranks, Z_test, names, y_train, y_test, test_only=False):
        self.train = Z
        self.test = Z_test
        self.ranks = ranks
        self.offsets = np.concatenate([[0], np.cumsum(ranks)]).astype(np.int64)
        M = len(ranks)
        if names is not None and len(names) != M:
            raise InputError(f"{len(names)} names for {M} kernels")
        self.names = None if names is None else [str(s) for s in names]
        n = Z.shape[0]
        if n == 0 and not test_only:
            raise InputError("the training factors have no rows")
        self.y_train = None if y_train is None else np.asarray(y_train)
        self.y_test = None if y_test is None else np.asarray(y_test)
        if self.y_train is not None and len(self.y_train) != n:
            raise InputError(f"y_train has {len(self.y_train)} labels for {n} training points")
        if self.y_test is not None and (Z_test is None or len(self.y_test) != Z_test.shape[0]):
            raise InputError("y_test does not match the test factors")

    # ------------------------------------------------------------ shape
    @property
    def n_kernels(self) -> int:
        return len(self.ranks)

    @property
    def n_train(self) -> int:
        return self.train.shape[0]

    @property
    def n_test(self) -> int | None:
        return None if self.test is None else self.test.shape[0]

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.train)

    @property
    def out_of_core(self) -> bool:
        """The training factors are read from their file by row blocks."""
        return isinstance(self.train, RowBlocks)

    def close(self) -> None:
        """Close the files of factors read in place (nothing for factors in memory)."""
        for Z in (self.train, self.test):
            if isinstance(Z, RowBlocks):
                Z.close()

    @property
    def dtype(self):
        return self.train.dtype

    def __repr__(self) -> str:
        kind = "sparse" if self.is_sparse else "out-of-core" if self.out_of_core else "dense"
        test = "" if self.test is None else f", n_test={self.n_test}"
        return (
            f"FactorBank(M={self.n_kernels}, n={self.n_train}{test}, "
            f"R={int(self.offsets[-1])}, {kind} {np.dtype(self.dtype).name})"
        )

    def column_weights(self, theta) -> np.ndarray:
        """theta_m repeated over kernel m's columns (R,)."""
        return np.repeat(np.asarray(theta, dtype=np.float64), self.ranks)

    def factor(self, m: int, block: str = "train"):
        """Z_m (or the test factor T_m); of factors on disk, read into memory."""
        Z = self.train if block == "train" else self.test
        cols = slice(self.offsets[m], self.offsets[m + 1])
        return columns(Z, cols) if isinstance(Z, RowBlocks) else Z[:, cols]

    # ------------------------------------------------------------ passes over Z
    def project(self, v: np.ndarray) -> np.ndarray:
        """w = Z' v (R,), in float64 (factors on disk: summed over row blocks)."""
        Z = self.train
        v = np.asarray(v, dtype=np.float64)
        if sp.issparse(Z):
            return self._finite(np.asarray(Z.T @ v, dtype=np.float64), v)
        return self._finite(transposed_times(Z, v), v)

    def _finite(self, product: np.ndarray, v: np.ndarray, block: str = "train") -> np.ndarray:
        """``product`` of the factors with a finite ``v``, refused when it is not
        finite: the factors were finite and without overflow when the bank was
        made, so they were changed since (an HDF5 dataset overwritten while the
        bank reads it, an array edited in place). A check of the R or n numbers
        a pass gives, not of the factors (that would be a second pass)."""
        if np.isfinite(product).all() or not np.isfinite(v).all():
            return product
        self._refuse_changed(block)

    def _refuse_changed(self, block: str = "train"):
        """Raise the error of :meth:`_finite`, naming the factors' file or array."""
        Z = self.train if block == "train" else self.test
        where = (
            f"the HDF5 dataset {Z.name} of {Z.filename}"
            if isinstance(Z, RowBlocks)
            else "the factor array"
        )
        raise InputError(
            f"the {block} factors now give NaN or inf: {where} holds NaN, inf or values "
            "that overflow, though it was checked finite when the FactorBank was made: it "
            "was changed since. Keep the factors unchanged while the bank is used, and "
            "make the bank again (FactorBank.from_matrix) from the corrected data"
        )

    def factor_grams(self) -> list[np.ndarray]:
        """Z_m' Z_m (r_m x r_m, float64) for every kernel, in one pass."""
        grams = [np.zeros((r, r)) for r in self.ranks]
        for _, _, rows in row_blocks(self.train):
            for m in range(self.n_kernels):
                Zm = rows[:, self.offsets[m] : self.offsets[m + 1]]
                G = Zm.T @ Zm
                grams[m] += G.toarray() if sp.issparse(G) else G
        if not all(np.isfinite(G).all() for G in grams):
            self._refuse_changed()
        return grams

    def group_sums(self, values: np.ndarray) -> np.ndarray:
        """Sum of a per-column vector over each kernel's columns (M,)."""
        return np.add.reduceat(values, self.offsets[:-1])

    def quadratic_forms(self, v: np.ndarray) -> np.ndarray:
        """v' K_m v = ||Z_m' v||^2 for every m: one pass. Always >= 0 (K_m = Z_m Z_m'
        is PSD by construction)."""
        w = self.project(v)
        return self.group_sums(w * w)

    def times(self, u: np.ndarray, block: str = "train") -> np.ndarray:
        """Z u (or Z_test u) for a per-column vector u (R,), in float64."""
        Z = self.train if block == "train" else self.test
        if sp.issparse(Z):
            return self._finite(np.asarray(Z @ u, dtype=np.float64), u, block)
        return self._finite(times(Z, u), u, block)

    def column_sq_norms(self) -> np.ndarray:
        """||Z_:j||^2 for every column (R,): kernel m's trace is their sum over its columns."""
        Z = self.train
        if sp.issparse(Z):
            return np.asarray(Z.multiply(Z).sum(axis=0), dtype=np.float64).ravel()
        if isinstance(Z, RowBlocks):
            return Z.scan().column_sq_norms.copy()  # from the pass that built the bank
        return np.einsum("ij,ij->j", Z, Z, dtype=np.float64)

    def row_sq_norms_by_kernel(self) -> np.ndarray:
        """||z_i,m||^2 for every point and kernel (n, M), float64: the diagonals
        of the K_m (one pass)."""
        Z = self.train
        # the indicator of each column's kernel (R, M)
        member = sp.csr_matrix(
            (np.ones(Z.shape[1]), np.repeat(np.arange(self.n_kernels), self.ranks),
             np.arange(Z.shape[1] + 1)), shape=(Z.shape[1], self.n_kernels),
        )  # fmt: skip
        out = np.empty((Z.shape[0], self.n_kernels))
        for a, b, rows in row_blocks(Z):
            sq = rows.multiply(rows).tocsr() if sp.issparse(rows) else rows * rows
            d = sq @ member
            out[a:b] = d.toarray() if sp.issparse(d) else d
        return out

    def traces(self) -> np.ndarray:
        """tr K_m = ||Z_m||_F^2 (M,)."""
        return self.group_sums(self.column_sq_norms())

    def rows(self, index: np.ndarray) -> FactorBank:
        """The bank restricted to the training points ``index`` (for inner
        cross-validation); the test factors are dropped."""
        bank = FactorBank.__new__(FactorBank)
        Z = _rows_of(self.train, index)
        y = None if self.y_train is None else self.y_train[index]
        bank._set(Z, self.ranks, None, self.names, y, None)
        return bank

    def fold(self, fit_rows: np.ndarray, eval_rows: np.ndarray) -> FactorBank:
        """One inner cross-validation fold: training factors of the points
        ``fit_rows``, test factors of the points ``eval_rows`` (both rows of the
        training block), with their labels."""
        fit_rows, eval_rows = np.asarray(fit_rows), np.asarray(eval_rows)
        bank = self.rows(fit_rows)
        bank.test = _rows_of(self.train, eval_rows)
        if self.y_train is not None:
            bank.y_test = self.y_train[eval_rows]
        return bank

    def select(self, indices) -> FactorBank:
        """The bank of the kernels ``indices`` (their columns, training and test)."""
        indices = np.asarray(indices, dtype=np.int64)
        if indices.ndim != 1 or indices.size == 0:
            raise InputError("select needs a non-empty list of kernel indices")
        if indices.min() < 0 or indices.max() >= self.n_kernels:
            raise InputError(f"kernel indices must be in [0, {self.n_kernels})")
        # kernel m's columns offsets[m] .. offsets[m] + ranks[m] - 1, in the order asked
        ranks = self.ranks[indices]
        first = np.cumsum(ranks) - ranks
        cols = np.repeat(self.offsets[indices] - first, ranks) + np.arange(ranks.sum())

        def take(Z):
            if Z is None:
                return None
            if isinstance(Z, RowBlocks):  # the chosen columns, read into memory
                return columns(Z, cols)
            if not sp.issparse(Z):
                return np.ascontiguousarray(Z[:, cols])
            Z = sp.csr_matrix(Z[:, cols])
            Z.sort_indices()
            return Z

        bank = FactorBank.__new__(FactorBank)
        names = None if self.names is None else [self.names[m] for m in indices]
        bank._set(
            take(self.train), self.ranks[indices], take(self.test), names, self.y_train, self.y_test
        )
        return bank

    def spectral_ratio(self, theta: np.ndarray) -> float:
        """C(K) = tr K / ||K||_F of K = sum_m theta_m K_m, from the Gram matrix of
        the weighted active columns (||K||_F = ||Z_s' Z_s||_F). NaN when that Gram
        matrix would cost more than SPECTRAL_RATIO_MAX_FLOPS."""
        s = self.column_weights(theta)
        on = np.flatnonzero(s > 0)
        n = self.n_train
        if on.size == 0 or float(n) * on.size**2 > SPECTRAL_RATIO_MAX_FLOPS:
            return float("nan")
        G = np.zeros((on.size, on.size))
        for _, _, rows in row_blocks(self.train):
            Zs = rows[:, on]
            Zs = (Zs.multiply(np.sqrt(s[on])) if sp.issparse(Zs) else Zs * np.sqrt(s[on])).astype(
                np.float64
            )
            Gb = Zs.T @ Zs
            G += Gb.toarray() if sp.issparse(Gb) else Gb
        fro = float(np.linalg.norm(G))
        return float(np.trace(G)) / fro if fro > 0 else float("nan")

    def dense(self, block: str = "train") -> np.ndarray:
        """The dense bank these factors represent: (M, n, n) training block, or
        (M, n_test, n) test block. For checks on small problems only."""
        if block == "test" and self.test is None:
            raise InputError("the factor bank has no test factors")
        if self.out_of_core:
            return self._in_memory().dense(block)
        out = []
        for m in range(self.n_kernels):
            Zm = self.factor(m)
            Tm = Zm if block == "train" else self.factor(m, "test")
            K = Tm @ Zm.T
            out.append(K.toarray() if sp.issparse(K) else np.asarray(K))
        return np.stack(out).astype(np.float64)

    def _in_memory(self) -> FactorBank:
        """The same bank with its factors read into memory (small checks only)."""
        bank = FactorBank.__new__(FactorBank)
        read = lambda Z: Z.read() if isinstance(Z, RowBlocks) else Z  # noqa: E731
        bank._set(
            read(self.train), self.ranks, read(self.test), self.names, self.y_train, self.y_test
        )
        return bank


def _rows_of(Z, index):
    """The rows ``index`` of factors (in memory, C-contiguous when dense)."""
    if isinstance(Z, RowBlocks):
        return Z.take(index)
    rows = Z[np.asarray(index)]
    return rows if sp.issparse(rows) else np.ascontiguousarray(rows)

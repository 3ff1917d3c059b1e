"""Banks of factors in the kernel-bank file (mkl.banks.kernel_bank): round trip of dense and
CSR factors, the layout h5py alone reads, checksums that catch damage, atomic
writes, kernel selection and inner-CV folds on factors, and fitting from a
stored bank exactly as from the FactorBank it holds."""

import os

import h5py
import numpy as np
import pytest
import scipy.sparse as sp

import mkl
from mkl._io import CorruptFile
from mkl.banks.factor_bank import FactorBank
from mkl.banks.factor_builders import exact_factor_bank, nystroem_bank
from mkl.banks.kernel_bank import KernelBank
from mkl.exceptions import InputError
from mkl.kernels.specs import KernelSpec, expand_bank_spec
from mkl.model_selection import cross_validate_grid

SPEC = {
    "families": [{"family": "gaussian", "widths": [1, 3]}, {"family": "linear"}],
    "features": ["all", "single"],
    "normalise": "unit_trace",
}


def toy(rng, n=90, d=4):
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def nystroem_kernel_bank(rng, dtype=np.float64):
    X, y = toy(rng)
    specs = expand_bank_spec(SPEC, X.shape[1])
    factors = nystroem_bank(specs, X[:60], X[60:], rank=20, dtype=dtype)
    return KernelBank(
        train=factors,
        specs=specs,
        y_train=y[:60],
        y_test=y[60:],
        factors=np.full(len(specs), np.nan),
        train_index=np.arange(60),
        test_index=np.arange(60, 90),
        attrs={"dataset": "toy", "representation": '{"kind": "nystroem", "rank": 20}'},
    )


def sparse_kernel_bank(rng, dtype=np.float32):
    X = sp.random(80, 40, density=0.15, random_state=1, format="csr")
    X = sp.csr_matrix(X + sp.eye(80, 40))  # no empty column: unit trace is defined
    y = np.where(np.arange(80) % 3 == 0, 1, -1)
    specs = [KernelSpec("linear", None, j, "unit_trace") for j in range(40)]
    factors = exact_factor_bank(specs, X[:50], X[50:], dtype=dtype)
    return KernelBank(train=factors, specs=specs, y_train=y[:50], y_test=y[50:])


def same_matrix(a, b):
    if sp.issparse(a):
        return sp.issparse(b) and (a != b).nnz == 0 and a.shape == b.shape
    return np.array_equal(a, b)


@pytest.mark.parametrize(
    "make, dtype",
    [
        (nystroem_kernel_bank, np.float64),
        (nystroem_kernel_bank, np.float32),
        (sparse_kernel_bank, np.float32),
        (sparse_kernel_bank, np.float64),
    ],
)
def test_factor_bank_round_trip(tmp_path, rng, make, dtype):
    bank = make(rng, dtype)
    path = tmp_path / "bank.h5"
    bank.save(path)
    back = KernelBank.load(path)
    assert back.factored and back.train.dtype == dtype
    assert back.train.is_sparse == bank.train.is_sparse
    assert same_matrix(back.train.train, bank.train.train)
    assert same_matrix(back.train.test, bank.train.test)
    assert np.array_equal(back.train.ranks, bank.train.ranks)
    assert back.specs == bank.specs and back.labels() == back.train.names
    assert np.array_equal(back.y_train, bank.y_train)
    assert np.array_equal(back.y_test, bank.y_test)
    assert (back.n_kernels, back.n_train, back.n_test) == (
        bank.n_kernels,
        bank.n_train,
        bank.n_test,
    )
    assert back.shape == (bank.n_kernels, bank.n_train, bank.n_train)


def test_factor_file_is_readable_by_h5py_alone(tmp_path, rng):
    """The layout of mkl/bank.py's docstring: groups of plain arrays (CSR as
    scipy's data/indices/indptr), the ranks, a checksum per array."""
    bank = sparse_kernel_bank(rng)
    path = tmp_path / "bank.h5"
    bank.save(path)
    with h5py.File(path, "r") as f:
        g = f["train"]
        assert g.attrs["format"] == "csr" and tuple(g.attrs["shape"]) == (50, 40)
        Z = sp.csr_matrix((g["data"][()], g["indices"][()], g["indptr"][()]), shape=(50, 40))
        assert f["ranks"][()].tolist() == [1] * 40
        assert {"crc32_train_data", "crc32_train_indices", "crc32_test_data"} <= set(f.attrs)
    assert same_matrix(Z, bank.train.train)
    dense = tmp_path / "dense.h5"
    nystroem_kernel_bank(rng).save(dense)
    with h5py.File(dense, "r") as f:
        assert f["train"].attrs["format"] == "dense" and f["train/data"].ndim == 2
        assert f.attrs["representation"] == '{"kind": "nystroem", "rank": 20}'


@pytest.mark.parametrize(
    "make, block", [(nystroem_kernel_bank, "test"), (sparse_kernel_bank, "train")]
)
def test_damaged_factors_fail_their_checksum(tmp_path, rng, make, block):
    bank = make(rng)
    path = tmp_path / "bank.h5"
    bank.save(path)
    with h5py.File(path, "r") as f:
        ds = f[f"{block}/data"]
        offset, nbytes = ds.id.get_offset(), ds.id.get_storage_size()
    with open(path, "r+b") as fh:  # flip one byte in the middle of the factor data
        fh.seek(offset + nbytes // 2)
        byte = fh.read(1)
        fh.seek(offset + nbytes // 2)
        fh.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(CorruptFile, match=f"the {block} factors' data array"):
        KernelBank.load(path)
    KernelBank.load(path, verify=False)  # still HDF5: only the checksum sees it


def test_factor_bank_save_is_atomic(tmp_path, rng, monkeypatch):
    bank = nystroem_kernel_bank(rng)
    path = tmp_path / "bank.h5"
    bank.save(path)
    before = path.read_bytes()

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(h5py.Group, "create_dataset", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        bank.save(path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["bank.h5"]


def test_select_keeps_the_kernels_columns_train_and_test(rng):
    bank = nystroem_kernel_bank(rng)
    linear = bank.select(include={"family": "linear"})
    assert linear.labels() == ["linear@all", *(f"linear@x{j}" for j in range(4))]
    assert linear.train.ranks.tolist() == [4, 1, 1, 1, 1]
    chosen = bank.find(family="linear")
    for block in ("train", "test"):
        assert np.allclose(linear.train.dense(block), bank.train.dense(block)[chosen])
    sparse = sparse_kernel_bank(rng).select([3, 0, 7])
    assert sparse.train.is_sparse and sparse.train.train.has_sorted_indices
    assert sparse.labels() == ["linear@x3", "linear@x0", "linear@x7"]


def test_fold_holds_the_fit_rows_and_the_held_out_rows(rng):
    factors = nystroem_kernel_bank(rng).train
    fit, held = np.arange(0, 60, 2), np.arange(1, 60, 2)
    fold = factors.fold(fit, held)
    K = factors.dense()
    assert np.allclose(fold.dense(), K[:, fit][:, :, fit])
    assert np.allclose(fold.dense("test"), K[:, held][:, :, fit])
    assert np.array_equal(fold.y_train, factors.y_train[fit])
    assert np.array_equal(fold.y_test, factors.y_train[held])


def test_inner_cv_on_factors_is_cv_on_the_kernels_they_represent(rng):
    """Each fold's fit on the factors and on the fold's own factor bank built by
    hand gives the same score: the fold sees only its rows."""
    bank = nystroem_kernel_bank(rng)
    folds = np.arange(bank.n_train) % 3
    make = lambda **p: mkl.make_estimator("level", tol=1e-3, **p)  # noqa: E731
    points = [{"C": 1.0}, {"C": 10.0}]
    records = cross_validate_grid(make, bank.train, bank.y_train, folds, points)
    Z = bank.train.train
    for rec in records:
        for f, recorded in enumerate(rec["fold_scores"]):
            tr, va = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
            by_hand = FactorBank.from_matrix(Z[tr], bank.train.ranks, test=Z[va])
            est = make(**rec["params"]).fit(by_hand, bank.y_train[tr])
            assert recorded == pytest.approx(np.mean(est.predict(by_hand) == bank.y_train[va]))


def test_fitting_a_stored_factor_bank_is_fitting_its_factors(tmp_path, rng):
    bank = nystroem_kernel_bank(rng)
    bank.save(tmp_path / "bank.h5")
    stored = KernelBank.load(tmp_path / "bank.h5")
    a = mkl.make_estimator("simplemkl", C=1.0).fit(stored, None)
    b = mkl.make_estimator("simplemkl", C=1.0).fit(bank.train, bank.y_train)
    assert np.allclose(a.weights_, b.weights_)
    assert np.allclose(a.decision_function(stored), b.decision_function(bank.train))
    assert a.decision_function(stored.test_input).shape == (bank.n_test,)


def test_factor_kernel_bank_misuse_is_refused(rng):
    bank = nystroem_kernel_bank(rng)
    with pytest.raises(InputError, match="keeps its test factors"):
        KernelBank(
            train=bank.train, test=np.zeros((1, 1, 1)), specs=bank.specs, y_train=bank.y_train
        )
    with pytest.raises(InputError, match="no eigendecompositions"):
        bank.with_spectra()
    with pytest.raises(InputError, match="MEMO cannot use a FactorBank"):
        mkl.make_estimator("memo").fit(bank, None)
    no_test = KernelBank(
        train=bank.train.rows(np.arange(10)), specs=bank.specs, y_train=bank.y_train[:10]
    )
    with pytest.raises(InputError, match="no test block"):
        no_test.test_input  # noqa: B018


def test_exact_factors_of_a_bank_spec_are_its_linear_kernels(rng):
    X, _ = toy(rng)
    spec = {
        "families": [{"family": "linear"}],
        "features": ["all", "single"],
        "normalise": "unit_trace",
    }
    specs = expand_bank_spec(spec, X.shape[1])
    factors = exact_factor_bank(specs, X[:60], X[60:])
    assert factors.ranks.tolist() == [4, 1, 1, 1, 1]
    for m, s in enumerate(specs):
        A = X if s.feature == -1 else X[:, [s.feature]]
        K, T = A[:60] @ A[:60].T, A[60:] @ A[:60].T
        assert np.allclose(factors.dense()[m], K / np.trace(K))
        assert np.allclose(factors.dense("test")[m], T / np.trace(K))
    with pytest.raises(InputError, match="exact factors exist for linear kernels only"):
        exact_factor_bank(expand_bank_spec(SPEC, 4), X[:60], X[60:])

import os

import h5py
import numpy as np
import pytest

from mkl.banks.kernel_bank import KernelBank
from mkl.kernels.dense import compute_bank
from mkl.kernels.specs import KernelSpec


def make_bank(rng, dtype=np.float64):
    X = rng.normal(size=(30, 3))
    specs = [KernelSpec("gaussian", 1.0), KernelSpec("linear"), KernelSpec("linear", feature=2)]
    train, test, factors = compute_bank(specs, X[:20], X[20:], dtype=dtype)
    return KernelBank(
        train=train,
        test=test,
        specs=specs,
        y_train=np.arange(20) % 2,
        y_test=np.arange(10) % 2,
        factors=factors,
        train_index=np.arange(20),
        test_index=np.arange(20, 30),
        attrs={"dataset": "toy", "split": 0},
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mmap", [False, True])
def test_round_trip(tmp_path, rng, dtype, mmap):
    bank = make_bank(rng)
    path = tmp_path / "b.h5"
    bank.save(path, dtype=dtype)
    back = KernelBank.load(path, mmap=mmap)
    assert back.train.dtype == dtype and back.test.dtype == dtype
    rtol = 1e-6 if dtype == np.float32 else 0
    assert np.allclose(back.train, bank.train, rtol=rtol, atol=rtol)
    assert np.allclose(back.test, bank.test, rtol=rtol, atol=rtol)
    assert back.specs == bank.specs
    assert np.array_equal(back.y_train, bank.y_train)
    assert np.array_equal(back.test_index, bank.test_index)
    assert back.attrs["dataset"] == "toy" and back.attrs["split"] == 0
    if mmap:
        assert isinstance(back.train, np.memmap) and not back.train.flags.writeable


def test_save_is_atomic(tmp_path, rng, monkeypatch):
    bank = make_bank(rng)
    path = tmp_path / "b.h5"
    bank.save(path)
    before = path.read_bytes()

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(h5py.File, "create_dataset", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        bank.save(path)
    assert path.read_bytes() == before  # the finished file is untouched
    assert os.listdir(tmp_path) == ["b.h5"]  # no temporary left behind


def test_select_by_spec(rng):
    bank = make_bank(rng)
    lin = bank.select(include={"family": "linear", "feature": -1})
    assert lin.n_kernels == 1 and lin.specs[0] == KernelSpec("linear")
    rest = bank.select(exclude={"family": "linear"})
    assert [s.family for s in rest.specs] == ["gaussian"]
    assert np.array_equal(rest.test[0], bank.test[0])
    with pytest.raises(ValueError, match="no kernel in the bank matches"):
        bank.select(include={"family": "polynomial"})
    with pytest.raises(ValueError, match="unknown kernel spec field"):
        bank.find(colour="red")


def test_truncated_or_foreign_files_are_refused(tmp_path, rng):
    path = tmp_path / "b.h5"
    make_bank(rng).save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(ValueError, match="cannot read kernel bank"):
        KernelBank.load(path)
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f["x"] = 1
    with pytest.raises(ValueError, match="is not a kernel bank"):
        KernelBank.load(tmp_path / "other.h5")


def test_inconsistent_blocks_are_refused(rng):
    bank = make_bank(rng)
    with pytest.raises(ValueError, match="test block must be"):
        KernelBank(
            train=bank.train, test=bank.test[:, :, :5], specs=bank.specs, y_train=bank.y_train
        )
    with pytest.raises(ValueError, match="3 kernel specs for 2 kernels"):
        KernelBank(train=bank.train[:2], specs=bank.specs, y_train=bank.y_train)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("share", [0.0, 0.05, 0.3, 0.59, 0.61, 1.0])
def test_quadratic_forms_read_the_support_s_rows_or_the_whole_bank_alike(rng, dtype, share):
    """q_m = v'K_m v: from the rows of v's nonzeros (support shares up to
    SUPPORT_FRACTION) or from one pass over the bank, the same numbers."""
    from mkl.banks import algebra

    M, n = 4, 60
    A = rng.standard_normal((M, n, 8))
    K = np.einsum("mik,mjk->mij", A, A).astype(dtype)
    v = rng.standard_normal(n) * (np.arange(n) < round(share * n))
    expected = np.einsum("i,mij,j->m", v, K.astype(np.float64), v)
    scale = np.abs(K).max() * (np.abs(v).sum() ** 2 + 1)
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(algebra.quadratic_forms(K, v), expected, atol=10 * eps * scale)
    Kv = np.zeros((M, n))
    algebra.add_rows(K, Kv, np.flatnonzero(v), v)  # the rows path at any share
    np.testing.assert_allclose(Kv @ v, expected, atol=10 * eps * scale)

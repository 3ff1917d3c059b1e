"""Bad input a researcher bringing their own data meets (issue 60): each is
refused with an error naming the cause and what to do, or warned about where
the result is still valid. (The workflow's table parser: tests/workflow/test_data.py.)"""

from __future__ import annotations

import warnings

import h5py
import numpy as np
import pandas as pd
import pytest

import mkl
from mkl import DegenerateKernelWarning, InputError, MultipleKernelClassifier
from mkl.banks.factor_bank import FactorBank
from mkl.banks.kernel_bank import KernelBank
from mkl.kernels.specs import KernelSpec


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    return X, (X[:, 0] + X[:, 1] > 0).astype(int)


def test_a_bank_of_identity_kernels_that_predicts_one_class_says_so():
    """Identity kernels memorise the training rows: against new rows they are
    zero, every decision value is the intercept and predict gives one class."""
    n = 30
    y = np.arange(n) % 2
    est = mkl.make_estimator("uniform", C=1.0).fit(np.stack([np.eye(n)] * 3), y)
    with pytest.warns(DegenerateKernelWarning, match="every one of the 10 test rows gets the same"):
        assert len(set(est.predict(np.zeros((3, 10, n))))) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateKernelWarning)
        est.predict(np.stack([np.eye(n)[:10]] * 3))  # rows it has seen: no warning


@pytest.fixture
def factor_file(tmp_path, data):
    X, y = data
    path = tmp_path / "factors.h5"
    with h5py.File(path, "w") as f:
        f["Z"] = np.hstack([X, X**2])
    return path, y


def test_a_factor_file_closed_before_the_bank_is_made_is_named(factor_file):
    path, _ = factor_file
    with h5py.File(path, "r") as f:
        dataset = f["Z"]
    with pytest.raises(InputError, match=r"h5py.Dataset given as factors is closed .* keep it"):
        FactorBank.from_matrix(dataset, 2)


def test_a_factor_file_closed_during_the_fit_is_named(factor_file):
    path, y = factor_file
    f = h5py.File(path, "r")
    bank = FactorBank.from_matrix(f["Z"], 2, y_train=y)
    f.close()
    with pytest.raises(InputError, match=rf"HDF5 file {path} holding the factors /Z was closed"):
        mkl.make_estimator("level", C=10.0).fit(bank, y)


@pytest.mark.parametrize("algorithm", ["level", "lp_newton", "uniform", "smkl", "easymkl"])
def test_factors_overwritten_with_nan_after_the_bank_was_made_are_named(factor_file, algorithm):
    """The bank was checked finite when made (its one scan); a pass that then
    gives NaN names the file instead of scipy's "A_ub must not contain nan"."""
    path, y = factor_file
    with h5py.File(path, "r+") as f:
        bank = FactorBank.from_matrix(f["Z"], 2, y_train=y)
        f["Z"][3, 2] = np.nan
        with pytest.raises(InputError, match=r"HDF5 dataset /Z of .* it was changed since"):
            mkl.make_estimator(algorithm, C=10.0).fit(bank, y)
    Z = np.random.default_rng(1).normal(size=(len(y), 6))
    bank = FactorBank.from_matrix(Z, 2, y_train=y)
    Z[0, 0] = np.inf  # an array edited in place
    with pytest.raises(InputError, match="the factor array holds NaN, inf"):
        mkl.make_estimator(algorithm, C=10.0).fit(bank, y)


def test_a_dataframe_with_a_text_column_names_it(data):
    X, y = data
    df = pd.DataFrame(X, columns=["age", "bmi", "bp", "s1"])
    df["colour"] = np.where(y == 1, "red", "blue")
    df["site"] = pd.Categorical(np.where(y == 1, "a", "b"))
    with pytest.raises(InputError, match=r"column\(s\) 'colour' \(.*\), 'site' \(category\) do"):
        MultipleKernelClassifier().fit(df, y)
    with pytest.raises(InputError, match="OneHotEncoder"):
        MultipleKernelClassifier().fit(df, y)


def test_a_boolean_column_mask_selects_a_views_columns(data):
    X, y = data
    mask = np.array([True, False, True, False])
    clf = MultipleKernelClassifier(algorithm="uniform", views=[("a", mask), ("b", ~mask)])
    clf.fit(X, y)
    assert clf.views_["a"].tolist() == [0, 2] and clf.views_["b"].tolist() == [1, 3]
    listed = MultipleKernelClassifier(algorithm="uniform", views=[("a", [0, 2]), ("b", [1, 3])])
    np.testing.assert_allclose(listed.fit(X, y).decision_function(X), clf.decision_function(X))
    with pytest.raises(InputError, match=r"needs one entry per column of X \(4\), got 3"):
        MultipleKernelClassifier(views=[("a", [True, False, True])]).fit(X, y)


@pytest.mark.parametrize(
    "fit",
    [
        lambda X, y: MultipleKernelClassifier().fit(X, y),
        lambda X, y: mkl.make_estimator("uniform").fit(np.stack([X @ X.T]), y),
    ],
    ids=["front end", "bank level"],
)
def test_labels_of_mixed_kinds_are_named(data, fit):
    X, y = data
    mixed = np.array(["yes" if label else 0 for label in y], dtype=object)
    with pytest.raises(InputError, match=r"y mixes kinds of class labels: .*number .*text"):
        fit(X, mixed)


# --- issue 60, section 3, the rest: refused or warned, each naming the cause -------


def _specs(M):
    return [KernelSpec("gaussian", float(2**m)) for m in range(M)]


def test_a_kernel_bank_with_nan_on_a_diagonal_is_refused_when_made():
    """A NaN feature of row i makes row i of every kernel NaN, its diagonal
    entry included: the constructor reads the diagonal (M n entries) and
    names the kernel, its label and the entry; a NaN off the diagonal is named
    by the fit's validation pass, with its entry."""
    n = 6
    y = np.arange(n) % 2
    train = np.stack([np.eye(n)] * 3)
    train[1, 2, :] = train[1, :, 2] = np.nan
    with pytest.raises(
        InputError, match=r"kernel 1 \(gaussian\(2\)@all\) is nan at entry \(2, 2\).*row 2"
    ):
        KernelBank(train=train, specs=_specs(3), y_train=y)
    train = np.stack([np.eye(n)] * 3)
    train[2, 1, 4] = train[2, 4, 1] = np.inf
    bank = KernelBank(train=train, specs=_specs(3), y_train=y)  # checked by the fit
    with pytest.raises(InputError, match=r"K\[2\] contains NaN or inf \(first at entry \(1, 4\)"):
        mkl.make_estimator("uniform").fit(bank)


@pytest.mark.parametrize("name", ["uniform", "simplemkl", "level"])
@pytest.mark.parametrize("factored", [False, True], ids=["dense", "factors"])
def test_a_zero_kernel_is_named(data, name, factored):
    """A zero kernel adds nothing to any combination, yet uniform gave it 1/2
    and lp_newton 0.14 without a word: the fit warns, naming it (from the
    traces: the diagonal, or the factors' column norms)."""
    X, y = data
    if factored:
        bank = FactorBank.from_matrix(
            np.hstack([X, np.zeros((len(y), 2))]), [4, 2], names=["linear", "zero"]
        )
        named = "zero"
    else:
        bank = np.stack([X @ X.T, np.zeros((len(y), len(y)))])
        named = r"K\[1\]"
    with pytest.warns(
        DegenerateKernelWarning, match=rf"1 of the 2 kernels are zero .*: {named}\."
    ) as caught:
        mkl.make_estimator(name, C=1.0).fit(bank, y)
    # at the caller's line (this test's), not inside the library
    assert {w.filename for w in caught if w.category is DegenerateKernelWarning} == {__file__}
    with warnings.catch_warnings():  # a bank without one: no warning
        warnings.simplefilter("error", DegenerateKernelWarning)
        mkl.make_estimator(name, C=1.0).fit(np.stack([X @ X.T, (X @ X.T) ** 2]), y)


def test_a_zero_diagonal_beside_nonzero_entries_is_refused_as_indefinite(data):
    """|K_ij| <= sqrt(K_ii K_jj) for a PSD kernel: a zero diagonal with any
    other entry nonzero proves it indefinite (the validation pass has the
    diagonal; only such kernels are read again)."""
    X, y = data
    bad = np.zeros((len(y), len(y)))
    bad[3, 7] = bad[7, 3] = 0.5
    with pytest.raises(InputError, match=r"K\[1\] is not positive semidefinite: smallest eig"):
        mkl.make_estimator("simplemkl").fit(np.stack([X @ X.T, bad]), y)


def _indefinite_average_bank(rng, n=40):
    """Three kernels G_m - c uu', u = y / ||y||, c such that their average's
    smallest eigenvalue is about -1.9 (the issue's bank); diagonals positive."""
    from .conftest import random_problem

    _, y, K = random_problem(rng, n=n, M=3)
    u = y / np.linalg.norm(y)
    c = u @ K.mean(0) @ u + 1.9
    return K - c * np.outer(u, u)[None], y


@pytest.mark.parametrize("name", ["uniform", "simplemkl", "level"])
def test_an_indefinite_average_kernel_is_refused(rng, name):
    """Issue 60's bank whose average kernel has a clearly negative eigenvalue:
    the quadratic forms the methods compute anyway (q_m, or the combined
    kernel's form after uniform's SVM) are the certificate. (Its other bank,
    one kernel whose eigenvalue -5% of its largest lies where the solution's
    form stays positive, passes: docs/design.md, "Input checks".)"""
    K, y = _indefinite_average_bank(rng)
    assert -2.5 < np.linalg.eigvalsh(K.mean(0))[0] <= -1.9 and np.einsum("mii->mi", K).min() > 0
    with pytest.raises(InputError, match=r"not positive semidefinite: smallest eigenvalue -"):
        mkl.make_estimator(name, C=10.0).fit(K, y)


def test_probability_must_be_a_boolean(data):
    X, y = data
    with pytest.raises(InputError, match=r"'probability' parameter .* must be an instance of"):
        MultipleKernelClassifier(probability="yes").fit(X, y)
    with pytest.raises(InputError, match=r"'verbose' parameter"):
        MultipleKernelClassifier(verbose="loud").fit(X, y)


def test_a_class_smaller_than_platts_folds_is_named(data):
    """libsvm's five folds, fewer when a class has fewer rows: said, naming the
    class and its count; a class of one row is refused, naming it."""
    X, y = data
    y = y.copy()
    y[:2] = 2
    clf = MultipleKernelClassifier(algorithm="uniform", probability=True, random_state=0)
    with pytest.warns(UserWarning, match=r"class 2 has only 2 training rows.* so 2 folds are"):
        clf.fit(X, y)
    assert clf.predict_proba(X[:3]).shape == (3, 3)
    y[1] = 0
    with pytest.raises(InputError, match=r"class 2 has 1: Platt's sigmoid"):
        clf.fit(X, y)


def _save_bank(tmp_path, data, factored):
    X, y = data
    specs = _specs(2)
    if factored:
        train = FactorBank.from_matrix(X[:40], 2, test=X[40:])
        bank = KernelBank(train=train, specs=specs, y_train=y[:40], y_test=y[40:])
        attr, dataset = "crc32_train_data", "/train/data"
    else:
        gram = X @ X.T
        train, test = np.stack([gram[:40, :40]] * 2), np.stack([gram[40:, :40]] * 2)
        bank = KernelBank(train=train, test=test, specs=specs, y_train=y[:40], y_test=y[40:])
        attr, dataset = "crc32_train", "/train"
    path = tmp_path / "bank.h5"
    bank.save(path)
    return path, attr, dataset


@pytest.mark.parametrize("mmap", [False, True])
@pytest.mark.parametrize("factored", [False, True], ids=["dense", "factors"])
def test_a_bank_file_without_its_checksum_is_not_verified(tmp_path, data, factored, mmap):
    """verify=True promises a checked bank: a stripped checksum is an error
    naming the file and dataset (CorruptFile: the workflow moves it aside and
    rebuilds it), and says how to use it unchecked."""
    from mkl._io import CorruptFile

    path, attr, dataset = _save_bank(tmp_path, data, factored)
    with h5py.File(path, "r+") as f:
        del f.attrs[attr]
    with pytest.raises(CorruptFile, match=rf"{path}.*dataset '{dataset}'.* no checksum.*verify=F"):
        KernelBank.load(path, mmap=mmap)
    back = KernelBank.load(path, mmap=mmap, verify=False)
    assert back.n_kernels == 2
    if factored and mmap:
        back.train.close()

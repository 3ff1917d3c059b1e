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

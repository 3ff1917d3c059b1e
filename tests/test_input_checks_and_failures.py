"""What the library refuses and how it reports failure (docs/design.md, "Input
checks" and "Failures"): per-kernel symmetry, indefinite kernels given to PSD
methods, spectra that follow the content of an array, and cross-validation
that records a failing grid point and goes on."""

import functools
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

import mkl
from mkl.banks.checks import _scale_and_asymmetry
from mkl.exceptions import InputError, SolverError, is_fit_failure
from mkl.kernels.spectra import spectra
from mkl.model_selection import cross_validate_grid, grid_points, select_best

from .conftest import random_problem

PSD_METHODS = ["uniform", "simplemkl", "level", "lp_newton", "easymkl", "memo"]


def test_an_asymmetric_kernel_cannot_hide_behind_its_transpose(rng):
    _, y, K = random_problem(rng, n=30, M=3)
    B = K[0] + np.triu(rng.uniform(0.1, 0.2, size=(30, 30)), 1)
    bank = np.stack([B, B.T, K[2]])  # the average is symmetric, B is not
    assert np.allclose(bank.mean(0), bank.mean(0).T)
    with pytest.raises(InputError, match=r"K\[0\] is not symmetric"):
        mkl.make_estimator("uniform").fit(bank, y)


@given(
    n=st.integers(1, 150),
    seed=st.integers(0, 2**32 - 1),
    bad=st.sampled_from([None, np.nan, np.inf, -np.inf]),
)
def test_the_validation_scale_and_asymmetry_are_those_of_the_entries(n, seed, bad):
    # the one-read check of the two validation combinations (tile pairs over the
    # upper triangle, sizes around the 64-row tile) against numpy's reductions
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((2, n, n))
    A = A + A.T if seed % 2 else A
    if seed % 5 == 0:  # entries near the largest float: finite, so no overflow may refuse them
        A, B = (X / np.abs(X).max() * 1e308 for X in (A, B))
    if bad is not None:
        i, j = rng.integers(0, n, size=2)
        (A if seed % 3 else B)[i, j] = bad
        assert _scale_and_asymmetry(A, B) == (np.inf, np.inf)
        return
    scale = max(np.abs(A).max(), np.abs(B).max())
    with np.errstate(over="ignore"):  # X - X.T may overflow to inf, in both computations
        asymmetry = max(np.abs(A - A.T).max(), np.abs(B - B.T).max())
    assert _scale_and_asymmetry(A, B) == (scale, asymmetry)


@pytest.mark.parametrize("name", PSD_METHODS)
def test_a_negative_diagonal_is_refused_by_psd_methods(problem, name):
    _, y, K = problem
    K = K.copy()
    K[2, 5, 5] = -0.5
    with pytest.raises(InputError, match=r"K\[2\] is not positive semidefinite.*\(5, 5\)"):
        mkl.make_estimator(name).fit(K, y)


def _indefinite_bank(rng, n=40):
    """Diagonal and 2x2 minors fine, but G - yy'/4 has a clearly negative
    eigenvalue along y, which the SVM's beta = alpha * y meets."""
    _, y, K = random_problem(rng, n=n, M=3)
    bad = K[0] - 0.25 * np.outer(y, y)
    assert np.linalg.eigvalsh(bad)[0] < -1.0
    return np.stack([bad, K[1], K[2]]), y


@pytest.mark.parametrize("name", ["simplemkl", "level", "lp_newton", "easymkl", "memo", "smkl"])
def test_an_indefinite_kernel_met_by_the_solver_is_an_error_not_clipped(rng, name):
    K, y = _indefinite_bank(rng)
    lam_min = np.linalg.eigvalsh(K[0])[0]
    with pytest.raises(
        InputError, match=r"K\[0\] is not positive semidefinite: smallest eig"
    ) as err:
        mkl.make_estimator(name, C=10.0).fit(K, y)
    assert f"{lam_min:.3g}" in str(err.value)


def test_a_baseline_svm_on_an_indefinite_combination_is_refused(rng):
    K, y = _indefinite_bank(rng)
    with pytest.raises(
        InputError, match=r"the combined kernel \(UniformMKL\) is not positive semidefinite"
    ):
        mkl.make_estimator("uniform", C=10.0).fit(K[:1], y)


def test_indefinite_similarity_methods_take_the_same_bank(rng):
    K, y = _indefinite_bank(rng)
    est = mkl.make_estimator("indsvm", C=1.0, max_iter=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(K[:1], y)
    assert est.predict(K[:1, :5]).shape == (5,)


def test_spectra_follow_the_content_not_the_object(rng):
    A = rng.normal(size=(2, 25, 25))
    S = A + A.transpose(0, 2, 1)
    first = spectra(S).values.copy()
    S *= 3  # in place: same object, new content
    assert np.allclose(spectra(S).values, 3 * first)
    assert spectra(S.copy()) is spectra(S)  # equal content: one decomposition


def test_an_eigen_transform_refit_after_an_in_place_edit_matches_a_fresh_copy(rng):
    """The review's probe: Denoise after S *= 3 gave 14.91 against 6.95."""
    A = rng.normal(size=(30, 30))
    S = (A + A.T)[None] / 4
    y = np.where(rng.normal(size=30) > 0, 1, -1)
    est = mkl.make_estimator("denoise", C=1.0)
    est.fit(S, y)
    S *= 3
    stale = est.fit(S, y).objective_
    fresh = mkl.make_estimator("denoise", C=1.0).fit(S.copy(), y).objective_
    assert stale == pytest.approx(fresh, rel=1e-9)


class _Raises:
    """An estimator whose fit raises ``exc`` (for the failure policy)."""

    def __init__(self, exc):
        self.exc = exc

    def fit(self, K, y):
        raise self.exc


def test_a_failing_grid_point_is_recorded_and_the_others_go_on(problem):
    _, y, K = problem
    folds = np.arange(len(y)) % 3
    make = functools.partial(mkl.make_estimator, "lp_newton")
    recs = cross_validate_grid(make, K, y, folds, grid_points({"p": [0.5, 2.0]}))
    assert recs[0]["mean_score"] is None
    assert recs[0]["error"].startswith("fold 0: InputError: p must be a finite number > 1")
    assert recs[1]["mean_score"] is not None and len(recs[1]["fold_scores"]) == 3
    assert select_best(recs) == 1


def test_when_every_grid_point_fails_the_errors_are_named(problem):
    _, y, K = problem
    make = functools.partial(mkl.make_estimator, "lp_newton")
    recs = cross_validate_grid(make, K, y, np.arange(len(y)) % 2, grid_points({"p": [0.5, 0.9]}))
    with pytest.raises(SolverError, match="p must be a finite number > 1"):
        select_best(recs)


@pytest.mark.parametrize(
    "exc", [MemoryError(), ValueError("a bug"), RuntimeError("a bug"), TypeError("a bug")]
)
def test_cross_validation_propagates_what_is_not_a_fit_failure(problem, exc):
    _, y, K = problem
    assert not is_fit_failure(exc)
    with pytest.raises(type(exc)):
        cross_validate_grid(lambda **p: _Raises(exc), K, y, np.arange(len(y)) % 2, [{}])


@pytest.mark.parametrize(
    "exc",
    [
        InputError("bad"),
        SolverError("stuck"),
        np.linalg.LinAlgError("singular"),
        FloatingPointError("overflow"),
    ],
)
def test_cross_validation_records_fit_failures(problem, exc):
    _, y, K = problem
    recs = cross_validate_grid(lambda **p: _Raises(exc), K, y, np.arange(len(y)) % 2, [{}])
    assert recs[0]["mean_score"] is None and type(exc).__name__ in recs[0]["error"]


def test_cross_validation_keeps_the_warnings_of_its_fits(problem):
    _, y, K = problem
    make = functools.partial(mkl.make_estimator, "simplemkl", tol=1e-12, max_iter=1)
    recs = cross_validate_grid(make, K, y, np.arange(len(y)) % 2, [{"C": 1.0}])
    assert any("max_iter=1" in w for w in recs[0]["warnings"])
    assert not any(f["converged"] for f in recs[0]["fold_fits"])


def test_a_solver_root_finder_failure_is_a_solver_error():
    from mkl.exceptions import SubproblemError

    assert issubclass(SubproblemError, SolverError)
    assert is_fit_failure(SubproblemError("x"))


def test_stored_spectra_of_another_block_are_refused(rng):
    from mkl.banks.kernel_bank import KernelBank
    from mkl.kernels.specs import KernelSpec

    A = rng.normal(size=(2, 20, 20))
    S = A + A.transpose(0, 2, 1)
    specs = [KernelSpec("linear", None)] * 2
    bank = KernelBank(train=S, specs=specs, y_train=np.ones(20)).with_spectra()
    spectra_of_S = {"eigenvalues": bank.eigenvalues, "eigenvectors": bank.eigenvectors}
    KernelBank(train=S.copy(), specs=specs, y_train=np.ones(20), **spectra_of_S)  # its own
    edited = S.copy()
    edited[1, 3, 4] = edited[1, 4, 3] = 5.0
    with pytest.raises(InputError, match="eigendecomposition 1 is not that of training block 1"):
        KernelBank(train=edited, specs=specs, y_train=np.ones(20), **spectra_of_S)

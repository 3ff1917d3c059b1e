"""What a scikit-learn user expects of the front end beyond fit/predict:
probabilities (Platt's sigmoid on cross-validated decision values), the fit's
summary on the front end, ``verbose``, DataFrame column names in the kernel
names, warnings for kernels that cannot help, and a default bank whose
Gaussian widths follow the number of features."""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.calibration import _sigmoid_calibration
from sklearn.datasets import load_iris, make_classification
from sklearn.metrics import log_loss
from sklearn.preprocessing import StandardScaler

import mkl
from mkl import DegenerateKernelWarning, MultipleKernelClassifier, MultipleKernelRegressor
from mkl.banks.checks import degenerate_kernels
from mkl.banks.from_features import DEFAULT_KERNELS
from mkl.estimators.calibration import platt_sigmoid, sigmoid_probabilities
from mkl.estimators.feature_bank import FIT_SUMMARY
from mkl.kernels.specs import expand_bank_spec

SMALL_BANK = {
    "families": [
        {"family": "gaussian", "widths": [1.0, 4.0]},
        {"family": "polynomial", "degrees": [1]},
    ],
    "normalise": "unit_diagonal",
}


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=160, n_features=6, n_informative=3, flip_y=0.1, random_state=1
    )
    return StandardScaler().fit_transform(X), y


# --- Platt's sigmoid ------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_platt_sigmoid_matches_scikit_learns_fit(seed):
    """The same maximum-likelihood fit as scikit-learn's (independent code)."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=150) * (1 + seed)
    positive = scores + rng.normal(scale=1.0 + seed, size=150) > 0.3
    a, b = platt_sigmoid(scores, positive)
    a_ref, b_ref = _sigmoid_calibration(scores, positive)
    np.testing.assert_allclose([a, b], [a_ref, b_ref], rtol=1e-4, atol=1e-6)
    assert a < 0  # larger scores, more probably positive


def test_platt_sigmoid_stays_finite_on_separated_classes():
    """Platt's smoothed targets keep the fit finite where the plain
    likelihood would push A to minus infinity."""
    scores = np.r_[-np.linspace(1, 3, 20), np.linspace(1, 3, 30)]
    a, b = platt_sigmoid(scores, scores > 0)
    assert np.isfinite([a, b]).all()
    p = sigmoid_probabilities(scores, [[a, b]])[:, 1]
    assert (p[scores > 0] > 0.5).all() and (p[scores < 0] < 0.5).all()
    assert p.max() < 1 and p.min() > 0


def test_sigmoid_probabilities_rows_sum_to_one():
    scores = np.random.default_rng(0).normal(size=(40, 3))
    P = sigmoid_probabilities(scores, [[-2.0, 0.1], [-1.0, 0.0], [-3.0, 0.5]])
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert ((P >= 0) & (P <= 1)).all()


# --- predict_proba on the front end ---------------------------------------------------


def test_predict_proba_is_platt_on_out_of_fold_decision_values(data):
    X, y = data
    clf = MultipleKernelClassifier(
        algorithm="level", kernels=SMALL_BANK, probability=True, random_state=0
    ).fit(X[:120], y[:120])
    P = clf.predict_proba(X[120:])
    assert P.shape == (40, 2)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    # the column of classes_[1] grows with the decision value (A < 0)
    scores = clf.decision_function(X[120:])
    order = np.argsort(scores)
    assert np.all(np.diff(P[order, 1]) >= -1e-12)
    assert clf.probability_sigmoids_.shape == (1, 2) and clf.probability_sigmoids_[0, 0] < 0
    # calibrated: better log-loss than a constant guess of the class frequency
    prior = np.full_like(P, 0.0)
    prior[:, 1] = y[:120].mean()
    prior[:, 0] = 1 - prior[:, 1]
    assert log_loss(y[120:], P) < log_loss(y[120:], prior)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X[120:])), P)
    # the same seeded folds give the same sigmoid; clone keeps probability
    again = clone(clf).fit(X[:120], y[:120])
    np.testing.assert_allclose(again.probability_sigmoids_, clf.probability_sigmoids_)


def test_predict_proba_is_fitted_on_decision_values_of_held_out_folds(data):
    """The sigmoid is Platt's fit to the scores of each row by the model of
    the folds that left it out (as libsvm), not to training margins."""
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    X, y = data
    clf = MultipleKernelClassifier(
        algorithm="uniform", kernels=SMALL_BANK, probability=True, random_state=3
    ).fit(X, y)
    inner = MultipleKernelClassifier(algorithm="uniform", kernels=SMALL_BANK, random_state=3)
    cv = StratifiedKFold(5, shuffle=True, random_state=3)
    scores = cross_val_predict(inner, X, y, cv=cv, method="decision_function")
    np.testing.assert_allclose(
        clf.probability_sigmoids_[0], platt_sigmoid(scores, y == 1), rtol=1e-10
    )


def test_multiclass_probabilities_one_sigmoid_per_class():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    clf = MultipleKernelClassifier(
        algorithm="uniform", kernels=SMALL_BANK, probability=True, random_state=0
    ).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (150, 3) and clf.probability_sigmoids_.shape == (3, 2)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert (P.argmax(axis=1) == y).mean() > 0.9


def test_predict_proba_needs_probability_true(data):
    X, y = data
    clf = MultipleKernelClassifier(kernels=SMALL_BANK).fit(X, y)
    assert not hasattr(clf, "predict_proba")  # as SVC(probability=False)
    # issue 60: the error says what to set
    with pytest.raises(AttributeError, match=r"predict_proba needs probability=True: constru"):
        clf.predict_proba(X)
    with pytest.raises(AttributeError, match=r"predict_log_proba needs probability=True"):
        clf.predict_log_proba(X)
    assert hasattr(clf.set_params(probability=True), "predict_proba")
    with pytest.raises(mkl.InputError, match="at least 2 training rows of every class"):
        MultipleKernelClassifier(kernels=SMALL_BANK, probability=True).fit(
            X, np.r_[1, np.zeros(len(y) - 1, dtype=int)]
        )


# --- the fit's summary, verbose, names ------------------------------------------------


def test_the_fits_summary_is_on_the_front_end(data):
    X, y = data
    clf = MultipleKernelClassifier(algorithm="level", kernels=SMALL_BANK).fit(X, y)
    for name in FIT_SUMMARY:
        assert getattr(clf, name) == getattr(clf.estimator_, name), name
    assert clf.converged_ and clf.gap_ <= clf.estimator_.tol
    assert clf.n_selected_ == int((clf.weights_ > 0).sum())
    reg = MultipleKernelRegressor(kernels=SMALL_BANK).fit(X, X[:, 0] + 0.1 * y)
    assert reg.gap_ == reg.estimator_.gap_ and reg.n_iter_ >= 1


@pytest.mark.parametrize("front_end", [MultipleKernelClassifier, MultipleKernelRegressor])
def test_verbose_reports_the_algorithms_progress(data, front_end, caplog):
    X, y = data
    if front_end is MultipleKernelRegressor:
        y = X[:, 0] + 0.1 * y
    with caplog.at_level(logging.INFO, logger="mkl"):
        front_end(algorithm="level", kernels=SMALL_BANK).fit(X, y)
    assert not caplog.records
    with caplog.at_level(logging.INFO, logger="mkl"):
        front_end(algorithm="level", kernels=SMALL_BANK, verbose=True).fit(X, y)
    assert caplog.records, "verbose=True printed nothing"
    with pytest.raises(ValueError, match="estimator's own parameters"):
        front_end(kernels=SMALL_BANK, verbose=True, algorithm_params={"verbose": 1}).fit(X, y)
    # either place alone works; an algorithm without progress lines ignores verbose
    front_end(algorithm="level", kernels=SMALL_BANK, algorithm_params={"verbose": 0}).fit(X, y)
    front_end(algorithm="uniform", kernels=SMALL_BANK, verbose=True).fit(X, y)


def test_kernel_names_use_a_dataframes_column_names(data):
    pd = pytest.importorskip("pandas")
    X, y = data
    frame = pd.DataFrame(X, columns=[f"col_{j}" for j in range(X.shape[1])])
    spec = {"families": [{"family": "linear"}], "features": ["all", "single"]}
    clf = MultipleKernelClassifier(algorithm="uniform", kernels=spec).fit(frame, y)
    assert list(clf.kernel_names_) == ["linear@all"] + [f"linear@col_{j}" for j in range(6)]
    plain = clone(clf).fit(X, y)
    assert plain.kernel_names_[1] == "linear@x0"


# --- warnings for kernels that cannot help --------------------------------------------


def test_degenerate_kernels_finds_identity_and_constant_kernels():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(30, 4))
    block = np.stack([Z @ Z.T, np.eye(30) * 2.0, np.full((30, 30), 0.5), np.zeros((30, 30))])
    assert degenerate_kernels(block) == ([1], [2, 3])
    near_identity = np.eye(30) + 1e-3 * np.exp(-rng.random((30, 30)))
    assert degenerate_kernels(near_identity[None]) == ([], [])  # 1e-3 is information
    assert degenerate_kernels(np.ones((3, 1, 1))) == ([], [])  # one row: nothing to tell


def test_fit_warns_about_identity_and_constant_kernels(data):
    X, y = data
    narrow = {"families": [{"family": "gaussian", "widths": [0.01, 2.0]}]}
    with pytest.warns(DegenerateKernelWarning, match=r"identity .*gaussian\(0.01\)@all"):
        MultipleKernelClassifier(algorithm="uniform", kernels=narrow).fit(X, y)
    X_const = X.copy()
    X_const[:, 2] = 3.0
    single = {"families": [{"family": "linear"}], "features": ["single"]}
    with pytest.warns(DegenerateKernelWarning, match=r"constant .*: linear@x2$"):
        MultipleKernelClassifier(algorithm="uniform", kernels=single).fit(X_const, y)
    with pytest.warns(DegenerateKernelWarning, match="every feature of X is constant"):
        MultipleKernelRegressor(kernels=SMALL_BANK).fit(np.ones((20, 3)), np.arange(20.0))
    # factors: constant from the factor over all rows
    linear_single = {"families": [{"family": "linear"}], "features": ["single"]}
    with pytest.warns(DegenerateKernelWarning, match=r"constant .*: linear@x2$"):
        MultipleKernelClassifier(
            algorithm="level", kernels=linear_single, representation="exact"
        ).fit(X_const, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateKernelWarning)
        MultipleKernelClassifier(kernels=SMALL_BANK).fit(X, y)


def test_the_default_bank_has_no_identity_kernel_on_many_standardised_features():
    """Widths 2^-1..2^6 per feature: on 30 standardised features the old
    default's unscaled 0.125 was numerically the identity (and the README's
    example put an L1 method's largest weight on it)."""
    X, y = make_classification(n_samples=200, n_features=30, random_state=0)
    X = StandardScaler().fit_transform(X)
    specs = expand_bank_spec(DEFAULT_KERNELS, 30)
    widths = [s.param for s in specs if s.family == "gaussian"]
    np.testing.assert_allclose(widths, 2.0 ** np.arange(-1, 7) * np.sqrt(30))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateKernelWarning)
        MultipleKernelClassifier(algorithm="level").fit(X, y)
    # single-feature kernels keep the widths as given
    one = {**DEFAULT_KERNELS, "features": ["single"]}
    assert [s.param for s in expand_bank_spec(one, 3)][:8] == list(2.0 ** np.arange(-1, 7))
    with pytest.raises(mkl.InputError, match="widths_scale must be one of"):
        expand_bank_spec(
            {"families": [{"family": "gaussian", "widths": [1.0], "widths_scale": "sqrt"}]}, 3
        )


# --- the weights figure ----------------------------------------------------------------


def test_plot_weights_draws_one_bar_per_kernel_named(data):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = data
    clf = MultipleKernelClassifier(algorithm="level", kernels=SMALL_BANK).fit(X, y)
    ax = mkl.plot_weights(clf)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(clf.kernel_names_)
    np.testing.assert_allclose([b.get_width() for b in ax.patches], clf.weights_)
    top = mkl.plot_weights(clf, top=1)
    assert [t.get_text() for t in top.get_yticklabels()] == [
        clf.kernel_names_[np.argmax(clf.weights_)]
    ]
    # one-vs-rest: a series per class; a bank-level estimator: K[m] or given names
    X3, y3 = load_iris(return_X_y=True)
    multi = MultipleKernelClassifier(kernels=SMALL_BANK).fit(X3, y3)
    ax = mkl.plot_weights(multi)
    assert len(ax.patches) == 3 * 3 and ax.get_legend() is not None
    est = clf.estimator_
    assert mkl.plot_weights(est).get_yticklabels()[0].get_text() == "K[0]"
    with pytest.raises(mkl.InputError, match="2 names for 3 kernel weights"):
        mkl.plot_weights(est, names=["a", "b"])
    with pytest.raises(Exception, match="not fitted"):
        mkl.plot_weights(MultipleKernelClassifier())
    plt.close("all")


# --- factor maps kept for predict -----------------------------------------------------


@pytest.mark.parametrize(
    "representation",
    [
        {"kind": "nystroem", "rank": 30, "seed": 4},
        {"kind": "rff", "dimension": 40, "seed": 4},
        {"kind": "exact"},
    ],
)
def test_predict_from_the_kept_maps_equals_the_bank_of_train_and_test(data, representation):
    """The maps kept at fit give the same test factors as building the bank of
    training and test rows together (the workflow's construction), so
    predict needs neither the training rows nor the landmarks' eigenproblem."""
    from mkl.banks.factor_builders import compute_factor_bank

    X, y = data
    if representation["kind"] == "exact":
        spec = {"families": [{"family": "linear"}], "features": ["all", "single"]}
    elif representation["kind"] == "rff":
        spec = {
            "families": [{"family": "gaussian", "widths": [1.0, 4.0]}],
            "normalise": "unit_trace",
        }
    else:
        spec = {**SMALL_BANK, "features": ["all", "single"]}
    clf = MultipleKernelClassifier(algorithm="level", kernels=spec, representation=representation)
    clf.fit(X[:120], y[:120])
    assert clf.X_fit_ is None  # the training rows are not kept
    both = compute_factor_bank(clf.kernel_specs_, X[:120], X[120:], clf.representation_)
    test = mkl.FactorBank.of_test_factors(clf.factor_maps_[0].transform(X[120:])).test
    np.testing.assert_allclose(test, both.test, atol=1e-12)
    np.testing.assert_allclose(
        clf.decision_function(X[120:]), clf.estimator_.decision_function(both), atol=1e-10
    )


def test_a_bank_of_test_factors_alone_predicts_and_cannot_be_fitted(data):
    from mkl.banks.factor_builders import nystroem_bank

    X, y = data
    specs = expand_bank_spec(SMALL_BANK, X.shape[1])
    bank = nystroem_bank(specs, X[:120], X[120:], rank=25, y_train=y[:120])
    est = mkl.make_estimator("level").fit(bank)
    alone = mkl.FactorBank.of_test_factors([bank.factor(m, "test") for m in range(len(specs))])
    assert alone.n_train == 0 and alone.n_test == 40
    # against the dense test block the factors represent: sum_m theta_m T_m Z_m' beta + b
    expected = np.einsum("m,mij,j->i", est.weights_, bank.dense("test"), est.dual_coef_)
    np.testing.assert_allclose(
        est.decision_function(alone), expected + est.intercept_, rtol=1e-6, atol=1e-8
    )
    with pytest.raises(mkl.InputError, match="test factors only"):
        mkl.make_estimator("level").fit(alone, y[120:])


# --- views: kernels on groups of columns ------------------------------------------------


def test_views_are_the_banks_of_their_columns_side_by_side(data):
    """A view's kernels are the bank of its columns alone; the fit is the
    bank-level estimator's on the views' banks stacked; weights sum per view."""
    from mkl.kernels.dense import compute_bank

    X, y = data
    linear = {"families": [{"family": "linear"}], "normalise": "unit_trace"}
    views = [("first", [0, 1, 2]), ("last", slice(3, None), linear)]
    clf = MultipleKernelClassifier(algorithm="level", kernels=SMALL_BANK, views=views, C=10.0)
    clf.fit(X[:120], y[:120])
    assert list(clf.kernel_names_) == [
        "first:gaussian(1)@all",
        "first:gaussian(4)@all",
        "first:polynomial(1)@all",
        "last:linear@all",
    ]
    K1, T1, _ = compute_bank(expand_bank_spec(SMALL_BANK, 3), X[:120, :3], X[120:, :3])
    K2, T2, _ = compute_bank(expand_bank_spec(linear, 3), X[:120, 3:], X[120:, 3:])
    est = mkl.make_estimator("level", C=10.0).fit(np.concatenate([K1, K2]), y[:120])
    np.testing.assert_allclose(clf.weights_, est.weights_, atol=1e-12)
    np.testing.assert_allclose(
        clf.decision_function(X[120:]),
        est.decision_function(np.concatenate([T1, T2])),
        atol=1e-10,
    )
    assert clf.view_weights_ == pytest.approx(
        {"first": clf.weights_[:3].sum(), "last": clf.weights_[3]}
    )
    np.testing.assert_array_equal(clf.views_["last"], [3, 4, 5])


def test_views_by_column_name_on_factors_and_single_features(data):
    pd = pytest.importorskip("pandas")
    X, y = data
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d", "e", "f"])
    single = {"families": [{"family": "gaussian", "widths": [2.0]}], "features": ["single"]}
    views = [("ab", ["a", "b"], single), ("rest", ["c", "d", "e", "f"])]
    rep = {"kind": "nystroem", "rank": 25, "seed": 1}
    clf = MultipleKernelClassifier(
        algorithm="level", kernels=SMALL_BANK, views=views, representation=rep
    ).fit(frame.iloc[:120], y[:120])
    assert list(clf.kernel_names_[:2]) == ["ab:gaussian(2)@a", "ab:gaussian(2)@b"]
    assert len(clf.kernel_names_) == 5 and len(clf.factor_maps_) == 2
    scores = clf.decision_function(frame.iloc[120:])
    assert scores.shape == (40,) and np.isfinite(scores).all()
    # the same as the factors of each view's columns built with train and test together
    from mkl.banks.factor_builders import compute_factor_bank

    banks = [  # each view its own draws: seed + the view's index
        compute_factor_bank(
            clf.kernel_specs_[i:j],
            X[:120, cols],
            X[120:, cols],
            {**clf.representation_, "seed": 1 + view},
        )
        for view, (i, j, cols) in enumerate(((0, 2, [0, 1]), (2, 5, [2, 3, 4, 5])))
    ]
    test = [b.factor(m, "test") for b in banks for m in range(b.n_kernels)]
    expected = clf.estimator_.decision_function(mkl.FactorBank.of_test_factors(test))
    np.testing.assert_allclose(scores, expected, atol=1e-10)
    reg = MultipleKernelRegressor(kernels=SMALL_BANK, views=[("one", [0]), ("two", [1, 2])])
    reg.fit(X, X[:, 0] - X[:, 1])
    assert set(reg.view_weights_) == {"one", "two"}


@pytest.mark.parametrize(
    "views, match",
    [
        ("abc", "non-empty list"),
        ([], "non-empty list"),
        ([("a",)], r"\(name, columns\)"),
        ([("a", [0]), ("a", [1])], "two views are named 'a'"),
        ([("a", [9])], r"column 9 is not an index in \[0, 6\)"),
        ([("a", ["age"])], "no column named 'age'"),
        ([("a", [])], "view 'a' has no columns"),
        ([("a", [0], {**SMALL_BANK, "dtype": "float32"})], "view 'a' sets dtype"),
        ([("a", [0], {"families": [{"family": "nope"}]})], "unknown kernel family"),
        ([("a", slice("x", "y"))], "a slice of columns takes integers"),
        ([("a", [True, 1])], "column True is not an index"),
    ],
)
def test_bad_views_name_the_problem(data, views, match):
    X, y = data
    with pytest.raises(mkl.InputError, match=match):
        MultipleKernelClassifier(kernels=SMALL_BANK, views=views).fit(X, y)


# --- sparse X: linear kernels as exact factors ------------------------------------------


@pytest.fixture(scope="module")
def sparse_data():
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = sp.random(240, 40, density=0.1, random_state=0, format="csr")
    score = X @ rng.normal(size=40)
    return X, (score > np.median(score)).astype(int)


def test_sparse_x_fits_linear_kernels_as_exact_factors_and_stays_sparse(sparse_data):
    """The same fit as dense X in exact factors (the same problem, to the solvers' tolerances),
    the factors kept sparse; views of column groups and single-column
    kernels (Xu et al.'s one kernel per term) alike."""
    import scipy.sparse as sp

    X, y = sparse_data
    spec = {
        "families": [{"family": "linear"}],
        "features": ["all", "single"],
        "normalise": "unit_trace",
    }
    for views in (None, [("first", slice(0, 20)), ("second", slice(20, 40))]):
        sparse = MultipleKernelClassifier(
            algorithm="level",
            kernels=spec,
            C=10.0,
            views=views,
            algorithm_params={"tol": 1e-7, "svm_tol": 1e-8},
        )
        sparse.fit(X[:180], y[:180])
        assert sparse.representation_ == {"kind": "exact"}
        dense = clone(sparse).set_params(representation="exact").fit(X[:180].toarray(), y[:180])
        # the same problem, to the solvers' tolerances: the dense factors'
        # descent ends on the active set's Hessian, the sparse one's on the
        # factors, so their iterates differ within svm_tol. The objective agrees
        # to the gap; the weights are not unique (the linear kernel on all
        # features is a sum of the single-feature ones, before normalisation),
        # and decision values near the optimum move as the square root of the
        # gap (about 3e-4 here; 7e-4 apart with the same descent on both)
        assert sparse.objective_ == pytest.approx(dense.objective_, rel=1e-6)
        np.testing.assert_allclose(
            sparse.decision_function(X[180:]),
            dense.decision_function(X[180:].toarray()),
            atol=3e-3,
        )
    maps = sparse.factor_maps_[0]
    assert sp.issparse(maps.transform(X[180:, :20])[0])  # test factors stay sparse
    assert MultipleKernelClassifier(kernels=spec).__sklearn_tags__().input_tags.sparse
    assert not MultipleKernelClassifier().__sklearn_tags__().input_tags.sparse
    # feature_limit counts the stored entries of a sparse column
    limited = {**spec, "feature_limit": 5}
    clf = MultipleKernelClassifier(algorithm="uniform", kernels=limited).fit(X, y)
    counts = np.asarray((X != 0).sum(axis=0)).ravel()
    top = sorted(np.argsort(-counts, kind="stable")[:5])
    assert list(clf.kernel_names_[1:]) == [f"linear@x{j}" for j in top]


def test_sparse_x_with_other_kernels_names_the_problem(sparse_data):
    X, y = sparse_data
    with pytest.raises(mkl.InputError, match="only a bank of linear kernels keeps it sparse"):
        MultipleKernelClassifier().fit(X, y)
    linear = {"families": [{"family": "linear"}]}
    with pytest.raises(mkl.InputError, match="use representation 'auto' or 'exact'"):
        MultipleKernelClassifier(kernels=linear, representation="dense").fit(X, y)
    views = [("a", [0, 1]), ("b", [2, 3], SMALL_BANK)]
    with pytest.raises(mkl.InputError, match="only a bank of linear kernels"):
        MultipleKernelClassifier(kernels=linear, views=views).fit(X, y)


# --- the review's cases --------------------------------------------------------------------


def test_probability_with_views_named_by_column_and_a_refit_keeps_no_stale_attribute(data):
    pd = pytest.importorskip("pandas")
    X, y = data
    frame = pd.DataFrame(X, columns=list("abcdef"))
    views = [("ab", ["a", "b"]), ("rest", ["c", "d", "e", "f"])]
    clf = MultipleKernelClassifier(
        algorithm="uniform", kernels=SMALL_BANK, views=views, probability=True, random_state=0
    ).fit(frame, y)
    np.testing.assert_allclose(clf.predict_proba(frame).sum(axis=1), 1.0)
    clf.set_params(views=None, probability=False).fit(X, y)
    for stale in ("views_", "view_weights_", "probability_sigmoids_"):
        assert not hasattr(clf, stale), stale


def test_fitted_factor_front_ends_pickle_and_predict_the_same(data):
    import pickle

    X, y = data
    gaussians = {"families": [{"family": "gaussian", "widths": [1.0, 4.0]}]}
    clf = MultipleKernelClassifier(
        algorithm="level",
        kernels=gaussians,
        views=[("one", [0, 1, 2]), ("two", [3, 4, 5])],
        representation={"kind": "rff", "dimension": 30},
        random_state=2,
    ).fit(X[:120], y[:120])
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.decision_function(X[120:]), clf.decision_function(X[120:]))
    with pytest.raises(ValueError, match="X has 5 features"):
        clf.predict(X[:, :5])


def test_sparse_x_at_predict_after_a_dense_fit_and_where_factors_are_not_taken(sparse_data):
    X, y = sparse_data
    linear = {"families": [{"family": "linear"}], "normalise": "unit_trace"}
    dense_fit = MultipleKernelClassifier(algorithm="level", kernels=linear).fit(X.toarray(), y)
    assert dense_fit.representation_ == {"kind": "dense"}
    np.testing.assert_allclose(
        dense_fit.decision_function(X), dense_fit.decision_function(X.toarray()), atol=1e-12
    )
    with pytest.raises(mkl.InputError, match="pass dense X"):
        MultipleKernelClassifier(algorithm="memo", kernels=linear).fit(X, y)


def test_rare_terms_of_sparse_text_raise_no_degenerate_kernel_warning(sparse_data):
    """A rank-one term kernel whose term is in one of the first rows is not
    the identity, and one whose term is absent there is not constant."""
    import scipy.sparse as sp

    X, y = sparse_data
    X = sp.csr_matrix(X)
    X = X.tolil()
    X[0, 5] = 1.0  # a term of the first row only, among the checked rows
    X = X.tocsr()
    single = {"families": [{"family": "linear"}], "features": ["single"], "normalise": "unit_trace"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateKernelWarning)
        MultipleKernelClassifier(algorithm="uniform", kernels=single).fit(X, y)


# --- C in the unit of the bank's normalisation (issue 60) ------------------------------


def test_c_unit_is_n_on_unit_trace_kernels_else_1():
    from mkl.kernels.specs import KernelSpec, c_unit

    trace = [KernelSpec("gaussian", 1.0, normalise="unit_trace")] * 2
    assert c_unit(trace, 150) == 150.0
    assert c_unit([*trace, KernelSpec("linear", normalise="unit_diagonal")], 150) == 1.0
    assert c_unit([KernelSpec("linear")], 150) == 1.0 and c_unit([], 150) == 1.0


@pytest.mark.parametrize("front_end", [MultipleKernelClassifier, MultipleKernelRegressor])
def test_the_default_C_follows_the_banks_normalisation(data, front_end):
    """C="auto": 1 on unit-diagonal kernels, n on unit-trace ones, where it is
    the same fit as C = 1 on the unit-diagonal kernels of the same bank (a
    unit-trace Gaussian kernel is its unit-diagonal self divided by n, and the
    SVM on K / n with C is the SVM on K with C / n); a stated C is kept."""
    X, y = data
    y = y if front_end is MultipleKernelClassifier else X[:, 0] + 0.1 * y
    gaussian = {"families": [{"family": "gaussian", "widths": [2.0, 4.0]}]}
    diagonal = front_end(kernels={**gaussian, "normalise": "unit_diagonal"}, algorithm="uniform")
    trace = front_end(kernels={**gaussian, "normalise": "unit_trace"}, algorithm="uniform")
    assert diagonal.get_params()["C"] == "auto"
    diagonal.fit(X, y)
    trace.fit(X, y)
    assert diagonal.C_ == 1.0 and trace.C_ == len(X)
    scores = "decision_function" if front_end is MultipleKernelClassifier else "predict"
    # the same SVM up to the solvers' tolerance (1e-3); C = 1 on unit trace is not it
    same = getattr(diagonal, scores)(X)
    np.testing.assert_allclose(getattr(trace, scores)(X), same, atol=2e-3)
    other = clone(trace).set_params(C=1.0).fit(X, y)
    assert np.abs(getattr(other, scores)(X) - same).max() > 0.1
    assert clone(trace).set_params(C=3.0).fit(X, y).C_ == 3.0
    with pytest.raises(mkl.InputError, match="C must be a number > 0, None .* or 'auto'"):
        clone(trace).set_params(C="big").fit(X, y)

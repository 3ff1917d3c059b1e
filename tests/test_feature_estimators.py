"""MultipleKernelClassifier and MultipleKernelRegressor: the scikit-learn
front end on raw features.

scikit-learn's own estimator checks run on the default configuration and on a
factor-bank one here; the other algorithm families (each a different bank-level
code path: the level method, lp-norm, GMKL, SMKL, EasyMKL, MEMO) in the slow
suite. No check is declared inapplicable.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import mkl
from mkl import MultipleKernelClassifier, MultipleKernelRegressor
from mkl.banks import from_features
from mkl.kernels.dense import compute_bank
from mkl.kernels.specs import expand_bank_spec

SMALL_BANK = {
    "families": [
        {"family": "gaussian", "widths": [0.5, 2.0, 8.0]},
        {"family": "polynomial", "degrees": [1, 2]},
    ],
    "normalise": "unit_diagonal",
}


def _configs_fast():
    return [
        MultipleKernelClassifier(),
        MultipleKernelRegressor(),
        MultipleKernelClassifier(
            algorithm="level",
            kernels=SMALL_BANK,
            representation={"kind": "nystroem", "rank": 20},
            random_state=0,
        ),
        # linear kernels: exact factors, so scikit-learn's sparse-input checks run too
        MultipleKernelClassifier(
            algorithm="level",
            kernels={"families": [{"family": "linear"}], "features": ["all", "single"]},
        ),
    ]


def _configs_slow():
    return [
        MultipleKernelClassifier(algorithm="level", kernels=SMALL_BANK),
        MultipleKernelClassifier(algorithm="lp_analytic", p=2.0, kernels=SMALL_BANK),
        MultipleKernelClassifier(algorithm="gmkl", v=0.5, kernels=SMALL_BANK),
        MultipleKernelClassifier(algorithm="smkl", kernels=SMALL_BANK),
        MultipleKernelClassifier(algorithm="easymkl", lam=0.5, kernels=SMALL_BANK),
        MultipleKernelClassifier(algorithm="memo", theta=1.0, C=1000.0, kernels=SMALL_BANK),
        MultipleKernelRegressor(algorithm="lp_analytic", p=2.0, kernels=SMALL_BANK),
        MultipleKernelRegressor(algorithm="gmkl", v=0.5, epsilon=0.0, kernels=SMALL_BANK),
        MultipleKernelClassifier(
            algorithm="simplemkl",
            kernels={"families": [{"family": "gaussian", "widths": [1.0, 4.0]}]},
            representation={"kind": "rff", "dimension": 50},
            random_state=0,
        ),
    ]


SAMPLE_WEIGHT_CHECKS = (
    "check_all_zero_sample_weights_error",
    "check_class_weight_classifiers",
    "check_classifiers_one_label_sample_weights",
    "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weight_equivalence_on_sparse_data",
    "check_sample_weights_list",
    "check_sample_weights_not_an_array",
    "check_sample_weights_not_overwritten",
    "check_sample_weights_pandas_series",
    "check_sample_weights_shape",
)


def _expected_failures(estimator) -> dict[str, str]:
    """scikit-learn's checks that a configuration is known to fail, and why."""
    if not mkl.make_estimator(estimator.algorithm).takes_sample_weight:
        why = f"{estimator.algorithm} takes no sample_weight (yet): fit refuses it"
        # (its refusal names class weights, which the one-label check accepts)
        failing = set(SAMPLE_WEIGHT_CHECKS) - {"check_classifiers_one_label_sample_weights"}
        return dict.fromkeys(failing, why)
    why = (
        "as scikit-learn marks SVC's: at the default tolerances (a 1e-2 gap, libsvm's "
        "1e-3) weights and repeated rows give near, not equal, decision values; "
        "tests/test_sample_weight.py runs this check at tight tolerances"
    )
    if estimator.representation != "auto":  # factors drawn from the rows (landmarks)
        why = "Nystroem landmarks and random features are drawn from the rows: repeats change them"
    return {
        "check_sample_weight_equivalence_on_dense_data": why,
        "check_sample_weight_equivalence_on_sparse_data": why,
    }


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


@parametrize_with_checks(_configs_fast(), expected_failed_checks=_expected_failures)
def test_scikit_learn_checks(estimator, check):
    check(estimator)


@pytest.mark.slow
@parametrize_with_checks(_configs_slow(), expected_failed_checks=_expected_failures)
def test_scikit_learn_checks_every_family(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=120, n_features=6, n_informative=4, random_state=0, class_sep=1.0
    )
    return StandardScaler().fit_transform(X), y


def test_equals_the_bank_level_estimator_on_the_bank_it_computes(data):
    """The front end is compute_bank + a registry estimator, nothing else."""
    X, y = data
    X_tr, X_te, y_tr = X[:80], X[80:], y[:80]
    clf = MultipleKernelClassifier(algorithm="simplemkl", C=10.0, kernels=SMALL_BANK).fit(
        X_tr, y_tr
    )
    specs = expand_bank_spec(SMALL_BANK, X.shape[1])
    K_tr, K_te, _ = compute_bank(specs, X_tr, X_te)
    est = mkl.make_estimator("simplemkl", C=10.0).fit(K_tr, y_tr)
    np.testing.assert_allclose(clf.decision_function(X_te), est.decision_function(K_te), atol=1e-12)
    np.testing.assert_array_equal(clf.weights_, est.weights_)
    assert list(clf.kernel_names_) == [s.label() for s in specs]
    assert clf.representation_ == {"kind": "dense"}
    assert clf.estimator_.objective_ == est.objective_


def test_predict_in_chunks_of_test_rows_gives_the_same_scores(data, monkeypatch):
    X, y = data
    clf = MultipleKernelClassifier(kernels=SMALL_BANK).fit(X[:80], y[:80])
    whole = clf.decision_function(X[80:])
    monkeypatch.setattr(from_features, "TEST_BLOCK_CHUNK_BYTES", 1)  # one row at a time
    np.testing.assert_allclose(clf.decision_function(X[80:]), whole, rtol=0, atol=1e-13)


def test_multiclass_weights_are_one_row_per_class():
    X, y = load_iris(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    clf = MultipleKernelClassifier(kernels=SMALL_BANK).fit(X, y)
    assert clf.weights_.shape == (3, 5)
    assert clf.decision_function(X).shape == (150, 3)
    assert clf.score(X, y) > 0.9


def test_pipeline_cross_val_score_grid_search_clone_and_pickle(data):
    X, y = data
    pipe = make_pipeline(
        StandardScaler(), MultipleKernelClassifier(algorithm="lp_analytic", kernels=SMALL_BANK)
    )
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.shape == (3,) and scores.mean() > 0.65  # chance: 0.5
    search = GridSearchCV(
        pipe,
        {"multiplekernelclassifier__C": [0.1, 10.0], "multiplekernelclassifier__p": [1.5, 4.0]},
        cv=3,
    ).fit(X, y)
    best = search.best_estimator_[-1]
    assert best.C in (0.1, 10.0) and best.p in (1.5, 4.0)
    assert best.estimator_.p == best.p and best.estimator_.C == best.C
    cloned = clone(best)
    assert cloned.get_params() == best.get_params() and not hasattr(cloned, "estimator_")
    restored = pickle.loads(pickle.dumps(search.best_estimator_))
    np.testing.assert_array_equal(
        restored.decision_function(X), search.best_estimator_.decision_function(X)
    )


def test_factor_representation_predicts_the_same_twice_and_learns(data):
    X, y = data
    clf = MultipleKernelClassifier(
        algorithm="level", kernels=SMALL_BANK, representation="nystroem", random_state=3
    ).fit(X[:80], y[:80])
    assert clf.representation_ == {"kind": "nystroem", "rank": 80, "seed": 3}  # rank <= n
    assert clf.estimator_.factor_ranks_ is not None
    first = clf.decision_function(X[80:])
    np.testing.assert_array_equal(clf.decision_function(X[80:]), first)
    assert clf.score(X[80:], y[80:]) > 0.75


def test_auto_takes_factors_above_the_dense_limit_when_the_algorithm_can(data, monkeypatch):
    X, y = data
    monkeypatch.setattr(from_features, "DENSE_BANK_LIMIT_BYTES", 0)
    level = MultipleKernelClassifier(algorithm="level", kernels=SMALL_BANK).fit(X, y)
    assert level.representation_["kind"] == "nystroem"
    memo = MultipleKernelClassifier(algorithm="memo", C=1000.0, kernels=SMALL_BANK).fit(X, y)
    assert memo.representation_ == {"kind": "dense"}  # MEMO needs the matrices
    # the spec's own representation is the one "auto" takes
    spec = {**SMALL_BANK, "representation": {"kind": "nystroem", "rank": 10}}
    clf = MultipleKernelClassifier(algorithm="uniform", kernels=spec, random_state=0).fit(X, y)
    assert clf.representation_ == {"kind": "nystroem", "rank": 10, "seed": 0}


def test_single_feature_kernels_from_the_spec(data):
    X, y = data
    spec = {
        "families": [{"family": "linear"}],
        "features": ["all", "single"],
        "feature_limit": 3,
    }
    clf = MultipleKernelClassifier(algorithm="uniform", kernels=spec).fit(X, y)
    assert len(clf.kernel_names_) == 4 and clf.kernel_names_[0] == "linear@all"


@pytest.mark.parametrize(
    "params, match",
    [
        ({"algorithm": "nope"}, "unknown algorithm 'nope'"),
        ({"kernels": {"families": [{"family": "laplace"}]}}, "unknown kernel family 'laplace'"),
        ({"kernels": {"families": [{"family": "gaussian"}]}}, "gaussian kernel needs its widths"),
        (
            {"kernels": {"families": [{"family": "gaussian", "width": 1}]}},
            r"unknown key\(s\) \['width'\] in the gaussian entry",
        ),
        (
            {"kernels": {"families": [{"family": "gaussian", "widths": "wide"}]}},
            "bad widths 'wide'",
        ),
        ({"kernels": {**SMALL_BANK, "normalize": "none"}}, r"unknown key\(s\) \['normalize'\]"),
        ({"kernels": 1}, "bank specification"),
        ({"kernels": [1, 2]}, "family entry is a mapping .* or a callable k.X, Y., got 1"),
        # an integer bank truncated a Gaussian kernel to {0, 1}; 'banana' was numpy's TypeError
        ({"kernels": {**SMALL_BANK, "dtype": "int64"}}, "integer bank truncates"),
        ({"kernels": {**SMALL_BANK, "dtype": "float16"}}, r"dtype must be one of .*'float16'"),
        ({"kernels": {**SMALL_BANK, "dtype": "banana"}}, r"dtype must be one of .*'banana'"),
        ({"kernels": {"similarity": {"source": "dataset"}}}, "similarity bank"),
        ({"p": 2.0}, r"algorithm 'simplemkl' has no parameter\(s\) \['p'\]"),
        ({"algorithm_params": {"C": 3.0}}, "estimator's own parameters"),
        ({"algorithm_params": {"tolerance": 3.0}}, "no parameter"),
        ({"algorithm": "memo", "representation": "nystroem"}, "needs the kernel matrices"),
        ({"representation": "sparse"}, "unknown kernel representation 'sparse'"),
        ({"representation": {"kind": "nystroem", "rank": 0}}, "positive integer rank"),
        ({"C": -1.0}, r"'C' parameter of \w+ must be"),
        (
            {"kernels": {**SMALL_BANK, "representation": "dense"}, "representation": "rff"},
            "give it in one place",
        ),
    ],
)
def test_bad_parameters_name_the_problem(data, params, match):
    X, y = data
    with pytest.raises(ValueError, match=match):
        MultipleKernelClassifier(**params).fit(X, y)


def test_bad_data_names_the_problem(data):
    """Every refusal is the library's InputError (a ValueError, as scikit-learn's
    own), scikit-learn's checks included."""
    from mkl.exceptions import InputError

    X, y = data
    clf = MultipleKernelClassifier(kernels=SMALL_BANK)
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(InputError, match="NaN"):
        clf.fit(bad, y)
    with pytest.raises(InputError, match="could not convert|string"):
        clf.fit(np.array([["a", "b"]] * len(y)), y)
    with pytest.raises(InputError, match="one class"):
        clf.fit(X, np.zeros(len(y)))
    with pytest.raises(InputError, match="Unknown label type: continuous"):
        clf.fit(X, np.linspace(0, 1, len(y)))
    with pytest.raises(InputError, match="inconsistent numbers of samples"):
        clf.fit(X, y[:-1])
    # overflow named, not "K[0] contains NaN or inf"
    with pytest.raises(InputError, match="X has values up to .*e\\+200: squared distances"):
        clf.fit(X * 1e200, y)
    with pytest.raises(InputError, match=r"kernel polynomial\(2\)@all overflows"):
        clf.fit(X * 1e100, y)
    clf.fit(X, y)
    with pytest.raises(
        InputError, match="X has 5 features, but MultipleKernelClassifier is expecting 6"
    ):
        clf.predict(X[:, :5])


def test_regressor_equals_the_bank_level_regressor_and_tunes_in_a_pipeline():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    y = (y - y.mean()) / y.std()
    reg = MultipleKernelRegressor(kernels=SMALL_BANK, C=1.0, epsilon=0.2).fit(X[:300], y[:300])
    specs = expand_bank_spec(SMALL_BANK, X.shape[1])
    K_tr, K_te, _ = compute_bank(specs, X[:300], X[300:])
    est = mkl.make_estimator("simplemkl", task="regression", C=1.0, epsilon=0.2).fit(K_tr, y[:300])
    np.testing.assert_allclose(reg.predict(X[300:]), est.predict(K_te), atol=1e-12)
    assert reg.score(X[300:], y[300:]) > 0.3  # R^2 of SVR on diabetes is about 0.4-0.5
    search = GridSearchCV(
        make_pipeline(StandardScaler(), MultipleKernelRegressor(kernels=SMALL_BANK)),
        {"multiplekernelregressor__epsilon": [0.1, 0.5]},
        cv=3,
    ).fit(X[:200], y[:200])
    assert search.best_estimator_[-1].estimator_.estimator_.task.epsilon in (0.1, 0.5)
    with pytest.raises(ValueError, match="does not do regression"):
        MultipleKernelRegressor(algorithm="easymkl").fit(X[:50], y[:50])
    # factored banks too (the SVR's coordinate descent with a regularised intercept)
    factored = MultipleKernelRegressor(representation="nystroem", random_state=0).fit(
        X[:50], y[:50]
    )
    assert factored.estimator_.estimator_.factor_ranks_ is not None
    assert np.isfinite(factored.predict(X[300:])).all()

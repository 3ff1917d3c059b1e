"""Kernels on X beyond the built-in families: scikit-learn's pairwise kernels by
name with a grid of their parameters, and callables k(X, Y) (on numbers,
booleans or strings), in the bank specification of the front ends and of the
experiment files; and MultipleKernelOutlierDetector, novelty detection on raw X.
"""

from __future__ import annotations

import inspect
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, laplacian_kernel, pairwise_kernels
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import mkl
from mkl import (
    KernelBank,
    MultipleKernelClassifier,
    MultipleKernelOutlierDetector,
    MultipleKernelRegressor,
)
from mkl.banks.factor_builders import nystroem_bank
from mkl.estimators.task_estimators import MKLNoveltyDetector
from mkl.kernels.dense import compute_bank, compute_cross_block
from mkl.kernels.functions import center, kernel_function
from mkl.kernels.specs import PAIRWISE_KERNELS, KernelSpec, expand_bank_spec

from .test_feature_estimators import _expected_failures

LAPLACIAN_GRID = {
    "families": [{"family": "laplacian", "gamma": [0.1, 1.0]}, {"family": "cosine"}],
    "normalise": "unit_diagonal",
}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(
        n_samples=120, n_features=6, n_informative=4, random_state=0, class_sep=1.0
    )
    return StandardScaler().fit_transform(X), y


# ------------------------------------------------------------------ by name
def test_the_named_kernels_are_scikit_learns_pairwise_kernels_with_their_parameters():
    """Every kernel of PAIRWISE_KERNEL_FUNCTIONS is reachable: by its name with
    the keyword parameters of its signature, or (linear, polynomial) as the
    built-in family of that name, which is the same function."""
    assert set(PAIRWISE_KERNELS) | {"linear", "polynomial"} == set(PAIRWISE_KERNEL_FUNCTIONS)
    for name, keywords in PAIRWISE_KERNELS.items():
        signature = inspect.signature(PAIRWISE_KERNEL_FUNCTIONS[name]).parameters
        assert keywords == tuple(p for p in signature if p not in ("X", "Y", "dense_output"))
    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(9, 3)), rng.normal(size=(5, 3))
    linear = kernel_function(KernelSpec("linear"), X, Z)
    assert np.allclose(linear, pairwise_kernels(X, Z, metric="linear"), rtol=1e-12, atol=0)
    for degree in (1, 2, 3):
        ours = kernel_function(KernelSpec("polynomial", float(degree)), X, Z)
        theirs = pairwise_kernels(X, Z, metric="polynomial", degree=degree, gamma=1, coef0=1)
        assert np.allclose(ours, theirs, rtol=1e-12, atol=0)


GRIDS = {
    "additive_chi2": {},
    "chi2": {"gamma": [0.5, 2.0]},
    "cosine": {},
    "laplacian": {"gamma": [0.1, 1.0]},
    "poly": {"degree": [2], "gamma": [0.5], "coef0": [0.0, 1.0]},
    "rbf": {"gamma": 0.3},
    "sigmoid": {"gamma": [0.1], "coef0": [-1.0, 0.5]},
}


@settings(max_examples=25, deadline=None)
@given(
    X=st.integers(2, 10).flatmap(
        lambda n: arrays(np.float64, (n, 3), elements=st.floats(0, 3, width=64))
    ),
    family=st.sampled_from(sorted(GRIDS)),
    single=st.booleans(),
)
def test_a_named_kernels_gram_is_scikit_learns_before_normalisation(X, family, single):
    """The training and test blocks of each kernel of a grid equal
    pairwise_kernels(metric=name, **its parameters) to 1e-12 (non-negative
    features, which chi2 and additive_chi2 need), on all features or one."""
    spec = {
        "families": [{"family": family, **GRIDS[family]}],
        "features": ["single"] if single else ["all"],
    }
    specs = expand_bank_spec(spec, X.shape[1])
    T = X[::-1] + 0.5
    K, K_test, factors = compute_bank(specs, X, T)
    assert np.all(factors == 1.0)
    for m, s in enumerate(specs):
        cols = slice(None) if s.feature == -1 else [s.feature]
        params = dict(s.keywords)
        want = pairwise_kernels(X[:, cols], metric=family, **params)
        want_test = pairwise_kernels(T[:, cols], X[:, cols], metric=family, **params)
        scale = max(1.0, np.abs(want).max(), np.abs(want_test).max())
        assert np.abs(K[m] - want).max() <= 1e-12 * scale
        assert np.abs(K_test[m] - want_test).max() <= 1e-12 * scale


def test_a_grid_gives_one_kernel_per_point_named_by_its_parameters():
    spec = {
        "families": [
            {"family": "laplacian", "gamma": [0.1, 1]},
            {"family": "sigmoid", "gamma": [0.01, 0.1], "coef0": [0, 1]},
            {"family": "poly", "degree": {"from": 2, "to": 3}},
            {"family": "chi2"},
        ],
        "features": ["all", "single"],
    }
    labels = [s.label() for s in expand_bank_spec(spec, 2)]
    assert labels[:9] == [
        "laplacian(gamma=0.1)@all",
        "laplacian(gamma=1)@all",
        "sigmoid(gamma=0.01,coef0=0)@all",
        "sigmoid(gamma=0.01,coef0=1)@all",
        "sigmoid(gamma=0.1,coef0=0)@all",
        "sigmoid(gamma=0.1,coef0=1)@all",
        "poly(degree=2)@all",
        "poly(degree=3)@all",
        "chi2@all",
    ]
    assert len(labels) == 9 * 3 and labels[9:11] == [
        "laplacian(gamma=0.1)@x0",
        "laplacian(gamma=1)@x0",
    ]


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"family": "laplacian", "width": [1]}, r"unknown key\(s\) \['width'\] in the laplacian"),
        ({"family": "laplacian", "gamma": [0.0]}, "laplacian kernel: gamma must be > 0, got 0"),
        ({"family": "poly", "degree": [2.5]}, "degree must be an integer >= 1, got 2.5"),
        ({"family": "rbf", "gamma": "big"}, "bad gamma 'big' for a rbf kernel"),
        ({"family": "chi2", "gamma": [float("inf")]}, "gamma must be a finite number"),
        ({"family": "laplace"}, r"unknown kernel family 'laplace'.*'laplacian'.*callable"),
    ],
)
def test_bad_named_kernels_are_refused_by_name(entry, message):
    with pytest.raises(ValueError, match=message):
        expand_bank_spec({"families": [entry]}, 3)


def test_a_named_kernels_refusal_of_the_data_names_the_kernel(data):
    X, y = data  # standardised: negative values, which chi2 cannot take
    with pytest.raises(ValueError, match=r"kernel chi2\(gamma=0.5\)@all: X contains negative"):
        MultipleKernelClassifier(kernels={"families": [{"family": "chi2", "gamma": 0.5}]}).fit(X, y)


def test_sigmoid_kernels_are_not_psd_and_the_input_checks_say_so(data):
    """The sigmoid kernel is indefinite here: the methods that need PSD kernels
    refuse it (the bank-level input checks), those for indefinite similarities
    take it."""
    X, y = data
    sigmoid = {"families": [{"family": "sigmoid", "gamma": 0.5, "coef0": 0.0}]}
    K, _, _ = compute_bank(expand_bank_spec(sigmoid, X.shape[1]), X)
    assert np.linalg.eigvalsh(K[0])[0] < -1.0
    with pytest.raises(ValueError, match="not positive semidefinite"):
        MultipleKernelClassifier(kernels=sigmoid, algorithm="simplemkl").fit(X, y)
    MultipleKernelClassifier(kernels=sigmoid, algorithm="eskl").fit(X, y)


@pytest.mark.parametrize("normalise", ["unit_trace", "unit_diagonal", "unit_variance", "center"])
def test_named_kernels_test_rows_are_normalised_with_the_training_blocks_statistics(
    data, normalise
):
    """Test and cross blocks of a named kernel are the raw kernel normalised
    with the training block's statistics: its divisor, the rows' own
    self-similarities for the cosine, the training mean for the centring."""
    X, _ = data
    X_train, X_test = X[:80], X[80:]
    specs = expand_bank_spec({"families": [LAPLACIAN_GRID["families"][0]]}, X.shape[1])
    specs = [
        KernelSpec(s.family, feature=s.feature, normalise=normalise, keywords=s.keywords)
        for s in specs
    ]
    means = np.zeros((len(specs), len(X_train)))
    K, K_test, factors = compute_bank(specs, X_train, X_test, column_means=means)
    for m, spec in enumerate(specs):
        raw = pairwise_kernels(X, X_train, metric="laplacian", **dict(spec.keywords))
        raw_train, raw_test = raw[:80], raw[80:]
        if normalise == "unit_diagonal":  # laplacian: k(x, x) = 1
            want_train, want_test = raw_train, raw_test
        elif normalise == "center":
            want_train, want_test = center(raw_train, raw_test)
        else:
            divisor = np.trace(raw_train)
            if normalise == "unit_variance":
                divisor = divisor / 80 - raw_train.sum() / 80**2
            want_train, want_test = raw_train / divisor, raw_test / divisor
            assert np.isclose(factors[m], divisor, rtol=1e-12)
        assert np.allclose(K[m], want_train, rtol=1e-10, atol=1e-12)
        assert np.allclose(K_test[m], want_test, rtol=1e-10, atol=1e-12)
    cross = compute_cross_block(specs, X_train, X_test, X_train, factors, means)
    assert np.allclose(cross, K_test, rtol=1e-10, atol=1e-12)


def test_the_front_end_on_a_named_grid_is_the_bank_level_estimator_on_its_bank(data):
    X, y = data
    clf = MultipleKernelClassifier(kernels=LAPLACIAN_GRID, algorithm="level", C=10.0)
    clf.fit(X[:80], y[:80])
    assert list(clf.kernel_names_) == [
        "laplacian(gamma=0.1)@all",
        "laplacian(gamma=1)@all",
        "cosine@all",
    ]
    specs = expand_bank_spec(LAPLACIAN_GRID, X.shape[1])
    K, K_test, _ = compute_bank(specs, X[:80], X[80:])
    bank = mkl.make_estimator("level", C=10.0).fit(K, y[:80])
    assert np.allclose(clf.weights_, bank.weights_, atol=1e-8)
    assert np.allclose(clf.decision_function(X[80:]), bank.decision_function(K_test), atol=1e-8)
    # Nystroem factors of named kernels: with every training row a landmark,
    # Z_m Z_m' is the kernel itself
    bank = nystroem_bank(specs, X[:80], rank=80)
    for m in range(len(specs)):
        Z = bank.factor(m)
        assert np.allclose(Z @ Z.T, K[m], atol=1e-8)


def test_a_bank_file_keeps_the_named_kernels_parameters(tmp_path, data):
    X, y = data
    spec = {"families": [{"family": "sigmoid", "gamma": [0.1, 1 / 3], "coef0": 0.25}]}
    specs = expand_bank_spec(spec, X.shape[1])
    K, _, factors = compute_bank(specs, X[:20])
    path = tmp_path / "bank.h5"
    KernelBank(train=K, specs=specs, y_train=y[:20], factors=factors).save(path)
    assert KernelBank.load(path).specs == specs  # 1/3 exactly (repr round-trips)
    tanimoto_spec = [KernelSpec("callable", function=tanimoto)]
    with pytest.raises(ValueError, match="kernel tanimoto@all is a callable: a bank file"):
        KernelBank(train=K[:1], specs=tanimoto_spec, y_train=y[:20], factors=factors[:1]).save(
            tmp_path / "callable.h5"
        )


# ------------------------------------------------------------------ callables
def tanimoto(A, B):
    """The Tanimoto (Jaccard) kernel of binary rows, |a & b| / |a | b| (a PSD
    kernel on sets), reading X as booleans."""
    assert A.dtype == bool and B.dtype == bool, "the callable gets the rows as given"
    A, B = A.astype(np.float64), B.astype(np.float64)
    both = A @ B.T
    either = A.sum(1)[:, None] + B.sum(1)[None, :] - both
    return both / np.maximum(either, 1.0)


def shared_words(A, B):
    """The number of words two texts (one column of strings) share: a linear
    kernel on sets of words."""
    words_a = [set(text.split()) for text in A[:, 0]]
    words_b = [set(text.split()) for text in B[:, 0]]
    return np.array([[len(a & b) for b in words_b] for a in words_a], dtype=np.float64)


def laplacian_half(A, B):
    return laplacian_kernel(A, B, gamma=0.5)


def test_a_callable_is_the_same_kernel_as_its_named_twin(data):
    """A callable kernel, alone or in a list with families, gives the bank the
    named kernel gives: the same weights and decision values."""
    X, y = data
    named = {"family": "laplacian", "gamma": 0.5}
    for kernels, twin in [
        (
            {"families": [laplacian_half], "normalise": "unit_trace"},
            {"families": [named], "normalise": "unit_trace"},
        ),
        (
            [laplacian_half, {"family": "rbf", "gamma": 0.1}],
            {"families": [named, {"family": "rbf", "gamma": 0.1}]},
        ),
        (laplacian_half, {"families": [named]}),
    ]:
        ours = MultipleKernelClassifier(kernels=kernels, algorithm="level").fit(X[:80], y[:80])
        theirs = MultipleKernelClassifier(kernels=twin, algorithm="level").fit(X[:80], y[:80])
        assert ours.kernel_names_[0] == "laplacian_half@all"
        assert np.allclose(ours.weights_, theirs.weights_, atol=1e-10)
        assert np.allclose(
            ours.decision_function(X[80:]), theirs.decision_function(X[80:]), atol=1e-10
        )


def test_a_callable_reads_boolean_rows_in_a_pipeline_with_grid_search_and_clone():
    rng = np.random.default_rng(0)
    X = rng.random((150, 30)) < 0.3
    y = (X[:, :5].sum(1) > X[:, 5:10].sum(1)).astype(int)
    clf = MultipleKernelClassifier(
        kernels={"families": [tanimoto, {"family": "linear"}], "normalise": "unit_diagonal"},
        algorithm="level",
    )
    assert clone(clf).get_params()["kernels"]["families"][0] is tanimoto
    search = GridSearchCV(clf, {"C": [0.1, 10.0]}, cv=3).fit(X[:100], y[:100])
    best = search.best_estimator_
    assert list(best.kernel_names_) == ["tanimoto@all", "linear@all"]
    assert search.score(X[100:], y[100:]) > 0.7
    restored = pickle.loads(pickle.dumps(best))  # a module-level function pickles
    assert np.array_equal(restored.decision_function(X[100:]), best.decision_function(X[100:]))


def test_a_callable_reads_strings_in_a_pipeline():
    """Texts as one column of strings reach the callable as they are; the
    pipeline's cross-validation slices them by rows."""
    nouns = ["cat", "dog", "fish", "bird"]
    rng = np.random.default_rng(1)
    texts, labels = [], []
    for _ in range(60):
        label = int(rng.integers(2))
        pool = nouns[:2] if label else nouns[2:]
        texts.append(" ".join(rng.choice(pool + ["the", "a", "runs"], size=4)))
        labels.append(label)
    X, y = np.array(texts, dtype=object)[:, None], np.array(labels)
    pipeline = make_pipeline(
        FunctionTransformer(np.char.lower, validate=False),  # strings in, strings out
        MultipleKernelClassifier(
            kernels={
                "families": [{"family": shared_words, "name": "words"}],
                "normalise": "unit_diagonal",
            },
            algorithm="uniform",
        ),
    )
    assert cross_val_score(pipeline, X.astype(str), y, cv=3).mean() > 0.9
    clf = pipeline.fit(X.astype(str), y)[-1]
    assert list(clf.kernel_names_) == ["words@all"]
    with pytest.raises(ValueError, match=r"kernel linear@all computes on numbers"):
        MultipleKernelClassifier(kernels=[shared_words, {"family": "linear"}]).fit(X, y)


def _wrong_shape(A, B):
    return np.ones((len(A), len(B) + 1))


def _nan(A, B):
    K = A @ B.T
    K[0, 0] = np.nan
    return K


def _inf(A, B):
    return np.full((len(A), len(B)), np.inf)


def _asymmetric(A, B):
    return A @ B.T + A[:, :1] @ np.ones((1, len(B)))


def _text(A, B):
    return np.full((len(A), len(B)), "x", dtype=object)


@pytest.mark.parametrize(
    "function, message",
    [
        (_wrong_shape, r"kernel _wrong_shape@all returned shape \(80, 81\) for 80 and 80 rows"),
        (_nan, "kernel _nan@all returned NaN or inf"),
        (_inf, "kernel _inf@all returned NaN or inf"),
        (_asymmetric, "kernel _asymmetric@all is not symmetric on the training rows"),
        (_text, "kernel _text@all returned ndarray, not an array of numbers"),
    ],
)
def test_bad_callables_are_refused_by_name(data, function, message):
    X, y = data
    with pytest.raises(ValueError, match=message):
        MultipleKernelClassifier(kernels=[{"family": "rbf"}, function]).fit(X[:80], y[:80])


def test_a_callable_that_goes_wrong_on_test_rows_is_refused_by_name(data):
    X, y = data

    def moody(A, B):  # right on the training rows only
        return A @ B.T if len(A) == len(B) else np.ones((len(A), 2))

    clf = MultipleKernelClassifier(kernels=moody, algorithm="uniform").fit(X[:80], y[:80])
    with pytest.raises(ValueError, match=r"kernel moody@all returned shape \(40, 2\)"):
        clf.predict(X[80:])


def test_callables_are_dense_and_a_lambda_does_not_pickle(data):
    X, y = data
    with pytest.raises(
        ValueError, match="kernel laplacian_half@all is a callable: it is computed as dense"
    ):
        MultipleKernelClassifier(kernels=laplacian_half, representation="nystroem").fit(X, y)
    clf = MultipleKernelClassifier(kernels=lambda A, B: A @ B.T, algorithm="uniform").fit(X, y)
    assert clf.kernel_names_[0] == "<lambda>@all"
    with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
        pickle.dumps(clf)


# ------------------------------------------------------------------ scikit-learn's checks
class Laplacian:
    """A callable kernel whose repr has no address, so that the checks' test
    ids are the same in every process (pytest-xdist's workers compare them)."""

    def __init__(self, gamma):
        self.gamma = gamma

    def __call__(self, A, B):
        return laplacian_kernel(A, B, gamma=self.gamma)

    def __repr__(self):
        return f"Laplacian(gamma={self.gamma})"


@parametrize_with_checks(
    [
        MultipleKernelClassifier(kernels=[Laplacian(0.5), {"family": "rbf"}], algorithm="level"),
        MultipleKernelRegressor(kernels=Laplacian(0.5)),
        MultipleKernelOutlierDetector(),
        MultipleKernelOutlierDetector(algorithm="level", kernels=LAPLACIAN_GRID, nu=0.2),
        MultipleKernelOutlierDetector(kernels=Laplacian(0.5)),
    ],
    expected_failed_checks=_expected_failures,
)
def test_scikit_learns_checks_with_callables_and_the_outlier_detector(estimator, check):
    check(estimator)


# ------------------------------------------------------------------ outlier detector
@pytest.fixture(scope="module")
def normal_and_far():
    rng = np.random.default_rng(0)
    return rng.normal(size=(200, 2)), rng.normal(size=(20, 2)) + 4.0


def test_the_outlier_detector_is_the_bank_level_detector_on_its_bank(normal_and_far):
    normal, far = normal_and_far
    new = np.vstack([normal[:20], far])
    kernels = {"families": [{"family": "gaussian", "widths": [0.5, 1.0, 2.0]}]}
    detector = MultipleKernelOutlierDetector(kernels=kernels, algorithm="level", nu=0.1)
    flags = detector.fit(normal).predict(new)
    K, K_new, _ = compute_bank(expand_bank_spec(kernels, 2), normal, new)
    bank = MKLNoveltyDetector(algorithm="level", nu=0.1).fit(K)
    assert np.allclose(detector.weights_, bank.weights_, atol=1e-10)
    assert np.allclose(detector.score_samples(new), bank.score_samples(K_new), atol=1e-10)
    assert np.allclose(
        detector.decision_function(new), detector.score_samples(new) - detector.offset_
    )
    assert np.array_equal(flags, bank.predict(K_new))
    assert (flags[20:] == -1).all() and (flags[:20] == -1).sum() <= 2
    # nu bounds the fraction of training rows outside the support from above
    assert (detector.predict(normal) == -1).mean() <= 0.1 + 1e-9 + 2 / len(normal)


def test_the_outlier_detector_on_a_named_grid_views_and_a_pipeline(normal_and_far):
    normal, far = normal_and_far
    pipeline = make_pipeline(
        StandardScaler(),
        MultipleKernelOutlierDetector(
            kernels={"families": [{"family": "laplacian", "gamma": [0.3, 1.0, 3.0]}]},
            views=[("first", [0]), ("second", [1])],
            algorithm="level",
            nu=0.1,
        ),
    )
    flags = pipeline.fit(normal).predict(np.vstack([normal[:20], far]))
    assert (flags[20:] == -1).sum() >= 18
    detector = pipeline[-1]
    assert detector.kernel_names_[0] == "first:laplacian(gamma=0.3)@all"
    assert np.isclose(sum(detector.view_weights_.values()), 1.0)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"algorithm": "easymkl"}, "algorithm 'easymkl' does not do novelty"),
        ({"nu": 1.5}, r"nu must be a number in \(0, 1\]"),
        ({"kernels": {"families": [{"family": "poly", "degree": 0}]}}, "integer >= 1"),
    ],
)
def test_the_outlier_detectors_bad_parameters_are_named(normal_and_far, params, message):
    with pytest.raises(ValueError, match=message):
        MultipleKernelOutlierDetector(**params).fit(normal_and_far[0])

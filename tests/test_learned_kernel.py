"""The learned kernel reused on raw features: ``combined_kernel(X, Y=None)`` of
a fitted front end, ``algorithm="fixed"`` with given weights, and the
``center`` normalisation through the front end's test blocks."""

import numpy as np
import pytest
from sklearn.svm import SVC

import mkl
from mkl.kernels.dense import compute_bank
from mkl.kernels.specs import expand_bank_spec

SPEC = {
    "families": [
        {"family": "gaussian", "widths": [1.0, 3.0]},
        {"family": "polynomial", "degrees": [2], "normalise": "center"},
        {"family": "linear", "normalise": "unit_trace"},
    ],
    "normalise": "unit_diagonal",
}


@pytest.fixture
def data(rng):
    X = rng.normal(size=(90, 3))
    y = (X[:, 0] + 0.3 * X[:, 1] ** 2 > 0.2).astype(int)
    return X[:60], y[:60], X[60:], y[60:]


def test_combined_kernel_is_the_weighted_bank_the_svm_was_fitted_on(data):
    X, y, X_test, _ = data
    clf = mkl.MultipleKernelClassifier(kernels=SPEC, algorithm="alignf", C=10.0).fit(X, y)
    specs = expand_bank_spec(SPEC, 3)
    K, K_test, _ = compute_bank(specs, X, X_test)
    np.testing.assert_allclose(clf.combined_kernel(X_test), np.tensordot(clf.weights_, K_test, 1))
    np.testing.assert_allclose(clf.combined_kernel(X), np.tensordot(clf.weights_, K, 1), atol=1e-12)
    # against any rows Y: the test block's, with Y the training rows
    np.testing.assert_allclose(
        clf.combined_kernel(X_test, X), clf.combined_kernel(X_test), rtol=1e-12, atol=1e-12
    )
    gram = clf.combined_kernel(X_test, X_test)
    assert gram.shape == (30, 30) and np.allclose(gram, gram.T)
    assert np.linalg.eigvalsh(gram).min() > -1e-10
    # reused in another kernel method: the same classifier
    svc = SVC(C=10.0, kernel="precomputed").fit(clf.combined_kernel(X), y)
    np.testing.assert_allclose(
        svc.decision_function(clf.combined_kernel(X_test)), clf.decision_function(X_test), atol=1e-3
    )


def test_combined_kernel_per_class_and_on_factors(data, rng):
    X, y, X_test, _ = data
    y3 = rng.integers(0, 3, size=len(y))
    clf = mkl.MultipleKernelClassifier(kernels=SPEC, algorithm="align").fit(X, y3)
    assert clf.combined_kernel(X_test).shape == (3, 30, 60)
    spec = {"families": [{"family": "gaussian", "widths": [1.0, 3.0]}], "normalise": "center"}
    nystroem = {"kind": "nystroem", "rank": 60, "seed": 0}  # every training row a landmark
    factored = mkl.MultipleKernelClassifier(
        kernels=spec, algorithm="uniform", representation=nystroem
    ).fit(X, y)
    dense = mkl.MultipleKernelClassifier(
        kernels=spec, algorithm="uniform", representation="dense"
    ).fit(X, y)
    np.testing.assert_allclose(
        factored.combined_kernel(X_test, X), dense.combined_kernel(X_test), atol=1e-5
    )
    with pytest.raises(ValueError, match="pass Y"):
        factored.combined_kernel(X_test)
    with pytest.raises(ValueError, match="X has 2 features"):
        dense.combined_kernel(X_test[:, :2])


def test_fixed_reuses_learned_weights_on_the_front_end(data):
    X, y, X_test, y_test = data
    learned = mkl.MultipleKernelClassifier(kernels=SPEC, algorithm="simplemkl", C=10.0).fit(X, y)
    fixed = mkl.MultipleKernelClassifier(
        kernels=SPEC,
        algorithm="fixed",
        C=10.0,
        algorithm_params={"weights": learned.weights_, "tol": 1e-6},
    ).fit(X, y)
    np.testing.assert_array_equal(fixed.weights_, learned.weights_)
    # the same SVM, learned's solved to simplemkl's svm_tol (1e-3)
    np.testing.assert_allclose(
        fixed.decision_function(X_test), learned.decision_function(X_test), rtol=2e-3, atol=1e-2
    )
    with pytest.raises(ValueError, match="algorithm 'fixed' needs its weights"):
        mkl.MultipleKernelClassifier(kernels=SPEC, algorithm="fixed").fit(X, y)
    with pytest.raises(ValueError, match=r"weights must have shape \(4,\)"):
        mkl.MultipleKernelClassifier(
            kernels=SPEC, algorithm="fixed", algorithm_params={"weights": [1.0, 1.0]}
        ).fit(X, y)


def test_a_centred_bank_predicts_with_the_training_means(data):
    """predict computes the test block alone: a centred kernel's from the
    column means kept at fit (centring_means_), the same as the block
    computed with the training block."""
    X, y, X_test, _ = data
    clf = mkl.MultipleKernelClassifier(kernels=SPEC, algorithm="uniform", C=10.0).fit(X, y)
    assert clf.centring_means_.shape == (4, 60) and np.isfinite(clf.centring_means_[2]).all()
    K, K_test, _ = compute_bank(expand_bank_spec(SPEC, 3), X, X_test)
    inner = mkl.make_estimator("uniform", C=10.0).fit(K, y)
    np.testing.assert_allclose(clf.decision_function(X_test), inner.decision_function(K_test))

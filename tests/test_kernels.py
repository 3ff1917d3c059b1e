import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mkl.banks.algebra import combine, largest_eigenvalue, shift_weight, spectral_ratio
from mkl.kernels.dense import compute_bank, compute_test_block
from mkl.kernels.functions import kernel_function
from mkl.kernels.specs import ALL_FEATURES, KernelSpec, count_kernels, expand_bank_spec

GMKL_BANK = {
    "families": [
        {"family": "gaussian", "widths": {"base": 2, "from": -3, "to": 6}},
        {"family": "polynomial", "degrees": [1, 2, 3]},
    ],
    "features": ["all", "single"],
    "normalise": "unit_trace",
}

features = st.integers(2, 12).flatmap(
    lambda n: st.integers(1, 4).flatmap(
        lambda d: arrays(np.float64, (n, d), elements=st.floats(-3, 3, width=64))
    )
)
specs = st.sampled_from(
    [
        KernelSpec("gaussian", 0.7),
        KernelSpec("gaussian", 3.0, 0),
        KernelSpec("polynomial", 2.0),
        KernelSpec("polynomial", 3.0, 0),
        KernelSpec("linear"),
        KernelSpec("linear", feature=0),
        KernelSpec("homogeneous_polynomial", 2.0),
        KernelSpec("homogeneous_polynomial", 3.0, normalise="unit_diagonal"),
        KernelSpec("identity"),
        # scikit-learn's pairwise kernels by name (the PSD ones)
        KernelSpec("laplacian", keywords=(("gamma", 0.5),)),
        KernelSpec("rbf", feature=0),
        KernelSpec("cosine"),
        KernelSpec("poly", keywords=(("degree", 2.0), ("coef0", 1.0))),
    ]
)
normalisations = st.sampled_from(["none", "unit_trace", "unit_diagonal", "unit_variance", "center"])


def test_bank_count_matches_the_papers():
    assert count_kernels(GMKL_BANK, 20) == 273  # GMKL toy data
    assert count_kernels(GMKL_BANK, 33) == 442  # ionosphere
    assert count_kernels(GMKL_BANK, 10) == 143  # breast
    for d in (1, 6, 60):
        assert count_kernels(GMKL_BANK, d) == 13 * (d + 1)


def test_bank_order_follows_gmkl_figure_1():
    specs_ = expand_bank_spec(GMKL_BANK, 2)
    assert [s.family for s in specs_[:13]] == ["gaussian"] * 10 + ["polynomial"] * 3
    assert all(s.feature == ALL_FEATURES for s in specs_[:13])
    assert [s.feature for s in specs_[13:33]] == [0] * 10 + [1] * 10
    assert specs_[0].param == 2.0**-3 and specs_[9].param == 2.0**6


def test_memo_bank_has_21_kernels():
    memo = {
        "families": [
            {"family": "homogeneous_polynomial", "degrees": {"from": 1, "to": 20}},
            {"family": "identity"},
        ],
        "normalise": "unit_diagonal",
    }
    assert count_kernels(memo, 7) == 21


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"families": []}, "no 'families'"),
        ({"families": [{"family": "sigmoidal"}]}, "unknown kernel family"),
        ({"families": [{"family": "linear"}], "normalise": "l2"}, "unknown normalisation"),
        ({"families": [{"family": "gaussian", "widths": [0.0]}]}, "positive"),
        ({"families": [{"family": "linear", "features": ["each"]}]}, "'all' or 'single'"),
        # a string is not a list of widths: "12" once read as [1, 2]
        ({"families": [{"family": "gaussian", "widths": "12"}]}, "bad widths '12'"),
        ({"families": [{"family": "gaussian", "widths": ["1", 2]}]}, "bad widths"),
        ({"families": [{"family": "polynomial", "degrees": [2.5]}]}, "integer >= 1, got 2.5"),
    ],
)
def test_bad_bank_specs_are_named(bad, message):
    with pytest.raises(ValueError, match=message):
        expand_bank_spec(bad, 3)


@settings(max_examples=60, deadline=None)
@given(X=features, spec=specs, norm=normalisations)
# a kernel whose variance is subnormal (entries ~1e-319): refused, not divided by
@example(
    X=np.array([[0.0], [1.25933079e-80]]),
    spec=KernelSpec("homogeneous_polynomial", 2.0),
    norm="unit_variance",
)
def test_training_block_symmetric_psd_and_normalised(X, spec, norm):
    spec = KernelSpec(spec.family, spec.param, spec.feature, norm)
    try:
        K, _, factors = compute_bank([spec], X)
    except ValueError as exc:  # a zero factor (e.g. constant data) is refused, clearly
        assert "cannot normalise" in str(exc)
        return
    K = K[0]
    assert np.allclose(K, K.T, atol=1e-12 * max(1.0, np.abs(K).max()))
    eig = np.linalg.eigvalsh(K)
    assert eig.min() >= -1e-8 * max(1.0, np.abs(eig).max())
    n = len(X)
    if norm == "unit_trace":
        assert math.isclose(np.trace(K), 1.0, rel_tol=1e-9)
    elif norm == "unit_variance":
        assert math.isclose(np.trace(K) / n - K.sum() / n**2, 1.0, rel_tol=1e-6)
    elif norm == "unit_diagonal":
        diag = np.diag(K)
        raw = np.diag(kernel_function(spec, X, X, same=True))
        assert np.allclose(diag[raw > 0], 1.0)
    elif norm == "center":
        scale = max(1.0, np.abs(kernel_function(spec, X, X, same=True)).max())
        assert np.abs(K.sum(axis=1)).max() <= 1e-10 * n * scale


@settings(max_examples=60, deadline=None)
@given(X=features, spec=specs, norm=normalisations, split=st.floats(0.3, 0.8))
def test_test_block_is_the_kernel_on_test_x_train(X, spec, norm, split):
    spec = KernelSpec(spec.family, spec.param, spec.feature, norm)
    n_tr = max(1, min(len(X) - 1, int(split * len(X))))
    Xtr, Xte = X[:n_tr], X[n_tr:]
    try:
        Ktr, Kte, factors = compute_bank([spec], Xtr, Xte)
    except ValueError:
        return
    # Evaluate the kernel on all points at once, as if the test points were new
    # columns, and normalise with the training statistics: the test block must agree.
    full = kernel_function(spec, np.vstack([Xtr, Xte]), Xtr)
    if spec.family == "identity":  # 1 only where a training point meets itself
        full = np.vstack([np.eye(n_tr), np.zeros((len(Xte), n_tr))])
    if norm == "unit_diagonal":
        from mkl.kernels.functions import self_similarity

        d_all = self_similarity(spec, np.vstack([Xtr, Xte]))
        d_tr = d_all[:n_tr].copy()
        d_all, d_tr = np.sqrt(d_all), np.sqrt(d_tr)
        d_all[d_all == 0] = 1
        d_tr[d_tr == 0] = 1
        # Cauchy-Schwarz bounds a cosine by 1; subnormal self-similarities
        # (x ~ 1e-161) lose the precision to show it, and the library clips
        full = np.clip(full / d_all[:, None] / d_tr[None, :], -1.0, 1.0)
    elif norm == "center":  # with the training points' mean, test rows included
        means = full[:n_tr].mean(axis=0)
        full = full - full.mean(axis=1, keepdims=True) - means + means.mean()
    else:
        full = full / factors[0]
    atol = 1e-12 * (max(1.0, np.abs(full).max()) if norm == "center" else 1.0)
    assert np.allclose(Kte[0], full[n_tr:], rtol=1e-10, atol=atol)
    assert np.allclose(Ktr[0], full[:n_tr], rtol=1e-10, atol=atol)


# ------------------------------------------------------------------ centring
psd_banks = st.tuples(st.integers(2, 10), st.integers(1, 4), st.integers(1, 5)).flatmap(
    lambda s: arrays(np.float64, (s[2], s[0] + 3, s[1]), elements=st.floats(-3, 3, width=64))
)


@settings(max_examples=60, deadline=None)
@given(Z=psd_banks)
def test_centring_keeps_symmetry_and_psd_and_sums_rows_to_zero(Z):
    """K_m = Z_m Z_m' (PSD, any rank): H K H is symmetric, PSD and its rows sum
    to zero, kernel by kernel of a bank and for one kernel alone."""
    from mkl.kernels.functions import center

    n = Z.shape[1] - 3
    K = np.einsum("mid,mjd->mij", Z[:, :n], Z[:, :n])
    Kc = center(K)
    scale = max(1.0, np.abs(K).max())
    assert Kc.shape == K.shape and not np.shares_memory(Kc, K)
    for m in range(len(K)):
        assert np.array_equal(Kc[m], Kc[m].T) or np.allclose(Kc[m], Kc[m].T, atol=1e-13 * scale)
        assert np.linalg.eigvalsh(Kc[m]).min() >= -1e-10 * n * scale
        assert np.abs(Kc[m].sum(axis=1)).max() <= 1e-10 * n * scale
        np.testing.assert_allclose(center(K[m]), Kc[m], rtol=0, atol=1e-13 * scale)


@settings(max_examples=60, deadline=None)
@given(Z=psd_banks)
def test_centred_blocks_are_the_inner_products_of_features_less_the_training_mean(Z):
    """With explicit features Z (K = Z Z'), the centred training and test
    blocks are the inner products of Z - mean(Z_train): the test rows move by
    the training points' mean, not their own."""
    from mkl.kernels.functions import center

    n = Z.shape[1] - 3
    train, test = Z[:, :n], Z[:, n:]
    mean = train.mean(axis=1, keepdims=True)
    Kc, Tc = center(np.einsum("mid,mjd->mij", train, train), np.einsum("mid,mjd->mij", test, train))
    scale = max(1.0, float(np.abs(Z).max()) ** 2 * Z.shape[2])
    want_train = np.einsum("mid,mjd->mij", train - mean, train - mean)
    want_test = np.einsum("mid,mjd->mij", test - mean, train - mean)
    np.testing.assert_allclose(Kc, want_train, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(Tc, want_test, rtol=0, atol=1e-12 * scale)


def test_centring_refuses_bad_blocks_by_name():
    from mkl.kernels import center

    K = np.eye(4)
    with pytest.raises(ValueError, match=r"one kernel \(n, n\) or a bank \(M, n, n\)"):
        center(np.ones((3, 4)))
    with pytest.raises(ValueError, match="K_train contains NaN"):
        center(np.where(K > 0, np.nan, 0.0))
    with pytest.raises(ValueError, match=r"K_test must have shape \(n_test, 4\)"):
        center(K, np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"K_test must have shape \(2, n_test, 4\)"):
        center(np.stack([K, K]), np.ones((2, 4)))
    with pytest.raises(ValueError, match="K_test contains NaN"):
        center(K, np.full((2, 4), np.inf))


def test_a_centred_test_block_needs_the_training_means(rng):
    X = rng.normal(size=(30, 3))
    specs = [KernelSpec("gaussian", 1.0, normalise="center"), KernelSpec("linear")]
    _, K_test, factors = compute_bank(specs, X[:20], X[20:])
    means = np.full((2, 20), np.nan)
    compute_bank(specs, X[:20], column_means=means)
    assert np.isnan(means[1]).all()  # only the centred kernel's row is written
    alone = compute_test_block(specs, X[:20], X[20:], factors, column_means=means)
    np.testing.assert_array_equal(alone, K_test)
    with pytest.raises(ValueError, match="needs the training block's column means"):
        compute_test_block(specs, X[:20], X[20:], factors)


def test_kernel_values_follow_the_documented_conventions():
    x, z = np.array([[1.0, 2.0]]), np.array([[0.0, 1.0]])
    assert math.isclose(kernel_function(KernelSpec("gaussian", 2.0), x, z)[0, 0], math.exp(-2 / 8))
    assert kernel_function(KernelSpec("polynomial", 2.0), x, z)[0, 0] == 9.0
    assert kernel_function(KernelSpec("homogeneous_polynomial", 3.0), x, z)[0, 0] == 8.0
    assert kernel_function(KernelSpec("linear", feature=1), x, z)[0, 0] == 2.0
    K, _, _ = compute_bank(
        [KernelSpec("homogeneous_polynomial", 2.0, normalise="unit_diagonal")],
        np.array([[1.0, 0.0], [1.0, 1.0]]),
    )
    assert math.isclose(K[0, 0, 1], 1.0 / 2.0)  # (x'z)^2 / sqrt(1 * 4)


@settings(max_examples=40, deadline=None)
@given(X=features)
def test_spectral_ratio_bounds(X):
    K = kernel_function(KernelSpec("gaussian", 1.0), X, X)
    r = spectral_ratio(K)
    assert 1.0 - 1e-9 <= r <= math.sqrt(len(X)) + 1e-9
    assert math.isclose(spectral_ratio(np.eye(len(X))), math.sqrt(len(X)))
    assert math.isclose(spectral_ratio(np.ones((len(X), len(X)))), 1.0)


def test_combine_matches_the_definition_and_skips_zero_weights(rng):
    K = rng.normal(size=(6, 20, 20))
    w = np.array([0.5, 0.0, 2.0, 0.0, 0.0, 1.0])
    expected = sum(wm * Km for wm, Km in zip(w, K, strict=True))
    out = combine(K, w)
    assert out.dtype == np.float64 and out.flags.c_contiguous
    assert np.allclose(out, expected)
    assert np.allclose(combine(K.astype(np.float32), w), expected, rtol=1e-5, atol=1e-5)
    assert np.array_equal(combine(K, np.zeros(6)), np.zeros((20, 20)))
    with pytest.raises(ValueError, match="weights must have shape"):
        combine(K, np.ones(5))
    sparse = np.array([0.0, 0.0, 3.0, 0.0, 0.0, 0.0])
    K[1, 0, 0] = np.nan  # with few kernels active, zero-weight kernels are not read
    assert np.allclose(combine(K, sparse), 3.0 * K[2])


def test_combine_reads_only_the_kernels_of_nonzero_weight(rng):
    K = rng.normal(size=(7, 9, 9))
    w = np.array([0.0, 1.5, 0.0, -2.0, 0.5, 0.25, 0.0])  # five active: the sparse path
    K[[0, 2, 6]] = np.nan
    expected = 1.5 * K[1] - 2.0 * K[3] + 0.5 * K[4] + 0.25 * K[5]
    assert np.allclose(combine(K, w), expected)
    out = np.full((9, 9), 7.0)
    assert combine(K, w, out=out) is out and np.allclose(out, expected)


def test_shift_weight_moves_weight_between_two_kernels(rng):
    K = rng.normal(size=(4, 6, 6))
    w = np.array([0.2, 0.5, 0.0, 0.3])
    combo = combine(K, w)
    shift_weight(combo, K, source=1, target=2, amount=0.4)
    assert np.allclose(combo, combine(K, np.array([0.2, 0.1, 0.4, 0.3])))


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(2, 80),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["gaussian", "indefinite", "negative entries"]),
)
def test_largest_eigenvalue_is_the_largest_over_the_bank(M, n, seed, kind):
    """The bounds only skip kernels: the result is max_m lambda_max(K_m) of a
    full eigendecomposition, whatever the signs of the entries and eigenvalues."""
    rng = np.random.default_rng(seed)
    if kind == "gaussian":
        X = rng.normal(size=(n, 3))
        d2 = ((X[:, None] - X[None]) ** 2).sum(-1)
        K = np.stack([np.exp(-d2 / w) for w in rng.uniform(0.1, 10, size=M)])
    else:
        A = rng.normal(size=(M, n, n))
        K = A + A.transpose(0, 2, 1)
        if kind == "negative entries":  # PSD, entries of both signs
            K = A @ A.transpose(0, 2, 1)
    K = np.ascontiguousarray(K)
    exact = max(float(np.linalg.eigvalsh(Km)[-1]) for Km in K)
    assert math.isclose(largest_eigenvalue(K), exact, rel_tol=1e-8, abs_tol=1e-10)


def test_bad_features_are_refused():
    with pytest.raises(ValueError, match="X_train must be 2-D"):
        compute_bank([KernelSpec("linear")], np.ones(5))
    with pytest.raises(ValueError, match="X_train contains NaN"):
        compute_bank([KernelSpec("linear")], np.array([[1.0], [np.nan]]))
    with pytest.raises(ValueError, match="X_test has 2 features but X_train has 1"):
        compute_bank([KernelSpec("linear")], np.ones((3, 1)), np.ones((2, 2)))


@pytest.mark.parametrize(
    "args, message",
    [
        (("gaussian", float("nan")), "width must be a number > 0, got nan"),
        (("gaussian", 0.0), "width must be a number > 0"),
        (("gaussian", None), "width must be a number > 0, got None"),
        (("polynomial", 2.5), "degree must be an integer >= 1, got 2.5"),
        (("polynomial", -1), "degree must be an integer >= 1, got -1"),
        (("homogeneous_polynomial", 0), "degree must be an integer >= 1"),
        (("sigmoidal", 1.0), "unknown kernel family 'sigmoidal'"),
        (("sigmoid", 1.0), "its parameters are keywords, not param=1.0"),
        (("linear", None, -2), "feature must be a column index >= 0"),
        (("linear", None, 1.5), "feature must be a column index >= 0"),
        (("linear", None, -1, "l2"), "unknown normalisation 'l2'"),
        (("similarity", -1), "index must be >= 0"),
    ],
)
def test_a_spec_whose_kernel_is_undefined_is_refused_when_made(args, message):
    """Width NaN or degree 2.5 once surfaced as "K[0] contains NaN or inf", degree
    -1 as "not PSD": the spec names its own problem."""
    with pytest.raises(ValueError, match=message):
        KernelSpec(*args)


def test_a_single_feature_kernel_outside_the_data_is_named(rng):
    X = rng.normal(size=(6, 3))
    with pytest.raises(ValueError, match=r"feature 99, but X has 3 feature\(s\)"):
        compute_bank([KernelSpec("gaussian", 1.0, feature=99)], X)
    from mkl.banks.factor_builders import random_fourier_bank

    with pytest.raises(ValueError, match="feature 3, but X has 3"):
        random_fourier_bank([KernelSpec("gaussian", 1.0, feature=3)], X, n_components=4)


def test_feature_limit_keeps_the_most_frequent_features():
    from mkl.kernels.specs import expand_bank_spec, most_frequent_features

    X = np.array([[1, 0, 2, 0], [0, 0, 3, 1], [1, 0, 0, 1], [1, 5, 0, 0]], dtype=float)
    # non-zero counts 3, 1, 2, 2: the top two are feature 0, then 2 (tie with 3: lower index)
    assert most_frequent_features(X, 2) == [0, 2]
    assert most_frequent_features(X, 10) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="feature_limit"):
        most_frequent_features(X, 0)
    spec = {"families": [{"family": "linear"}], "features": ["all", "single"]}
    specs = expand_bank_spec(spec, 4, single_features=[0, 2])
    assert [s.feature for s in specs] == [-1, 0, 2]


def test_test_block_alone_equals_the_one_computed_with_the_training_block(rng):
    """Prediction on new points computes the test block from the training rows
    and the fitted divisors only (what MultipleKernelClassifier.predict does)."""
    X = rng.normal(size=(30, 4))
    spec = {
        "families": [
            {"family": "gaussian", "widths": [0.5, 2.0], "normalise": "unit_diagonal"},
            {"family": "polynomial", "degrees": [2], "normalise": "unit_trace"},
            {"family": "linear", "normalise": "unit_variance"},
        ],
        "features": ["all", "single"],
    }
    specs = expand_bank_spec(spec, 4)
    _, K_test, factors = compute_bank(specs, X[:20], X[20:])
    alone = compute_test_block(specs, X[:20], X[20:], factors)
    np.testing.assert_array_equal(alone, K_test)
    with pytest.raises(ValueError, match="factors must have shape"):
        compute_test_block(specs, X[:20], X[20:], factors[:-1])
    with pytest.raises(ValueError, match="X_test has 3 features but X_train has 4"):
        compute_test_block(specs, X[:20], X[20:, :3], factors)

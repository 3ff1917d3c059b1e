"""EasyMKL and MEMO (mkl/algorithms/margin.py) against independent CVXPY solutions."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.preprocessing import MinMaxScaler

import mkl
from mkl.banks.algebra import spectral_ratio
from mkl.kernels.dense import compute_bank
from mkl.kernels.specs import KernelSpec
from mkl.solvers.komd import komd_margin
from mkl.solvers.libsvm import solve_svm_dual

from .conftest import random_problem
from .reference import komd, max_margin_mkl, svm_dual_value


def hpk_bank(X, degrees=range(1, 21)):
    """The MEMO paper's bank: normalised homogeneous polynomial kernels + identity."""
    specs = [KernelSpec("homogeneous_polynomial", d, -1, "unit_diagonal") for d in degrees]
    specs.append(KernelSpec("identity", None, -1, "unit_diagonal"))
    K, _, _ = compute_bank(specs, X)
    return K


@pytest.fixture(scope="module")
def breast_cancer_bank():
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(0).choice(len(y), 120, replace=False)
    X = MinMaxScaler().fit_transform(X[idx])
    return hpk_bank(X), np.where(y[idx] == 1, 1, -1)


# --------------------------------------------------------------------- margin QP
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("lam", [0.0, 0.1, 0.9])
def test_komd_margin_matches_cvxpy(seed, lam):
    _, y, K = random_problem(np.random.default_rng(seed), n=30, M=3)
    K_komd = (1 - lam) * K.sum(0) + lam * np.eye(len(y))
    ref_value, ref_gamma = komd(K_komd, y)
    got = komd_margin(K_komd, y, tol=1e-8)
    assert got.svm is not None  # separable: the hard-margin SVM path
    assert got.value == pytest.approx(ref_value, rel=1e-5)
    assert np.allclose(got.gamma, ref_gamma, atol=1e-5)
    assert got.gap < 1e-5
    assert np.all(got.gamma >= 0)
    assert got.gamma[y > 0].sum() == pytest.approx(1) and got.gamma[y < 0].sum() == pytest.approx(1)


def test_intersecting_hulls_give_zero_margin_quickly_and_no_svm(rng):
    """Overlapping classes: rho = 0 and no hard-margin SVM. libsvm's iterations
    are capped (a C-SVM with a huge box would run for ~1e5 n iterations)."""
    n = 300
    X = rng.normal(size=(n, 2))
    y = np.where(rng.random(n) > 0.5, 1, -1)  # labels unrelated to X: hulls intersect
    K = X @ X.T
    got = komd_margin(K, y)
    assert got.svm is None
    assert got.value == pytest.approx(0.0, abs=1e-6 * np.mean(np.diag(K)))
    assert np.all(got.gamma >= 0)
    assert got.gamma[y > 0].sum() == pytest.approx(1) and got.gamma[y < 0].sum() == pytest.approx(1)


def test_margin_solve_is_the_hard_margin_svm(rng):
    """Separable classes: libsvm's nu-SVC classifier is the hard-margin SVM."""
    _, y, K = random_problem(rng, n=40, M=2)
    K = K.sum(0) + 0.1 * np.eye(40)
    got = komd_margin(K, y, tol=1e-9)
    ref_value, _ = svm_dual_value(K, y, C=None)
    assert got.svm.objective == pytest.approx(ref_value, rel=1e-5)
    hard = solve_svm_dual(K, y, C=None, tol=1e-9)
    assert np.allclose(got.svm.dual_coef, hard.dual_coef, atol=1e-4 * np.abs(hard.dual_coef).max())
    assert got.svm.bias == pytest.approx(hard.bias, abs=1e-4)


# --------------------------------------------------------------------- EasyMKL
@pytest.mark.parametrize("lam", [0.0, 0.1, 0.5, 1.0])
def test_easymkl_matches_its_definition_solved_by_cvxpy(lam):
    _, y, K = random_problem(np.random.default_rng(3), n=30, M=4)
    K = K / np.trace(K, axis1=1, axis2=2)[:, None, None]  # trace-normalised
    est = mkl.make_estimator("easymkl", lam=lam, tol=1e-8).fit(K, y)
    ref_value, gamma = komd((1 - lam) * K.sum(0) + lam * np.eye(len(y)), y)
    d = np.array([(y * gamma) @ Km @ (y * gamma) for Km in K])
    assert est.objective_ == pytest.approx(ref_value, rel=1e-5)
    assert np.allclose(est.weights_, d / d.sum(), atol=1e-5)
    assert est.gap_ < 1e-5


@pytest.mark.parametrize("lam", [0.0, 0.1, 0.9])
def test_easymkl_on_kernels_as_given_matches_mklpys_definition_by_cvxpy(lam):
    """trace_normalise=False: KOMD on (1 - lam) sum_r K_r + lam I, d_r on K_r
    (the authors' MKLpy); kernels of unequal traces, so no scale hides."""
    _, y, K = random_problem(np.random.default_rng(4), n=30, M=4)
    K = K * np.array([0.5, 1.0, 2.0, 4.0])[:, None, None]
    est = mkl.make_estimator("easymkl", lam=lam, tol=1e-8, trace_normalise=False).fit(K, y)
    ref_value, gamma = komd((1 - lam) * K.sum(0) + lam * np.eye(len(y)), y)
    d = np.array([(y * gamma) @ Km @ (y * gamma) for Km in K])
    assert est.objective_ == pytest.approx(ref_value, rel=1e-5)
    assert np.allclose(est.weights_, d / d.sum(), atol=1e-5)
    assert est.gap_ < 1e-5


def test_easymkl_as_given_is_trace_normalised_at_a_rescaled_lambda(breast_cancer_bank):
    """On unit-diagonal kernels of n points, (1 - a) sum K_r + a I is a positive
    multiple of (1 - b) sum K_r / n + b I with b = a / (a + n (1 - a)): the same
    KOMD solution, the same weights and predictions."""
    K, y = breast_cancer_bank
    n, a = len(y), 0.9
    b = a / (a + n * (1 - a))
    given = mkl.make_estimator("easymkl", lam=a, tol=1e-9, trace_normalise=False).fit(K, y)
    normalised = mkl.make_estimator("easymkl", lam=b, tol=1e-9).fit(K, y)
    assert np.allclose(given.weights_, normalised.weights_, atol=1e-6)
    assert np.array_equal(given.predict(K), normalised.predict(K))
    # at the same lam the two differ: the normalised kernel part is n times smaller
    same_lam = mkl.make_estimator("easymkl", lam=a, tol=1e-9).fit(K, y)
    assert not np.allclose(given.weights_, same_lam.weights_, atol=1e-3)


def test_easymkl_is_invariant_to_the_scale_of_each_kernel(breast_cancer_bank):
    K, y = breast_cancer_bank
    base = mkl.make_estimator("easymkl", lam=0.1).fit(K, y)
    c = np.linspace(0.5, 3.0, K.shape[0])
    scaled = mkl.make_estimator("easymkl", lam=0.1).fit(K * c[:, None, None], y)
    expected = base.weights_ / c
    assert np.allclose(scaled.weights_, expected / expected.sum(), rtol=1e-5, atol=1e-9)
    assert np.array_equal(scaled.predict(K * c[:, None, None]), base.predict(K))


def test_easymkl_lambda_one_weights_follow_the_centroid_distance(breast_cancer_bank):
    """lam = 1: gamma is uniform within each class, so d_r is the squared distance
    between the class centroids in kernel r's feature space."""
    K, y = breast_cancer_bank
    est = mkl.make_estimator("easymkl", lam=1.0).fit(K, y)
    v = np.where(y > 0, 1 / (y > 0).sum(), -1 / (y < 0).sum())
    d = np.einsum("i,mij,j->m", v, K, v)
    assert np.allclose(est.weights_, d / d.sum(), atol=1e-6)


# --------------------------------------------------------------------- MEMO
def test_memo_theta_zero_reaches_the_maximum_margin(rng):
    """theta = 0 is the convex max-margin MKL problem max_mu rho(K_mu) =
    min_gamma max_r gamma'Y K_r Y gamma; the Frank-Wolfe gap certifies it."""
    _, y, K = random_problem(rng, n=30, M=4)
    K = np.concatenate([K, np.eye(30)[None]])
    est = mkl.make_estimator("memo", theta=0.0, tol=1e-7, max_iter=3000).fit(K, y)
    ref_value, ref_mu = max_margin_mkl(K, y)
    assert est.converged_
    assert est.objective_ <= ref_value * (1 + 1e-7)  # weak duality
    assert est.objective_ == pytest.approx(ref_value, rel=1e-5)
    # the Frank-Wolfe gap is first order: it bounds the suboptimality loosely
    assert (ref_value - est.objective_) / ref_value <= est.gap_ <= 1e-3
    assert np.allclose(est.weights_, ref_mu, atol=1e-2)


def test_memo_returned_weights_admit_no_ascent_direction(breast_cancer_bank):
    """At the returned weights, with gamma re-solved and held constant, no point of
    the simplex improves Psi by more than the reported gap, and that gap is small."""
    K, y = breast_cancer_bank
    for theta in (0.0, 0.01):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # max_iter may be reached before tol=1e-8
            est = mkl.make_estimator("memo", theta=theta, tol=1e-8, max_iter=300).fit(K, y)
        mu = est.weights_
        K_mu = np.tensordot(mu, K, axes=1)
        v = komd_margin(K_mu, y, 1e-8).coef
        g = np.einsum("i,mij,j->m", v, K, v)
        if theta:
            flat = K.reshape(len(K), -1)
            Q = flat @ flat.T
            g = g + theta * Q @ mu / np.mean(np.diag(Q))
        assert (g.max() - mu @ g) / est.objective_ == pytest.approx(est.gap_, rel=1e-2, abs=1e-6)
        assert est.gap_ <= 1e-2


def test_memo_history_ascends_and_counts_the_work(breast_cancer_bank):
    K, y = breast_cancer_bank
    est = mkl.make_estimator("memo", theta=0.0, tol=1e-8, max_iter=40)
    with pytest.warns(Warning, match="max_iter=40"):
        est.fit(K, y)
    psi = [h["objective"] for h in est.history_]
    assert all(b >= a for a, b in zip(psi[:-1], psi[1:], strict=True))
    assert est.objective_ == psi[-1]
    gaps = [h["gap"] for h in est.history_]
    assert gaps[-1] < gaps[0] / 10
    last = est.history_[-1]
    # the cost model: one pass for the scores d_r per iteration, one pass and one
    # margin solve per line-search trial (the start reuses the average kernel)
    assert last["passes"] == len(psi) + last["svm_solves"] - 1
    assert last["svm_solves"] <= 2 * len(psi)
    assert not est.converged_


def test_memo_larger_theta_moves_weight_to_low_degrees(breast_cancer_bank):
    """The paper's Figure 1 (left): the mean degree under mu decreases with theta."""
    K, y = breast_cancer_bank
    degree = np.append(np.arange(1, 21), 21.0)  # identity: the most expressive
    mean_degree = []
    for theta in (0.0, 1e-3, 1e-2, 1e-1, 1.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = mkl.make_estimator("memo", theta=theta, max_iter=200).fit(K, y)
        mean_degree.append(est.weights_ @ degree)
        assert np.all(est.weights_ >= 0) and est.weights_.sum() == pytest.approx(1)
    assert all(b <= a + 1e-9 for a, b in zip(mean_degree[:-1], mean_degree[1:], strict=True))
    assert mean_degree[0] > 10 and mean_degree[-1] < 2


def test_memo_large_theta_reaches_the_certified_maximum_at_a_vertex(rng):
    """Psi(mu) = rho(K_mu) + theta/2 mu'Q mu is concave plus convex (Q is a Gram
    matrix), so its maximum can sit at a vertex even where that kernel's margin is
    zero. On the simplex mu'Q mu <= sum_r mu_r Q_rr (Jensen), hence
    max Psi <= min_gamma max_r (gamma'Y K_r Y gamma + theta/2 Q_rr), a convex
    problem (CVXPY), equal to Psi at a vertex when that vertex is the global
    maximum. Here the classes overlap in the linear kernel (rho = 0), which has
    the largest Frobenius norm: at theta = 1 its vertex attains the bound, and
    MEMO returns it."""
    n = 60
    X = rng.uniform(-1, 1, size=(n, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1, -1)
    K = hpk_bank(X, degrees=(1, 2, 3, 5))
    flat = K.reshape(len(K), -1)
    Q = flat @ flat.T
    Q /= np.mean(np.diag(Q))  # MEMO's scaling
    assert np.argmax(np.diag(Q)) == 0 and komd(K[0], y)[0] < 1e-8  # hulls overlap
    theta = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the margin solves at rho = 0 hit their cap
        est = mkl.make_estimator("memo", theta=theta).fit(K, y)
    bound, _ = max_margin_mkl(K, y, offsets=0.5 * theta * np.diag(Q))
    assert komd(K[0], y)[0] + 0.5 * theta * Q[0, 0] == pytest.approx(bound, rel=1e-6)
    mu = est.weights_  # softmax weights: the vertex up to their threshold
    psi = komd(np.tensordot(mu, K, axes=1), y)[0] + 0.5 * theta * mu @ Q @ mu
    assert np.allclose(mu, np.eye(len(K))[0], atol=1e-3)
    assert bound * (1 - 1e-4) <= psi <= bound * (1 + 1e-7)


def test_memo_and_easymkl_one_vs_rest_and_spectral_ratio():
    X, y = load_iris(return_X_y=True)
    specs = [KernelSpec("homogeneous_polynomial", d, -1, "unit_diagonal") for d in range(1, 6)]
    specs.append(KernelSpec("identity", None, -1, "unit_diagonal"))
    train = np.arange(150) % 3 != 0
    scaler = MinMaxScaler().fit(X[train])
    K, K_test, _ = compute_bank(specs, scaler.transform(X[train]), scaler.transform(X[~train]))
    y, y_test = y[train], y[~train]
    for name, params in (("memo", {"theta": 0.0}), ("easymkl", {"lam": 0.9})):
        est = mkl.make_estimator(name, **params).fit(K, y)
        assert est.weights_.shape == (3, 6)
        assert np.allclose(est.weights_.sum(1), 1) and np.all(est.weights_ >= 0)
        assert (est.predict(K_test) == y_test).mean() > 0.6  # chance: 1/3
        for c in range(3):  # row c is the binary problem "class c against the rest"
            binary = mkl.make_estimator(name, **params).fit(K, np.where(y == c, 1, -1))
            assert np.allclose(est.weights_[c], binary.weights_)
            assert np.allclose(
                est.decision_function(K_test)[:, c], binary.decision_function(K_test)
            )
        for w, sr in zip(est.weights_, est.spectral_ratio_, strict=True):
            assert sr == pytest.approx(spectral_ratio(np.tensordot(w, K, axes=1)), rel=1e-5)
            assert 1 <= sr <= np.sqrt(len(y))


def test_hard_margin_final_svm_is_the_margin_solution(breast_cancer_bank):
    """MEMO's hard-margin classifier reuses its last margin solve: the decision
    function equals a fresh hard-margin SVM on the learned kernel."""
    K, y = breast_cancer_bank
    est = mkl.make_estimator("memo", theta=0.01).fit(K, y)
    fresh = mkl.make_estimator("linear", C=None, kernel_index=0, tol=1e-6)
    K_mu = np.tensordot(est.weights_, K, axes=1)[None]
    fresh.fit(K_mu, y)
    assert np.allclose(est.decision_function(K), fresh.decision_function(K_mu), atol=1e-3)


@pytest.mark.parametrize(
    "name, params, message",
    [
        (
            "easymkl",
            {"lam": 1.5},
            r"'lam' parameter of EasyMKL must be a float in the range \[0\.0, 1\.0\]",
        ),
        ("easymkl", {"lam": -0.1}, r"'lam' parameter of EasyMKL must be a float"),
        (
            "memo",
            {"theta": -1.0},
            r"'theta' parameter of MEMO must be a float in the range \[0\.0, inf\)",
        ),
        ("memo", {"theta": float("nan")}, r"'theta' parameter of MEMO must be"),
    ],
)
def test_bad_hyperparameters_are_named(problem, name, params, message):
    _, y, K = problem
    with pytest.raises(ValueError, match=message):
        mkl.make_estimator(name, **params).fit(K, y)


def test_easymkl_refuses_a_zero_trace_kernel(problem):
    _, y, K = problem
    K = np.concatenate([K, np.zeros_like(K[:1])])
    with pytest.raises(ValueError, match=r"K\[4\] has trace 0"):
        mkl.make_estimator("easymkl").fit(K, y)


def test_margin_falls_back_to_projected_gradient_where_libsvm_fails(monkeypatch):
    """libsvm's nu-SVC divides by its margin variable; where that rounds to zero
    its coefficients are inf and scikit-learn raises. The QP is then solved by
    the accelerated projected gradient on K v, to the same value (CVXPY)."""
    import mkl.solvers.komd as komd_module

    class FailingNuSVC(komd_module.NuSVC):
        def fit(self, X, y):
            raise ValueError("The dual coefficients or intercepts are not finite.")

    _, y, K = random_problem(np.random.default_rng(4), n=30, M=3)
    K = K.sum(0)
    ref_value, _ = komd(K, y)
    monkeypatch.setattr(komd_module, "NuSVC", FailingNuSVC)
    got = komd_margin(K, y, tol=1e-8)
    assert got.svm is None  # no classifier from this path: base_learner trains one
    assert got.value == pytest.approx(ref_value, rel=1e-5)
    assert got.gamma[y > 0].sum() == pytest.approx(1) and got.gamma[y < 0].sum() == pytest.approx(1)

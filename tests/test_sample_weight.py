"""Sample and class weights: per-sample C, the box of point i being C s_i as in
scikit-learn's SVC. Every weighted formulation against CVXPY (the same
references as the unweighted ones, with a vector C), on dense banks and on
factors; weights against repeated rows; the front end's class_weight; and
every bad weight refused by name."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.class_weight import compute_sample_weight

import mkl
from mkl import MultipleKernelClassifier

from . import reference
from .conftest import random_problem
from .test_factor_banks import factored_problem, intercept_sq

PRECISE = {"tol": 1e-9, "svm_tol": 1e-9, "max_iter": 3000}
# SimpleMKL's and SILP's gaps stall near 1e-8 (tests/test_convex_mkl.py)
EXTRA = {"silp": {"tol": 2e-8, "max_iter": 300}, "simplemkl": {"tol": 1e-8, "max_iter": 300}}


def weights_for(n, seed):
    """Weights with zeros, fractions and repeats, as class and sample weights give."""
    return np.random.default_rng(seed).choice([0.0, 0.5, 1.0, 2.0, 3.0], size=n)


def fit(name, K, y, sample_weight, **params):
    accepted = mkl.make_estimator(name).get_params()
    precise = {k: v for k, v in PRECISE.items() if k in accepted}
    precise.update(EXTRA.get(name, {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = mkl.make_estimator(name, **{**precise, **params})
        return est.fit(K, y, sample_weight=sample_weight)


@pytest.mark.parametrize(
    "name, params, ref",
    [
        ("simplemkl", {}, lambda K, y, C, **kw: reference.l1_mkl(K, y, C, **kw)),
        ("silp", {}, lambda K, y, C, **kw: reference.l1_mkl(K, y, C, **kw)),
        ("level", {}, lambda K, y, C, **kw: reference.l1_mkl(K, y, C, **kw)),
        ("lp_analytic", {"p": 2.0}, lambda K, y, C, **kw: reference.lp_mkl(K, y, C, 2.0, **kw)),
        ("lp_newton", {"p": 4 / 3}, lambda K, y, C, **kw: reference.lp_mkl(K, y, C, 4 / 3, **kw)),
        (
            "lp_cutting_plane",
            {"p": 2.0},
            lambda K, y, C, **kw: reference.lp_mkl(K, y, C, 2.0, **kw),
        ),
        ("gmkl", {"v": 0.5}, lambda K, y, C, **kw: reference.gmkl(K, y, C, 0.5, **kw)),
    ],
)
@pytest.mark.parametrize("bank_kind", ["dense", "factors"])
def test_weighted_mkl_matches_cvxpy(name, params, ref, bank_kind):
    """The weighted problem is the unweighted one with the box C s_i: CVXPY's
    optimum with a vector C; weights of 0 leave their points out (alpha_i = 0)."""
    bank, K, _, y = factored_problem(11, n=40, M=4)
    s = weights_for(len(y), 11)
    C = 2.0
    kw = {} if bank_kind == "dense" else {"intercept_sq": intercept_sq(K)}
    value, weights = ref(K, y, C * s, **kw)
    est = fit(name, K if bank_kind == "dense" else bank, y, s, C=C, **params)
    assert est.objective_ == pytest.approx(value, rel=1e-5)
    np.testing.assert_allclose(est.weights_, weights, atol=1e-3)
    assert np.all(est.dual_coef_[s == 0] == 0)


@pytest.mark.parametrize("name", ["uniform", "linear"])
def test_weighted_baselines_solve_the_weighted_svm(name):
    _, y, K = random_problem(np.random.default_rng(12), n=40)
    s = weights_for(40, 12)
    est = fit(name, K, y, s, C=3.0, tol=1e-10)
    combo = K.mean(0) if name == "uniform" else K[0]  # uniform: theta_m = 1/M
    value, _ = reference.svm_dual_value(combo, y, 3.0 * s)
    assert est.objective_ == pytest.approx(value, rel=1e-5)


def test_single_best_weighs_its_folds_and_its_refit():
    """The selection's folds solve the weighted SVM of their rows: fitted with
    weights 1 on half the points and 0 on the others, the refit is the SVM of
    that half alone."""
    _, y, K = random_problem(np.random.default_rng(13), n=60)
    s = np.zeros(60)
    s[::2] = 1.0
    est = fit("single_best", K, y, s, C=1.0, tol=1e-10)
    m = int(np.argmax(est.weights_))
    value, _ = reference.svm_dual_value(K[m][::2, ::2], y[::2], 1.0)
    assert est.objective_ == pytest.approx(value, rel=1e-5)


def test_an_integer_weight_is_the_row_repeated():
    """Weight 2 is the row twice: the same objective, weights and decision values."""
    _, y, K = random_problem(np.random.default_rng(14), n=40)
    s = np.ones(40)
    s[:6] = 2.0
    rep = np.concatenate([np.arange(40), np.arange(6)])
    weighted = fit("level", K, y, s, C=5.0)
    repeated = fit("level", K[:, rep][:, :, rep], y[rep], None, C=5.0)
    assert weighted.objective_ == pytest.approx(repeated.objective_, rel=1e-6)
    np.testing.assert_allclose(weighted.weights_, repeated.weights_, atol=1e-4)
    np.testing.assert_allclose(
        weighted.decision_function(K), repeated.decision_function(K[:, :, rep]), atol=1e-4
    )


def test_unit_weights_are_no_weights_and_one_vs_rest_weighs_every_task():
    _, _, K = random_problem(np.random.default_rng(15), n=45)
    y = np.arange(45) % 3
    plain = fit("level", K, y, None, C=1.0)
    ones = fit("level", K, y, np.ones(45), C=1.0)
    np.testing.assert_allclose(ones.objective_, plain.objective_, rtol=1e-9)
    s = weights_for(45, 15) + 0.5
    multi = fit("level", K, y, s, C=1.0)
    for k, c in enumerate(np.unique(y)):
        binary = fit("level", K, np.where(y == c, 1, -1), s, C=1.0)
        assert multi.objective_[k] == pytest.approx(binary.objective_, rel=1e-9)


def test_a_point_of_weight_zero_does_not_move_the_intercept():
    """At a small C every multiplier sits at a bound, and the intercept is the
    middle of the interval the points allow: a point of weight 0 takes no part
    (libsvm drops it), in the SMO and in the interleaved engine, for the
    classifier and the SVR."""
    from mkl.banks.algebra import combine
    from mkl.solvers.libsvm import solve_svm_dual, solve_svr_dual
    from mkl.solvers.smo import BankSMO, _rho, solve_svm_smo
    from mkl.solvers.task_duals import Regression

    # no free multiplier: rho is the middle of the interval the bounds allow; the
    # third point (bound 0) would raise its lower end from -1 to 5 if it counted
    y3, G3 = np.array([1.0, -1.0, 1.0]), np.array([-1.0, -3.0, 5.0])
    U3 = np.array([2.0, 2.0, 0.0])
    alpha3 = np.array([2.0, 2.0, 0.0])
    assert _rho(y3, alpha3, G3, U3) == pytest.approx(_rho(y3[:2], alpha3[:2], G3[:2], U3[:2]))
    assert _rho(y3, alpha3, G3, U3) == pytest.approx(1.0)  # (lb -1 + ub 3) / 2
    _, y, K = random_problem(np.random.default_rng(21), n=40)
    s = weights_for(40, 21)
    C = 1e-3 * s
    ref = solve_svm_dual(K[0], y, C, tol=1e-10)
    smo = solve_svm_smo(K[0], y, C, tol=1e-10)
    assert smo.bias == pytest.approx(ref.bias, rel=1e-6, abs=1e-9)
    targets = np.tanh(y * 0.7) + 0.1 * np.arange(40) / 40
    task = Regression(0.05)
    theta = np.full(K.shape[0], 1.0 / K.shape[0])
    ref = solve_svr_dual(combine(K, theta), targets, C, 0.05, tol=1e-10)
    engine = BankSMO(K, task.dual_form(targets, C, 40), task, targets, C)
    sol, _ = engine.solve(theta, 1e-10, track=False)
    assert -sol.bias == pytest.approx(-ref.bias, rel=1e-6, abs=1e-9)


def test_single_best_with_weights_zero_is_single_best_on_the_others():
    """SingleBestKernel's folds are of the points of positive weight, their
    errors counted by weight: weights 1 on some points and 0 on the rest give
    the fit on those points alone (the same folds, scores and kernel)."""
    _, y, K = random_problem(np.random.default_rng(22), n=60)
    s = np.zeros(60)
    s[::3] = 1.0
    s[1::3] = 1.0
    kept = np.flatnonzero(s)
    weighted = fit("single_best", K, y, s, C=1.0)
    alone = fit("single_best", K[:, kept][:, :, kept], y[kept], None, C=1.0)
    assert weighted.history_[-1]["cv_accuracy"] == alone.history_[-1]["cv_accuracy"]
    np.testing.assert_array_equal(weighted.weights_, alone.weights_)
    assert weighted.objective_ == pytest.approx(alone.objective_, rel=1e-8)


def test_the_front_end_takes_class_weight_and_sample_weight():
    """``class_weight`` is the sample weights of scikit-learn's
    ``compute_sample_weight`` (as in SVC), and multiplies ``sample_weight``."""
    rng = np.random.default_rng(16)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + 0.8 * rng.normal(size=80) > 0.9).astype(int)  # unbalanced
    bank = {"families": [{"family": "gaussian", "widths": [1.0, 3.0]}]}
    params = {"tol": 1e-9, "svm_tol": 1e-9}

    def model(**kw):
        return MultipleKernelClassifier(
            algorithm="level", kernels=bank, algorithm_params=params, **kw
        )

    balanced = model(class_weight="balanced").fit(X, y)
    by_hand = model().fit(X, y, sample_weight=compute_sample_weight("balanced", y))
    assert balanced.objective_ == pytest.approx(by_hand.objective_, rel=1e-9)
    s = rng.uniform(0.5, 2.0, 80)
    both = model(class_weight={0: 1.0, 1: 4.0}).fit(X, y, sample_weight=s)
    product = model().fit(X, y, sample_weight=s * np.where(y == 1, 4.0, 1.0))
    assert both.objective_ == pytest.approx(product.objective_, rel=1e-9)
    # weighting the smaller class up moves predictions towards it
    assert (balanced.predict(X) == 1).sum() > (model().fit(X, y).predict(X) == 1).sum()
    with pytest.raises(ValueError, match="class_weight"):
        model(class_weight="nonsense").fit(X, y)
    with pytest.raises(ValueError, match="sample_weight must be 80 numbers"):
        model(class_weight="balanced").fit(X, y, sample_weight=np.ones(3))


@pytest.mark.parametrize("name", ["uniform", "level"])
def test_scikit_learns_weights_equivalence_check_at_tight_tolerances(name):
    """scikit-learn's own check (weights against removed and repeated rows),
    which the common checks run at the default tolerances as an expected
    failure (tests/test_feature_estimators.py), passes once the fit is exact."""
    from sklearn.utils.estimator_checks import check_sample_weight_equivalence_on_dense_data

    # the level method to a 1e-9 gap (1e-10 takes six times as long, for the same check)
    params = {"tol": 1e-10} if name == "uniform" else {"tol": 1e-9, "svm_tol": 1e-10}
    est = MultipleKernelClassifier(
        algorithm=name,
        kernels={"families": [{"family": "gaussian", "widths": [0.5, 2.0]}]},
        algorithm_params=params,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_sample_weight_equivalence_on_dense_data(type(est).__name__, est)


@pytest.mark.parametrize(
    "weights, params, match",
    [
        (np.ones(5), {}, r"shape \(40,\)"),
        (-np.ones(40), {}, ">= 0"),
        (np.r_[np.ones(39), np.nan], {}, "NaN or inf"),
        (np.array(["a"] * 40), {}, "numbers"),
        (np.zeros(40), {}, "zero on every point"),
        ("class", {}, "zero on every point of class 1"),
        (np.ones(40), {"C": None}, "finite C"),
    ],
)
def test_bad_sample_weights_are_named(weights, params, match):
    _, y, K = random_problem(np.random.default_rng(17), n=40)
    if isinstance(weights, str):
        weights = (y < 0).astype(float)
    with pytest.raises(ValueError, match=match):
        mkl.make_estimator("level", **params).fit(K, y, sample_weight=weights)


@pytest.mark.parametrize("name", ["simplemkl", "level", "lp_analytic"])
@pytest.mark.parametrize("bank_kind", ["dense", "factors"])
def test_weighted_regression_matches_cvxpy(name, bank_kind):
    """The epsilon-SVR with per-sample C: -C s_i <= beta_i <= C s_i (libsvm's SVR
    with weights, the SMO's and the coordinate descent's bounds per variable)."""
    bank, K, _, y = factored_problem(19, n=40, M=4)
    targets = np.tanh(0.7 * y + 0.3 * K[0] @ y / 40)
    s = weights_for(40, 19)
    params = {"p": 2.0} if name == "lp_analytic" else {}
    kw = {"task": ("regression", 0.1)}
    if bank_kind == "factors":
        kw["intercept_sq"] = intercept_sq(K)
    if name == "lp_analytic":
        value, weights = reference.lp_mkl(K, targets, 2.0 * s, 2.0, **kw)
    else:
        value, weights = reference.l1_mkl(K, targets, 2.0 * s, **kw)
    accepted = mkl.make_estimator(name).get_params()
    precise = {k: v for k, v in PRECISE.items() if k in accepted}
    precise.update(EXTRA.get(name, {}))
    est = mkl.make_estimator(name, task="regression", C=2.0, epsilon=0.1, **params)
    est.set_params(algorithm_params=precise)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(K if bank_kind == "dense" else bank, targets, sample_weight=s)
    assert est.objective_ == pytest.approx(value, rel=1e-5)
    np.testing.assert_allclose(est.weights_, weights, atol=1e-3)
    assert np.all(est.estimator_.dual_coef_[s == 0] == 0)


def test_methods_without_weights_refuse_them():
    _, y, K = random_problem(np.random.default_rng(18), n=30)
    with pytest.raises(ValueError, match="EasyMKL does not take sample_weight") as refusal:
        mkl.make_estimator("easymkl").fit(K, y, sample_weight=np.ones(30))
    # the message lists the methods that take weights: the registry's
    listed = str(refusal.value).split("methods that do: ")[1].split(", ")
    takes = [n for n in mkl.ALGORITHMS if mkl.make_estimator(n).takes_sample_weight]
    assert sorted(listed) == sorted(takes)
    X = np.random.default_rng(18).normal(size=(30, 2))
    with pytest.raises(ValueError, match="EasyMKL does not take sample_weight .nor class weights"):
        MultipleKernelClassifier(algorithm="easymkl", class_weight="balanced").fit(X, y)
    # the novelty detectors do not advertise it (scikit-learn's has_fit_parameter),
    # and their inner estimator refuses it by name
    from sklearn.utils.validation import has_fit_parameter

    from mkl.algorithms.l1 import LevelMKL
    from mkl.solvers.task_duals import Novelty

    assert not has_fit_parameter(mkl.make_estimator("level", task="novelty"), "sample_weight")
    assert has_fit_parameter(mkl.make_estimator("level", task="regression"), "sample_weight")
    with pytest.raises(ValueError, match="not supported for the novelty task"):
        LevelMKL(task=Novelty(0.5)).fit(K, sample_weight=np.ones(30))

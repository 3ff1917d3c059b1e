import numpy as np
import pytest
from sklearn.base import clone
from sklearn.svm import SVC

import mkl
from mkl.banks.algebra import combine
from mkl.banks.kernel_bank import KernelBank
from mkl.kernels.specs import KernelSpec
from mkl.metrics import radius

from .reference import svm_dual_value

NAMES = sorted(mkl.ALGORITHMS)


def split(K, y, n_train=30):
    return K[:, :n_train, :n_train], y[:n_train], K[:, n_train:, :n_train], y[n_train:]


@pytest.mark.parametrize("name", NAMES)
def test_contract(problem, name):
    _, y, K = problem
    Ktr, ytr, Kte, yte = split(K, y)
    # the contract, not convergence: the entropic mirror descents (EMKL, REKL:
    # an L1-MKL solve per step) stop after a few steps (their own tests converge)
    few_steps = {"max_iter": 5} if name in ("emkl", "rekl") else {}
    # fixed: weights given (a one-vs-rest row per class would be (n_classes, M))
    given = {"weights": np.linspace(1.0, 2.0, K.shape[0]).tolist()} if name == "fixed" else {}
    est = mkl.make_estimator(name, C=2.0, **few_steps, **given)
    assert est.get_params()["C"] == 2.0
    assert clone(est).get_params() == est.get_params()
    assert est.fit(Ktr, ytr) is est
    M, n = Ktr.shape[:2]
    # CKA's weights may be negative (MKLpy's closed form; mkl/algorithms/alignment.py)
    assert est.weights_.shape == (M,) and (est.signed_weights or np.all(est.weights_ >= 0))
    assert est.dual_coef_.shape == (n,)
    assert isinstance(est.intercept_, float) and isinstance(est.objective_, float)
    assert est.n_iter_ >= 1 and isinstance(est.converged_, bool)
    assert isinstance(est.history_, list) and est.history_
    assert list(est.classes_) == [-1, 1]
    assert 1 <= est.n_selected_ <= M
    pred = est.predict(Kte)
    assert pred.shape == yte.shape and set(pred) <= {-1, 1}
    if est.learns_kernel:  # the classifier's kernel is learned, not a combination of K
        return
    # decision function = the SVM on the combined kernel (R-MKL's: with squared
    # slacks at C / R_mu, the hard margin on Kc + (R_mu / C) I; radius_margin.py)
    Kc = combine(Ktr, est.weights_)
    svc = SVC(C=2.0, kernel="precomputed").fit(Kc, ytr)
    if name == "rmkl":
        R_mu = sum(w * radius(k) for w, k in zip(est.weights_, Ktr, strict=True))
        ridge = R_mu / 2.0 * np.eye(len(ytr))
        svc = SVC(C=1e10, kernel="precomputed", tol=1e-8).fit(Kc + ridge, ytr)
    assert np.allclose(
        est.decision_function(Kte), svc.decision_function(combine(Kte, est.weights_)), atol=1e-3
    )


@pytest.mark.parametrize("name", NAMES)
def test_registry_description_is_the_class(name):
    """What the workflow checks experiment files against without importing a
    family (mkl.algorithms.registry.algorithm_info) is what the class says."""
    from mkl.algorithms.registry import algorithm_info

    info, cls = algorithm_info(name), mkl.ALGORITHMS[name]
    where = f"registry entry {name!r} (mkl/algorithms/registry.py)"
    assert cls.__module__ == f"mkl.algorithms.{info.module}", f"{where}: module"
    assert cls.__name__ == info.cls, f"{where}: class"
    params = set(cls().get_params())
    assert params == info.params, (
        f"{where}: parameters; missing {sorted(params - info.params)}, "
        f"not the class's {sorted(info.params - params)}"
    )
    assert tuple(cls.tasks) == info.tasks, f"{where}: tasks, the class's are {cls.tasks}"
    assert cls.accepts_factors == info.accepts_factors, f"{where}: accepts_factors"
    assert cls.takes_sample_weight == info.takes_sample_weight, f"{where}: takes_sample_weight"


def test_the_method_table_names_each_method_s_module():
    """mkl/algorithms/__init__.py's table (registry name -> class -> module),
    the newcomer's map, stays true of the registry."""
    import mkl.algorithms
    from mkl.algorithms.registry import algorithm_info

    lines = mkl.algorithms.__doc__.splitlines()
    rulers = [i for i, line in enumerate(lines) if line.startswith("=====")]
    module_column = lines[rulers[0]].rindex(" ") + 1
    listed, names = {}, []
    for line in lines[rulers[1] + 1 : rulers[2]]:
        names += line[: lines[rulers[0]].index(" ")].replace(",", " ").split()
        module = line[module_column:].split()
        if module:  # a row's module ends it (its names may run over lines)
            listed.update(dict.fromkeys(names, module[0]))
            names = []
    for name in NAMES:
        assert listed.get(name) == algorithm_info(name).module, (
            f"{name!r}: mkl/algorithms/__init__.py lists module {listed.get(name)!r}"
        )


@pytest.mark.parametrize("C", [0.5, 5.0])
def test_uniform_objective_is_the_svm_dual_of_the_average_kernel(problem, C):
    _, y, K = problem
    est = mkl.make_estimator("uniform", C=C, tol=1e-8).fit(K, y)
    ref, _ = svm_dual_value(K.mean(0), y, C)
    assert est.objective_ == pytest.approx(ref, rel=1e-5)
    assert np.allclose(est.weights_, 1 / K.shape[0])


def test_single_best_finds_the_informative_kernel(rng):
    n = 80
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    noise = [np.outer(v, v) for v in rng.normal(size=(3, n))]
    K = np.stack([*noise, np.outer(X[:, 0], X[:, 0])])
    est = mkl.make_estimator("single_best", C=1.0, cv=3).fit(K, y)
    assert est.weights_.tolist() == [0, 0, 0, 1]
    (row,) = est.history_
    assert len(row["cv_accuracy"]) == 4 and np.argmax(row["cv_accuracy"]) == 3


def test_linear_uses_the_given_kernel(problem):
    _, y, K = problem
    est = mkl.make_estimator("linear", kernel_index=2).fit(K, y)
    assert est.weights_.tolist() == [0, 0, 1, 0]
    for bad in (7, -1, 1.0):
        with pytest.raises(ValueError, match="kernel_index must be an integer in"):
            mkl.make_estimator("linear", kernel_index=bad).fit(K, y)


def test_string_labels_and_one_vs_rest(rng):
    X = rng.normal(size=(60, 2))
    y = np.array(["a", "b", "c"])[np.argmax(np.c_[X, -X.sum(1)], 1)]
    K = np.stack([X @ X.T, (X @ X.T + 1) ** 2])
    est = mkl.make_estimator("uniform", C=10.0).fit(K, y)
    assert list(est.classes_) == ["a", "b", "c"]
    assert est.weights_.shape == (3, 2) and est.dual_coef_.shape == (3, 60)
    assert est.decision_function(K).shape == (60, 3)
    assert (est.predict(K) == y).mean() > 0.8
    binary = mkl.make_estimator("uniform").fit(K, np.where(y == "a", "yes", "no"))
    assert set(binary.predict(K)) <= {"yes", "no"}


def test_kernel_bank_input(rng):
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    specs = [KernelSpec("linear"), KernelSpec("gaussian", 1.0)]
    from mkl.kernels.dense import compute_bank

    tr, te, f = compute_bank(specs, X[:20], X[20:])
    bank = KernelBank(train=tr, test=te, specs=specs, y_train=y[:20], y_test=y[20:], factors=f)
    est = mkl.make_estimator("uniform").fit(bank, bank.y_train)
    assert np.array_equal(est.predict(bank), est.predict(te))


def test_float32_bank_gives_the_same_model(problem):
    _, y, K = problem
    a = mkl.make_estimator("uniform", tol=1e-8).fit(K, y)
    b = mkl.make_estimator("uniform", tol=1e-8).fit(K.astype(np.float32), y)
    assert b.objective_ == pytest.approx(a.objective_, rel=1e-4)


@pytest.mark.parametrize("name", ["easymkl", "memo", "level"])
def test_strided_bank_gives_the_same_model(problem, name):
    """A bank laid out with the kernel axis innermost (what fancy indexing of
    fold blocks gives) is the same problem as its C-contiguous copy."""
    _, y, K = problem
    strided = np.moveaxis(np.ascontiguousarray(np.moveaxis(K, 0, -1)), -1, 0)
    assert not strided.flags["C_CONTIGUOUS"] and np.array_equal(strided, K)
    a = mkl.make_estimator(name).fit(K, y)
    b = mkl.make_estimator(name).fit(strided, y)
    np.testing.assert_allclose(b.weights_, a.weights_, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------- bad input
def _bad_inputs(K, y):
    nan = K.copy()
    nan[2, 3, 4] = np.nan
    asym = K.copy()
    asym[1, 0, 5] += 1.0
    return [
        ("nan", nan, y, {}, r"K\[2\] contains NaN or inf"),
        ("inf", np.where(K > 0.99, np.inf, K), y, {}, "contains NaN or inf"),
        ("one class", K, np.ones_like(y), {}, "y has one class only"),
        ("mismatched y", K, y[:-1], {}, "y has 39 labels but the kernels have 40 samples"),
        ("2-D", K[0], y, {}, r"wrap a single kernel as K\[None\]"),
        ("non-square", K[:, :, :-1], y, {}, "must be square"),
        ("asymmetric", asym, y, {}, r"K\[1\] is not symmetric"),
        (
            "negative C",
            K,
            y,
            {"C": -1.0},
            r"The 'C' parameter of \w+ must be a float in the range \(0\.0, inf\)",
        ),
        ("zero C", K, y, {"C": 0}, r"The 'C' parameter of \w+ must be"),
        (
            "tol",
            K,
            y,
            {"tol": -1},
            r"The 'tol' parameter of \w+ must be a float in the range [(\[]0\.0, inf\)",
        ),
        ("strings", K.astype(str), y, {}, "must be real-valued"),
        ("2-D labels", K, y[:, None], {}, "y must be 1-D"),
        ("nan labels", K, np.where(y > 0, np.nan, 0.0), {}, "y contains NaN"),
        ("zero bank", np.zeros_like(K), y, {}, "every kernel of the bank is zero"),
        ("continuous labels", K, np.linspace(0, 1, len(y)), {}, "non-integer values .40 distinct"),
    ]


@pytest.mark.parametrize("case", range(13))
@pytest.mark.parametrize("name", NAMES)
def test_bad_fit_input_is_one_clear_value_error(problem, name, case):
    _, y, K = problem
    label, Kb, yb, params, message = _bad_inputs(K, y)[case]
    est = mkl.make_estimator(name, **params)
    with pytest.raises(ValueError, match=message):
        est.fit(Kb, yb)


def test_bad_predict_input(problem):
    _, y, K = problem
    Ktr, ytr, Kte, _ = split(K, y)
    est = mkl.make_estimator("uniform").fit(Ktr, ytr)
    with pytest.raises(ValueError, match=r"K_test must have shape \(4, n_test, 30\)"):
        est.predict(Kte[:3])
    with pytest.raises(ValueError, match=r"K_test must have shape \(4, n_test, 30\)"):
        est.predict(Kte[:, :, :20])
    bad = Kte.copy()
    bad[3, 0, 0] = np.nan
    with pytest.raises(ValueError, match=r"K_test\[3\] contains NaN or inf"):
        est.predict(bad)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        mkl.make_estimator("uniform").predict(Kte)


def test_make_estimator_names_the_problem():
    with pytest.raises(ValueError, match="unknown algorithm 'simplemkl3'; known: .*uniform"):
        mkl.make_estimator("simplemkl3")
    with pytest.raises(ValueError, match=r"has no parameter\(s\) \['lam'\]"):
        mkl.make_estimator("uniform", lam=0.5)


def test_import_name_is_this_package():
    # Intel's mkl-service installs a module `mkl` too: the workflow checks this flag
    assert mkl.IS_MKL_RESEARCH is True
    assert isinstance(mkl.__version__, str) and mkl.__version__


def test_verbose_lines_print_once_before_and_after_the_application_configures_logging():
    """verbose=1 prints progress with no logging configured; after
    logging.basicConfig the lines reach the root handler only (once printed twice)."""
    import subprocess
    import sys

    script = """
import logging, numpy as np, mkl
rng = np.random.default_rng(0)
X = rng.normal(size=(30, 3)); y = (X[:, 0] > 0).astype(int)
K = np.stack([np.exp(-((X[:, None] - X[None]) ** 2).sum(-1)), X @ X.T])
mkl.make_estimator("simplemkl", verbose=1, max_iter=2).fit(K, y)
logging.basicConfig(level=logging.INFO, format="ROOT %(message)s")
mkl.make_estimator("simplemkl", verbose=1, max_iter=2).fit(K, y)
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stderr.splitlines()
    lines = [line for line in out if "SimpleMKL iter" in line]
    half = len(lines) // 2  # the same fit twice: its lines, then the same lines through root
    assert half >= 1 and len(lines) == 2 * half, out
    assert [line.startswith("ROOT ") for line in lines] == [False] * half + [True] * half


def test_single_best_chooses_the_kernel_and_C_in_one_cross_validation(rng):
    """With ``Cs``, the (C, kernel) pair of best CV score over the same folds
    as the single-C fits: each C's scores are those of a fit at that C alone
    (solved to 1e-10, so that warm starts along Cs change no decision value's
    sign), the pair the best of them (ties: the first C), refitted at that C."""
    n = 60
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    K = np.stack([np.exp(-((X[:, None, :w] - X[None, :, :w]) ** 2).sum(-1)) for w in (1, 2, 3)])
    Cs = [0.1, 10.0, 1000.0]
    alone = [mkl.make_estimator("single_best", C=C, tol=1e-10).fit(K, y) for C in Cs]
    both = mkl.make_estimator("single_best", Cs=Cs, tol=1e-10).fit(K, y)
    (row,) = both.history_
    scores = [a.history_[0]["cv_accuracy"] for a in alone]
    chosen = int(np.argmax([max(s) for s in scores]))
    assert row["C"] == Cs[chosen] and row["cv_accuracy"] == scores[chosen]
    assert row["svm_solves"] == 3 * 3 * len(Cs) + 1
    np.testing.assert_array_equal(both.weights_, alone[chosen].weights_)
    assert both.objective_ == pytest.approx(alone[chosen].objective_, rel=1e-8)
    assert "C" not in alone[0].history_[0]  # without Cs: C itself, as before
    for bad in ([], [1.0, -1.0], [0.0], ["a"], [True]):
        with pytest.raises(ValueError, match="Cs must be a non-empty list of positive numbers"):
            mkl.make_estimator("single_best", Cs=bad).fit(K, y)

"""Model selection on precomputed kernels: grids, metrics, inner cross-validation."""

import functools

import numpy as np
import pytest

import mkl
from mkl.exceptions import SolverError
from mkl.metrics import classification_metrics, regression_metrics
from mkl.model_selection import cross_validate_grid, grid_points, select_best

from .conftest import random_problem, single_feature_bank


def test_grid_points_order():
    pts = grid_points({"C": [1, 10], "cv": [2, 3]})
    assert pts == [{"C": 1, "cv": 2}, {"C": 1, "cv": 3}, {"C": 10, "cv": 2}, {"C": 10, "cv": 3}]
    assert grid_points({}) == [{}]
    with pytest.raises(ValueError, match="must be a list"):
        grid_points({"C": 1})
    with pytest.raises(ValueError, match="is empty"):
        grid_points({"C": []})


def test_metrics_binary_and_multiclass():
    m = classification_metrics([0, 0, 1, 1], [0, 1, 1, 1], np.array([-2, 0.5, 1, 3]), [0, 1])
    assert m["accuracy"] == 0.75 and m["f1"] == pytest.approx(0.8) and m["auc"] == 1.0
    assert m["mcc"] == pytest.approx(1 / np.sqrt(3))
    y = np.array([0, 1, 2, 0, 1, 2])
    s = np.eye(3)[y] + 0.1
    mc = classification_metrics(y, y, s, [0, 1, 2])
    assert mc["accuracy"] == 1 and mc["f1"] == 1 and mc["auc"] == 1 and mc["mcc"] == 1


def test_a_subset_of_metrics_is_the_same_values_and_computes_only_those(rng, monkeypatch):
    """Inner CV scores each fold by the selection metric alone (mkl.metrics.score):
    the others are not computed (scikit-learn's checks of each cost about 5 ms)."""
    from sklearn import metrics as skm

    from mkl.metrics import METRICS, REGRESSION_METRICS, score, task_metrics

    y_true, y_pred = [0, 0, 1, 1, 1], [0, 1, 1, 1, 0]
    scores = np.array([-2.0, 0.5, 1.0, 3.0, -0.1])
    full = classification_metrics(y_true, y_pred, scores, [0, 1])
    for name in METRICS:
        assert classification_metrics(y_true, y_pred, scores, [0, 1], (name,)) == {name: full[name]}
    full = regression_metrics([1.0, 2.0, 3.0], [1.5, 2.0, 2.0])
    for name in REGRESSION_METRICS:
        assert regression_metrics([1.0, 2.0, 3.0], [1.5, 2.0, 2.0], (name,)) == {name: full[name]}

    _, y, K = random_problem(rng, n=30)
    est = mkl.make_estimator("uniform").fit(K, y)
    assert score(est, K, y, "mcc") == task_metrics(est, K, y)["mcc"]
    with pytest.raises(ValueError, match="'rmse' is not one of this estimator's task"):
        score(est, K, y, "rmse")  # another task's metric: an error, not NaN scores
    for other in ("accuracy_score", "f1_score", "roc_auc_score"):
        monkeypatch.setattr(skm, other, lambda *a, **k: pytest.fail("computed"))
    assert score(est, K, y, "mcc") == task_metrics(est, K, y, ("mcc",))["mcc"]


def test_select_best_ties_go_to_the_first():
    recs = [{"mean_score": 0.8}, {"mean_score": 0.9}, {"mean_score": 0.9}, {"mean_score": None}]
    assert select_best(recs) == 1
    with pytest.raises(SolverError, match="no grid point.*boom"):
        select_best([{"mean_score": None, "error": "fold 0: SolverError: boom"}])


def _point(mean, *counts):
    return {"mean_score": mean, "fold_fits": [{"n_selected": c} for c in counts]}


def test_select_best_ties_go_to_the_sparser_model():
    """Equal mean scores: the point whose fold fits kept the fewest kernels on
    average; equal counts: the first in grid order. A better score wins
    whatever its count, and means that differ by rounding only are equal."""
    third = (0.6 + 0.7 + 0.8) / 3
    recs = [_point(0.7, 3, 3, 3), _point(third, 80, 90, 100), _point(0.7, 12, 9, 10)]
    assert recs[1]["mean_score"] != 0.7 and select_best(recs) == 0  # (3) against 90 and 10.3
    recs = [_point(0.7, 40, 40, 40), _point(third, 20, 9, 10), _point(0.7, 3, 60, 9)]
    assert select_best(recs) == 1  # 13 kernels, against 40 and 24
    recs = [_point(0.7, 5, 5, 5), _point(0.7, 5, 5, 5), _point(0.75, 90, 90, 90)]
    assert select_best(recs) == 2
    recs[2]["mean_score"] = 0.7
    assert select_best(recs) == 0  # equal counts: the grid order
    # a multiclass fit counts per binary task; an error is selected by its smallest
    recs = [_point(0.2, [9, 9], [9, 9]), _point(0.2, [2, 4], [3, 3]), _point(0.1, 50)]
    assert select_best(recs, "accuracy") == 1 and select_best(recs, "rmse") == 2
    recs[2]["mean_score"] = 0.2
    assert select_best(recs, "rmse") == 1
    # records without counts (a single-point grid, another format) keep the grid order
    assert select_best([{"mean_score": 0.7}, _point(0.7, 1, 1, 1)]) == 1
    assert select_best([{"mean_score": 0.7}, {"mean_score": 0.7, "fold_fits": []}]) == 0


def test_cross_validation_ties_go_to_the_sparser_level_fit():
    """On the records cross_validate_grid writes: L1-MKL at C = 100 and 10
    scores alike on the folds (86.7%) and keeps 3-4 kernels at C = 100, 2 at
    C = 10; the tie goes to C = 10, the second in this grid's order."""
    K, y = single_feature_bank(0, n=45)
    folds = np.arange(45) % 3
    make = functools.partial(mkl.make_estimator, "level", tol=0, weight_tol=1e-3)
    recs = cross_validate_grid(make, K, y, folds, grid_points({"C": [100.0, 10.0]}))
    counts = [[f["n_selected"] for f in r["fold_fits"]] for r in recs]
    # the same accuracy, its means differ in the last bit (folds' scores in other orders)
    assert recs[0]["mean_score"] == pytest.approx(recs[1]["mean_score"], rel=0, abs=1e-15)
    assert np.mean(counts[1]) < np.mean(counts[0])
    assert select_best(recs) == 1


def test_cross_validation_records_every_point_and_fold(rng):
    _, y, K = random_problem(rng, n=45)
    folds = np.arange(45) % 3
    make = functools.partial(mkl.make_estimator, "uniform")
    recs = cross_validate_grid(make, K, y, folds, grid_points({"C": [0.1, 1, 10]}))
    assert len(recs) == 3
    for r in recs:
        assert len(r["fold_scores"]) == 3 and len(r["fold_fits"]) == 3
        assert 0 <= r["mean_score"] <= 1
        assert r["mean_score"] == pytest.approx(np.mean(r["fold_scores"]))


def test_cross_validation_matches_a_manual_loop(rng):
    _, y, K = random_problem(rng, n=45)
    folds = np.arange(45) % 3
    make = functools.partial(mkl.make_estimator, "uniform")
    (rec,) = cross_validate_grid(make, K, y, folds, [{"C": 1.0}])
    manual = []
    for f in range(3):
        tr, va = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        est = make(C=1.0).fit(K[:, tr][:, :, tr], y[tr])
        manual.append(np.mean(est.predict(K[:, va][:, :, tr]) == y[va]))
    assert rec["fold_scores"] == pytest.approx(manual)


def test_regression_metrics_and_selection_by_an_error():
    m = regression_metrics([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 6.0])
    assert m["rmse"] == pytest.approx(1.0) and m["mae"] == pytest.approx(0.5)
    assert m["r2"] == pytest.approx(1 - 4 / 5)
    recs = [{"mean_score": 0.3}, {"mean_score": 0.2}, {"mean_score": 0.2}, {"mean_score": None}]
    assert select_best(recs, "rmse") == 1  # the smallest error; ties: the first
    assert select_best(recs, "r2") == 0


def test_cross_validation_of_a_regressor_by_rmse(rng):
    """Regressors (make_estimator(name, task="regression")) go through the same
    grid search, scored by RMSE on the held-out fold and selected by the smallest."""
    X, _, K = random_problem(rng, n=45)
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=45)
    folds = np.arange(45) % 3
    make = functools.partial(mkl.make_estimator, "uniform", task="regression", epsilon=0.05)
    recs = cross_validate_grid(make, K, y, folds, grid_points({"C": [0.01, 10.0]}), "rmse")
    assert all(len(r["fold_scores"]) == 3 for r in recs)
    tr, va = np.flatnonzero(folds != 0), np.flatnonzero(folds == 0)
    est = make(C=10.0).fit(K[:, tr][:, :, tr], y[tr])
    rmse = np.sqrt(np.mean((est.predict(K[:, va][:, :, tr]) - y[va]) ** 2))
    assert recs[1]["fold_scores"][0] == pytest.approx(rmse)
    assert select_best(recs, "rmse") == int(np.argmin([r["mean_score"] for r in recs]))


def test_grid_points_ending_in_the_same_svm_solve_it_once_with_the_same_records(rng, monkeypatch):
    """Grid points whose fits end in the same combination share its SVM within a
    fold (mkl.solvers.solution_cache.shared_solutions), and their records are those of solving it
    for each point. Here the bank holds one kernel three times: MEMO stops at
    the uniform weights whatever theta."""
    import mkl.algorithms.margin as margin

    _, y, K = random_problem(rng, n=60, M=1)
    K = np.repeat(K, 3, axis=0)
    folds = np.arange(60) % 3
    points = grid_points({"theta": [0.0, 1.0, 100.0]})
    make = functools.partial(mkl.make_estimator, "memo", C=10.0)
    solves = []
    real = margin.solve_svm_dual

    def counted(*args, **kwargs):
        solves.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(margin, "solve_svm_dual", counted)
    shared = cross_validate_grid(make, K, y, folds, points)
    assert len(solves) == 3  # one per fold, not one per fold and grid point
    separate = []
    for p in points:  # each point alone: its own solves
        separate += cross_validate_grid(make, K, y, folds, [p])
    assert len(solves) == 3 + 9

    def without_time(fits):
        return [{k: v for k, v in f.items() if k != "seconds"} for f in fits]

    for a, b in zip(shared, separate, strict=True):
        assert a["fold_scores"] == b["fold_scores"]
        assert without_time(a["fold_fits"]) == without_time(b["fold_fits"])

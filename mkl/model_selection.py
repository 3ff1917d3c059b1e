"""Metrics and model selection over a hyperparameter grid by inner cross-validation
on precomputed kernels.

:func:`cross_validate_grid` fits every grid point on every inner fold's
training rows and scores the held-out rows (every point and fold recorded);
:func:`select_best` picks the best mean score (ties: the first point in grid
order). Classifiers are scored by accuracy, F1, MCC or AUC, regressors
(``mkl.make_regressor``) by RMSE, MAE or R^2, novelty detectors
(``mkl.make_novelty_detector``) by the AUC of their scores against labels
+1 (inlier) / -1 (outlier). The workflow's fit job
(``mkl.workflow.evaluation.evaluate_split``) then refits the selected point
on the whole training part and tests it.
"""

from __future__ import annotations

import itertools
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .exceptions import InputError, SolverError, is_fit_failure
from .factor_bank import FactorBank
from .solution_cache import shared_solutions

if TYPE_CHECKING:
    from .base import MKLClassifier

METRICS = ("accuracy", "f1", "mcc", "auc")  # classification
REGRESSION_METRICS = ("rmse", "mae", "r2")
NOVELTY_METRICS = ("auc",)
ALL_METRICS = METRICS + REGRESSION_METRICS  # every metric a fit record may hold
LOWER_IS_BETTER = frozenset({"rmse", "mae"})

# The metric functions below import sklearn.metrics when called, not this
# module: the workflow's table, figure and fidelity stages import it for the
# metric names above, and importing scikit-learn costs about 1.7 CPU-s (it
# loads scipy.stats and pandas) in each of those jobs.


def classification_metrics(y_true, y_pred, scores, classes) -> dict[str, float]:
    """Accuracy, F1, MCC and ROC AUC. Binary: F1 of ``classes[1]``, AUC of the
    decision values. Multiclass: macro F1, multiclass MCC, mean one-vs-rest AUC."""
    from sklearn import metrics as skm

    y_true = np.asarray(y_true)
    out = {
        "accuracy": float(skm.accuracy_score(y_true, y_pred)),
        "mcc": float(skm.matthews_corrcoef(y_true, y_pred)),
    }
    scores = np.asarray(scores, dtype=float)
    if len(classes) == 2:
        out["f1"] = float(skm.f1_score(y_true, y_pred, pos_label=classes[1], zero_division=0))
        pos = y_true == classes[1]
        out["auc"] = float(skm.roc_auc_score(pos, scores)) if 0 < pos.sum() < len(pos) else None
    else:
        out["f1"] = float(skm.f1_score(y_true, y_pred, average="macro", zero_division=0))
        aucs = [
            skm.roc_auc_score(y_true == c, scores[:, j])
            for j, c in enumerate(classes)
            if 0 < (y_true == c).sum() < len(y_true)
        ]
        out["auc"] = float(np.mean(aucs)) if aucs else None
    return out


def regression_metrics(y_true, y_pred) -> dict[str, float]:
    """Root mean squared error, mean absolute error and R^2."""
    from sklearn import metrics as skm

    y_true = np.asarray(y_true, dtype=float)
    y_pred = np.asarray(y_pred, dtype=float)
    return {
        "rmse": float(np.sqrt(skm.mean_squared_error(y_true, y_pred))),
        "mae": float(skm.mean_absolute_error(y_true, y_pred)),
        "r2": float(skm.r2_score(y_true, y_pred)) if len(y_true) > 1 else None,
    }


def novelty_metrics(y_true, scores) -> dict[str, float]:
    """ROC AUC of the scores (larger: more normal) against y_true, +1 for an
    inlier and -1 for an outlier (scikit-learn's convention): the chance that a
    random inlier scores above a random outlier. None when one kind is absent."""
    from sklearn import metrics as skm

    y_true = np.asarray(y_true)
    if not np.isin(y_true, (-1, 1)).all():
        raise InputError("novelty labels must be +1 (inlier) or -1 (outlier)")
    inlier = y_true == 1
    auc = skm.roc_auc_score(inlier, scores) if 0 < inlier.sum() < len(inlier) else None
    return {"auc": None if auc is None else float(auc)}


def task_metrics(estimator, K_test, y_test) -> dict[str, float]:
    """Every metric of the estimator's task on a test block: classification
    metrics for a classifier, regression metrics for a regressor, the AUC of
    ``score_samples`` for a novelty detector (y_test +1 inlier / -1 outlier)."""
    from sklearn.base import is_outlier_detector, is_regressor

    if is_regressor(estimator):
        return regression_metrics(y_test, estimator.predict(K_test))
    if is_outlier_detector(estimator):
        return novelty_metrics(y_test, estimator.score_samples(K_test))
    scores = estimator.decision_function(K_test)
    pred = estimator.labels_from_scores(scores)
    return classification_metrics(y_test, pred, scores, estimator.classes_)


def score(estimator: MKLClassifier, K_test, y_test, metric: str = "accuracy") -> float:
    value = task_metrics(estimator, K_test, y_test)[metric]
    return float("nan") if value is None else value


def grid_points(grid: Mapping[str, Sequence]) -> list[dict]:
    """The Cartesian product of a grid {param: [values]}, in a fixed order
    (the first parameter varies slowest)."""
    if not grid:
        return [{}]
    keys = list(grid)
    for k in keys:
        if isinstance(grid[k], (str, bytes)) or not isinstance(grid[k], Sequence):
            raise InputError(f"grid values of {k!r} must be a list, got {grid[k]!r}")
        if len(grid[k]) == 0:
            raise InputError(f"grid of {k!r} is empty")
    return [
        dict(zip(keys, vals, strict=True)) for vals in itertools.product(*(grid[k] for k in keys))
    ]


def _sub_bank(K: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    # fancy indexing leaves the kernel axis innermost in memory; every solver
    # pass over the flattened bank would then copy it (measured: 70% of a MEMO
    # fit at n = 1784), so the block is made C-contiguous once per fold
    return np.ascontiguousarray(K[:, rows[:, None], cols[None, :]])


def cross_validate_grid(
    make: Callable[..., MKLClassifier],
    K: np.ndarray,
    y: np.ndarray,
    folds: np.ndarray,
    points: Sequence[Mapping],
    metric: str = "accuracy",
) -> list[dict]:
    """Inner CV: ``folds[i]`` is the fold id of training point i. ``K`` is the
    training block (M, n, n) or a :class:`~mkl.factor_bank.FactorBank`. Each
    fold's sub-bank is sliced once and reused across the grid. Returns one record per
    grid point: params, per-fold scores, mean, per-fold fit details and the
    warnings the fits raised.

    A fit that fails on its fold (:func:`mkl.exceptions.is_fit_failure`: bad
    input for these data, a numerical failure) fails its grid point, which
    then reads ``mean_score: None`` with the ``error``; the other points go on.
    Any other exception (``MemoryError``, a bug) propagates."""
    if metric not in ALL_METRICS:
        raise InputError(f"unknown metric {metric!r}; known: {ALL_METRICS}")
    folds = np.asarray(folds)
    if folds.shape != (len(y),):
        raise InputError(f"folds must give one fold id per training point, got {folds.shape}")
    records = [
        {"params": dict(p), "fold_scores": [], "fold_fits": [], "warnings": []} for p in points
    ]
    for f in np.unique(folds):
        tr, va = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        if isinstance(K, FactorBank):  # the fold's factors: training rows, held-out rows
            K_tr = K_va = K.fold(tr, va)
        else:
            K_tr, K_va = _sub_bank(K, tr, tr), _sub_bank(K, va, tr)
        # grid points whose fits end in the same SVM solve it once (mkl.solution_cache)
        with shared_solutions():
            for rec in records:
                if "error" in rec:  # failed on an earlier fold
                    continue
                t0 = time.perf_counter()
                est = make(**rec["params"])  # an unknown parameter is a caller's error: raised
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    try:
                        est.fit(K_tr, y[tr])
                        fold_score = score(est, K_va, y[va], metric)
                    except Exception as exc:
                        if not is_fit_failure(exc):
                            raise
                        rec["error"] = f"fold {int(f)}: {type(exc).__name__}: {exc}"
                        continue
                    finally:
                        for w in caught:
                            if str(w.message) not in rec["warnings"]:
                                rec["warnings"].append(str(w.message))
                rec["fold_scores"].append(fold_score)
                rec["fold_fits"].append(fit_summary(est, time.perf_counter() - t0))
    for rec in records:
        s = np.asarray(rec["fold_scores"], dtype=float)
        ok = "error" not in rec and np.isfinite(s).any()
        rec["mean_score"] = float(np.nanmean(s)) if ok else None
    return records


def select_best(records: Sequence[Mapping], metric: str = "accuracy") -> int:
    """Index of the best mean CV score (the largest; the smallest for an error
    such as RMSE, ``LOWER_IS_BETTER``); ties go to the first in grid order.
    Failed grid points (``mean_score: None``) are skipped; when every point
    failed, a :class:`SolverError` lists their errors."""
    means = np.array([np.nan if r["mean_score"] is None else r["mean_score"] for r in records])
    if not np.isfinite(means).any():
        errors = sorted({r["error"] for r in records if r.get("error")})
        detail = f": {'; '.join(errors)}" if errors else ""
        raise SolverError(f"no grid point gave a finite cross-validation score{detail}")
    return int(np.nanargmin(means) if metric in LOWER_IS_BETTER else np.nanargmax(means))


def fit_summary(est: MKLClassifier, seconds: float) -> dict:
    """What a fitted estimator reports about its solve, JSON-serialisable
    (NaN, e.g. the gap of a method that computes none, as None)."""

    def plain(v):
        v = v.tolist() if isinstance(v, np.ndarray) else v
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, float) and not np.isfinite(v):
            return None
        return v

    return {
        "objective": plain(est.objective_),
        "gap": plain(est.gap_),
        "n_iter": plain(est.n_iter_),
        "n_selected": plain(est.n_selected_),
        "spectral_ratio": plain(est.spectral_ratio_),
        "converged": bool(est.converged_),
        "seconds": seconds,
    }

"""Metrics and model selection over a hyperparameter grid by inner cross-validation
on precomputed kernels.

:func:`evaluate_split` is what one workflow fit job does for (experiment,
dataset, algorithm, split): for every grid point and inner fold it fits on the
fold's training rows and scores the held-out rows (every point recorded), picks
the best mean score (ties: the first point in grid order), refits on the whole
training part and scores the test part.
"""

from __future__ import annotations

import itertools
import time
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from sklearn import metrics as skm

from .bank import KernelBank
from .base import MKLClassifier

METRICS = ("accuracy", "f1", "mcc", "auc")


def classification_metrics(y_true, y_pred, scores, classes) -> dict[str, float]:
    """Accuracy, F1, MCC and ROC AUC. Binary: F1 of ``classes[1]``, AUC of the
    decision values. Multiclass: macro F1, multiclass MCC, mean one-vs-rest AUC."""
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


def score(estimator: MKLClassifier, K_test, y_test, metric: str = "accuracy") -> float:
    scores = estimator.decision_function(K_test)
    pred = estimator.labels_from_scores(scores)
    value = classification_metrics(y_test, pred, scores, estimator.classes_)[metric]
    return float("nan") if value is None else value


def grid_points(grid: Mapping[str, Sequence]) -> list[dict]:
    """The Cartesian product of a grid {param: [values]}, in a fixed order
    (the first parameter varies slowest)."""
    if not grid:
        return [{}]
    keys = list(grid)
    for k in keys:
        if isinstance(grid[k], (str, bytes)) or not isinstance(grid[k], Sequence):
            raise ValueError(f"grid values of {k!r} must be a list, got {grid[k]!r}")
        if len(grid[k]) == 0:
            raise ValueError(f"grid of {k!r} is empty")
    return [
        dict(zip(keys, vals, strict=True)) for vals in itertools.product(*(grid[k] for k in keys))
    ]


def grid_chunk(n_points: int, chunks: int, index: int) -> list[int]:
    """Indices of the grid points in chunk ``index`` of ``chunks`` (contiguous,
    sizes differing by at most one): the cross-validation of one (dataset,
    algorithm, split) fanned out over several jobs."""
    if not 1 <= chunks <= max(n_points, 1):
        raise ValueError(f"cannot split {n_points} grid points into {chunks} chunks")
    if not 0 <= index < chunks:
        raise ValueError(f"chunk index {index} is not in [0, {chunks})")
    return [int(i) for i in np.array_split(np.arange(n_points), chunks)[index]]


def merge_chunks(points: Sequence[Mapping], chunks: Sequence[Mapping]) -> list[dict]:
    """The CV records of every grid point, in grid order, from chunk results
    ``{"indices": [...], "records": [...]}``; each point must appear exactly
    once and with the grid's params (a stale chunk of another grid is refused)."""
    merged: list[dict | None] = [None] * len(points)
    for chunk in chunks:
        for i, rec in zip(chunk["indices"], chunk["records"], strict=True):
            if not 0 <= i < len(points):
                raise ValueError(f"CV chunk holds grid point {i}, the grid has {len(points)}")
            if merged[i] is not None:
                raise ValueError(f"grid point {i} appears in two CV chunks")
            if rec["params"] != dict(points[i]):
                raise ValueError(
                    f"CV chunk record {i} has params {rec['params']}, the grid {dict(points[i])}"
                )
            merged[i] = rec
    missing = [i for i, r in enumerate(merged) if r is None]
    if missing:
        raise ValueError(f"grid points {missing} are in no CV chunk")
    return merged


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
    """Inner CV: ``folds[i]`` is the fold id of training point i. Each fold's
    sub-bank is sliced once and reused across the grid. Returns one record per
    grid point: params, per-fold scores, mean, and per-fold fit details."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; known: {METRICS}")
    folds = np.asarray(folds)
    if folds.shape != (len(y),):
        raise ValueError(f"folds must give one fold id per training point, got {folds.shape}")
    records = [{"params": dict(p), "fold_scores": [], "fold_fits": []} for p in points]
    for f in np.unique(folds):
        tr, va = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        K_tr, K_va = _sub_bank(K, tr, tr), _sub_bank(K, va, tr)
        for rec in records:
            t0 = time.perf_counter()
            est = make(**rec["params"])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # convergence status is recorded instead
                est.fit(K_tr, y[tr])
            rec["fold_scores"].append(score(est, K_va, y[va], metric))
            rec["fold_fits"].append(_fit_summary(est, time.perf_counter() - t0))
    for rec in records:
        s = np.asarray(rec["fold_scores"], dtype=float)
        rec["mean_score"] = float(np.nanmean(s)) if np.isfinite(s).any() else None
    return records


def select_best(records: Sequence[Mapping]) -> int:
    """Index of the best mean CV score; ties go to the first in grid order."""
    means = np.array([np.nan if r["mean_score"] is None else r["mean_score"] for r in records])
    if not np.isfinite(means).any():
        raise ValueError("no grid point gave a finite cross-validation score")
    return int(np.nanargmax(means))


def _fit_summary(est: MKLClassifier, seconds: float) -> dict:
    def plain(v):
        return v.tolist() if isinstance(v, np.ndarray) else v

    return {
        "objective": plain(est.objective_),
        "gap": plain(est.gap_),
        "n_iter": plain(est.n_iter_),
        "n_selected": plain(est.n_selected_),
        "spectral_ratio": plain(est.spectral_ratio_),
        "converged": bool(est.converged_),
        "seconds": seconds,
    }


def evaluate_split(
    make: Callable[..., MKLClassifier],
    bank: KernelBank,
    folds: np.ndarray,
    grid: Mapping[str, Sequence],
    metric: str = "accuracy",
    cv_chunks: Sequence[Mapping] | None = None,
) -> dict:
    """Model selection by inner CV on the training block, refit, test metrics.

    ``cv_chunks``: the grid's cross-validation computed elsewhere, as chunks of
    the grid run as separate jobs (joined by :func:`merge_chunks`); the
    selection and the refit are then exactly those of computing it here.

    Returns a JSON-serialisable record (the fit stage's output)."""
    if bank.test is None or bank.y_test is None:
        raise ValueError("the kernel bank has no test block or test labels")
    K, y = bank.train, np.asarray(bank.y_train)
    points = grid_points(grid)
    if len(points) == 1:
        records = [
            {"params": dict(points[0]), "fold_scores": [], "fold_fits": [], "mean_score": None}
        ]
    elif cv_chunks is not None:
        records = merge_chunks(points, cv_chunks)
    else:
        records = cross_validate_grid(make, K, y, folds, points, metric)
    best = select_best(records) if len(points) > 1 else 0
    t0 = time.perf_counter()
    est = make(**records[best]["params"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(K, y)
    seconds = time.perf_counter() - t0
    scores = est.decision_function(bank.test)
    pred = est.labels_from_scores(scores)
    weights = np.asarray(est.weights_)
    return {
        "grid": records,
        "selected": best,
        "selected_params": records[best]["params"],
        "test": classification_metrics(bank.y_test, pred, scores, est.classes_),
        "fit": _fit_summary(est, seconds),
        "weights": weights.tolist(),
        "kernel_labels": bank.labels(),
        "classes": [c.item() if isinstance(c, np.generic) else c for c in est.classes_],
        "warnings": sorted({str(w.message) for w in caught}),
        "n_train": int(K.shape[1]),
        "n_test": int(bank.test.shape[1]),
        "n_kernels": int(K.shape[0]),
    }

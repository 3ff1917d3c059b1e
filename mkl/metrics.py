"""The metrics a fit is scored by: accuracy, F1, MCC and ROC AUC for a
classifier, RMSE, MAE and R^2 for a regressor (``mkl.make_estimator(...,
task="regression")``), the AUC of the scores against labels +1 (inlier) / -1
(outlier) for a novelty detector.

The metric functions import ``sklearn.metrics`` when called, not this module:
the workflow's table, figure and fidelity stages import it for the metric
names, and importing scikit-learn costs about 1.7 CPU-s (it loads scipy.stats
and pandas) in each of those jobs.

The measures of a kernel matrix are here too, loaded on first use from the
modules that define them (as :mod:`mkl`'s public names): so that neither
those stages nor their source hashes (:mod:`mkl.workflow.hashing`, which
follow import statements) take in the solvers.

* ``kernel_alignment(K1, K2, centered=True)``: <K1, K2>_F / (||K1||_F ||K2||_F),
  of the centred kernels by default (Cortes, Mohri & Rostamizadeh 2012;
  :func:`mkl.banks.algebra.kernel_alignment`);
* ``radius(K)``: the squared radius of the minimum enclosing ball of the
  points in feature space, a QP (:func:`mkl.solvers.geometry.radius`);
* ``margin(K, y, C=None)``: 1/||w|| of the hard-margin SVM, or of the
  soft-margin one at C (:func:`mkl.solvers.geometry.margin`);
* ``spectral_ratio(K)``: tr K / ||K||_F (Lauriola et al. 2018;
  :func:`mkl.banks.algebra.spectral_ratio`), each fit's ``spectral_ratio_``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import numpy as np

from .exceptions import InputError

if TYPE_CHECKING:
    from .algorithms.base import BaseMKL

# the measures of a kernel matrix, by the module that defines each
_KERNEL_MEASURES = {
    "kernel_alignment": "banks.algebra",
    "spectral_ratio": "banks.algebra",
    "radius": "solvers.geometry",
    "margin": "solvers.geometry",
}


def __getattr__(name: str):
    if name in _KERNEL_MEASURES:
        return getattr(importlib.import_module(f"mkl.{_KERNEL_MEASURES[name]}"), name)
    raise AttributeError(f"module 'mkl.metrics' has no attribute {name!r}")


METRICS = ("accuracy", "f1", "mcc", "auc")  # classification


REGRESSION_METRICS = ("rmse", "mae", "r2")


NOVELTY_METRICS = ("auc",)


ALL_METRICS = METRICS + REGRESSION_METRICS  # every metric a fit record may hold


LOWER_IS_BETTER = frozenset({"rmse", "mae"})


def classification_metrics(y_true, y_pred, scores, classes, names=METRICS) -> dict[str, float]:
    """Accuracy, F1, MCC and ROC AUC (those of ``names``). Binary: F1 of
    ``classes[1]``, AUC of the decision values. Multiclass: macro F1,
    multiclass MCC, mean one-vs-rest AUC."""
    from sklearn import metrics as skm

    y_true = np.asarray(y_true)
    out = {}
    if "accuracy" in names:
        out["accuracy"] = float(skm.accuracy_score(y_true, y_pred))
    if "mcc" in names:
        out["mcc"] = float(skm.matthews_corrcoef(y_true, y_pred))
    binary = len(classes) == 2
    if "f1" in names:
        if binary:
            f1 = skm.f1_score(y_true, y_pred, pos_label=classes[1], zero_division=0)
        else:
            f1 = skm.f1_score(y_true, y_pred, average="macro", zero_division=0)
        out["f1"] = float(f1)
    if "auc" in names:
        scores = np.asarray(scores, dtype=float)
        if binary:
            pos = y_true == classes[1]
            out["auc"] = float(skm.roc_auc_score(pos, scores)) if 0 < pos.sum() < len(pos) else None
        else:
            aucs = [
                skm.roc_auc_score(y_true == c, scores[:, j])
                for j, c in enumerate(classes)
                if 0 < (y_true == c).sum() < len(y_true)
            ]
            out["auc"] = float(np.mean(aucs)) if aucs else None
    return out


def regression_metrics(y_true, y_pred, names=REGRESSION_METRICS) -> dict[str, float]:
    """Root mean squared error, mean absolute error and R^2 (those of ``names``)."""
    from sklearn import metrics as skm

    y_true = np.asarray(y_true, dtype=float)
    y_pred = np.asarray(y_pred, dtype=float)
    out = {}
    if "rmse" in names:
        out["rmse"] = float(np.sqrt(skm.mean_squared_error(y_true, y_pred)))
    if "mae" in names:
        out["mae"] = float(skm.mean_absolute_error(y_true, y_pred))
    if "r2" in names:
        out["r2"] = float(skm.r2_score(y_true, y_pred)) if len(y_true) > 1 else None
    return out


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


def task_metrics(estimator, K_test, y_test, names=ALL_METRICS) -> dict[str, float]:
    """The metrics of the estimator's task on a test block (every one, or those
    of ``names``): classification metrics for a classifier, regression metrics
    for a regressor, the AUC of ``score_samples`` for a novelty detector
    (y_test +1 inlier / -1 outlier)."""
    from sklearn.base import is_outlier_detector, is_regressor

    if is_regressor(estimator):
        return regression_metrics(y_test, estimator.predict(K_test), names)
    if is_outlier_detector(estimator):
        return novelty_metrics(y_test, estimator.score_samples(K_test))
    scores = estimator.decision_function(K_test)
    pred = estimator.labels_from_scores(scores)
    return classification_metrics(y_test, pred, scores, estimator.classes_, names)


def score(estimator: BaseMKL, K_test, y_test, metric: str = "accuracy") -> float:
    """One metric on a held-out block (NaN where it is undefined, e.g. the AUC
    of one class); only that metric is computed (inner CV scores every fold of
    every grid point by it)."""
    values = task_metrics(estimator, K_test, y_test, (metric,))
    if metric not in values:  # another task's metric: not an undefined value
        raise InputError(f"metric {metric!r} is not one of this estimator's task")
    value = values[metric]
    return float("nan") if value is None else value

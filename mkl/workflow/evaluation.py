"""What one fit job does for (experiment, dataset, algorithm, split): model
selection by inner cross-validation on the split's training block (all of it
here, or joined from CV-chunk jobs), refit, test metrics, one JSON record.

Cross-validation of a grid can be cut into contiguous chunks run as separate
jobs (:func:`grid_chunk`) and joined (:func:`merge_chunks`); the selection is
then exactly that of computing it in one job.

An experiment's ``task`` picks the estimators (:func:`estimator_factory`): the
registry's classifiers, ``mkl.make_estimator(name, task="regression")`` or,
for novelty detection, ``task="novelty"`` fitted on the inliers of the rows it is given
(:class:`InlierTrainedDetector`), the labels being +1 for the largest class of
the training part and -1 for every other (:func:`algorithm_bank`). Inner
cross-validation then fits on a fold's training inliers and scores every
held-out row, inliers against outliers, as the test does.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from sklearn.base import BaseEstimator, OutlierMixin, clone
from sklearn.utils.validation import check_is_fitted

from ..algorithms.base import BaseMKL
from ..banks.factor_bank import FactorBank
from ..banks.kernel_bank import KernelBank
from ..estimators.task_estimators import FITTED_ATTRIBUTES
from ..exceptions import InputError, is_fit_failure
from ..kernels.specs import c_unit
from ..metrics import task_metrics
from ..model_selection import cross_validate_grid, fit_summary, grid_points, select_best


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


def evaluate_split(
    make: Callable[..., BaseMKL],
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
    if bank.n_test is None or bank.y_test is None:
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
    best = select_best(records, metric) if len(points) > 1 else 0
    t0 = time.perf_counter()
    est = make(**records[best]["params"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(K, y)
    seconds = time.perf_counter() - t0
    weights = np.asarray(est.weights_)
    classes = getattr(est, "classes_", None)  # a regressor has none
    return {
        "grid": records,
        "selected": best,
        "selected_params": records[best]["params"],
        "test": task_metrics(est, bank.test_input, bank.y_test),
        "fit": fit_summary(est, seconds),
        "weights": weights.tolist(),
        "kernel_labels": bank.labels(),
        "classes": None
        if classes is None
        else [c.item() if isinstance(c, np.generic) else c for c in classes],
        "warnings": sorted({str(w.message) for w in caught}),
        "n_train": bank.n_train,
        "n_test": bank.n_test,
        "n_kernels": bank.n_kernels,
    }


def entry_grid(entry: Mapping, bank: KernelBank) -> dict:
    """The grid an algorithm entry is cross-validated over on ``bank`` (its
    kernels: :func:`algorithm_bank`): the entry's ``grid``, its values of C
    multiplied by the unit of C on the bank's kernels
    (:func:`mkl.kernels.specs.c_unit`: n_train for unit-trace kernels, else 1)
    when the entry's C grid is stated in that unit (``C_units``: the default C
    grid of an entry that sets no C, :func:`mkl.workflow.experiment.algorithm`)."""
    grid = dict(entry.get("grid", {}))
    if entry.get("C_units") == "normalisation":
        unit = c_unit(bank.specs, bank.n_train)
        grid["C"] = [c * unit for c in grid["C"]]
    elif "C_units" in entry:
        raise ValueError(f"unknown C_units {entry['C_units']!r} (known: 'normalisation')")
    return grid


def algorithm_bank(bank: KernelBank, entry: Mapping) -> KernelBank:
    """The kernels an experiment's algorithm entry uses: its ``select`` /
    ``exclude`` criteria applied to the bank (the bank itself if it has none);
    for a novelty entry (``task: novelty``), labels +1 for the inlier class and
    -1 for the others (:func:`novelty_labels`)."""
    if "select" in entry or "exclude" in entry:
        bank = bank.select(include=entry.get("select"), exclude=entry.get("exclude"))
    if entry.get("task") == "novelty":
        import dataclasses

        inlier = inlier_class(bank.y_train)
        bank = dataclasses.replace(
            bank,
            y_train=novelty_labels(bank.y_train, inlier),
            y_test=None if bank.y_test is None else novelty_labels(bank.y_test, inlier),
        )
    return bank


def inlier_class(y_train: np.ndarray):
    """The normal class of a novelty experiment, by a rule fixed before any
    result: the most frequent class of the training part (ties: the smallest code)."""
    values, counts = np.unique(np.asarray(y_train), return_counts=True)
    return values[np.argmax(counts)]


def novelty_labels(y: np.ndarray, inlier) -> np.ndarray:
    """Class codes -> +1 (the inlier class) / -1 (any other: an outlier)."""
    return np.where(np.asarray(y) == inlier, 1, -1)


class InlierTrainedDetector(OutlierMixin, BaseEstimator):
    """The novelty protocol of the workflow: ``detector`` (an unfitted
    :class:`mkl.estimators.task_estimators.MKLNoveltyDetector`) fitted on the rows labelled
    +1 of the bank it is given, scoring any rows. The rows labelled -1 (outliers)
    are only ever held out: they make the AUC of model selection and of the test.

    Dense test blocks (M, n_test, n_train) are cut to the inlier columns; a
    :class:`~mkl.banks.factor_bank.FactorBank` is fitted on its inlier rows and
    scores its test factors as they are (they do not index training rows)."""

    def __init__(self, detector=None):
        self.detector = detector

    def fit(self, K, y):
        factored = isinstance(K, FactorBank)
        if not factored and (not isinstance(K, np.ndarray) or K.ndim != 3):
            raise InputError("novelty detection needs the training block (M, n, n) or a FactorBank")
        n = K.n_train if factored else K.shape[1]
        y = np.asarray(y)
        if y.shape != (n,) or not np.isin(y, (-1, 1)).all():
            raise InputError("novelty labels must be +1 (inlier) or -1 (outlier), one per row")
        self.inliers_ = np.flatnonzero(y == 1)
        if len(self.inliers_) < 2:
            raise InputError(f"{len(self.inliers_)} inlier rows: too few to fit a novelty detector")
        inl = self.inliers_
        train = K.rows(inl) if factored else np.ascontiguousarray(K[:, inl[:, None], inl[None, :]])
        self.detector_ = clone(self.detector).fit(train)
        for name in (*FITTED_ATTRIBUTES, "offset_"):  # what the fit record reads
            setattr(self, name, getattr(self.detector_, name))
        return self

    def _inlier_columns(self, K_test):
        check_is_fitted(self, "detector_")
        if isinstance(K_test, FactorBank):
            return K_test
        return np.ascontiguousarray(np.asarray(K_test)[:, :, self.inliers_])

    def score_samples(self, K_test):
        return self.detector_.score_samples(self._inlier_columns(K_test))

    def decision_function(self, K_test):
        return self.detector_.decision_function(self._inlier_columns(K_test))

    def predict(self, K_test):
        return self.detector_.predict(self._inlier_columns(K_test))


def estimator_factory(entry: Mapping, name: str) -> Callable[..., BaseMKL]:
    """A function of a grid point's params giving the entry's unfitted estimator
    (its registry name and fixed ``params``, the grid point on top): a
    classifier of the registry, or by the entry's ``task`` a regressor
    (``mkl.make_estimator(name, task="regression")``) or a novelty detector trained on inliers."""
    from functools import partial

    from ..estimators.factory import make_estimator
    from .experiment import estimator

    registry_name, params = estimator(entry, name)
    task = entry.get("task", "classification")
    if task == "regression":
        return partial(make_estimator, registry_name, task="regression", **params)
    if task == "novelty":

        def make(**point):
            return InlierTrainedDetector(
                make_estimator(registry_name, task="novelty", **{**params, **point})
            )

        return make
    return partial(make_estimator, registry_name, **params)


def split_record(
    bank,
    splits_path,
    split: int,
    entry: Mapping,
    name: str,
    metric: str = "accuracy",
    cv_chunk_paths: Sequence = (),
    log=None,
) -> dict:
    """The fit record of one split (the fit job's work): the algorithm entry's
    kernels of the split's bank (a :class:`KernelBank`, or the path of its
    file; a job that fits several algorithms loads it once), model selection
    over its grid by inner CV on the split's folds (or joined from the
    CV-chunk files), refit, test; or
    ``status: failed`` with the error when the fit fails on these data
    (:func:`mkl.exceptions.is_fit_failure`: input the estimator refuses, a
    numerical failure, every grid point failed). Anything else -- ``MemoryError``,
    a bug -- propagates and fails the job, so that Snakemake retries it with the
    raised resources."""
    import json

    from .splits import load_split

    if not isinstance(bank, KernelBank):
        bank = KernelBank.load(bank)
    bank = algorithm_bank(bank, entry)
    folds = load_split(splits_path, split).folds
    cv_chunks = None
    if cv_chunk_paths:  # the grid's cross-validation ran as separate jobs
        cv_chunks = []
        for path in cv_chunk_paths:
            with open(path) as fh:
                chunk = json.load(fh)  # a chunk's CV records on each split of its job
            records = chunk.get("records")
            if not isinstance(records, dict) or str(split) not in records:
                held = (
                    f"splits {sorted(records, key=int)}"
                    if isinstance(records, dict)
                    else "no records by split (a chunk file of an older format)"
                )
                raise ValueError(f"CV chunk {path} holds {held}, not split {split}")
            cv_chunks.append({"indices": chunk["indices"], "records": records[str(split)]})
    try:
        return evaluate_split(
            estimator_factory(entry, name), bank, folds, entry_grid(entry, bank), metric, cv_chunks
        )
    except Exception as exc:
        if not is_fit_failure(exc):
            raise
        # the estimator refused or failed on these data: a record saying so, so that
        # the other jobs and the tables go on and the table marks this cell "failed"
        if log is not None:
            log.exception("fit of split %d failed", split)
        return {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}

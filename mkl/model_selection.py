"""Model selection over a hyperparameter grid by inner cross-validation on
precomputed kernels (the metrics are in :mod:`mkl.metrics`).

:func:`cross_validate_grid` fits every grid point on every inner fold's
training rows and scores the held-out rows (every point and fold recorded);
:func:`select_best` picks the best mean score (ties: the sparser model, then
the first point in grid order). Classifiers are scored by accuracy, F1, MCC or AUC, regressors
(``make_estimator(name, task="regression")``) by RMSE, MAE or R^2, novelty detectors
(``task="novelty"``) by the AUC of their scores against labels
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
from .metrics import ALL_METRICS, LOWER_IS_BETTER, score
from .solvers.solution_cache import shared_solutions

if TYPE_CHECKING:
    from .algorithms.base import BaseMKL


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
    make: Callable[..., BaseMKL],
    K: np.ndarray,
    y: np.ndarray,
    folds: np.ndarray,
    points: Sequence[Mapping],
    metric: str = "accuracy",
) -> list[dict]:
    """Inner CV: ``folds[i]`` is the fold id of training point i. ``K`` is the
    training block (M, n, n) or a :class:`~mkl.banks.factor_bank.FactorBank`. Each
    fold's sub-bank is sliced once and reused across the grid. Returns one record per
    grid point: params, per-fold scores, mean, per-fold fit details and the
    warnings the fits raised.

    A fit that fails on its fold (:func:`mkl.exceptions.is_fit_failure`: bad
    input for these data, a numerical failure) fails its grid point, which
    then reads ``mean_score: None`` with the ``error``; the other points go on.
    Any other exception (``MemoryError``, a bug) propagates."""
    # here, not at the top: the workflow plans its grids with grid_points at every
    # start of Snakemake, which then need not import SciPy's sparse matrices (0.3 s)
    from .banks.factor_bank import FactorBank

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
        # grid points whose fits end in the same SVM solve it once (mkl.solvers.solution_cache)
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


# mean CV scores within this of each other are equal: means of the same fold
# scores differ by rounding only
TIE_TOL = 1e-12


def select_best(records: Sequence[Mapping], metric: str = "accuracy") -> int:
    """Index of the best mean CV score (the largest; the smallest for an error
    such as RMSE, ``LOWER_IS_BETTER``).

    Ties (means within ``TIE_TOL``) go to the sparser model: the point whose
    fold fits selected the fewest kernels on average (:func:`mean_selected`),
    of equally many the first in grid order. Among models the data cannot
    tell apart, the simplest, as the one-standard-error rule does (Breiman et
    al. 1984; Hastie, Tibshirani, Friedman 2009, sec. 7.10); for an MKL model
    its complexity is the number of kernels it keeps. Where every point keeps
    the same kernels (uniform weights, one kernel) this is the grid order.

    Failed grid points (``mean_score: None``) are skipped; when every point
    failed, a :class:`SolverError` lists their errors."""
    means = np.array([np.nan if r["mean_score"] is None else r["mean_score"] for r in records])
    if not np.isfinite(means).any():
        errors = sorted({r["error"] for r in records if r.get("error")})
        detail = f": {'; '.join(errors)}" if errors else ""
        raise SolverError(f"no grid point gave a finite cross-validation score{detail}")
    best = np.nanmin(means) if metric in LOWER_IS_BETTER else np.nanmax(means)
    tied = np.flatnonzero(np.abs(means - best) <= TIE_TOL)  # NaN: never tied
    counts = [mean_selected(records[i]) for i in tied]
    return int(tied[np.argmin(counts)])  # argmin: the first of equal counts


def mean_selected(record: Mapping) -> float:
    """The kernels a grid point's fold fits selected, averaged over the folds
    (and over the binary tasks of a multiclass fit); inf where the record has
    no counts."""
    counts = [
        np.mean(fit["n_selected"])
        for fit in record.get("fold_fits") or ()
        if fit.get("n_selected") is not None
    ]
    return float(np.mean(counts)) if counts else np.inf


def fit_summary(est: BaseMKL, seconds: float) -> dict:
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

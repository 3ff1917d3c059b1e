"""Fit-time scaling of MKL solvers: Kloft, Brefeld, Sonnenburg, Laskov, Mueller,
Zien (NIPS 2009), Figure 1 (MNIST odd vs even, M Gaussian kernels of different
widths, C = 1; time against the training size n at M = 50, and against M at
n = 500; error bars over 5 repetitions).

One *point* is one (n, M): for each repetition, n points are drawn (stratified,
seeded), their features scaled, M Gaussian kernels with geometrically spaced
widths computed, and every series' estimator fitted and timed on the same bank.
The floor F of docs/design.md (one pass forming the uniform combination plus one
SVC fit, C as given) is timed on the same bank, so times can be read in units
of F as well as in seconds.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit
from sklearn.svm import SVC

from ..kernels import KernelSpec, combine, compute_bank
from .preprocessing import scale_features


def draw(y: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Sorted indices of n points drawn stratified by class (seeded)."""
    y = np.asarray(y)
    if not 2 <= n < len(y):
        raise ValueError(f"cannot draw n={n} points from a dataset of {len(y)}")
    sss = StratifiedShuffleSplit(1, train_size=n, random_state=seed)
    idx, _ = next(sss.split(np.zeros(len(y)), y))
    return np.sort(idx)


def gaussian_bank(X: np.ndarray, n_kernels: int, widths: Sequence[float], dtype=np.float64):
    """M unnormalised Gaussian kernels (diagonal 1) with widths geometrically
    spaced over [widths[0], widths[1]]."""
    lo, hi = widths
    if not 0 < lo <= hi:
        raise ValueError(f"Gaussian widths must satisfy 0 < low <= high, got {widths!r}")
    if n_kernels < 1:
        raise ValueError(f"the number of kernels must be >= 1, got {n_kernels}")
    specs = [
        KernelSpec("gaussian", float(w), normalise="none") for w in np.geomspace(lo, hi, n_kernels)
    ]
    K, _, _ = compute_bank(specs, X, dtype=dtype)
    return K


def time_floor(K: np.ndarray, y: np.ndarray, C: float) -> float:
    """Seconds of one uniform-combination pass plus one SVC fit (the floor F)."""
    t0 = time.perf_counter()
    Kc = combine(K, np.full(K.shape[0], 1.0 / K.shape[0]))
    SVC(C=C, kernel="precomputed").fit(Kc, y)
    return time.perf_counter() - t0


def _finite_or_none(value) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


def time_fit(name: str, params: Mapping, K: np.ndarray, y: np.ndarray) -> dict:
    """Fit a registry estimator once; wall time and what it reports about convergence."""
    from .. import make_estimator

    est = make_estimator(name, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        est.fit(K, y)
        seconds = time.perf_counter() - t0
    last = est.history_[-1] if getattr(est, "history_", None) else {}
    return {
        "seconds": seconds,
        "iterations": int(getattr(est, "n_iter_", 1)),
        "svm_solves": int(last.get("svm_solves", 1)),
        "objective": _finite_or_none(getattr(est, "objective_", None)),
        "gap": _finite_or_none(getattr(est, "gap_", None)),  # None: the method computes none
        "converged": bool(getattr(est, "converged_", True)),
        "n_selected": int(getattr(est, "n_selected_", K.shape[0])),
    }


def timing_point(
    X: np.ndarray,
    y: np.ndarray,
    n: int,
    n_kernels: int,
    widths: Sequence[float],
    series: Mapping[str, tuple[str, Mapping]],
    repetitions: int,
    seed: int = 0,
    feature_scaling: str = "minmax",
    dtype=np.float64,
) -> list[dict]:
    """One record per (repetition, series): seconds and convergence of each fit,
    and the floor F timed on the same bank. ``series`` maps a label to
    (registry name, params); params must fix C (the figure's protocol)."""
    if repetitions < 1:
        raise ValueError(f"repetitions must be >= 1, got {repetitions}")
    records = []
    for rep, s in enumerate(np.random.SeedSequence(seed).generate_state(repetitions)):
        idx = draw(y, n, int(s))
        Xs, _ = scale_features(X[idx], X[idx][:0], feature_scaling)
        K = gaussian_bank(Xs, n_kernels, widths, dtype=dtype)
        ys = y[idx]
        for label, (name, params) in series.items():
            if "C" not in params:
                raise ValueError(f"timing series {label!r} must fix C in its params")
            floor = time_floor(K, ys, float(params["C"]))
            rec = time_fit(name, params, K, ys)
            records.append(
                {
                    "n": n,
                    "kernels": n_kernels,
                    "repetition": rep,
                    "series": label,
                    "algorithm": name,
                    "floor_seconds": floor,
                    **rec,
                }
            )
        del K
    return records

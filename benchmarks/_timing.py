"""Timing helpers shared by the benchmark scripts (docs/design.md, performance)."""

from __future__ import annotations

import time

import numpy as np
from sklearn.svm import SVC


def median_time(fn, repeats: int) -> float:
    """Median wall time of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def floor(K: np.ndarray, y: np.ndarray, C: float, repeats: int) -> dict:
    """The floor F, timed in the caller's run: one ``np.tensordot`` pass forming
    the uniform combination of the bank plus one ``SVC(kernel='precomputed')``
    fit on it. Returns F, the pass and the SVC fit in seconds."""
    M = K.shape[0]
    w = np.full(M, 1.0 / M, dtype=K.dtype)
    t_pass = median_time(lambda: np.tensordot(w, K, axes=1), repeats)
    Kc = np.ascontiguousarray(np.tensordot(w, K, axes=1), dtype=np.float64)
    t_svc = median_time(lambda: SVC(C=C, kernel="precomputed").fit(Kc, y), repeats)
    return {"F": t_pass + t_svc, "pass": t_pass, "svc": t_svc}

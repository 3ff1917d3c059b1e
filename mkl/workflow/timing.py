"""Fit-time scaling of MKL solvers: Kloft, Brefeld, Sonnenburg, Laskov, Mueller,
Zien (NIPS 2009), Figure 1 (MNIST odd vs even, M Gaussian kernels of different
widths, C = 1; time against the training size n at M = 50, and against M at
n = 500; error bars over 5 repetitions), and its extensions to factor banks.

One *point* is one (n, M, representation): for each repetition, n points are
drawn (stratified, seeded), their features scaled, M Gaussian kernels with
geometrically spaced widths computed (dense blocks, or Nystroem / random
Fourier factors, ``mkl.banks.factor_builders``), and every series' estimator fitted
and timed on the same bank. The floor F of docs/design.md is timed on the same
bank, so times can be read in units of F as well as in seconds: for a dense
bank one pass forming the uniform combination plus one SVM solve on it, for a
factor bank one SVM solve on the uniform weights plus one pass Z'v (its
combination is the weight vector, nothing to form).

Optional, per figure:

* ``test_points``: that many further points are drawn, disjoint from the
  training points, and every fit's test accuracy is recorded;
* ``translations: s`` (image data, ``image_shape`` given): the training pool is
  every image with each of its (2s + 1)^2 translations by up to s pixels
  (zero fill), as Loosli, Canu and Bottou (2007) grow MNIST; this lets n exceed
  the 10,000 images of the MNIST test set. Test points are untranslated images
  whose originals are never in the training pool.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit

from ..banks.factor_bank import FactorBank
from ..kernels.dense import compute_bank
from ..kernels.specs import KernelSpec
from ..solvers.inner import inner_problem
from .preprocessing import scale_features

FLOOR_TOL = 1e-3  # the floor's SVM tolerance (libsvm's default)


def draw(y: np.ndarray, n: int, seed: int, pool: np.ndarray | None = None) -> np.ndarray:
    """Sorted indices of n points drawn stratified by class (seeded), from
    ``pool`` (indices into y; all points when None)."""
    y = np.asarray(y)
    pool = np.arange(len(y)) if pool is None else np.asarray(pool)
    if not 2 <= n < len(pool):
        raise ValueError(f"cannot draw n={n} points from a pool of {len(pool)}")
    sss = StratifiedShuffleSplit(1, train_size=n, random_state=seed)
    idx, _ = next(sss.split(np.zeros(len(pool)), y[pool]))
    return np.sort(pool[idx])


def translate_images(
    X: np.ndarray, sources: np.ndarray, shifts: np.ndarray, translations: int, image_shape
) -> np.ndarray:
    """Rows ``X[sources]`` as images of ``image_shape``, each moved by its shift
    code (0 .. (2s+1)^2 - 1: dy = code // (2s+1) - s, dx = code % (2s+1) - s),
    the uncovered pixels set to 0."""
    h, w = image_shape
    if h * w != X.shape[1]:
        raise ValueError(f"image_shape {tuple(image_shape)} does not match {X.shape[1]} features")
    k = 2 * translations + 1
    images = X[sources].reshape(-1, h, w)
    out = np.zeros_like(images)
    for code in np.unique(shifts):
        dy, dx = code // k - translations, code % k - translations
        sel = shifts == code
        out[sel, max(dy, 0) : h + min(dy, 0), max(dx, 0) : w + min(dx, 0)] = images[
            sel, max(-dy, 0) : h - max(dy, 0), max(-dx, 0) : w - max(dx, 0)
        ]
    return out.reshape(len(sources), h * w)


def draw_points(
    X: np.ndarray,
    y: np.ndarray,
    n: int,
    seed: int,
    test_points: int = 0,
    translations: int = 0,
    image_shape: Sequence[int] | None = None,
):
    """(X_train, y_train, X_test, y_test) of one repetition: ``test_points``
    untranslated points drawn first (stratified), then n training points from
    the other points or, with ``translations`` s > 0, from their (2s + 1)^2
    translations each (X_test is None without test points)."""
    y = np.asarray(y)
    if test_points < 0 or translations < 0:
        raise ValueError("test_points and translations must be >= 0")
    if translations and image_shape is None:
        raise ValueError("translations need the images' image_shape")
    seed_test, seed_train = np.random.SeedSequence(seed).generate_state(2)
    rest = np.arange(len(y))
    test = None
    if test_points:
        test = draw(y, test_points, int(seed_test))
        rest = np.setdiff1d(rest, test)
    if not translations:
        # without test points, the draw of Kloft et al.'s figure as before
        train = draw(y, n, seed) if not test_points else draw(y, n, int(seed_train), rest)
        X_train, y_train = X[train], y[train]
    else:
        per_image = (2 * translations + 1) ** 2
        codes = draw(np.repeat(y[rest], per_image), n, int(seed_train))
        sources, shifts = rest[codes // per_image], codes % per_image
        X_train = translate_images(X, sources, shifts, translations, image_shape)
        y_train = y[sources]
    if test is None:
        return X_train, y_train, None, None
    return X_train, y_train, X[test], y[test]


def gaussian_specs(n_kernels: int, widths: Sequence[float]) -> list[KernelSpec]:
    """M unnormalised Gaussian kernels (diagonal 1) with widths geometrically
    spaced over [widths[0], widths[1]]."""
    lo, hi = widths
    if not 0 < lo <= hi:
        raise ValueError(f"Gaussian widths must satisfy 0 < low <= high, got {widths!r}")
    if n_kernels < 1:
        raise ValueError(f"the number of kernels must be >= 1, got {n_kernels}")
    return [
        KernelSpec("gaussian", float(w), normalise="none") for w in np.geomspace(lo, hi, n_kernels)
    ]


def gaussian_bank(X: np.ndarray, n_kernels: int, widths: Sequence[float], dtype=np.float64):
    """The dense (M, n, n) bank of :func:`gaussian_specs` on X."""
    K, _, _ = compute_bank(gaussian_specs(n_kernels, widths), X, dtype=dtype)
    return K


def point_bank(
    X_train: np.ndarray,
    X_test: np.ndarray | None,
    n_kernels: int,
    widths: Sequence[float],
    representation: Mapping | None = None,
    dtype=np.float64,
):
    """(training input, test input) of the Gaussian bank: dense blocks
    ((M, n, n) and (M, n_test, n)), or one float32 FactorBank serving as both
    for ``representation`` {kind: nystroem, rank, seed} or {kind: rff, dimension, seed}."""
    from ..banks.factor_builders import compute_factor_bank

    specs = gaussian_specs(n_kernels, widths)
    kind = (representation or {}).get("kind", "dense")
    if kind == "dense":
        K, K_test, _ = compute_bank(specs, X_train, X_test, dtype=dtype)
        return K, K_test
    if kind not in ("nystroem", "rff"):
        raise ValueError(f"a Gaussian timing bank is dense, nystroem or rff, not {kind!r}")
    bank = compute_factor_bank(specs, X_train, X_test, dict(representation), dtype=np.float32)
    return bank, bank


def time_floor(K, y: np.ndarray, C: float) -> float:
    """Seconds of the floor F on bank K (dense array or FactorBank): the uniform
    combination formed (dense: one pass) and one SVM solve on it; for factors,
    whose combination is the weight vector, one solve and one pass Z'v."""
    inner = inner_problem(K)
    theta = np.full(inner.n_kernels, 1.0 / inner.n_kernels)
    classes = np.unique(y)
    y_pm = np.where(y == classes[-1], 1.0, -1.0)
    if isinstance(K, FactorBank):
        _load_factored_solver()
    t0 = time.perf_counter()
    combo = inner.combine(theta)
    sol = inner.solve(combo, theta, y_pm, C, FLOOR_TOL)
    if isinstance(K, FactorBank):
        inner.forms(sol.dual_coef)
    return time.perf_counter() - t0


def _load_factored_solver() -> None:
    """Compile (or load from numba's cache) the factored solver before any clock runs."""
    from ..solvers.coordinate_descent import solve_factored_svm

    solve_factored_svm(np.ones((2, 1)), np.array([0, 1]), np.ones(1), np.array([1.0, -1.0]))


def _finite_or_none(value) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


def _n_kernels(K) -> int:
    return K.n_kernels if isinstance(K, FactorBank) else K.shape[0]


def time_fit(name: str, params: Mapping, K, y: np.ndarray, K_test=None, y_test=None) -> dict:
    """Fit a registry estimator once; wall time, what it reports about
    convergence and, with a test input, its test accuracy (None without)."""
    from ..estimators.factory import make_estimator

    if isinstance(K, FactorBank):
        _load_factored_solver()
    est = make_estimator(name, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        est.fit(K, y)
        seconds = time.perf_counter() - t0
    last = est.history_[-1] if getattr(est, "history_", None) else {}
    accuracy = None if K_test is None else float(np.mean(est.predict(K_test) == y_test))
    return {
        "seconds": seconds,
        "iterations": int(getattr(est, "n_iter_", 1)),
        "svm_solves": int(last.get("svm_solves", 1)),
        "objective": _finite_or_none(getattr(est, "objective_", None)),
        "gap": _finite_or_none(getattr(est, "gap_", None)),  # None: the method computes none
        "converged": bool(getattr(est, "converged_", True)),
        "n_selected": int(getattr(est, "n_selected_", _n_kernels(K))),
        "test_accuracy": accuracy,
    }


WARM_UP_POINTS = 40  # the small dense problem every series fits once before any clock runs


def warm_up(series: Mapping[str, tuple[str, Mapping]], X: np.ndarray, y: np.ndarray, dtype) -> None:
    """Fit every series once, untimed, on a dense bank of the first
    ``WARM_UP_POINTS`` points: a process's first fit pays one-time costs
    (numba's typing context and compiled solvers loaded from its cache, about
    0.7 s here; libsvm's first call) that would otherwise be charged to the
    first series of the first repetition."""
    X, y = X[:WARM_UP_POINTS], y[:WARM_UP_POINTS]
    if len(np.unique(y)) < 2:
        return
    K = gaussian_bank(X, 2, (1.0, 4.0), dtype=dtype)
    for name, params in series.values():
        time_fit(name, params, K, y)


def representation_label(representation: Mapping | None) -> str:
    """dense, nystroem-<rank> or rff-<dimension> (a record's representation)."""
    kind, size = (representation or {}).get("kind", "dense"), _rank(representation)
    return kind if size is None else f"{kind}-{size}"


def _rank(representation: Mapping | None) -> int | None:
    """The factors' rank (Nystroem) or dimension (RFF) per kernel; None when dense."""
    rep = representation or {}
    size = rep.get("rank", rep.get("dimension"))
    return None if size is None else int(size)


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
    representation: Mapping | None = None,
    test_points: int = 0,
    translations: int = 0,
    image_shape: Sequence[int] | None = None,
) -> list[dict]:
    """One record per (repetition, series): seconds and convergence of each fit,
    the floor F timed on the same bank and, with ``test_points``, the test
    accuracy. ``series`` maps a label to (registry name, params); params must
    fix C (the figure's protocol). ``representation``: the bank's (dense when
    None); the module docstring describes ``test_points`` and ``translations``."""
    if repetitions < 1:
        raise ValueError(f"repetitions must be >= 1, got {repetitions}")
    for label, (_, params) in series.items():
        if "C" not in params:
            raise ValueError(f"timing series {label!r} must fix C in its params")
    rep_label = representation_label(representation)
    records = []
    for rep, s in enumerate(np.random.SeedSequence(seed).generate_state(repetitions)):
        X_tr, y_tr, X_te, y_te = draw_points(
            X, y, n, int(s), test_points, translations, image_shape
        )
        X_tr, X_te = scale_features(X_tr, X_tr[:0] if X_te is None else X_te, feature_scaling)
        if rep == 0:
            warm_up(series, X_tr, y_tr, dtype)
        K, K_test = point_bank(
            X_tr, X_te if test_points else None, n_kernels, widths, representation, dtype
        )
        for label, (name, params) in series.items():
            floor = time_floor(K, y_tr, float(params["C"]))
            rec = time_fit(name, params, K, y_tr, K_test, y_te)
            records.append(
                {
                    "n": n,
                    "kernels": n_kernels,
                    "representation": rep_label,
                    "rank": _rank(representation),
                    "repetition": rep,
                    "series": label,
                    "algorithm": name,
                    "floor_seconds": floor,
                    **rec,
                }
            )
        del K, K_test
    return records

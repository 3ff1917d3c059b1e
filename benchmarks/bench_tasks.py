"""Fit times of MKL regression (epsilon-SVR) and novelty detection (one-class
SVM) in units of their floor, timed in the same run: F = one pass forming the
uniform combination + one ``SVR`` (or ``OneClassSVM``) fit on it.

Workloads: scikit-learn's diabetes data (n = 442, 10 features, standardised,
targets standardised) and a synthetic regression y = sin(2 x_1) + x_2^2 / 2 +
noise at the sizes of ``--n``; a bank of ``--kernels`` Gaussian kernels of
unit diagonal, widths 0.5 .. 20; C = 1, epsilon = 0.1, nu = 0.2, gap 0.01.
Every figure comes from this one run; BLAS is limited to one thread; times
are medians of ``--repeats`` fits.

    python benchmarks/bench_tasks.py
    python benchmarks/bench_tasks.py --n 1000 2000 --kernels 50
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from _timing import median_time
from sklearn.datasets import load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVR, OneClassSVM
from threadpoolctl import threadpool_limits

import mkl
from mkl.kernels import KernelSpec, compute_bank

ALGORITHMS = ["uniform", "simplemkl", "level", "lp_analytic", "gmkl"]
PARAMS = {"lp_analytic": {"p": 2.0}, "gmkl": {"v": 0.5}}


def workloads(sizes: list[int]):
    X, y = load_diabetes(return_X_y=True)
    yield "diabetes", X, y
    for n in sizes:
        rng = np.random.default_rng(n)
        Z = rng.normal(size=(n, 5))
        yield (
            f"synthetic n={n}",
            Z,
            np.sin(2 * Z[:, 0]) + 0.5 * Z[:, 1] ** 2 + 0.3 * rng.normal(size=n),
        )


def bank(X, M: int) -> np.ndarray:
    X = (X - X.mean(0)) / X.std(0)
    specs = [
        KernelSpec("gaussian", float(w), normalise="unit_diagonal")
        for w in np.geomspace(0.5, 20, M)
    ]
    return compute_bank(specs, X)[0]


def floor(K, y, task: str, repeats: int) -> float:
    w = np.full(K.shape[0], 1.0 / K.shape[0])
    t_pass = median_time(lambda: np.tensordot(w, K, axes=1), repeats)
    Kc = np.ascontiguousarray(np.tensordot(w, K, axes=1))
    if task == "regression":
        fit = lambda: SVR(kernel="precomputed", C=1.0, epsilon=0.1).fit(Kc, y)  # noqa: E731
    else:
        fit = lambda: OneClassSVM(kernel="precomputed", nu=0.2).fit(Kc)  # noqa: E731
    return t_pass + median_time(fit, repeats)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", nargs="*", type=int, default=[1000], help="synthetic sizes")
    ap.add_argument("--kernels", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print("| workload | task | F | method | fit | in F | iterations | gap |")
    print("|---|---|---|---|---|---|---|---|")
    for label, X, y in workloads(args.n):
        K = bank(X, args.kernels)
        y = (y - y.mean()) / y.std()
        for task in ("regression", "novelty"):
            with threadpool_limits(1), warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                F = floor(K, y, task, args.repeats)
                for name in ALGORITHMS:
                    if task == "regression":
                        est = mkl.make_regressor(name, C=1.0, epsilon=0.1, **PARAMS.get(name, {}))
                        t = median_time(lambda e=est, K=K, y=y: e.fit(K, y), args.repeats)
                    else:
                        est = mkl.make_novelty_detector(name, nu=0.2, **PARAMS.get(name, {}))
                        t = median_time(lambda e=est, K=K: e.fit(K), args.repeats)
                    print(
                        f"| {label} (M={args.kernels}) | {task} | {1000 * F:.1f} ms | {name} | "
                        f"{1000 * t:.1f} ms | {t / F:.1f} | {est.n_iter_} | {est.gap_:.1e} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()

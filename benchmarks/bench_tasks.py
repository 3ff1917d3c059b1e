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

``--factors N ...`` times the same methods on Nystroem factor banks (rank
``--rank`` per kernel) of the synthetic regression at sizes N, where no n x n
matrix is formed. The floor is then that of the factored problem: one solve
at uniform weights by liblinear's own dual coordinate descent on the
concatenated features sqrt(theta_m) Z_m (``LinearSVR``, the same L1-loss SVR
dual with a regularised intercept) or libsvm's one-class SVM with a linear
kernel on them (the same one-class dual); the table also gives our factored
solver's time and objective against those libraries' on that one problem.

    python benchmarks/bench_tasks.py --factors 20000 100000 --kernels 10 --rank 100
"""

from __future__ import annotations

import argparse
import warnings


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", nargs="*", type=int, default=[1000], help="synthetic sizes")
    ap.add_argument("--kernels", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--factors", nargs="*", type=int, default=[], help="factor-bank sizes")
    ap.add_argument("--rank", type=int, default=100, help="Nystroem rank per kernel")
    return ap.parse_args()


if __name__ == "__main__":
    # before the imports below: --help answers in a tenth of a second, not in the
    # seconds that scikit-learn, SciPy and mkl take to import
    ARGS = parse_args()

import numpy as np
from _timing import median_time
from sklearn.datasets import load_diabetes
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVR, OneClassSVM
from threadpoolctl import threadpool_limits

import mkl
from mkl.kernels.dense import compute_bank
from mkl.kernels.specs import KernelSpec

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


def factor_floor(Z, offsets, y, task: str, repeats: int):
    """The library solve of the factored problem at uniform weights: (seconds,
    its dual objective on our scale); and our solver's (seconds, objective)."""
    from sklearn.svm import LinearSVR

    from mkl.solvers.coordinate_descent import solve_factored_one_class, solve_factored_svr

    M = len(offsets) - 1
    theta = np.full(M, 1.0 / M)
    features = Z * np.sqrt(1.0 / M)  # the linear kernel of these is K(theta)
    n = len(y)
    if task == "regression":
        # liblinear's -B 1 appends a constant feature of value 1: b^2 = 1 here too
        lib = LinearSVR(
            C=1.0, epsilon=0.1, dual=True, tol=1e-3, max_iter=100000, intercept_scaling=1.0
        )
        t_lib = median_time(lambda: lib.fit(features, y), repeats)
        b = float(np.ravel(lib.intercept_)[0])
        r = y - features @ lib.coef_ - b  # its primal value: an upper bound on the dual optimum
        value_lib = 0.5 * (lib.coef_ @ lib.coef_ + b**2) + np.maximum(np.abs(r) - 0.1, 0).sum()
        ours = lambda: solve_factored_svr(Z, offsets, theta, y, 1.0, 0.1, 1e-3)  # noqa: E731
    else:
        lib = OneClassSVM(kernel="linear", nu=0.2, tol=1e-3)
        t_lib = median_time(lambda: lib.fit(features), repeats)
        a = np.zeros(n)
        a[lib.support_] = lib.dual_coef_[0] / (0.2 * n)
        w = features.T @ a
        value_lib = -0.5 * float(w @ w)
        ours = lambda: solve_factored_one_class(Z, offsets, theta, 0.2, 1e-3)  # noqa: E731
    t_ours = median_time(ours, repeats)
    return t_lib, float(value_lib), t_ours, float(ours().objective)


def run_factors(sizes: list[int], M: int, rank: int, repeats: int) -> None:
    from mkl.banks.factor_builders import nystroem_bank

    print(
        "\n| workload | task | F (library solve) | ours, one solve | objective, library / ours "
        "| method | fit | in F | iterations | gap |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        rng = np.random.default_rng(n)
        X = rng.normal(size=(n, 5))
        y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=n)
        y = (y - y.mean()) / y.std()
        specs = [
            KernelSpec("gaussian", float(w), normalise="unit_diagonal")
            for w in np.geomspace(0.5, 20, M)
        ]
        fb = nystroem_bank(specs, X, rank=rank, random_state=0)
        for task in ("regression", "novelty"):
            with threadpool_limits(1), warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                F, v_lib, t_one, v_ours = factor_floor(fb.train, fb.offsets, y, task, repeats)
                for name in ALGORITHMS:
                    if task == "regression":
                        est = mkl.make_estimator(
                            name, task="regression", C=1.0, epsilon=0.1, **PARAMS.get(name, {})
                        )
                        t = median_time(lambda e=est, b=fb, y=y: e.fit(b, y), repeats)
                    else:
                        est = mkl.make_estimator(
                            name, task="novelty", nu=0.2, **PARAMS.get(name, {})
                        )
                        t = median_time(lambda e=est, b=fb: e.fit(b), repeats)
                    print(
                        f"| synthetic n={n} (M={M}, rank {rank}) | {task} | {F:.2f} s | "
                        f"{t_one:.2f} s | "
                        f"{v_lib:.6g} / {v_ours:.6g} | {name} | {t:.2f} s | {t / F:.1f} | "
                        f"{est.n_iter_} | {est.gap_:.1e} |",
                        flush=True,
                    )


def main(args: argparse.Namespace) -> None:
    if args.factors:
        run_factors(args.factors, args.kernels, args.rank, args.repeats)
        return
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
                        est = mkl.make_estimator(
                            name, task="regression", C=1.0, epsilon=0.1, **PARAMS.get(name, {})
                        )
                        t = median_time(lambda e=est, K=K, y=y: e.fit(K, y), args.repeats)
                    else:
                        est = mkl.make_estimator(
                            name, task="novelty", nu=0.2, **PARAMS.get(name, {})
                        )
                        t = median_time(lambda e=est, K=K: e.fit(K), args.repeats)
                    print(
                        f"| {label} (M={args.kernels}) | {task} | {1000 * F:.1f} ms | {name} | "
                        f"{1000 * t:.1f} ms | {t / F:.1f} | {est.n_iter_} | {est.gap_:.1e} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main(ARGS)

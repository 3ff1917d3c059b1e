"""The warm-startable SMO solver (``mkl.solvers.smo``) against libsvm
(``mkl.solvers.libsvm``, scikit-learn's
``SVC(kernel='precomputed')``) on cold solves, and what warm starts save.

Every figure printed comes from this one run; BLAS is limited to one thread.
Workload: GMKL toy-1 features (standardised), one Gaussian kernel (width 3,
unit diagonal) for the cold solves; for the warm starts, the first iterations
of SimpleMKL's path are mimicked by a sequence of combinations of 10 Gaussian
kernels whose weights move by ``--step`` (relative) per iteration, each solve
started at the previous alpha. Times are medians of ``--repeats`` runs.

    python benchmarks/bench_smo.py
    python benchmarks/bench_smo.py --n 500 2000 5000 --C 1 100 --tol 1e-3 1e-6

The last table counts what warm starts save inside the MKL solvers themselves:
every warm solve of SimpleMKL's and the level method's inner problem (50
Gaussian kernels of unit diagonal, C = 1, tol 0.01) is repeated from zero on
the same combination, and the SMO iterations of both are compared.
"""

from __future__ import annotations

import argparse
from functools import partial


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[500, 2000, 5000])
    parser.add_argument("--C", type=float, nargs="+", default=[1.0, 100.0])
    parser.add_argument("--tol", type=float, nargs="+", default=[1e-3])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--step", type=float, default=0.05)
    parser.add_argument(
        "--oracle-only", action="store_true", help="only the table of warm starts in the solvers"
    )
    return parser.parse_args()


if __name__ == "__main__":
    # before the imports below: --help answers in a tenth of a second, not in the
    # seconds that scikit-learn, SciPy and mkl take to import
    ARGS = parse_args()

import numpy as np
from _timing import median_time
from threadpoolctl import threadpool_limits

import mkl
from mkl.datasets import gmkl_toy
from mkl.kernels.dense import compute_bank
from mkl.kernels.specs import KernelSpec
from mkl.solvers.inner import DenseKernels
from mkl.solvers.libsvm import solve_svm_dual
from mkl.solvers.smo import solve_svm_smo
from mkl.workflow.timing import gaussian_bank


def bank(n: int, M: int, seed: int = 0):
    X, y = gmkl_toy(1, n=n, seed=seed)
    X = (X - X.mean(0)) / X.std(0)
    specs = [KernelSpec("gaussian", float(w), normalise="none") for w in np.geomspace(1, 10, M)]
    K, _, _ = compute_bank(specs, X)
    return K, y.astype(float)


def main(args: argparse.Namespace) -> None:
    if args.oracle_only:
        oracle_savings(args.n)
        return
    solve_svm_smo(np.eye(2), np.array([1.0, -1.0]))  # compile before timing
    with threadpool_limits(1):
        print("| n | C | tol | libsvm s | SMO s | SMO / libsvm | dual rel. diff | SMO iterations |")
        print("|--:|--:|--:|--:|--:|--:|--:|--:|")
        for n in args.n:
            K, y = bank(n, 10)
            Kc = np.ascontiguousarray(K[5])
            for C in args.C:
                for tol in args.tol:
                    lib = solve_svm_dual(Kc, y, C, tol)
                    smo = solve_svm_smo(Kc, y, C, tol)
                    t_lib = median_time(partial(solve_svm_dual, Kc, y, C, tol), args.repeats)
                    t_smo = median_time(partial(solve_svm_smo, Kc, y, C, tol), args.repeats)
                    diff = abs(smo.objective - lib.objective) / abs(lib.objective)
                    print(
                        f"| {n} | {C:g} | {tol:g} | {t_lib:.4f} | {t_smo:.4f} | "
                        f"{t_smo / t_lib:.2f} | {diff:.1e} | {smo.iterations} |",
                        flush=True,
                    )
        print()
        print("Warm starts along a path of weights (10 kernels, weights moved by", args.step, ")")
        print("| n | C | cold iterations (mean) | warm iterations (mean) | cold s | warm s |")
        print("|--:|--:|--:|--:|--:|--:|")
        rng = np.random.default_rng(0)
        for n in args.n:
            K, y = bank(n, 10)
            for C in args.C:
                theta = np.full(10, 0.1)
                alpha = None
                cold_it, warm_it, cold_s, warm_s = [], [], 0.0, 0.0
                for _ in range(10):
                    theta = theta * np.exp(args.step * rng.normal(size=10))
                    theta /= theta.sum()
                    Kt = np.tensordot(theta, K, axes=1)
                    cold = solve_svm_smo(Kt, y, C, 1e-3)
                    cold_s += median_time(partial(solve_svm_smo, Kt, y, C, 1e-3), 1)
                    if alpha is not None:
                        warm_solve = partial(solve_svm_smo, Kt, y, C, 1e-3, alpha0=alpha)
                        warm = warm_solve()
                        warm_s += median_time(warm_solve, 1)
                        cold_it.append(cold.iterations)
                        warm_it.append(warm.iterations)
                    alpha = cold.alpha
                print(
                    f"| {n} | {C:g} | {np.mean(cold_it):.0f} | {np.mean(warm_it):.0f} | "
                    f"{cold_s:.3f} | {warm_s:.3f} |",
                    flush=True,
                )
    oracle_savings(args.n)


def oracle_savings(ns) -> None:
    """SMO iterations of each warm solve in SimpleMKL and level, against the same
    solve from zero (deterministic counts, no timing)."""
    print()
    print("Warm starts inside the MKL solvers (50 unit-diagonal Gaussian kernels, C = 1)")
    print("| n | method | warm solves | warm iterations (mean) | cold iterations (mean) | saved |")
    print("|--:|---|--:|--:|--:|--:|")
    original = DenseKernels.solve
    for n in ns:
        X, y = gmkl_toy(1, n=n, seed=0)
        K = gaussian_bank((X - X.mean(0)) / X.std(0), 50, [0.5, 20.0])  # bench_fit_time's
        for method in ("simplemkl", "level"):
            pairs = []

            def solve(self, combo, theta, y, C, tol, pairs=pairs):
                warm = self._warm is not None and C is not None
                sol = original(self, combo, theta, y, C, tol)
                if warm:
                    pairs.append((sol.iterations, solve_svm_smo(combo, y, C, tol).iterations))
                return sol

            DenseKernels.solve = solve
            try:
                mkl.make_estimator(method, C=1.0, tol=0.01).fit(K, y)
            finally:
                DenseKernels.solve = original
            warm_it, cold_it = np.array(pairs, dtype=float).T
            print(
                f"| {n} | {method} | {len(pairs)} | {warm_it.mean():.0f} | {cold_it.mean():.0f} | "
                f"{1 - warm_it.sum() / cold_it.sum():.0%} |",
                flush=True,
            )


if __name__ == "__main__":
    main(ARGS)

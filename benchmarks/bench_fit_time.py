"""Fit time of the registered MKL estimators in units of the floor F.

F is one wrapper iteration at its cheapest, timed in this same run: one
``np.tensordot`` pass forming the uniform combination of the bank plus one
``SVC(kernel='precomputed')`` fit on it (DESIGN.md, performance). Figures are
medians over repeats; BLAS is limited to one thread.

    python benchmarks/bench_fit_time.py [--n 500] [--kernels 50] [--float32]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

import mkl
from mkl.datasets import gmkl_toy
from mkl.kernels import KernelSpec, compute_bank


def gaussian_bank(n: int, M: int, dtype, seed: int = 0):
    X, y = gmkl_toy(1, n=n, seed=seed)
    X = (X - X.mean(0)) / X.std(0)
    specs = [
        KernelSpec("gaussian", float(w), normalise="unit_trace") for w in np.geomspace(0.5, 20, M)
    ]
    K, _, _ = compute_bank(specs, X, dtype=dtype)
    return K, y


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--kernels", type=int, default=50)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--float32", action="store_true")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--tol", type=float, default=0.01, help="relative gap to stop at")
    ap.add_argument(
        "--algorithms",
        nargs="*",
        default=[
            "uniform",
            "simplemkl",
            "silp",
            "level",
            "lp_newton:p=2",
            "lp_analytic:p=2",
            "lp_cutting_plane:p=2",
            "gmkl:v=0.5",
        ],
        help="registry names, optionally with params: lp_newton:p=1.333",
    )
    args = ap.parse_args()
    dtype = np.float32 if args.float32 else np.float64
    K, y = gaussian_bank(args.n, args.kernels, dtype)
    # unit-trace kernels need C scaled by n to be a sensible soft margin
    C = args.C * args.n
    w = np.full(args.kernels, 1.0 / args.kernels, dtype=dtype)

    with threadpool_limits(1):
        t_pass = median_time(lambda: np.tensordot(w, K, axes=1), args.repeats)
        Kc = np.ascontiguousarray(np.tensordot(w, K, axes=1), dtype=np.float64)
        t_svc = median_time(lambda: SVC(C=C, kernel="precomputed").fit(Kc, y), args.repeats)
        F = t_pass + t_svc
        print(f"n={args.n} M={args.kernels} {np.dtype(dtype).name}, C={C:g}")
        print(
            f"floor F = {F * 1e3:.2f} ms  (combination pass {t_pass * 1e3:.2f} ms "
            f"+ SVC fit {t_svc * 1e3:.2f} ms)"
        )
        print(
            f"{'algorithm':<18}{'time ms':>10}{'in F':>8}{'in SVC':>8}"
            f"{'svm solves':>12}{'passes':>8}{'iters':>7}{'objective':>14}{'gap':>10}"
        )
        for spec in args.algorithms:
            name, _, extra = spec.partition(":")
            params = {"C": C}
            if name not in ("uniform", "single_best", "linear"):
                params["tol"] = args.tol
            for kv in filter(None, extra.split(",")):
                k, v = kv.split("=")
                params[k] = float(v)
            est = mkl.make_estimator(name, **params)
            t = median_time(lambda e=est: e.fit(K, y), args.repeats)
            last = est.history_[-1]
            solves = last.get("svm_solves", 1)
            passes = last.get("passes", 1)
            print(
                f"{spec:<18}{t * 1e3:>10.2f}{t / F:>8.2f}{t / t_svc:>8.2f}{solves:>12d}"
                f"{passes:>8d}{est.n_iter_:>7d}{est.objective_:>14.8g}{est.gap_:>10.2g}"
            )


if __name__ == "__main__":
    main()

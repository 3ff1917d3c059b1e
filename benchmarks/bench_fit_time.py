"""Fit time of the MKL solvers in units of the floor F, and the two sweeps of
Kloft et al. (2009), Figure 1.

F is one wrapper iteration at its cheapest, timed in the same run: one
``np.tensordot`` pass forming the uniform combination of the bank plus one
``SVC(kernel='precomputed')`` fit on it (docs/design.md, performance). Every figure
printed comes from this one run; BLAS is limited to one thread. The workload:
the GMKL toy-1 features (standardised), M Gaussian kernels with widths
geometrically spaced in [0.5, 20], unit trace, C = n (a unit-trace kernel needs
C scaled by n), relative gap ``--tol`` (0.01).

    python benchmarks/bench_fit_time.py                       # main workload, n=500, M=50
    python benchmarks/bench_fit_time.py --sweep-n 250 500 1000 2000 5000 --float32
    python benchmarks/bench_fit_time.py --sweep-kernels 10 25 50 100 200
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from _timing import floor as timed_floor
from _timing import median_time
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

import mkl
from mkl.kernels import KernelSpec, compute_bank
from mkl.synthetic import gmkl_toy
from mkl.workflow.timing import timing_point

DEFAULT_ALGORITHMS = [
    "uniform",
    "simplemkl",
    "silp",
    "level",
    "lp_newton:p=2",
    "lp_analytic:p=2",
    "lp_cutting_plane:p=2",
    "gmkl:v=0.5",
    "smkl",
]


def gaussian_bank(n: int, M: int, dtype, seed: int = 0):
    X, y = gmkl_toy(1, n=n, seed=seed)
    X = (X - X.mean(0)) / X.std(0)
    widths = np.geomspace(0.5, 20, M)
    specs = [KernelSpec("gaussian", float(w), normalise="unit_trace") for w in widths]
    K, _, _ = compute_bank(specs, X, dtype=dtype)
    return K, y


def parse(spec: str, C: float, tol: float) -> tuple[str, dict]:
    name, _, extra = spec.partition(":")
    params = {"C": C}
    if name not in ("uniform", "single_best", "linear"):
        params["tol"] = tol
    for kv in filter(None, extra.split(",")):
        k, v = kv.split("=")
        try:
            params[k] = float(v)
        except ValueError:  # a named option, e.g. smkl:step=theory
            params[k] = v
    return name, params


def measure(K, y, algorithms, repeats: int, tol: float) -> tuple[dict, list[dict]]:
    """F and each solver's median fit time, SVM solves, passes and result."""
    C = float(K.shape[1])
    floor = timed_floor(K, y, C, repeats)
    t_svc = floor["svc"]
    rows = []
    for spec in algorithms:
        name, params = parse(spec, C, tol)
        est = mkl.make_estimator(name, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            t = median_time(lambda e=est: e.fit(K, y), repeats)
        last = est.history_[-1]
        rows.append(
            {
                "algorithm": spec,
                "seconds": t,
                "in_F": t / floor["F"],
                "in_SVC": t / t_svc,
                "svm_solves": last.get("svm_solves", 1),
                "passes": last.get("passes", 1),
                "iterations": est.n_iter_,
                "objective": est.objective_,
                "gap": est.gap_,
                "converged": est.converged_,
            }
        )
    return floor, rows


def print_main(floor, rows, header):
    print(header)
    print(
        f"floor F = {floor['F'] * 1e3:.2f} ms (combination pass {floor['pass'] * 1e3:.2f} ms "
        f"+ SVC fit {floor['svc'] * 1e3:.2f} ms; F = {floor['F'] / floor['svc']:.2f} SVC fits)"
    )
    print(
        f"{'algorithm':<22}{'ms':>9}{'in F':>8}{'in SVC':>8}{'SVM solves':>11}"
        f"{'passes':>8}{'iters':>7}{'objective':>15}{'gap':>9}"
    )
    for r in rows:
        print(
            f"{r['algorithm']:<22}{r['seconds'] * 1e3:>9.1f}{r['in_F']:>8.2f}{r['in_SVC']:>8.2f}"
            f"{r['svm_solves']:>11d}{r['passes']:>8d}{r['iterations']:>7d}"
            f"{r['objective']:>15.8g}{r['gap']:>9.2g}"
        )


def sweep(label, values, args):
    """Kloft et al. Figure 1 on the toy data: seconds (mean ± std over fresh
    draws) per value, by the workflow's own timing code (mkl.workflow.timing). Kernels
    have unit diagonal there, so C = 1 is the C = n of the unit-trace bank above."""
    X, y = gmkl_toy(1, n=max(max(values) if label == "n" else args.n, 500) * 2, seed=0)
    series = {a: parse(a, 1.0, args.tol) for a in args.algorithms}
    print(f"\nseconds per fit vs {label} (mean ± std over {args.seeds} draws; F in ms)")
    print(f"{label:>8}{'F ms':>9}" + "".join(f"{a:>22}" for a in args.algorithms))
    for v in values:
        n, m = (v, args.kernels) if label == "n" else (args.n, v)
        recs = timing_point(
            X,
            y,
            n,
            m,
            [0.5, 20.0],
            series,
            args.seeds,
            feature_scaling="standardise",
            dtype=np.float32 if args.float32 else np.float64,
        )
        floor = np.mean([r["floor_seconds"] for r in recs])
        cells = "".join(
            f"{np.mean(t):>13.3f} ± {np.std(t):<6.3f}"
            for t in ([r["seconds"] for r in recs if r["series"] == a] for a in args.algorithms)
        )
        print(f"{v:>8}{floor * 1e3:>9.1f}{cells}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--kernels", type=int, default=50)
    ap.add_argument("--float32", action="store_true")
    ap.add_argument("--repeats", type=int, default=5, help="timings per figure (median)")
    ap.add_argument("--tol", type=float, default=0.01, help="relative gap to stop at")
    ap.add_argument(
        "--algorithms",
        nargs="*",
        default=DEFAULT_ALGORITHMS,
        help="registry names, optionally with params: lp_newton:p=1.333",
    )
    ap.add_argument("--sweep-n", nargs="*", type=int, help="training sizes (M = --kernels)")
    ap.add_argument("--sweep-kernels", nargs="*", type=int, help="kernel counts (n = --n)")
    ap.add_argument("--seeds", type=int, default=5, help="data seeds per sweep point")
    args = ap.parse_args()
    dtype = np.float32 if args.float32 else np.float64
    with threadpool_limits(1):
        if args.sweep_n:
            sweep("n", args.sweep_n, args)
        if args.sweep_kernels:
            sweep("kernels", args.sweep_kernels, args)
        if not (args.sweep_n or args.sweep_kernels):
            K, y = gaussian_bank(args.n, args.kernels, dtype)
            floor, rows = measure(K, y, args.algorithms, args.repeats, args.tol)
            header = f"n={args.n} M={args.kernels} {np.dtype(dtype).name} C={args.n} tol={args.tol}"
            print_main(floor, rows, header)


if __name__ == "__main__":
    main()

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
    python benchmarks/bench_fit_time.py --normalise unit_diagonal --n 500 2000 5000 \
        --algorithms uniform simplemkl level smkl:smoothing=1 easymkl

The main table also gives each solver's share of its fit time spent in SVM
solves (libsvm, the warm-started SMO, EasyMKL's margin solves) and in passes
over the bank (forming a combination, the quadratic forms, the validation
pass), measured by timing those calls during one extra fit.
"""

from __future__ import annotations

import argparse
import functools
import time
import warnings
from contextlib import contextmanager

# p = 4/3 is Kloft et al.'s Fig. 1 setting; ":interleaved=false" is the same
# method as a wrapper (an SVM solved to optimality before every weight step)
_P = "p=1.3333333333333333"
DEFAULT_ALGORITHMS = [
    "uniform",
    "simplemkl",
    "level",
    "silp",
    "silp:interleaved=false",
    f"lp_newton:{_P}",
    f"lp_newton:{_P},interleaved=false",
    f"lp_analytic:{_P}",
    f"lp_analytic:{_P},interleaved=false",
    f"lp_cutting_plane:{_P}",
    f"lp_cutting_plane:{_P},interleaved=false",
    "gmkl:v=0.5",
    "smkl",
]


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--n", type=int, nargs="+", default=[500], help="training sizes of the main table"
    )
    ap.add_argument("--kernels", type=int, default=50)
    ap.add_argument("--float32", action="store_true")
    ap.add_argument(
        "--normalise",
        choices=["unit_trace", "unit_diagonal"],
        default="unit_trace",
        help="kernel normalisation of the main table (C = n for unit trace, 1 for unit diagonal)",
    )
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
    return ap.parse_args()


if __name__ == "__main__":
    # before the imports below: --help answers in a tenth of a second, not in the
    # seconds that scikit-learn, SciPy and mkl take to import
    ARGS = parse_args()

import numpy as np
from _timing import floor as timed_floor
from _timing import median_time
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

import mkl
import mkl.algorithms.base
import mkl.algorithms.margin
import mkl.algorithms.smkl
import mkl.banks.checks
import mkl.solvers.dispatch
import mkl.solvers.inner
import mkl.solvers.smo
from mkl.datasets import gmkl_toy
from mkl.kernels.dense import compute_bank
from mkl.kernels.specs import KernelSpec
from mkl.solvers.inner import DenseKernels
from mkl.workflow.timing import timing_point


def gaussian_bank(n: int, M: int, dtype, seed: int = 0, normalise: str = "unit_trace"):
    X, y = gmkl_toy(1, n=n, seed=seed)
    X = (X - X.mean(0)) / X.std(0)
    widths = np.geomspace(0.5, 20, M)
    specs = [KernelSpec("gaussian", float(w), normalise=normalise) for w in widths]
    K, _, _ = compute_bank(specs, X, dtype=dtype)
    return K, y


def parse(spec: str, C: float, tol: float) -> tuple[str, dict]:
    name, _, extra = spec.partition(":")
    params = {"C": C}
    if name not in ("uniform", "single_best", "linear"):
        params["tol"] = tol
    for kv in filter(None, extra.split(",")):
        k, v = kv.split("=")
        if v.lower() in ("true", "false"):  # lp_newton:interleaved=false
            params[k] = v.lower() == "true"
            continue
        try:
            params[k] = int(v)  # spg:memory=1
        except ValueError:
            try:
                params[k] = float(v)
            except ValueError:  # a named option, e.g. smkl:step=theory
                params[k] = v
    return name, params


# the calls timed as SVM solves and as bank passes: (module or class, attribute)
SVM_CALLS = [
    (mkl.solvers.dispatch, "solve_svm_dual"),
    (mkl.solvers.smo, "solve_svm_smo"),  # imported by solve_dense_dual at the call
    (mkl.algorithms.margin, "solve_svm_dual"),
    (mkl.algorithms.margin, "komd_margin"),
    # the interleaved engine: its chunks and solves, row formation and g moves included
    (mkl.solvers.smo.BankSMO, "advance"),
    (mkl.solvers.smo.BankSMO, "solve"),
]
PASS_CALLS = [
    (mkl.algorithms.base, "check_training_kernels"),  # where the estimators call it
    (mkl.solvers.inner, "combine"),
    (mkl.solvers.inner, "psd_quadratic_forms"),
    (mkl.solvers.inner, "quadratic_forms"),
    (DenseKernels, "forms_and_products"),
    (mkl.algorithms.margin, "combine"),
    (mkl.algorithms.margin, "psd_quadratic_forms"),
]


@contextmanager
def time_shares():
    """Seconds spent in SVM solves and in bank passes while the block runs; a
    call inside another timed call (the engine's solve runs its advance) is
    counted once, by the outermost."""
    spent = {"svm": 0.0, "passes": 0.0}
    saved = []
    depth = [0]

    def timed(fn, key):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if depth[0]:
                return fn(*args, **kwargs)
            depth[0] += 1
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                depth[0] -= 1
                spent[key] += time.perf_counter() - t0

        return wrapper

    for key, calls in (("svm", SVM_CALLS), ("passes", PASS_CALLS)):
        for owner, attr in calls:
            fn = getattr(owner, attr)
            saved.append((owner, attr, fn))
            setattr(owner, attr, timed(fn, key))
    try:
        yield spent
    finally:
        for owner, attr, fn in saved:
            setattr(owner, attr, fn)


WARM_UP = 40  # points of the small bank each solver fits before its clock runs


def measure(K, y, algorithms, repeats: int, tol: float, C: float) -> tuple[dict, list[dict]]:
    """F and each solver's median fit time, SVM solves, passes and result."""
    floor = timed_floor(K, y, C, repeats)
    t_svc = floor["svc"]
    rows = []
    for spec in algorithms:
        name, params = parse(spec, C, tol)
        est = mkl.make_estimator(name, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            # untimed, on a small bank: a process's first fit loads numba's
            # compiled solvers (0.7 s), which no repeat count should carry
            mkl.make_estimator(name, **params).fit(K[:, :WARM_UP, :WARM_UP].copy(), y[:WARM_UP])
            t = median_time(lambda e=est: e.fit(K, y), repeats)
            with time_shares() as spent:
                t0 = time.perf_counter()
                est.fit(K, y)
                t_shares = time.perf_counter() - t0
        last = est.history_[-1]
        rows.append(
            {
                "algorithm": spec,
                "seconds": t,
                "in_F": t / floor["F"],
                "in_SVC": t / t_svc,
                "svm_solves": last.get("svm_solves", 1),
                "passes": last.get("passes", 1),
                "chunks": last.get("chunks", 0),
                "iterations": est.n_iter_,
                "objective": est.objective_,
                "gap": est.gap_,
                "converged": est.converged_,
                "svm_share": spent["svm"] / t_shares,
                "pass_share": spent["passes"] / t_shares,
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
        f"{'algorithm':<36}{'ms':>9}{'in F':>8}{'in SVC':>8}{'SVM solves':>11}{'chunks':>7}"
        f"{'passes':>8}{'iters':>7}{'objective':>15}{'gap':>9}{'% SVM':>7}{'% passes':>9}"
    )
    for r in rows:
        print(
            f"{r['algorithm']:<36}{r['seconds'] * 1e3:>9.1f}{r['in_F']:>8.2f}{r['in_SVC']:>8.2f}"
            f"{r['svm_solves']:>11d}{r['chunks']:>7d}{r['passes']:>8.2f}{r['iterations']:>7d}"
            f"{r['objective']:>15.8g}{r['gap']:>9.2g}"
            f"{100 * r['svm_share']:>7.0f}{100 * r['pass_share']:>9.0f}"
        )


def sweep(label, values, args):
    """Kloft et al. Figure 1 on the toy data: seconds (mean ± std over fresh
    draws) per value, by the workflow's own timing code (mkl.workflow.timing). Kernels
    have unit diagonal there, so C = 1 is the C = n of the unit-trace bank above."""
    X, y = gmkl_toy(1, n=max(max(values) if label == "n" else args.n[0], 500) * 2, seed=0)
    series = {a: parse(a, 1.0, args.tol) for a in args.algorithms}
    print(f"\nseconds per fit vs {label} (mean ± std over {args.seeds} draws; F in ms)")
    print(f"{label:>8}{'F ms':>9}" + "".join(f"{a:>22}" for a in args.algorithms))
    for v in values:
        n, m = (v, args.kernels) if label == "n" else (args.n[0], v)
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


def main(args: argparse.Namespace) -> None:
    dtype = np.float32 if args.float32 else np.float64
    with threadpool_limits(1):
        if args.sweep_n:
            sweep("n", args.sweep_n, args)
        if args.sweep_kernels:
            sweep("kernels", args.sweep_kernels, args)
        if not (args.sweep_n or args.sweep_kernels):
            for n in args.n:
                K, y = gaussian_bank(n, args.kernels, dtype, normalise=args.normalise)
                # a unit-trace kernel is a unit-diagonal one over n: the same SVM with C * n
                C = float(n) if args.normalise == "unit_trace" else 1.0
                floor, rows = measure(K, y, args.algorithms, args.repeats, args.tol, C)
                header = (
                    f"n={n} M={args.kernels} {np.dtype(dtype).name} {args.normalise} "
                    f"C={C:g} tol={args.tol}"
                )
                print_main(floor, rows, header)
                print(flush=True)


if __name__ == "__main__":
    main(ARGS)

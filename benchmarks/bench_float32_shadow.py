"""What a float32 shadow of a float64 bank could gain (issue 59, item 7): each
method's fit on the float64 bank against the same fit on the bank rounded to
float32 (every pass reads half the bytes), and the cost of making that copy,
all in F of the float64 floor timed in the same run (one BLAS thread,
alternating the two banks, medians).

The float32 fit is the shadow's upside before its rounding bound enters the
certificate: the fits on both banks are printed with their iterations, passes,
objectives and gaps so that a difference in the solver's path shows.

    python benchmarks/bench_float32_shadow.py --n 500 1000
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _timing import floor as timed_floor
from _timing import median_time
from bench_fit_time import gaussian_bank, parse
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

import mkl


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[500], help="training sizes")
    ap.add_argument("--kernels", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=5, help="timings per figure (median)")
    ap.add_argument("--tol", type=float, default=0.01, help="relative gap to stop at")
    ap.add_argument(
        "--algorithms",
        nargs="+",
        default=["uniform", "level", "gmkl:v=0.5", "simplemkl", "easymkl"],
    )
    return ap.parse_args()


def alternating_times(est, banks: dict, y: np.ndarray, repeats: int) -> dict:
    """Median fit time on each bank, the banks taking turns within each repeat."""
    times = {label: [] for label in banks}
    for _ in range(repeats):
        for label, K in banks.items():
            t0 = time.perf_counter()
            est.fit(K, y)
            times[label].append(time.perf_counter() - t0)
    return {label: float(np.median(t)) for label, t in times.items()}


def main(args: argparse.Namespace) -> None:
    for n in args.n:
        compare(n, args)


def compare(n: int, args: argparse.Namespace) -> None:
    # unit diagonal, so that C = 1 is the issue's workload
    K64, y = gaussian_bank(n, args.kernels, np.float64, normalise="unit_diagonal")
    K32 = K64.astype(np.float32)
    banks = {"float64": K64, "float32": K32}
    F = timed_floor(K64, y, 1.0, args.repeats)["F"]
    t_copy = median_time(lambda: K64.astype(np.float32), args.repeats)
    print(f"n={n} M={args.kernels} unit_diagonal C=1 tol={args.tol}")
    print(f"floor F = {1e3 * F:.2f} ms (float64); the float32 copy {t_copy / F:.2f} F")
    print(
        f"{'algorithm':<16}{'bank':>9}{'in F':>8}{'iters':>7}{'passes':>8}"
        f"{'objective':>16}{'gap':>10}"
    )
    for spec in args.algorithms:
        name, params = parse(spec, 1.0, args.tol)
        est = mkl.make_estimator(name, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for K in banks.values():  # numba's compiled loops for each dtype, untimed
                est.fit(K[:, :60, :60].copy(), y[:60])
            times = alternating_times(est, banks, y, args.repeats)
            for label, K in banks.items():
                est.fit(K, y)
                last = est.history_[-1]
                print(
                    f"{spec:<16}{label:>9}{times[label] / F:>8.2f}{est.n_iter_:>7}"
                    f"{last.get('passes', 1):>8.2f}{est.objective_:>16.10g}{est.gap_:>10.2g}"
                )


if __name__ == "__main__":
    with threadpool_limits(1):
        main(parse_args())

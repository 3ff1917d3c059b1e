"""spg's cap on the growth of its spectral step (``mkl.algorithms.spg.STEP_GROWTH``):
iterations, SVM solves and passes over the bank with the cap and without it
(``STEP_GROWTH = inf``: Birgin et al.'s step, clipped only to [a_min, a_max]),
on the workload of ``bench_fit_time.py`` (50 Gaussian kernels on GMKL toy 1,
relative gap 0.01; C = n at unit trace, 1 at unit diagonal) over data seeds,
on the simplex and on the elastic-net ball. Counts, not times: they do not
depend on the host or its load.

    python benchmarks/bench_spg_steps.py --seeds 10
    python benchmarks/bench_spg_steps.py --seeds 6 --n 1000 --v 1 0.5
"""

from __future__ import annotations

import argparse


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--kernels", type=int, default=50)
    ap.add_argument("--seeds", type=int, default=10, help="data seeds 0..seeds-1")
    ap.add_argument("--v", type=float, nargs="+", default=[1.0, 0.5], help="1: the simplex")
    ap.add_argument("--tol", type=float, default=0.01)
    return ap.parse_args()


if __name__ == "__main__":
    # before the imports below: --help answers at once, not after mkl's imports
    ARGS = parse_args()

import warnings

import numpy as np
from bench_fit_time import gaussian_bank
from threadpoolctl import threadpool_limits

import mkl
from mkl.algorithms import spg


def counts(K, y, C: float, v: float, tol: float, growth: float) -> tuple[int, int, float]:
    """(iterations, SVM solves, passes) of one spg fit with ``STEP_GROWTH = growth``."""
    kept = spg.STEP_GROWTH
    spg.STEP_GROWTH = growth
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = mkl.make_estimator("spg", C=C, v=v, tol=tol).fit(K, y)
    finally:
        spg.STEP_GROWTH = kept
    last = est.history_[-1]
    return est.n_iter_, int(last["svm_solves"]), float(last["passes"])


def main(args: argparse.Namespace) -> None:
    print(
        f"n = {args.n}, M = {args.kernels}, gap {args.tol}: spg without the cap -> with "
        f"STEP_GROWTH = {spg.STEP_GROWTH:g}"
    )
    print(f"{'normalise':<14}{'v':>4}{'seed':>5}{'iterations':>14}{'SVM solves':>14}{'passes':>16}")
    for normalise, C in (("unit_trace", float(args.n)), ("unit_diagonal", 1.0)):
        for v in args.v:
            total = np.zeros((2, 3))
            for seed in range(args.seeds):
                K, y = gaussian_bank(args.n, args.kernels, np.float64, seed, normalise)
                before = counts(K, y, C, v, args.tol, np.inf)
                after = counts(K, y, C, v, args.tol, spg.STEP_GROWTH)
                total += [before, after]
                print(
                    f"{normalise:<14}{v:>4g}{seed:>5}{before[0]:>7d} ->{after[0]:>4d}"
                    f"{before[1]:>8d} ->{after[1]:>4d}{before[2]:>9.2f} ->{after[2]:>5.2f}"
                )
            print(
                f"{normalise:<14}{v:>4g}  sum{total[0, 0]:>7.0f} ->{total[1, 0]:>4.0f}"
                f"{total[0, 1]:>8.0f} ->{total[1, 1]:>4.0f}{total[0, 2]:>9.2f} ->"
                f"{total[1, 2]:>5.2f}"
            )


if __name__ == "__main__":
    with threadpool_limits(1):
        main(ARGS)

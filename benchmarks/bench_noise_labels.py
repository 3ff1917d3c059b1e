"""Issue 59, item 9: no pathological input. Every certified method on labels
that are pure noise at a very large C, where the SVM is close to hard margin
on data it cannot separate: the fit time of each method against level's in
the same run, whether it converged, its gap and iterations, and the time of
one SVC fit on the uniform combination (the SVM's own cost here).

    python benchmarks/bench_noise_labels.py [--n 400] [--C 1e6] [--algorithms ...]

The target: no method above about 10 times level's time, and
non-convergence reported (``converged``), never hidden.
"""

from __future__ import annotations

import argparse
import time

ALGORITHMS = ["level", "simplemkl", "silp", "spg", "gmkl", "lp_newton", "lp_cutting_plane", "smkl"]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=400, help="training size")
    parser.add_argument("--C", type=float, default=1e6, help="the SVM's C")
    parser.add_argument("--seed", type=int, default=0, help="data seed")
    parser.add_argument("--algorithms", nargs="*", default=ALGORITHMS, help="registry names")
    return parser.parse_args()


if __name__ == "__main__":
    # before the imports below: --help answers at once, not after mkl's imports
    ARGS = parse_args()

import numpy as np
from _timing import floor
from threadpoolctl import threadpool_limits

import mkl


def noise_bank(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Five Gaussian kernels (widths 0.25-4) on 2-d normal points, random labels."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(rng.random(n) < 0.5, 1, -1)
    squared = ((X[:, None] - X[None]) ** 2).sum(-1)
    K = np.stack([np.exp(-squared / (2 * w * w)) for w in (0.25, 0.5, 1.0, 2.0, 4.0)])
    return K, y


def main(args: argparse.Namespace) -> None:
    K, y = noise_bank(args.n, args.seed)
    F = floor(K, y, args.C, repeats=1)
    print(f"n={args.n} M={K.shape[0]} C={args.C:g}, random labels (seed {args.seed})")
    print(f"floor F = {F['F']:.2f} s (one SVC fit on the uniform combination {F['svc']:.2f} s)")
    header = ("s", 8), ("/ level", 9), ("in F", 7), ("converged", 11), ("gap", 10), ("iters", 7)
    print(f"{'algorithm':<18}" + "".join(f"{title:>{width}}" for title, width in header))
    names = ["level", *[a for a in args.algorithms if a != "level"]]
    small_K, small_y = noise_bank(40, args.seed)
    for name in names:  # compiles each method's solvers outside the timings
        mkl.make_estimator(name, C=args.C).fit(small_K, small_y)
    level_time = None
    for name in names:
        t0 = time.perf_counter()
        est = mkl.make_estimator(name, C=args.C).fit(K, y)
        seconds = time.perf_counter() - t0
        level_time = level_time or seconds
        print(
            f"{name:<18}{seconds:>8.1f}{seconds / level_time:>9.2f}{seconds / F['F']:>7.1f}"
            f"{str(bool(est.converged_)):>11}{est.gap_:>10.1e}{est.n_iter_:>7}",
            flush=True,
        )


if __name__ == "__main__":
    with threadpool_limits(1):  # one BLAS thread, as every benchmark here
        main(ARGS)

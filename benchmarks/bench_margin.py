"""EasyMKL and MEMO fit time in units of the floor F, and against MKLpy.

The workload is the MEMO paper's bank (Lauriola et al. 2018): normalised
homogeneous polynomial kernels of degree 1..20 plus the identity (21 kernels,
float64) on features rescaled to [0, 1] (scikit-learn's ``make_classification``,
20 features, seeded). F is timed in the same run: one ``np.tensordot`` pass
forming the average kernel plus one ``SVC(kernel='precomputed')`` fit on it
(C = 1). Every figure printed comes from this one run; BLAS is limited to one
thread.

Printed per n:
* ``easymkl`` (lam = 0.1, hard-margin base SVM) and ``uniform`` (hard margin):
  fit time in F and in SVC fits;
* one margin solve (``komd_margin`` on the average kernel) in F;
* MEMO (theta = 0 and 1, ``--memo-iterations`` accepted steps): margin solves
  and bank passes per iteration, and seconds per iteration in F;
* MKLpy 0.6's AverageMKL, EasyMKL and MEMO on identical inputs when MKLpy is
  importable (an optional benchmark dependency: ``pip install torch==2.13.0
  MKLpy==0.6``), with the largest difference of the EasyMKL weights. MKLpy's
  EasyMKL sums the kernels as given, so both receive the trace-normalised
  bank, on which the two definitions coincide.

    python benchmarks/bench_margin.py                   # n = 250, 500, 1000, 2000
    python benchmarks/bench_margin.py --n 1000 --repeats 5
"""

from __future__ import annotations

import argparse
import warnings


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", nargs="*", type=int, default=[250, 500, 1000, 2000])
    ap.add_argument("--repeats", type=int, default=3, help="timings per figure (median)")
    ap.add_argument("--memo-iterations", type=int, default=20)
    ap.add_argument("--no-mklpy", action="store_true", help="skip MKLpy even if installed")
    return ap.parse_args()


if __name__ == "__main__":
    # before the imports below: --help answers in a tenth of a second, not in the
    # seconds that scikit-learn, SciPy and mkl take to import
    ARGS = parse_args()

import numpy as np
from _timing import floor as timed_floor
from _timing import median_time
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

import mkl
from mkl.kernels.dense import compute_bank
from mkl.kernels.specs import KernelSpec
from mkl.solvers.komd import komd_margin

try:  # optional: MKLpy (needs torch); never a runtime dependency
    import torch
    from MKLpy.algorithms import MEMO as MKLpyMEMO
    from MKLpy.algorithms import AverageMKL as MKLpyAverage
    from MKLpy.algorithms import EasyMKL as MKLpyEasyMKL
except ImportError:  # pragma: no cover - depends on the environment
    MKLpyEasyMKL = None


def hpk_bank(n: int, seed: int = 0):
    X, y = make_classification(n, 20, n_informative=8, random_state=seed)
    X = MinMaxScaler().fit_transform(X)
    specs = [KernelSpec("homogeneous_polynomial", d, -1, "unit_diagonal") for d in range(1, 21)]
    specs.append(KernelSpec("identity", None, -1, "unit_diagonal"))
    K, _, _ = compute_bank(specs, X)
    return K, np.where(y == 1, 1, -1)


def memo_per_iteration(K, y, theta, iterations):
    """Seconds per MEMO iteration (from ``history_``: the loop only, without the
    setup and the final SVM), the whole fit, and the counts per iteration."""
    est = mkl.make_estimator("memo", theta=theta, tol=1e-12, max_iter=iterations)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        seconds = median_time(lambda: est.fit(K, y), 1)
    first, last = est.history_[0], est.history_[-1]
    steps = max(len(est.history_) - 1, 1)
    return {
        "seconds": seconds,
        "seconds_per_iteration": (last["seconds"] - first["seconds"]) / steps,
        "solves_per_iteration": (last["margin_solves"] - 1) / steps,
        "passes_per_iteration": last["passes"] / steps,
        "iterations": steps,
        "objective": est.objective_,
    }


def mklpy_rows(K, y, repeats, memo_iterations):
    """MKLpy's AverageMKL, EasyMKL and MEMO on the trace-normalised bank."""
    n = K.shape[1]
    KL = [torch.from_numpy(Km / n) for Km in K]  # unit-diagonal bank / n: unit trace
    Y = torch.from_numpy(y)
    hard = {"C": 1e7, "kernel": "precomputed"}  # MKLpy's own hard-margin constant
    rows = {}
    avg = MKLpyAverage(learner=SVC(**hard))
    rows["AverageMKL"] = median_time(lambda: avg.fit(KL, Y), repeats)
    easy = MKLpyEasyMKL(lam=0.1, learner=SVC(**hard), solver="libsvm")
    rows["EasyMKL"] = median_time(lambda: easy.fit(KL, Y), repeats)
    memo = MKLpyMEMO(theta=0.0, max_iter=memo_iterations, learner=SVC(**hard), verbose=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows["MEMO"] = median_time(lambda: memo.fit(KL, Y), 1) / memo_iterations
    return rows, easy.solution.weights.numpy(), memo


def run(n, repeats, memo_iterations, with_mklpy):
    K, y = hpk_bank(n)
    fl = timed_floor(K, y, 1.0, repeats)
    F, svc = fl["F"], fl["svc"]
    print(
        f"\nn = {n}, 21 kernels: F = {F * 1e3:.1f} ms (pass {fl['pass'] * 1e3:.1f} ms + "
        f"SVC fit {svc * 1e3:.1f} ms)"
    )
    K_mean = K.mean(0)
    t_margin = median_time(lambda: komd_margin(K_mean, y), repeats)
    print(f"  one margin solve: {t_margin * 1e3:.1f} ms = {t_margin / F:.2f} F")
    for name, params in (("uniform", {"C": None}), ("easymkl", {"lam": 0.1})):
        est = mkl.make_estimator(name, **params)
        t = median_time(lambda e=est: e.fit(K, y), repeats)
        print(f"  {name:<9} fit {t * 1e3:8.1f} ms = {t / F:5.2f} F = {t / svc:5.2f} SVC fits")
    ours_easy = mkl.make_estimator("easymkl", lam=0.1).fit(K, y).weights_
    for theta in (0.0, 1.0):
        r = memo_per_iteration(K, y, theta, memo_iterations)
        print(
            f"  memo theta={theta:g}: {r['seconds_per_iteration'] * 1e3:.1f} ms per iteration = "
            f"{r['seconds_per_iteration'] / F:.2f} F; {r['solves_per_iteration']:.2f} margin "
            f"solves and {r['passes_per_iteration']:.2f} passes per iteration; whole fit "
            f"{r['seconds'] / F:.1f} F ({r['iterations']} iterations, Psi = {r['objective']:.6g})"
        )
    if with_mklpy:
        rows, mklpy_easy, memo = mklpy_rows(K, y, repeats, memo_iterations)
        for name, t in rows.items():
            unit = "per iteration " if name == "MEMO" else ""
            print(f"  MKLpy {name:<10} {unit}{t * 1e3:8.1f} ms = {t / F:6.2f} F")
        diff = np.abs(mklpy_easy - ours_easy).max()
        print(f"  EasyMKL weights, max |ours - MKLpy| = {diff:.2e}")
        ours = mkl.make_estimator("memo", theta=0.0, max_iter=memo_iterations).fit(K, y)
        print(
            f"  MEMO theta=0 after {memo_iterations} iterations: margin ours "
            f"{ours.objective_:.6g} (n times, on the unit-trace scale: "
            f"{ours.objective_ / n:.6g}), MKLpy {memo.solution.objective:.6g}"
        )


def main(args: argparse.Namespace) -> None:
    with_mklpy = MKLpyEasyMKL is not None and not args.no_mklpy
    if not with_mklpy:
        print("MKLpy not importable (or --no-mklpy): comparison skipped")
    with threadpool_limits(1):
        if with_mklpy:
            torch.set_num_threads(1)
        for n in args.n:
            run(n, args.repeats, args.memo_iterations, with_mklpy)


if __name__ == "__main__":
    main(ARGS)

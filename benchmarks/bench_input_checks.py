"""What the input checks of a dense training bank cost, in units of one fit and
of the floor F, timed in the same run (docs/design.md, "Input checks").

Workload: M Gaussian kernels (widths 2^-2..2^4 times sqrt(d)) on n points of
scikit-learn's ``make_classification`` (10 features), C = 10, BLAS limited
to one thread. For each method the fit is timed as it is, then again with a
counter around the PSD certificate (every check of quadratic forms,
:func:`mkl.banks.algebra.refuse_indefinite`, wherever the solvers call it),
which gives the number of checks in a fit and their total time. The
validation pass (:func:`mkl.banks.checks.check_training_kernels`) is timed,
and beside it one read of the diagonal (M n entries), which its PSD part
(negative and zero diagonals) and the zero-kernel warning's traces each make,
and its two combinations as it forms them (numba, one read of the bank) and
as BLAS would, beside the floor's one combination.

    python benchmarks/bench_input_checks.py                  # n = 1000, M = 20
    python benchmarks/bench_input_checks.py --n 500 2000 --m 50
"""

from __future__ import annotations

import argparse
import time
import warnings


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", nargs="*", type=int, default=[1000])
    ap.add_argument("--m", type=int, default=20, help="kernels")
    ap.add_argument("--algorithms", nargs="*", default=["uniform", "simplemkl", "level"])
    ap.add_argument("--repeats", type=int, default=3)
    return ap.parse_args()


if __name__ == "__main__":
    # before the imports below: --help answers at once, not after mkl's imports
    ARGS = parse_args()

import numpy as np
from _timing import floor, median_time
from sklearn.datasets import make_classification
from threadpoolctl import threadpool_limits

import mkl
from mkl.banks import algebra, checks
from mkl.solvers import inner, smo


def problem(n: int, m: int, seed: int = 0):
    X, y = make_classification(n, 10, n_informative=5, random_state=seed)
    X = (X - X.mean(0)) / X.std(0)
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    widths = np.geomspace(0.25, 16.0, m) * np.sqrt(X.shape[1])
    K = np.stack([np.exp(-sq / (2 * w**2)) for w in widths])
    return K, np.where(y == 1, 1, -1)


class CertificateTimer:
    """Counts and times every call of ``refuse_indefinite``, patched where the
    solvers find it (its module, the inner problems', the SMO's), and of
    ``DenseKernels.check_psd`` (the baselines' form on the combined kernel: its
    matrix-vector product is the check's own, unlike the wrapper methods' q_m)."""

    modules = (algebra, inner, smo)

    def __init__(self):
        self.calls, self.seconds = 0, 0.0
        self.original = algebra.refuse_indefinite
        self.original_check_psd = inner.DenseKernels.check_psd
        self.in_check_psd = False

    def _timed(self, fn, nested: bool):
        def timed(*args, **kwargs):
            if nested and self.in_check_psd:  # counted by check_psd's own timer
                return fn(*args, **kwargs)
            self.in_check_psd = not nested
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - t0
                self.calls += 1
                self.in_check_psd = False

        return timed

    def __enter__(self):
        for module in self.modules:
            module.refuse_indefinite = self._timed(self.original, nested=True)
        inner.DenseKernels.check_psd = self._timed(self.original_check_psd, nested=False)
        return self

    def __exit__(self, *exc):
        for module in self.modules:
            module.refuse_indefinite = self.original
        inner.DenseKernels.check_psd = self.original_check_psd


def fit(name: str, K, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mkl.make_estimator(name, C=10.0).fit(K, y)


def run(n: int, m: int, algorithms, repeats: int) -> None:
    K, y = problem(n, m)
    F = floor(K, y, 10.0, repeats)["F"]
    checks.check_training_kernels(K)  # compiled (numba) before it is timed
    t_pass = median_time(lambda: checks.check_training_kernels(K), 10 * repeats)
    # what the PSD part and the zero-kernel warning add to it: reads of the
    # diagonal (M n entries), too short to see as a difference of two passes
    t_diagonal = median_time(lambda: np.einsum("mii->mi", K).max(axis=1), 10 * repeats)
    # the pass's two combinations (the average and the check's), as it forms them
    # (numba, one read of the bank) and as BLAS would (the flattened bank times the
    # two weight rows), beside the floor's one combination (BLAS): which is faster
    # depends on the host (docs/design.md, banks/checks.py)
    flat = K.reshape(m, -1)
    weights = checks.combination_weights(m)
    out = np.empty((2, n, n))
    t_numba = median_time(
        lambda: checks._two_combinations(flat, weights[0], weights[1], out[0], out[1]),
        10 * repeats,
    )
    t_blas_two = median_time(lambda: weights @ flat, 10 * repeats)
    t_blas_one = median_time(lambda: weights[0] @ flat, 10 * repeats)
    print(f"\nn = {n}, M = {m}: floor F = {F * 1e3:.1f} ms")
    print(
        f"  validation pass {t_pass * 1e3:.2f} ms = {t_pass / F:.2f} F, of which a read of "
        f"the diagonal (negative and zero diagonals; the traces) {t_diagonal * 1e3:.3f} ms"
    )
    print(
        f"  its two combinations in one read (numba) {t_numba * 1e3:.2f} ms; by BLAS with "
        f"the two weight rows {t_blas_two * 1e3:.2f} ms; one combination by BLAS (the "
        f"floor's) {t_blas_one * 1e3:.2f} ms"
    )
    for name in algorithms:
        t_fit = median_time(lambda name=name: fit(name, K, y), repeats)
        with CertificateTimer() as timer:
            est = fit(name, K, y)
        print(
            f"  {name:<10} fit {t_fit * 1e3:8.1f} ms = {t_fit / F:5.1f} F ({est.n_iter_} "
            f"iterations); PSD certificate: {timer.calls} checks, "
            f"{timer.seconds * 1e3:.3f} ms = {timer.seconds / t_fit:.1e} fits; "
            f"two diagonal reads = {2 * t_diagonal / t_fit:.1e} fits"
        )


def main(args: argparse.Namespace) -> None:
    with threadpool_limits(1):
        for n in args.n:
            run(n, args.m, args.algorithms, args.repeats)


if __name__ == "__main__":
    main(ARGS)

"""The quadratic forms q_m = v'K_m v over a dense bank: the rows of v's
support only (``mkl.banks.algebra.add_rows``, then a product with v) against one BLAS
matrix-vector pass over the whole bank, and what the choice buys whole fits.

Every figure printed comes from this one run, one BLAS thread:

* per support share (the nonzero entries of v: a dual vector's support
  vectors), the milliseconds of each path on a bank of 50 Gaussian kernels
  (GMKL toy-1 features), n points, medians of ``--repeats``;
* the wrapper methods on scikit-learn's breast-cancer data (569 points,
  standardised, 50 Gaussian kernels of unit diagonal, widths 0.5-20) at
  several C, with the rows path (``SUPPORT_FRACTION`` as shipped) and with the
  whole-bank pass only (``SUPPORT_FRACTION = 0``), alternating, medians of
  ``--repeats`` fits: fit milliseconds, and the support shares met.

    python benchmarks/bench_quadratic_forms.py --n 500 2000
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import median_time


def median_ms(fn, repeats: int) -> float:
    return 1e3 * median_time(fn, repeats)


def forms_table(n: int, repeats: int) -> None:
    from bench_fit_time import gaussian_bank

    from mkl.banks import algebra

    K, _ = gaussian_bank(n, 50, np.float64)
    M = K.shape[0]
    rng = np.random.default_rng(0)
    print(f"\nn = {n}, M = {M}: q_m = v'K_m v, ms (median of {repeats})")
    print("| support | rows of the support | whole-bank pass | ratio | max rel. difference |")
    print("|--:|--:|--:|--:|--:|")
    for share in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        v = rng.standard_normal(n) * (rng.random(n) < share)
        support = np.flatnonzero(v)

        def by_rows(v=v, support=support):
            Kv = np.zeros((M, n))
            algebra.add_rows(K, Kv, support, v)
            return Kv @ v

        def by_pass(v=v):
            return (K.reshape(M * n, n) @ v).reshape(M, n) @ v

        rows = by_rows()  # compiled before timing
        t_rows, t_pass = median_ms(by_rows, repeats), median_ms(by_pass, repeats)
        whole = by_pass()
        diff = float(np.max(np.abs(rows - whole)) / np.max(np.abs(whole)))
        print(
            f"| {support.size / n:.2f} | {t_rows:.2f} | {t_pass:.2f} | "
            f"{t_pass / t_rows:.2f} | {diff:.1e} |"
        )


def fits_table(repeats: int) -> None:
    from sklearn.datasets import load_breast_cancer
    from sklearn.preprocessing import StandardScaler

    import mkl
    import mkl.solvers.inner as inner
    from mkl.banks import algebra
    from mkl.kernels.dense import compute_bank
    from mkl.kernels.specs import KernelSpec

    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    widths = np.geomspace(0.5, 20, 50)
    specs = [KernelSpec("gaussian", float(w), normalise="unit_diagonal") for w in widths]
    K, _, _ = compute_bank(specs, X)
    shares: list[float] = []
    counting = inner.quadratic_forms

    def counted(K, v):
        shares.append(np.count_nonzero(v) / len(v))
        return counting(K, v)

    shipped = algebra.SUPPORT_FRACTION
    print(f"\nbreast cancer (n = {len(y)}, 50 kernels): fit ms, median of {repeats}")
    print("| method | C | support shares | rows path | whole-bank passes | ratio |")
    print("|---|--:|---|--:|--:|--:|")
    for name in ("simplemkl", "level", "gmkl"):
        for C in (1.0, 10.0, 100.0):

            def fit(name=name, C=C):
                mkl.make_estimator(name, C=C).fit(K, y)

            fit()  # compiled before timing
            inner.quadratic_forms = counted
            shares.clear()
            fit()
            inner.quadratic_forms = counting
            met = f"{min(shares):.2f}-{max(shares):.2f}"
            times = {True: [], False: []}
            for _ in range(repeats):
                for rows in (True, False):
                    algebra.SUPPORT_FRACTION = shipped if rows else 0.0
                    times[rows].append(median_ms(fit, 1))
            algebra.SUPPORT_FRACTION = shipped
            t_rows, t_pass = np.median(times[True]), np.median(times[False])
            print(
                f"| {name} | {C:g} | {met} | {t_rows:.1f} | {t_pass:.1f} | {t_pass / t_rows:.2f} |"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[500, 2000])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        for n in args.n:
            forms_table(n, args.repeats)
        fits_table(args.repeats)


if __name__ == "__main__":
    main()

"""The SVM on factored kernels: coordinate descent on the factors against the
same descent on the n x n Hessian formed once (``mkl.solvers.coordinate_descent``,
``method="factors"`` / ``"gram"``), and which one ``"auto"`` picks.

Every figure printed comes from this one run; BLAS is limited to one thread.
Two kinds of bank, both dense factors in memory:

* text: one rank-one kernel per term (``rank_one_bank``) on standardised term
  counts (synthetic Poisson documents over ``--terms`` terms, two topics),
  unit trace: Xu et al.'s K_i = v_i v_i'. Standardising makes the factors dense;
* nystroem: ``nystroem_bank`` of ``--kernels`` Gaussian widths on the digits
  data (scikit-learn's bundled copy, 0-4 against 5-9), rank ``--rank``.

Each solve is cold, at weights on every kernel ("all") or on a tenth of them
("10%", drawn at random, as an L1 method's later iterates), at each C, tol 1e-3.
The columns give the median time of each path, their ratio (above 1: the
Hessian path is faster), the path ``"auto"`` takes, and the relative
difference of the two dual objectives (both stop on the same rule).

    python benchmarks/bench_factored_svm.py
    python benchmarks/bench_factored_svm.py --n 200 1000 --C 1 10000
"""

from __future__ import annotations

import argparse
from functools import partial


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[200, 500, 1000, 1500])
    parser.add_argument("--C", type=float, nargs="+", default=[1.0, 100.0, 10000.0])
    parser.add_argument("--terms", type=int, default=3000, help="text: vocabulary size")
    parser.add_argument("--kernels", type=int, default=10, help="nystroem: Gaussian widths")
    parser.add_argument("--rank", type=int, default=200, help="nystroem: landmarks")
    parser.add_argument("--repeats", type=int, default=3)
    return parser.parse_args()


if __name__ == "__main__":
    # before the imports below: --help answers at once
    ARGS = parse_args()

import numpy as np
from _timing import median_time
from sklearn.datasets import load_digits
from threadpoolctl import threadpool_limits

from mkl.banks.factor_builders import nystroem_bank, rank_one_bank
from mkl.kernels.specs import KernelSpec
from mkl.solvers import coordinate_descent
from mkl.solvers.coordinate_descent import solve_factored_svm


def text_bank(n: int, terms: int, seed: int = 0):
    """Standardised synthetic term counts of two topics, one rank-one kernel
    per term, unit trace: (factors, offsets, labels)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    rates = rng.gamma(0.3, 0.2, size=(2, terms))  # a few frequent terms, a long tail
    counts = rng.poisson(rates[(y > 0).astype(int)] * 3.0).astype(np.float64)
    counts /= np.maximum(np.linalg.norm(counts, axis=1, keepdims=True), 1e-12)
    keep = counts.std(axis=0) > 0  # the terms this sample uses
    X = counts[:, keep]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    bank = rank_one_bank(X.astype(np.float32), normalise="unit_trace")
    return bank.train, bank.offsets, y


DIGITS = 1797  # rows of scikit-learn's digits


def digits_bank(n: int, kernels: int, rank: int, seed: int = 0):
    """Nystroem factors of ``kernels`` Gaussian widths on n digits: (factors,
    offsets, labels)."""
    X, digit = load_digits(return_X_y=True)
    rows = np.random.default_rng(seed).choice(len(X), n, replace=False)
    X = X[rows] / 16.0
    y = np.where(digit[rows] < 5, 1.0, -1.0)
    widths = np.geomspace(1.0, 30.0, kernels)
    specs = [KernelSpec("gaussian", float(w)) for w in widths]
    bank = nystroem_bank(specs, X, rank=min(rank, n), dtype=np.float32)
    return bank.train, bank.offsets, y


def weights(M: int, share: float, rng) -> np.ndarray:
    """Random weights on the simplex over ``share`` of the M kernels."""
    theta = np.zeros(M)
    active = rng.choice(M, max(1, int(round(share * M))), replace=False)
    theta[active] = rng.random(active.size) + 0.1
    return theta / theta.sum()


def auto_path(Z, offsets, theta) -> str:
    width = int(np.diff(offsets)[theta > 0].sum())
    return "gram" if coordinate_descent._gram_pays(Z, Z.shape[0], width) else "factors"


def main(args) -> None:
    rng = np.random.default_rng(0)
    print(
        "| bank | n | columns | active | C | factors (ms) | gram (ms) | ratio | auto "
        "| objective diff |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|--:|---|--:|")
    for kind in ("text", "nystroem"):
        for n in args.n:
            if kind == "text":
                Z, offsets, y = text_bank(n, args.terms)
            elif n > DIGITS:
                print(f"| nystroem | {n} | (the digits data have {DIGITS} rows) |")
                continue
            else:
                Z, offsets, y = digits_bank(n, args.kernels, args.rank)
            M = len(offsets) - 1
            for share in (1.0, 0.1):
                theta = weights(M, share, rng)
                width = int(np.diff(offsets)[theta > 0].sum())
                for C in args.C:
                    times, objectives = {}, {}
                    for method in ("factors", "gram"):
                        solve = partial(
                            solve_factored_svm, Z, offsets, theta, y, C, 1e-3, 1.0, None,
                            method=method,
                        )  # fmt: skip
                        objectives[method] = solve().objective
                        times[method] = median_time(solve, args.repeats)
                    diff = abs(objectives["factors"] - objectives["gram"]) / abs(
                        objectives["factors"]
                    )
                    print(
                        f"| {kind} | {n} | {Z.shape[1]} | {'all' if share == 1 else '10%'} "
                        f"({width}) | {C:g} | {times['factors'] * 1e3:.1f} | "
                        f"{times['gram'] * 1e3:.1f} | {times['factors'] / times['gram']:.2f} | "
                        f"{auto_path(Z, offsets, theta)} | {diff:.1e} |",
                        flush=True,
                    )


if __name__ == "__main__":
    with threadpool_limits(1):
        main(ARGS)

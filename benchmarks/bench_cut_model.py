"""The cutting-plane LP over the simplex: one HiGHS model gaining a row per cut
(``mkl.algorithms.cut_model``) against a fresh ``scipy.optimize.linprog``
(HiGHS, the same tolerances) per call, on random cut sequences; and the kept
model with every kernel a column from the start against the default, which
over FULL_MODEL_MAX_KERNELS kernels prices them in (column generation).

    python benchmarks/bench_cut_model.py

Prints, per (M kernels, K cuts), the mean time of one LP over the sequence
k = 1..K and the largest relative difference of the lower bounds (each
against linprog's).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import linprog

from mkl.algorithms.cut_model import FEASIBILITY_TOL, SimplexCutModel, cut_scale


def cold_minimum(S: np.ndarray, Q: np.ndarray) -> float:
    """The model's minimum by one linprog call, the bound read from its multipliers."""
    K, M = Q.shape
    scale = cut_scale(S, Q)
    c = np.zeros(M + 1)
    c[M] = 1.0
    res = linprog(
        c,
        A_ub=np.hstack([-0.5 * Q / scale, -np.ones((K, 1))]),
        b_ub=-S / scale,
        A_eq=np.hstack([np.ones((1, M)), np.zeros((1, 1))]),
        b_eq=[1.0],
        bounds=[(0, None)] * M + [(None, None)],
        method="highs",
        options={
            "primal_feasibility_tolerance": FEASIBILITY_TOL,
            "dual_feasibility_tolerance": FEASIBILITY_TOL,
        },
    )
    lam = np.maximum(-res.ineqlin.marginals, 0.0)
    lam /= lam.sum()
    return float(lam @ S - 0.5 * np.max(lam @ Q))


def main() -> None:
    rng = np.random.default_rng(1)
    print(
        f"{'M':>6} {'K':>4} {'cold ms/LP':>11} {'kept, all':>10} {'kept ms/LP':>11} "
        f"{'bound diff':>11}"
    )
    for M, K in [(50, 15), (50, 60), (500, 100), (1000, 100), (4000, 100)]:
        # cuts of a convex problem: q_k >= 0 (PSD kernels), S_k of the size of J
        Q = rng.gamma(0.5, size=(K, M)) * rng.uniform(0.5, 2, size=(K, 1))
        S = 1 + 0.1 * rng.random(K) + 0.5 * Q.mean(1)
        model = SimplexCutModel(M)
        every_column = SimplexCutModel(M, full_model_max_kernels=M)
        t_cold = t_all = t_kept = worst = 0.0
        for k in range(1, K + 1):
            t0 = time.perf_counter()
            cold = cold_minimum(S[:k], Q[:k])
            t1 = time.perf_counter()
            full, _ = every_column.minimum(S[:k], Q[:k])
            t2 = time.perf_counter()
            kept, _ = model.minimum(S[:k], Q[:k])
            t3 = time.perf_counter()
            t_cold, t_all, t_kept = t_cold + t1 - t0, t_all + t2 - t1, t_kept + t3 - t2
            worst = max(worst, abs(cold - kept) / abs(cold), abs(cold - full) / abs(cold))
        print(
            f"{M:>6} {K:>4} {1e3 * t_cold / K:>11.2f} {1e3 * t_all / K:>10.2f} "
            f"{1e3 * t_kept / K:>11.2f} {worst:>11.1e}"
        )


if __name__ == "__main__":
    main()

"""Per-iteration cost of the similarity-based kernel learners (Kundu et al. 2010)
in units of one SVM fit, timed in the same run.

Workload: m perturbed-Gaussian similarities (mkl/kernels/similarity.py; width 1..2,
noise 0.1) over n points of scikit-learn's ``make_classification`` (10
features), C = 1, rho = 1, BLAS limited to one thread. The unit is one
``SVC(kernel='precomputed', C=1)`` fit on the denoised average similarity; an
``eigh`` of one n x n block is printed beside it. Per-iteration times come from
``history_`` (the loop only, without the setup and the final SVM).

    python benchmarks/bench_similarity.py                 # n = 100, 200, 400; m = 3
    python benchmarks/bench_similarity.py --n 300 --m 1
"""

from __future__ import annotations

import argparse
import warnings


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", nargs="*", type=int, default=[100, 200, 400])
    ap.add_argument("--m", type=int, default=3, help="similarity matrices")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    return ap.parse_args()


if __name__ == "__main__":
    # before the imports below: --help answers in a tenth of a second, not in the
    # seconds that scikit-learn, SciPy and mkl take to import
    ARGS = parse_args()

import numpy as np
import scipy.linalg
from _timing import median_time
from sklearn.datasets import make_classification
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

import mkl
from mkl.kernels import similarity, spectra


def problem(n: int, m: int, seed: int = 0):
    X, y = make_classification(n, 10, n_informative=5, random_state=seed)
    X = (X - X.mean(0)) / X.std(0)
    S = np.stack(
        [
            similarity.generate_similarity(X, "perturbed_gaussian", width=w, noise=0.1, seed=i)
            for i, w in enumerate(np.linspace(1.0, 2.0, m) * np.sqrt(X.shape[1]))
        ]
    )
    return S, np.where(y == 1, 1, -1)


def per_iteration(name, S, y, iterations, **params):
    est = mkl.make_estimator(name, max_iter=iterations, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(S, y)
    h = est.history_
    steps = max(len(h) - 1, 1)
    return (h[-1]["seconds"] - h[0]["seconds"]) / steps, len(h)


def run(n, m, iterations, repeats):
    S, y = problem(n, m)
    sp = spectra.eigendecompose(S.mean(0))
    K = spectra.from_spectrum(sp.vectors[0], np.maximum(sp.values[0], 0))
    t_svm = median_time(lambda: SVC(C=1.0, kernel="precomputed").fit(K, y), repeats)
    t_eig = median_time(lambda: scipy.linalg.eigh(S[0]), repeats)
    print(f"\nn = {n}, m = {m}: one SVM fit {t_svm * 1e3:.2f} ms, one eigh {t_eig * 1e3:.2f} ms")
    rows = [
        ("indsvm", {"C": 1.0, "rho": 1.0, "tol": 1e-12}),
        ("eskl", {"C": 1.0, "rho": 1.0, "loss": "l3", "tol": 1e-12}),
        ("emkl", {"C": 1.0, "rho": 1.0, "loss": "l3", "tol": 1e-12}),
        ("rekl", {"C": 1.0, "rho": 1.0, "tol": 1e-12}),
    ]
    for name, params in rows:
        t, steps = per_iteration(name, S, y, iterations, **params)
        print(
            f"  {name:<7} {t * 1e3:8.2f} ms per iteration = {t / t_svm:7.1f} SVM fits "
            f"= {t / t_eig:5.1f} eigh ({steps} iterations)"
        )


def main(args: argparse.Namespace) -> None:
    with threadpool_limits(1):
        for n in args.n:
            run(n, args.m, args.iterations, args.repeats)


if __name__ == "__main__":
    main(ARGS)

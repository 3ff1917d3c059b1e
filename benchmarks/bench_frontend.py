"""MultipleKernelClassifier against scikit-learn's SVC on scikit-learn's bundled
datasets: 5-fold stratified cross-validation accuracy (``cross_val_score``)
and its wall time, every model in a Pipeline after a StandardScaler and its
hyperparameters tuned by an inner 3-fold ``GridSearchCV`` on each training
fold:

* ``svc_rbf``: SVC with an RBF kernel, C in {0.1, 1, 10, 100} x gamma in
  {1e-3, 1e-2, 0.1, 1} / n_features (16 points);
* ``uniform``: the average of the default bank's 11 kernels (Gaussian widths
  2^-1..2^6 per feature, i.e. times sqrt(d) on all d features, polynomial
  degrees 1-3, unit diagonal), C in {0.1, 1, 10, 100};
* ``simplemkl``, ``level`` (L1-MKL), ``lp_analytic`` (p = 2): learned weights
  on the same bank, C in {0.1, 1, 10, 100}.

Every figure comes from this one run; BLAS is limited to one thread.

    python benchmarks/bench_frontend.py
    python benchmarks/bench_frontend.py --datasets breast_cancer --methods svc_rbf simplemkl
"""

from __future__ import annotations

import argparse
import time
import warnings


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["breast_cancer", "wine"])
    parser.add_argument(
        "--methods", nargs="+", default=["svc_rbf", "uniform", "simplemkl", "level", "lp_analytic"]
    )
    return parser.parse_args()


if __name__ == "__main__":
    # before the imports below: --help answers in a tenth of a second, not in the
    # seconds that scikit-learn, SciPy and mkl take to import
    ARGS = parse_args()

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from mkl import MultipleKernelClassifier

DATASETS = {"breast_cancer": load_breast_cancer, "wine": load_wine, "digits": load_digits}
C_GRID = [0.1, 1.0, 10.0, 100.0]


def model(method: str, n_features: int):
    if method == "svc_rbf":
        grid = {
            "svc__C": C_GRID,
            "svc__gamma": [g / n_features for g in (1e-3, 1e-2, 0.1, 1.0)],
        }
        pipe = make_pipeline(StandardScaler(), SVC(kernel="rbf"))
    else:
        params = {"p": 2.0} if method == "lp_analytic" else {}
        pipe = make_pipeline(StandardScaler(), MultipleKernelClassifier(algorithm=method, **params))
        grid = {"multiplekernelclassifier__C": C_GRID}
    return GridSearchCV(pipe, grid, cv=StratifiedKFold(3, shuffle=True, random_state=1))


def main(args: argparse.Namespace) -> None:
    outer = StratifiedKFold(5, shuffle=True, random_state=0)
    print("| dataset | n x d, classes | method | accuracy (mean ± std, 5 folds) | wall time |")
    print("|---|---|---|---|---|")
    for name in args.datasets:
        X, y = DATASETS[name](return_X_y=True)
        shape = f"{X.shape[0]} x {X.shape[1]}, {len(np.unique(y))}"
        for method in args.methods:
            with threadpool_limits(1), warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                start = time.perf_counter()
                scores = cross_val_score(model(method, X.shape[1]), X, y, cv=outer)
                seconds = time.perf_counter() - start
            print(
                f"| {name} | {shape} | {method} | {100 * scores.mean():.1f} ± "
                f"{100 * scores.std():.1f} | {seconds:.1f} s |",
                flush=True,
            )


if __name__ == "__main__":
    main(ARGS)

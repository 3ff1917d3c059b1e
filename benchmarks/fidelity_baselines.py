"""Single-kernel baselines on an experiment's own splits: how accurate plain
classifiers are under the protocol a paper's cell was run with, so that a
fidelity miss can be set against what the data allow (docs/protocols.md).

For each dataset, on each split of a run's ``results/splits/<experiment>/<dataset>.h5``
(the training rows standardised with their own mean and sd, as the
experiments do), it reports the majority class's test accuracy and the test
accuracy of a linear SVM, an RBF SVM and logistic regression whose C (and
gamma) the split's own inner folds choose (``PredefinedSplit`` on the
stored fold labels, as the experiments' inner CV). The linear SVM's best C
read off the test set is printed too, as an upper bound, never used to
choose anything.

    python benchmarks/fidelity_baselines.py RUN_DIR xu2010_smkl pima wdbc heart
"""

from __future__ import annotations

import argparse
from pathlib import Path

import h5py
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, PredefinedSplit
from sklearn.svm import SVC

DECADES = 10.0 ** np.arange(-3, 4)


def split_scores(X, y, train, test, folds) -> dict[str, float]:
    """Test accuracies of the baselines on one split."""
    mu, sd = X[train].mean(0), X[train].std(0)
    sd[sd == 0] = 1.0
    Xtr, Xte, ytr, yte = (X[train] - mu) / sd, (X[test] - mu) / sd, y[train], y[test]
    inner = PredefinedSplit(folds)
    models = {
        "linear SVM": (SVC(kernel="linear"), {"C": DECADES}),
        "RBF SVM": (SVC(kernel="rbf"), {"C": DECADES[1:], "gamma": 2.0 ** np.arange(-7, 3)}),
        "logistic": (LogisticRegression(max_iter=1000), {"C": DECADES}),
    }
    scores = {"majority": float(np.mean(yte == np.bincount(ytr).argmax()))}
    for name, (model, grid) in models.items():
        scores[name] = GridSearchCV(model, grid, cv=inner).fit(Xtr, ytr).score(Xte, yte)
    scores["linear SVM, best C on test"] = max(
        SVC(kernel="linear", C=C).fit(Xtr, ytr).score(Xte, yte) for C in DECADES
    )
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("experiment")
    parser.add_argument("datasets", nargs="+")
    args = parser.parse_args()
    results = args.run_dir / "results"
    for dataset in args.datasets:
        with h5py.File(results / "data" / f"{dataset}.h5") as data:
            X, y = data["X"][:], data["y"][:]
        with h5py.File(results / "splits" / args.experiment / f"{dataset}.h5") as splits:
            parts = [splits[s] for s in sorted(splits, key=int)]
            per_split = [
                split_scores(X, y, p["train"][:], p["test"][:], p["folds"][:]) for p in parts
            ]
        cells = [
            f"{name} {100 * np.mean(v):.1f} ± {100 * np.std(v, ddof=1):.1f}"
            for name in per_split[0]
            for v in [[s[name] for s in per_split]]
        ]
        print(f"{dataset} ({len(per_split)} splits): " + "; ".join(cells))


if __name__ == "__main__":
    main()

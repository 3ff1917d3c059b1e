"""Single-kernel baselines on an experiment's own splits: how accurate plain
classifiers are under the protocol a paper's cell was run with, so that a
fidelity miss can be set against what the data allow (docs/protocols.md).

For each dataset, on each split of a run's ``results/splits/<experiment>/<dataset>.h5``
(``mkl.workflow.splits.load_split``; the features standardised with the
training rows' statistics by ``mkl.workflow.preprocessing.scale_features``,
as the experiments do), it reports the majority class's test accuracy and the test
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

from mkl.workflow.dataset import Dataset
from mkl.workflow.preprocessing import scale_features
from mkl.workflow.splits import Split, load_split

DECADES = 10.0 ** np.arange(-3, 4)


def split_scores(X, y, split: Split) -> dict[str, float]:
    """Test accuracies of the baselines on one split."""
    Xtr, Xte = scale_features(X[split.train], X[split.test], "standardise")
    ytr, yte = y[split.train], y[split.test]
    inner = PredefinedSplit(split.folds)
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
        data = Dataset.load(results / "data" / f"{dataset}.h5")
        splits_path = results / "splits" / args.experiment / f"{dataset}.h5"
        with h5py.File(splits_path, "r") as f:
            repetitions = int(f.attrs["repetitions"])
        per_split = [
            split_scores(data.X, data.y, load_split(splits_path, r)) for r in range(repetitions)
        ]
        cells = []
        for name in per_split[0]:
            v = [scores[name] for scores in per_split]
            cells.append(f"{name} {100 * np.mean(v):.1f} ± {100 * np.std(v, ddof=1):.1f}")
        print(f"{dataset} ({len(per_split)} splits): " + "; ".join(cells))


if __name__ == "__main__":
    main()

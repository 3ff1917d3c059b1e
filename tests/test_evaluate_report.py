import functools
import json

import numpy as np
import pandas as pd
import pytest

import mkl
from mkl.bank import KernelBank
from mkl.evaluate import (
    classification_metrics,
    cross_validate_grid,
    evaluate_split,
    grid_points,
    select_best,
)
from mkl.kernels import KernelSpec
from mkl.report import (
    collect_fits,
    paper_comparison,
    paper_tables,
    results_table,
    summarise,
    write_paper_tables,
)

from .conftest import random_problem


def test_grid_points_order():
    pts = grid_points({"C": [1, 10], "cv": [2, 3]})
    assert pts == [{"C": 1, "cv": 2}, {"C": 1, "cv": 3}, {"C": 10, "cv": 2}, {"C": 10, "cv": 3}]
    assert grid_points({}) == [{}]
    with pytest.raises(ValueError, match="must be a list"):
        grid_points({"C": 1})
    with pytest.raises(ValueError, match="is empty"):
        grid_points({"C": []})


def test_metrics_binary_and_multiclass():
    m = classification_metrics([0, 0, 1, 1], [0, 1, 1, 1], np.array([-2, 0.5, 1, 3]), [0, 1])
    assert m["accuracy"] == 0.75 and m["f1"] == pytest.approx(0.8) and m["auc"] == 1.0
    assert m["mcc"] == pytest.approx(1 / np.sqrt(3))
    y = np.array([0, 1, 2, 0, 1, 2])
    s = np.eye(3)[y] + 0.1
    mc = classification_metrics(y, y, s, [0, 1, 2])
    assert mc["accuracy"] == 1 and mc["f1"] == 1 and mc["auc"] == 1 and mc["mcc"] == 1


def test_select_best_ties_go_to_the_first():
    recs = [{"mean_score": 0.8}, {"mean_score": 0.9}, {"mean_score": 0.9}, {"mean_score": None}]
    assert select_best(recs) == 1
    with pytest.raises(ValueError, match="no grid point"):
        select_best([{"mean_score": None}])


def test_cross_validation_records_every_point_and_fold(rng):
    _, y, K = random_problem(rng, n=45)
    folds = np.arange(45) % 3
    make = functools.partial(mkl.make_estimator, "uniform")
    recs = cross_validate_grid(make, K, y, folds, grid_points({"C": [0.1, 1, 10]}))
    assert len(recs) == 3
    for r in recs:
        assert len(r["fold_scores"]) == 3 and len(r["fold_fits"]) == 3
        assert 0 <= r["mean_score"] <= 1
        assert r["mean_score"] == pytest.approx(np.mean(r["fold_scores"]))


def test_cross_validation_matches_a_manual_loop(rng):
    _, y, K = random_problem(rng, n=45)
    folds = np.arange(45) % 3
    make = functools.partial(mkl.make_estimator, "uniform")
    (rec,) = cross_validate_grid(make, K, y, folds, [{"C": 1.0}])
    manual = []
    for f in range(3):
        tr, va = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        est = make(C=1.0).fit(K[:, tr][:, :, tr], y[tr])
        manual.append(np.mean(est.predict(K[:, va][:, :, tr]) == y[va]))
    assert rec["fold_scores"] == pytest.approx(manual)


def test_evaluate_split_record_is_complete_and_json(rng):
    X, y, K = random_problem(rng, n=60)
    tr, te = np.arange(40), np.arange(40, 60)
    specs = [KernelSpec("gaussian", float(w)) for w in range(1, 5)]
    bank = KernelBank(
        train=K[:, tr][:, :, tr], test=K[:, te][:, :, tr], specs=specs, y_train=y[tr], y_test=y[te]
    )
    make = functools.partial(mkl.make_estimator, "uniform")
    rec = evaluate_split(make, bank, np.arange(40) % 4, {"C": [0.1, 10]})
    json.dumps(rec, allow_nan=False)
    assert rec["selected_params"] in ({"C": 0.1}, {"C": 10})
    assert set(rec["test"]) == {"accuracy", "f1", "mcc", "auc"}
    assert 0 <= rec["test"]["accuracy"] <= 1
    assert len(rec["weights"]) == 4 and rec["n_kernels"] == 4
    assert len(rec["grid"]) == 2 and rec["kernel_labels"][0] == "gaussian(1)@all"


def _fit_record(dataset, algorithm, split, acc):
    return {
        "dataset": dataset,
        "algorithm": algorithm,
        "split": split,
        "n_kernels": 3,
        "test": {"accuracy": acc, "f1": acc, "mcc": acc, "auc": acc},
        "fit": {"n_selected": 2, "seconds": 0.1, "converged": True},
        "selected_params": {"C": 1},
    }


def test_tables_and_paper_comparison(tmp_path):
    paths = []
    for i, (ds, alg, sp, acc) in enumerate(
        [
            ("toy", "uniform", 0, 0.70),
            ("toy", "uniform", 1, 0.72),
            ("b", "uniform", 0, 0.9),
            ("b", "uniform", 1, 0.9),
            ("toy", "linear", 0, 0.5),
            ("toy", "linear", 1, 0.6),
        ]
    ):
        p = tmp_path / f"{i}.json"
        p.write_text(json.dumps(_fit_record(ds, alg, sp, acc)))
        paths.append(p)
    # a batch job's file (one record per split) reads as the same rows
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps({"records": [json.loads(p.read_text()) for p in paths[:2]]}))
    pd.testing.assert_frame_equal(collect_fits([batch, *paths[2:]]), collect_fits(paths))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"records": [{"dataset": "toy"}]}))
    with pytest.raises(ValueError, match="bad.json is not a fit record"):
        collect_fits([bad])
    summary = summarise(
        collect_fits(paths), {"dataset": ["toy", "b"], "algorithm": ["uniform", "linear"]}
    )
    assert list(summary["dataset"]) == ["toy", "toy", "b"]
    row = summary.iloc[0]
    assert row["accuracy_mean"] == pytest.approx(0.71) and row["n_splits"] == 2
    table = results_table(summary)
    assert table.loc[0, "uniform"] == "71.0 ± 1.4"
    ref = pd.DataFrame(
        [
            {
                "paper": "p",
                "table": "t1",
                "dataset": "toy1",
                "method": "uw",
                "metric": "accuracy",
                "mean": 70.0,
                "std": 1.0,
                "note": "",
            },
            {
                "paper": "p",
                "table": "t1",
                "dataset": "b",
                "method": "uw",
                "metric": "accuracy",
                "mean": 80.0,
                "std": 2.0,
                "note": "",
            },
        ]
    )
    cmp = paper_comparison(
        summary,
        ref,
        {
            "name": "p",
            "tables": {"t1": ["toy", "b"]},
            "datasets": {"toy": "toy1"},
            "methods": {"uniform": "uw"},
        },
    )
    assert list(cmp["beyond_2sd"]) == [False, True]
    assert list(cmp["difference"]) == [pytest.approx(1.0), pytest.approx(10.0)]
    assert cmp.loc[0, "paper"] == "70.0 ± 1.0"


def test_paper_tables_in_the_papers_order_with_marks_and_missing_datasets(tmp_path):
    summary = pd.DataFrame(
        {
            "dataset": ["a", "a", "b"],
            "algorithm": ["u", "m", "u"],
            "accuracy_mean": [0.9, 0.8, 0.5],
            "accuracy_std": [0.01, 0.02, 0.05],
            "n_splits": [3, 3, 3],
        }
    )
    rows = [
        ("a", "uw", "accuracy", 90.5, 1.0),
        ("a", "uw", "f_score", 10.0, 1.0),  # another metric: ignored
        ("a", "memo", "accuracy", 70.0, 2.0),
        ("b", "uw", "accuracy", 51.0, 3.0),
        ("c", "uw", "accuracy", 60.0, 3.0),
    ]
    ref = pd.DataFrame(
        [
            {
                "paper": "p",
                "table": "t",
                "dataset": d,
                "method": m,
                "metric": k,
                "mean": v,
                "std": sd,
                "note": "",
            }
            for d, m, k, v, sd in rows
        ]
    )
    paper = {
        "name": "p",
        "tables": {"t": ["b", "a", "c"]},  # the paper's row order
        "datasets": {"c": "c"},
        "methods": {"m": "memo", "u": "uw"},
    }
    cmp = paper_comparison(summary, ref, paper, unavailable=["c"])
    wide = paper_tables(cmp, paper)["t"]
    assert list(wide["dataset"]) == ["b", "a", "c"] and list(wide.columns) == [
        "dataset",
        "memo",
        "uw",
    ]
    assert wide.loc[1, "uw"] == "90.0 ± 1.0 (90.5 ± 1.0)"
    assert wide.loc[1, "memo"] == "80.0 ± 2.0 (70.0 ± 2.0) *"  # 10 > 2 x 2
    assert wide.loc[2, "uw"].startswith("not available (60.0 ± 3.0)")
    write_paper_tables({"t": wide}, tmp_path / "p.md", tmp_path / "p.tex", "caption")
    tex = (tmp_path / "p.tex").read_text()
    assert "\\begin{tabular}" in tex and "$\\pm$" in tex and "±" not in tex
    assert "## t" in (tmp_path / "p.md").read_text()
    table = results_table(
        summary, datasets=["a", "b", "c"], algorithms=["u", "m"], unavailable=["c"]
    )
    assert list(table.loc[2]) == ["c", "not available", "not available"]
    assert table.loc[1, "m"] == "n/a"


def test_paper_metric_transform_one_minus():
    """Kloft et al. report 1 - MCC in %: ours is transformed before the comparison."""
    summary = pd.DataFrame(
        {
            "dataset": ["plant"],
            "algorithm": ["l1"],
            "mcc_mean": [0.9],
            "mcc_std": [0.02],
            "n_splits": [10],
        }
    )
    ref = pd.DataFrame(
        [
            {
                "paper": "k",
                "table": "t1",
                "dataset": "plant",
                "method": "p1",
                "metric": "one_minus_mcc_percent",
                "mean": 9.13,
                "std": np.nan,
                "note": "",
            },
            {
                "paper": "k",
                "table": "t1",
                "dataset": "plant",
                "method": "p1",
                "metric": "accuracy",
                "mean": 50.0,
                "std": 1.0,
                "note": "",
            },
        ]
    )
    paper = {
        "name": "k",
        "metric": "mcc",
        "transform": "one_minus",
        "paper_metric": "one_minus_mcc_percent",
        "tables": {"t1": ["plant"]},
        "methods": {"l1": "p1"},
    }
    cmp = paper_comparison(summary, ref, paper)
    assert len(cmp) == 1
    assert cmp.loc[0, "ours"] == "10.0 ± 2.0" and cmp.loc[0, "paper"] == "9.1"
    assert cmp.loc[0, "difference"] == pytest.approx(0.87)
    assert not cmp.loc[0, "beyond_2sd"]  # no paper std: nothing can be judged


def test_curves_are_means_and_stds_over_splits(tmp_path):
    from mkl.report import dataset_curves, plot_curves, sweep_curves

    fits = pd.DataFrame(
        {
            "dataset": ["a", "a", "a", "a", "b", "b"],
            "algorithm": ["s_0", "s_0", "s_1", "s_1", "s_0", "s_0"],
            "split": [0, 1, 0, 1, 0, 1],
            "accuracy": [0.5, 0.7, 0.8, 0.8, 0.6, np.nan],
            "seconds": [1.0, 3.0, 2.0, 2.0, 1.0, 1.0],
        }
    )
    sw = sweep_curves(fits, [("s_0", 0.0), ("s_1", 1.0)], ["a", "b"], ["accuracy"])
    a0 = sw[(sw["line"] == "a") & (sw["x"] == 0.0)].iloc[0]
    assert a0["mean"] == pytest.approx(0.6) and a0["std"] == pytest.approx(
        np.std([0.5, 0.7], ddof=1)
    )
    b0 = sw[(sw["line"] == "b") & (sw["x"] == 0.0)].iloc[0]
    assert b0["n"] == 1 and b0["std"] == 0.0  # a missing value is left out, not a NaN mean
    assert len(sw[sw["line"] == "b"]) == 1  # no fits of s_1 on b: no point
    dc = dataset_curves(fits, {"a": 0.5, "b": 1.0}, ["s_0"], ["seconds"])
    assert dc[["x", "mean"]].values.tolist() == [[0.5, 2.0], [1.0, 1.0]]
    plot_curves(sw, tmp_path / "c.png", tmp_path / "c.pdf", "v", "title")
    assert (tmp_path / "c.png").stat().st_size > 1000 and (tmp_path / "c.pdf").stat().st_size > 1000
    empty = sweep_curves(fits, [("zz", 0.0)], ["a"], ["accuracy"])
    plot_curves(empty, tmp_path / "e.png", tmp_path / "e.pdf", "v", "nothing")
    assert (tmp_path / "e.png").exists()


def test_grid_chunks_cover_the_grid_once_and_merge_back(rng):
    from mkl.evaluate import grid_chunk, merge_chunks

    assert [grid_chunk(7, 3, i) for i in range(3)] == [[0, 1, 2], [3, 4], [5, 6]]
    assert grid_chunk(4, 4, 3) == [3]
    with pytest.raises(ValueError, match="cannot split 2 grid points into 3"):
        grid_chunk(2, 3, 0)
    with pytest.raises(ValueError, match="chunk index 3"):
        grid_chunk(5, 3, 3)
    _, y, K = random_problem(rng)
    folds = np.arange(len(y)) % 3
    points = grid_points({"C": [0.1, 1.0, 10.0], "tol": [0.01, 0.1]})
    make = functools.partial(mkl.make_estimator, "uniform")
    whole = cross_validate_grid(make, K, y, folds, points)
    chunks = []
    for i in range(4):
        idx = grid_chunk(len(points), 4, i)
        recs = cross_validate_grid(make, K, y, folds, [points[j] for j in idx])
        chunks.append({"indices": idx, "records": recs})
    merged = merge_chunks(points, chunks[::-1])  # any order of chunks
    strip = lambda recs: [(r["params"], r["fold_scores"], r["mean_score"]) for r in recs]  # noqa: E731
    assert strip(merged) == strip(whole)
    with pytest.raises(ValueError, match=r"grid points \[0, 1\] are in no CV chunk"):
        merge_chunks(points, chunks[1:])
    with pytest.raises(ValueError, match="appears in two CV chunks"):
        merge_chunks(points, chunks + chunks[:1])
    stale = [{"indices": [0], "records": [dict(whole[0], params={"C": 99})]}]
    with pytest.raises(ValueError, match="has params"):
        merge_chunks(points, stale + chunks[1:])

"""Tables beside the papers' numbers, and the curves behind the figures."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from mkl.workflow.figures import dataset_curves, plot_curves, sweep_curves
from mkl.workflow.tables import (
    collect_fits,
    paper_comparison,
    paper_tables,
    paper_tables_html,
    results_table,
    summarise,
    write_paper_tables,
)


def test_the_stages_that_read_results_import_no_scikit_learn():
    """The aggregate, figure and fidelity jobs read fit records: none pays for
    importing scikit-learn (about 1.7 CPU-s a job), which mkl.model_selection,
    whose metric names they use, defers to its metric functions."""
    probe = (
        "import sys; import mkl.workflow.tables, mkl.workflow.figures, mkl.workflow.fidelity; "
        "print(sorted(m for m in ('sklearn', 'scipy.stats') if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]", run.stdout


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
    # the page: ours and the paper's in adjacent columns, ours shaded beyond two
    # paper sd, no number as "–" (the paper has no memo cell on c)
    page = "".join(paper_tables_html(cmp, paper))
    assert '<td class="beyond">80.0 ± 2.0 *</td><td class="paper">70.0 ± 2.0</td>' in page
    assert '<td>90.0 ± 1.0</td><td class="paper">90.5 ± 1.0</td>' in page
    assert '<th class="row">c</th><td class="missing">–</td><td class="missing">–</td>' in page
    write_paper_tables({"t": wide}, tmp_path / "p.md", tmp_path / "p.tex", "caption")
    tex = (tmp_path / "p.tex").read_text()
    assert "\\begin{tabular}" in tex and "$\\pm$" in tex and "±" not in tex
    assert "## t" in (tmp_path / "p.md").read_text()
    # several of ours for one paper dataset (a sensitivity study): each row names ours
    study = {**paper, "tables": {"t": ["a", "b"]}, "datasets": {"a": "a", "b": "a"}}
    rows = paper_tables(paper_comparison(summary, ref, study), study)["t"]
    assert list(rows["dataset"]) == ["a (a)", "a (b)"]
    assert rows.loc[1, "uw"] == "50.0 ± 5.0 (90.5 ± 1.0) *"
    # several metrics: a table per paper table and metric, each from its own column
    both = {**paper, "metric": ["accuracy", "f1"]}
    with_f1 = summary.assign(f1_mean=[0.1, 0.2, 0.3], f1_std=[0.01, 0.01, 0.01])
    tables = paper_tables(paper_comparison(with_f1, ref, both, unavailable=["c"]), both)
    assert list(tables) == ["t, accuracy", "t, f_score"]
    assert tables["t, accuracy"].equals(wide)
    assert tables["t, f_score"].loc[1, "uw"] == "10.0 ± 1.0 (10.0 ± 1.0)"
    assert tables["t, f_score"].loc[1, "memo"] == ""  # the paper gives no F-score there
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


def test_kernels_selected_are_compared_as_counts_beside_the_accuracy():
    """Yang et al.'s tables give accuracy (%) and the number of kernels selected:
    the section's scale turns our accuracy into %, the count is compared as is."""
    summary = pd.DataFrame(
        {
            "dataset": ["toy"],
            "algorithm": ["gmkl"],
            "accuracy_mean": [0.7],
            "accuracy_std": [0.03],
            "n_selected_mean": [30.0],
            "n_selected_std": [4.0],
            "n_splits": [20],
        }
    )
    row = {"paper": "y", "table": "t4", "dataset": "toy1", "method": "gmkl", "note": ""}
    ref = pd.DataFrame(
        [
            {**row, "metric": "accuracy", "mean": 70.4, "std": 3.3},
            {**row, "metric": "kernels", "mean": 36.8, "std": 5.0},
        ]
    )
    paper = {
        "name": "y",
        "metric": ["accuracy", "n_selected"],
        "scale": 100,
        "transform": "none",
        "tables": {"t4": ["toy"]},
        "datasets": {"toy": "toy1"},
        "methods": {"gmkl": "gmkl"},
    }
    cmp = paper_comparison(summary, ref, paper).set_index("metric")
    assert cmp.loc["accuracy", "ours"] == "70.0 ± 3.0"
    assert cmp.loc["kernels", "ours"] == "30.0 ± 4.0"
    assert cmp.loc["kernels", "difference"] == pytest.approx(-6.8)
    assert not cmp.loc["kernels", "beyond_2sd"]
    # and a transform of the rates never touches the count
    flipped = paper_comparison(summary, ref, {**paper, "transform": "one_minus"})
    assert flipped.set_index("metric").loc["kernels", "ours_mean"] == 30.0


def test_curves_are_means_and_stds_over_splits(tmp_path):

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


def test_fits_that_did_not_converge_are_marked_and_counted(tmp_path):
    from mkl.workflow.tables import NOT_CONVERGED, not_converged_note

    paths = []
    for i, (alg, converged) in enumerate(
        [("u", True), ("u", True), ("m", False), ("m", True), ("m", False)]
    ):
        rec = _fit_record("toy", alg, i, 0.8)
        rec["fit"]["converged"] = converged
        paths.append(tmp_path / f"{i}.json")
        paths[-1].write_text(json.dumps(rec))
    failed = {"dataset": "toy", "algorithm": "m", "split": 9, "status": "failed", "error": "E"}
    paths.append(tmp_path / "failed.json")
    paths[-1].write_text(json.dumps(failed))
    summary = summarise(collect_fits(paths))
    counts = dict(zip(summary["algorithm"], summary["n_not_converged"], strict=True))
    assert counts == {"u": 0, "m": 2}  # the failed fit is counted as failed, not here
    table = results_table(summary)
    assert table.loc[0, "u"] == "80.0 ± 0.0"
    assert table.loc[0, "m"] == f"80.0 ± 0.0 (1 failed) {NOT_CONVERGED}"
    note = not_converged_note(summary)
    assert "toy / m: 2 of 3 splits" in note and "toy / u" not in note


def test_a_regression_experiment_is_tabled_by_rmse(tmp_path):
    """aggregate on regressors' records: the results table shows test RMSE in
    the targets' units (three significant digits), per_split holds RMSE, MAE
    and R^2, and the classification columns are empty."""
    from mkl.workflow.tables import aggregate

    paths = []
    for i, (alg, rmse) in enumerate([("uniform", 55.2), ("uniform", 57.4), ("level", 3.213)]):
        rec = _fit_record("d", alg, i % 2, None)
        rec["test"] = {"rmse": rmse, "mae": rmse / 2, "r2": 0.4}
        paths.append(tmp_path / f"{i}.json")
        paths[-1].write_text(json.dumps(rec))
    exp = {
        "name": "reg",
        "task": "regression",
        "datasets": ["d"],
        "algorithms": {"uniform": {}, "level": {}},
    }
    out = {k: tmp_path / f"{k}.out" for k in ("per_split", "csv", "md", "paper_csv", "paper_md")}
    out.update(paper_tables_md=tmp_path / "pt.md", paper_tables_tex=tmp_path / "pt.tex")
    out.update({k: tmp_path / f"{k}.html" for k in ("html", "paper_html", "paper_tables_html")})
    fits, _ = aggregate(exp, paths, [], tmp_path / "none.csv", out)
    assert fits["rmse"].tolist() == [3.213, 55.2, 57.4] and fits["accuracy"].isna().all()
    md = out["md"].read_text()
    assert "test RMSE, mean ± std over splits" in md
    assert "| 56.3 ± 1.6 |" in md and " 3.21 |" in md
    assert "<td>56.3 ± 1.6</td>" in out["html"].read_text()


def _grid_record(dataset, algorithm, split, selected, grid, failed=False):
    """A fit record whose grid tried the points of ``grid`` ({param: values})
    and selected ``selected`` ({param: value})."""
    import itertools

    if failed:
        return {
            "dataset": dataset,
            "algorithm": algorithm,
            "split": split,
            "status": "failed",
            "error": "SolverError: x",
        }
    rec = _fit_record(dataset, algorithm, split, 0.8)
    keys = list(grid)
    rec["grid"] = [
        {"params": dict(zip(keys, v, strict=True))} for v in itertools.product(*grid.values())
    ]
    rec["selected_params"] = selected
    return rec


def test_a_value_selected_at_a_grid_edge_in_most_splits_marks_the_cell(tmp_path):
    """Issue 60: a C chosen at the top of {1, 10} in every split (unit-trace
    kernels want C about n times larger) is marked in the cell, named in the
    caption and warned about; an edge met in half the splits or fewer, a
    one-value grid, a categorical parameter, and failed splits are not counted."""
    import logging

    from mkl.workflow.tables import aggregate, grid_edges

    C = {"C": [1, 10]}
    records = [
        # level: C at the top in all 3 splits, p at the bottom in 2 of 3
        *(
            _grid_record("d", "level", s, {"C": 10, "p": p}, {"C": [1, 10], "p": [1.5, 2, 4]})
            for s, p in ((0, 1.5), (1, 1.5), (2, 2))
        ),
        # uniform: C at the bottom in 1 of 2 fitted splits (not more than half), one failed
        _grid_record("d", "uniform", 0, {"C": 1}, C),
        _grid_record("d", "uniform", 1, {"C": 10**0.5}, {"C": [1, 10**0.5, 10]}),
        _grid_record("d", "uniform", 2, None, C, failed=True),
        # linear: a grid of one value, and a categorical parameter: no edge
        *(
            _grid_record("d", "linear", s, {"C": 1, "loss": "l2"}, {"C": [1], "loss": ["l1", "l2"]})
            for s in range(3)
        ),
    ]
    assert grid_edges(records[0]) == [("C", "top"), ("p", "bottom")]
    assert grid_edges(records[2]) == [("C", "top")]
    assert grid_edges(records[6]) == []
    paths = []
    for i, rec in enumerate(records):
        paths.append(tmp_path / f"{i}.json")
        paths[-1].write_text(json.dumps(rec))
    exp = {
        "name": "own",
        "datasets": ["d"],
        "algorithms": {"level": {}, "uniform": {}, "linear": {}},
    }
    out = {k: tmp_path / f"{k}.out" for k in ("per_split", "csv", "md", "paper_csv", "paper_md")}
    out.update(paper_tables_md=tmp_path / "pt.md", paper_tables_tex=tmp_path / "pt.tex")
    out.update({k: tmp_path / f"{k}.html" for k in ("html", "paper_html", "paper_tables_html")})
    log = logging.getLogger("test_grid_edges")
    with pytest.MonkeyPatch.context() as mp:
        warned = []
        mp.setattr(log, "warning", lambda fmt, msg: warned.append(msg))
        aggregate(exp, paths, [], tmp_path / "none.csv", out, log=log)
    md = out["md"].read_text()
    assert "| 80.0 ± 0.0 [C top, p bottom] | 80.0 ± 0.0 (1 failed) | 80.0 ± 0.0 |" in md
    assert "- d / level: C at the top of its grid in 3 of 3 splits" in md
    assert "- d / level: p at the bottom of its grid in 2 of 3 splits" in md
    assert "d / uniform" not in md.split("[C top], [C bottom]")[1]
    assert warned == [
        "own: d / level: the selected C sat at the top of its grid in 3 of 3 splits: "
        "extend the grid past that end",
        "own: d / level: the selected p sat at the bottom of its grid in 2 of 3 splits: "
        "extend the grid past that end",
    ]
    summary = pd.read_csv(out["csv"])
    assert summary.set_index("algorithm")["grid_edges"].fillna("").to_dict() == {
        "level": "C:top:3 p:bottom:2",
        "uniform": "",
        "linear": "",
    }

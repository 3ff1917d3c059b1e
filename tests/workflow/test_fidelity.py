"""The fidelity report: every paper cell beside ours, its status, the summary."""

import numpy as np
import pandas as pd
import pytest

from mkl.workflow.fidelity import fidelity, fidelity_summary, fidelity_table, rank_agreement

PAPER = pd.DataFrame(
    [
        # paper p, table t1 (with sd): datasets a, b; methods m1, m2
        ("p", "t1", "A", "m1", "accuracy", 80.0, 2.0),
        ("p", "t1", "A", "m2", "accuracy", 70.0, 1.0),
        ("p", "t1", "b", "m1", "accuracy", 90.0, 1.0),
        ("p", "t1", "b", "m2", "accuracy", 60.0, 1.0),
        ("p", "t1", "A", "m1", "f_score", 0.5, np.nan),  # a metric no experiment compares
        # paper q, table t2 (no sd): three methods on one dataset
        ("q", "t2", "c", "x", "accuracy", 50.0, np.nan),
        ("q", "t2", "c", "y", "accuracy", 60.0, np.nan),
        ("q", "t2", "c", "z", "accuracy", 70.0, np.nan),
    ],
    columns=["paper", "table", "dataset", "method", "metric", "mean", "std"],
)
SECTION_P = {
    "name": "p",
    "tables": {"t1": ["a", "b"]},
    "datasets": {"a": "A"},
    "methods": {"alg1": "m1", "alg2": "m2"},
}
EXPERIMENTS = {
    "p": {"paper": SECTION_P},
    "quick": {"paper": {**SECTION_P, "tables": {"t1": ["a"]}}},
    "q": {
        "paper": {"name": "q", "tables": {"t2": ["c"]}, "methods": {"x": "x", "y": "y", "z": "z"}}
    },
    "other": {},  # no paper: never read
}


def _summary(cells):
    """results.csv rows: (dataset, algorithm, accuracy mean, std, splits)."""
    return pd.DataFrame(
        [
            {
                "dataset": ds,
                "algorithm": alg,
                "accuracy_mean": m,
                "accuracy_std": s,
                "n_splits": n,
                "n_failed": 0 if n else 3,
                "n_not_converged": 0,
            }
            for ds, alg, m, s, n in cells
        ]
    )


def test_every_paper_cell_has_a_row_and_a_status():
    quick = _summary([("a", "alg1", 0.83, 0.01, 3), ("a", "alg2", 0.74, 0.02, 3)])
    cells = fidelity_table(EXPERIMENTS, {"quick": quick}, PAPER, {"b": "no copy offline"})
    assert len(cells) == len(PAPER)
    by = {(r.paper, r.dataset, r.method, r.metric): r for r in cells.itertuples()}
    # the full experiment p has not run: the reduced one stands in where it maps the cell
    a1 = by[("p", "A", "m1", "accuracy")]
    assert (a1.status, a1.experiment, a1.our_dataset, a1.our_algorithm) == (
        "ok",
        "quick",
        "a",
        "alg1",
    )
    assert a1.ours_mean == pytest.approx(83.0) and a1.difference == pytest.approx(3.0)
    assert a1.within_2sd and not by[("p", "A", "m2", "accuracy")].within_2sd  # 4 > 2 x 1
    assert by[("p", "b", "m1", "accuracy")].status == "not available: no copy offline"
    assert by[("p", "A", "m1", "f_score")].status.startswith("not compared")
    assert by[("q", "c", "x", "accuracy")].status == "not run: experiment q"
    # once p has run, it is preferred to quick
    full = _summary(
        [("a", "alg1", 0.8, 0.01, 20), ("a", "alg2", 0.7, 0.01, 20)]
        + [
            ("b", alg, 0.9, 0.01, 0)
            for alg in ("alg1", "alg2")  # every fit failed
        ]
    )
    cells = fidelity_table(EXPERIMENTS, {"quick": quick, "p": full}, PAPER)
    by = {(r.paper, r.dataset, r.method, r.metric): r for r in cells.itertuples()}
    assert by[("p", "A", "m1", "accuracy")].experiment == "p"
    assert by[("p", "A", "m1", "accuracy")].n_splits == 20
    assert by[("p", "b", "m1", "accuracy")].status == "failed"


def test_a_section_listing_several_metrics_compares_each():
    """metric: [accuracy, f1] maps both the accuracy cells and the F-score ones
    (the paper's f_score), each compared with its own column of ours."""
    section = {**SECTION_P, "metric": ["accuracy", "f1"]}
    summary = _summary([("a", "alg1", 0.83, 0.01, 3), ("a", "alg2", 0.74, 0.02, 3)])
    summary["f1_mean"], summary["f1_std"] = [0.004, 0.3], [0.001, 0.02]
    cells = fidelity_table({"p": {"paper": section}}, {"p": summary}, PAPER)
    by = {(r.dataset, r.method, r.metric): r for r in cells.itertuples()}
    assert by[("A", "m1", "f_score")].status == "ok"
    assert by[("A", "m1", "f_score")].ours_mean == pytest.approx(0.4)  # x scale 100
    assert by[("A", "m1", "accuracy")].ours_mean == pytest.approx(83.0)
    # without the list the F-score cell is not compared (test above)


def test_a_sensitivity_study_never_supplies_a_cell():
    """An experiment whose paper section says fidelity: false (several of our
    datasets for one of the paper's) is not read, even when it alone has run."""
    study = {**SECTION_P, "tables": {"t1": ["a", "a2"]}, "datasets": {"a": "A", "a2": "A"}}
    experiments = {**EXPERIMENTS, "study": {"paper": {**study, "fidelity": False}}}
    summary = _summary([(ds, alg, 0.8, 0.01, 30) for ds in ("a", "a2") for alg in ("alg1", "alg2")])
    cells = fidelity_table(experiments, {"study": summary}, PAPER)
    assert "study" not in set(cells["experiment"])
    a1 = cells[(cells["dataset"] == "A") & (cells["method"] == "m1")].iloc[0]
    assert (a1.status, a1.experiment) == ("not run: experiment p", "p")


def test_summary_counts_within_two_sd_and_ranks_the_tables_without_sd():
    p = _summary([("a", "alg1", 0.83, 0.01, 3), ("a", "alg2", 0.74, 0.02, 3)])
    p = pd.concat([p, _summary([("b", "alg1", 0.905, 0.01, 3), ("b", "alg2", 0.6, 0.0, 3)])])
    q = _summary([("c", "x", 0.55, 0.0, 3), ("c", "y", 0.52, 0.0, 3), ("c", "z", 0.75, 0.0, 3)])
    cells = fidelity_table(EXPERIMENTS, {"p": p, "q": q}, PAPER)
    summary = fidelity_summary(cells).set_index("paper")
    assert summary.loc["p", ["cells", "compared", "with_sd", "within_2sd"]].tolist() == [5, 4, 4, 3]
    assert summary.loc["p", "mean_abs_difference"] == pytest.approx((3 + 4 + 0.5 + 0) / 4)
    assert summary.loc["p", "not_compared"] == 1
    # q: ours order x=55 > y=52 < z=75 against the paper's 50 < 60 < 70: Spearman 0.5
    assert summary.loc["q", "rank_agreement_without_sd"] == pytest.approx(0.5)
    assert summary.loc["q", "mean_abs_difference_without_sd"] == pytest.approx((5 + 8 + 5) / 3)
    assert summary.loc["all", "cells"] == len(PAPER) and summary.loc["all", "compared"] == 7
    assert np.isnan(rank_agreement(cells[cells["paper"] == "p"].iloc[:0]))


def test_ranks_are_per_metric_and_counts_stay_out_of_the_mean_difference():
    def cell(metric, method, ours, paper, std=np.nan):
        return {
            "paper": "k",
            "table": "t",
            "dataset": "d",
            "method": method,
            "metric": metric,
            "paper_mean": paper,
            "paper_std": std,
            "ours_mean": ours,
            "difference": ours - paper,
            "within_2sd": abs(ours - paper) <= 2 * std if np.isfinite(std) else None,
            "status": "ok",
        }

    # accuracy in the paper's order, F-score reversed: ranked apart, +1 and -1;
    # ranked together (six values of two metrics) they would give another number
    rows = [cell("accuracy", m, o, p) for m, o, p in [("x", 50, 51), ("y", 60, 62), ("z", 70, 69)]]
    rows += [cell("f_score", m, o, p) for m, o, p in [("x", 30, 40), ("y", 20, 50), ("z", 10, 60)]]
    cells = pd.DataFrame(rows)
    assert rank_agreement(cells) == pytest.approx(0.0)
    assert rank_agreement(cells[cells["metric"] == "accuracy"]) == pytest.approx(1.0)
    # kernels selected: counted within two sd, left out of the mean |difference|
    counts = pd.DataFrame(
        [cell("accuracy", "g", 80.0, 81.0, 2.0), cell("kernels", "g", 30.0, 36.8, 5.0)]
    )
    summary = fidelity_summary(counts).set_index("paper")
    assert summary.loc["k", ["with_sd", "within_2sd"]].tolist() == [2, 2]
    assert summary.loc["k", "mean_abs_difference"] == pytest.approx(1.0)


def test_the_stage_writes_its_files(tmp_path):
    quick = _summary([("a", "alg1", 0.83, 0.01, 3), ("a", "alg2", 0.74, 0.02, 3)])
    quick.to_csv(tmp_path / "quick.csv", index=False)
    PAPER.assign(note="").to_csv(tmp_path / "paper.csv", index=False)
    out = {k: tmp_path / f"fidelity.{k}" for k in ("csv", "md", "html", "png", "pdf")}
    summary = fidelity(
        EXPERIMENTS, {"quick": tmp_path / "quick.csv"}, [], tmp_path / "paper.csv", out
    )
    assert summary.iloc[-1]["compared"] == 2
    assert len(pd.read_csv(out["csv"])) == len(PAPER)
    md = out["md"].read_text()
    assert "## Summary" in md and "not run: experiment q" in md
    # per paper, those with compared cells first: a sentence of counts, the
    # compared cells, then the others, one line per status
    p, q = md[md.index("## p") : md.index("## q")], md[md.index("## q") :]
    assert "5 cells, 2 compared: 1 of the 2 with a paper sd within two sd" in p
    assert p.index("| t1      | A ") < p.index("- not run: experiment p: 2 cells (t1 accuracy (2))")
    assert "- not compared: no experiment maps this cell: 1 cells (t1 f_score (1))" in p
    assert "| t2 " not in q and "- not run: experiment q: 3 cells" in q
    # the page: ours beside the paper's, alg2's 74 against 70 +- 1 shaded, the
    # cells without our numbers folded
    page = out["html"].read_text()
    assert page.count('class="beyond"') == 1 and "74.00 ± 2.00 *" in page
    assert page.count("<details>") == 3 and "80.00 ± 2.00" in page
    assert out["png"].stat().st_size > 1000 and out["pdf"].stat().st_size > 1000
    # nothing run at all: the tables say so and the figure is a notice
    fidelity(EXPERIMENTS, {}, [], tmp_path / "paper.csv", out)
    assert (pd.read_csv(out["csv"])["status"].str.startswith("not")).all()


def _cells_from_paper(paper_rows: pd.DataFrame) -> pd.DataFrame:
    """Fidelity cells whose "ours" is the paper's own mean, every cell compared."""
    cells = fidelity_table({}, {}, paper_rows)
    ranked = cells["metric"] != "mean_rank"
    cells.loc[ranked, "ours_mean"] = cells.loc[ranked, "paper_mean"]
    cells.loc[ranked, "difference"] = 0.0
    cells.loc[ranked, ["status", "experiment", "our_algorithm", "n_splits"]] = [
        "ok",
        "e",
        "alg",
        30,
    ]
    return cells


def test_the_rank_row_of_lauriola_s_table_1_is_derived_as_printed():
    """Lauriola et al.'s own accuracies, ranked per dataset (tied means share
    the best rank) and averaged, give the rank row they print; average ranks
    for ties would not (2.275 and 2.95 for EasyMKL and the linear kernel)."""
    from pathlib import Path

    from mkl.workflow.fidelity import with_mean_ranks

    paper = pd.read_csv(Path(__file__).parents[2] / "resources" / "paper_results.csv")
    paper = paper[paper["paper"] == "lauriola2018_memo"]
    cells = with_mean_ranks(_cells_from_paper(paper))
    rank = cells[cells["metric"] == "mean_rank"].set_index("method")
    assert (rank["status"] == "ok").all() and (rank["our_dataset"] == "all").all()
    np.testing.assert_allclose(rank["ours_mean"], rank["paper_mean"], atol=1e-12)
    assert rank["paper_mean"].to_dict() == {
        "average": 2.85,
        "easymkl": 2.2,
        "memo": 1.8,
        "linear": 2.9,
    }
    # one accuracy cell not compared: the rank row is not either, and says why
    missing = _cells_from_paper(paper)
    missing.loc[missing["metric"] == "accuracy", "status"] = ["not run: x"] + ["ok"] * 79
    rank = with_mean_ranks(missing).query("metric == 'mean_rank'")
    assert rank["status"].str.contains("79 of 80 are").all() and rank["ours_mean"].isna().all()
    # ranks are not percentage points: the summary's mean |difference| leaves them out
    cells.loc[cells["metric"] == "mean_rank", "ours_mean"] += 100.0
    cells.loc[cells["metric"] == "mean_rank", "difference"] = 100.0
    summary = fidelity_summary(cells).set_index("paper")
    assert summary.loc["lauriola2018_memo", "mean_abs_difference"] == 0.0


def test_a_cell_of_another_target_keeps_our_numbers_uncounted_with_its_provenance():
    """paper: {cell_status: {dataset: "different target: ..."}}: the cell shows our
    numbers with the status and reason, and neither counts nor is compared;
    every compared cell carries the config hash and code version of its run."""
    section = {**SECTION_P, "cell_status": {"b": "different target: b's label is another"}}
    run = _summary(
        [("a", "alg1", 0.8, 0.01, 20), ("a", "alg2", 0.7, 0.01, 20)]
        + [("b", "alg1", 0.5, 0.01, 20), ("b", "alg2", 0.5, 0.01, 20)]
    ).assign(config_sha256="0123456789abcdef", code_version="abc1234")
    cells = fidelity_table({"p": {"paper": section}}, {"p": run}, PAPER)
    b = cells[(cells["dataset"] == "b")]
    assert b["status"].eq("different target: b's label is another").all()
    assert b["ours_mean"].tolist() == pytest.approx([50.0, 50.0])
    compared = cells[cells["status"] == "ok"]
    assert len(compared) == 2 and compared["config_sha256"].eq("0123456789abcdef").all()
    assert compared["code_version"].eq("abc1234").all()
    summary = fidelity_summary(cells).set_index("paper")
    assert summary.loc["p", ["with_sd", "within_2sd", "different_target"]].tolist() == [2, 2, 2]

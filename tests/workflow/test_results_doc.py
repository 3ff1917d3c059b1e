"""docs/results.md's tables are generated from the fidelity record of the
runs (docs/fidelity.csv): they must be exactly what that record renders to, and
the record must cover every cell of resources/paper_results.csv in the columns
the fidelity stage writes."""

import functools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mkl.workflow.fidelity import COLUMNS, NOT_RUN, OK, RANK_METRIC, with_mean_ranks
from mkl.workflow.provenance import experiment_file, file_sha256
from mkl.workflow.record import (
    KEY,
    RESULTS_BEGIN,
    RESULTS_DOC,
    RESULTS_END,
    merge_record,
    read_cells,
    results_block,
    update_results,
)

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "docs" / "fidelity.csv"
EXPERIMENTS = ROOT / "config" / "experiments"
merge = functools.partial(merge_record, experiments_dir=EXPERIMENTS)


def as_run_today(record: pd.DataFrame) -> pd.DataFrame:
    """The record as a run made today would give it: every row with our numbers
    compared, under the experiment files of the checkout (the record's own rows
    may be marked stale until their reruns)."""
    run = record.copy()
    numbers = run["ours_mean"].notna() & (run["metric"] != RANK_METRIC)
    stale = numbers & run["status"].str.startswith(NOT_RUN)
    run.loc[stale, "status"] = OK
    run.loc[stale, "within_2sd"] = [
        bool(abs(d) <= 2 * s) if np.isfinite(s) else None
        for d, s in zip(run.loc[stale, "difference"], run.loc[stale, "paper_std"], strict=True)
    ]
    hashes = {
        e: file_sha256(experiment_file(EXPERIMENTS, e)) for e in run.loc[numbers, "experiment"]
    }
    run.loc[numbers, "config_sha256"] = run.loc[numbers, "experiment"].map(hashes)
    return with_mean_ranks(run)


def test_results_doc_is_rendered_from_the_record():
    doc = (ROOT / RESULTS_DOC).read_text(encoding="utf-8")
    start, end = doc.index(RESULTS_BEGIN), doc.index(RESULTS_END) + len(RESULTS_END)
    assert doc[start:end] == results_block(read_cells(RECORD)), (
        f"{RESULTS_DOC}'s tables differ from docs/fidelity.csv: run python -m mkl.workflow.record"
    )


def test_the_record_covers_every_paper_cell():
    cells = read_cells(RECORD)
    assert list(cells.columns) == COLUMNS
    paper = pd.read_csv(ROOT / "resources" / "paper_results.csv")
    key = ["paper", "table", "dataset", "method", "metric"]
    assert sorted(map(tuple, cells[key].values)) == sorted(map(tuple, paper[key].values))
    ok = cells[cells["status"] == OK]
    assert ok["ours_mean"].notna().all() and (ok["n_splits"] > 0).all()


def test_update_rewrites_only_the_generated_block(tmp_path):
    cells = read_cells(RECORD)
    doc = tmp_path / "results.md"
    doc.write_text(f"before\n{RESULTS_BEGIN}\nstale\n{RESULTS_END}\nafter\n", encoding="utf-8")
    csv = tmp_path / "fidelity.csv"
    cells.to_csv(csv, index=False)
    assert update_results(doc, csv)
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("before\n") and text.endswith("\nafter\n") and "stale" not in text
    assert not update_results(doc, csv)  # idempotent
    doc.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="has no block between"):
        update_results(doc, csv)


def test_a_rerun_of_some_papers_replaces_their_rows_only(tmp_path):
    record = as_run_today(read_cells(RECORD))
    # the record merged with itself is the record, byte for byte once written
    same = merge(record, record, ["xu2010_smkl"])
    same.to_csv(tmp_path / "same.csv", index=False)
    record.to_csv(tmp_path / "record.csv", index=False)
    assert (tmp_path / "same.csv").read_bytes() == (tmp_path / "record.csv").read_bytes()
    # a run in which only xu2010_smkl was run (the others read "not run"), rows shuffled
    run = record.sample(frac=1.0, random_state=0).reset_index(drop=True)
    xu = run["paper"] == "xu2010_smkl"
    run.loc[xu, "ours_mean"] = 50.0
    run.loc[~xu, "status"] = f"{NOT_RUN}: experiment elsewhere"
    merged = merge(record, run, ["xu2010_smkl"])
    assert merged[["paper", "table", "dataset", "method"]].equals(
        record[["paper", "table", "dataset", "method"]]
    )
    assert (merged.loc[merged["paper"] == "xu2010_smkl", "ours_mean"] == 50.0).all()
    others = merged["paper"] != "xu2010_smkl"
    assert merged[others].equals(record[others])
    with pytest.raises(ValueError, match="not in the record"):
        merge(record, run, ["nobody2020"])
    with pytest.raises(ValueError, match="no cell of yang2011_gmkl was run"):
        merge(record, run, ["yang2011_gmkl"])
    with pytest.raises(ValueError, match="lacks 1 cells of"):
        merge(record, run.drop(index=run.index[xu][0]), ["xu2010_smkl"])
    # a cell newly entered in paper_results.csv joins after its paper's others
    new = run[xu].iloc[[0]].assign(metric="kernels", ours_mean=7.0)
    grown = merge(record, pd.concat([run, new], ignore_index=True), ["xu2010_smkl"])
    assert len(grown) == len(record) + 1
    position = grown.index[grown["metric"] == "kernels"][0]
    assert grown.loc[position - 1, "paper"] == "xu2010_smkl"
    assert grown.loc[position + 1 :, "paper"].ne("xu2010_smkl").all()
    assert grown.drop(index=position).reset_index(drop=True)[KEY].equals(record[KEY])


def test_a_rerun_of_one_algorithm_replaces_its_rows_only():
    record = as_run_today(read_cells(RECORD))
    paper = "lauriola2018_memo"
    # a run of easymkl alone: the paper's other methods read "not run"
    run = record.copy()
    ours = (run["paper"] == paper) & (run["our_algorithm"] == "easymkl")
    run.loc[ours, "ours_mean"] = 50.0
    run.loc[~ours, "status"] = f"{NOT_RUN}: algorithm not configured"
    # the run's rank rows cannot be derived (its other methods were not run)
    rank = run["metric"] == "mean_rank"
    run.loc[rank, "our_algorithm"] = np.nan
    merged = merge(record, run, [paper], ["easymkl"])
    assert merged[KEY].equals(record[KEY])
    ours &= ~rank  # the record's rank rows are kept, to be derived again
    assert (merged.loc[ours, "ours_mean"] == 50.0).all() and ours.sum() == 20
    assert with_mean_ranks(merged).loc[rank, "status"].eq("ok").all()
    assert merged[~ours].equals(record[~ours])
    with pytest.raises(ValueError, match=r"no cell of lauriola2018_memo was run by \['memo'\]"):
        merge(record, run, [paper], ["memo"])
    with pytest.raises(ValueError, match="lacks 1 cells of"):
        merge(record, run.drop(index=run.index[ours][0]), [paper], ["easymkl"])


def test_a_rerun_of_some_datasets_replaces_their_rows_only():
    record = as_run_today(read_cells(RECORD))
    paper, text = "xu2010_smkl", ["newsgroups_baseball_hockey", "ohsumed_c01_c02"]
    # a run of two of the paper's datasets: its other cells read "not run"
    run = record.copy()
    ours = (run["paper"] == paper) & run["our_dataset"].isin(text)
    run.loc[ours, "ours_mean"] = 50.0
    run.loc[~ours, "status"] = f"{NOT_RUN}: dataset not configured"
    merged = merge(record, run, [paper], datasets=text)
    assert merged[KEY].equals(record[KEY])
    assert (merged.loc[ours, "ours_mean"] == 50.0).all() and ours.sum() == 4
    assert merged[~ours].equals(record[~ours])
    # both filters: one algorithm on those datasets
    one = merge(record, run, [paper], ["level"], text)
    level = ours & (record["our_algorithm"] == "level")
    assert (one.loc[level, "ours_mean"] == 50.0).all() and level.sum() == 2
    assert one[~level].equals(record[~level])
    with pytest.raises(ValueError, match=r"was run on \['wdbc'\]"):
        merge(record, run, [paper], datasets=["wdbc"])

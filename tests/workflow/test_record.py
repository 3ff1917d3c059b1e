"""The record is the configuration as it stands (docs/fidelity.csv): each row
with our numbers names the hash of the experiment file it was run from and
the code that ran it; a run under another version of the file is refused, and
a row whose file changed since is marked not run until it is run again."""

import shutil
from pathlib import Path

import pytest

from mkl.workflow.fidelity import NOT_RUN, OK, RANK_METRIC, fidelity_summary
from mkl.workflow.provenance import code_version, experiment_file, file_sha256
from mkl.workflow.record import check_provenance, mark_stale, merge_record, read_cells

from .test_results_doc import EXPERIMENTS, RECORD, as_run_today


def test_every_counted_row_was_run_from_its_experiment_file_as_it_stands():
    record = read_cells(RECORD)
    counted = record[(record["status"] == OK) & (record["metric"] != RANK_METRIC)]
    for name, rows in counted.groupby("experiment"):
        today = file_sha256(experiment_file(EXPERIMENTS, name))
        run = sorted(set(rows["config_sha256"]))
        assert run == [today], (
            f"{len(rows)} counted rows of {name} were run from config {run}, but "
            f"config/experiments/{name}.yaml is {today} today: rerun them and merge "
            "(python -m mkl.workflow.record --papers ...), or mark them not run "
            "(python -m mkl.workflow.record --stale)"
        )
    assert (counted["code_version"].str.len() > 0).all()


def test_a_run_from_another_version_of_an_experiment_file_is_refused():
    record = as_run_today(read_cells(RECORD))
    run = record.copy()
    xu = run["paper"] == "xu2010_smkl"
    run.loc[xu, "config_sha256"] = "0123456789abcdef"
    today = file_sha256(experiment_file(EXPERIMENTS, "xu2010_smkl"))
    with pytest.raises(ValueError, match=f"run under '0123456789abcdef'.*is '{today}'"):
        merge_record(record, run, ["xu2010_smkl"], experiments_dir=EXPERIMENTS)
    with pytest.raises(ValueError, match="xu2010_smkl"):
        check_provenance(run, EXPERIMENTS)
    # the other papers' rows, from today's files, are taken
    merged = merge_record(record, run, ["yang2011_gmkl"], experiments_dir=EXPERIMENTS)
    assert merged.equals(record)


def test_an_edited_experiment_file_marks_its_rows_not_run(tmp_path):
    experiments = tmp_path / "experiments"
    shutil.copytree(EXPERIMENTS, experiments)
    record = as_run_today(read_cells(RECORD))
    assert mark_stale(record, experiments).equals(record)  # nothing changed
    edited = experiments / "lauriola2018_memo.yaml"
    edited.write_text(edited.read_text() + "# an edit\n")
    marked = mark_stale(record, experiments)
    lauriola = (marked["experiment"] == "lauriola2018_memo") & (marked["metric"] != RANK_METRIC)
    rows = marked[lauriola]
    assert rows["status"].str.startswith(f"{NOT_RUN}: {edited} changed since").all()
    assert rows["status"].str.contains(file_sha256(edited)).all()
    assert rows["ours_mean"].equals(record.loc[lauriola, "ours_mean"])  # kept, for reference
    # the rank row ranks those cells: derived no more
    ranks = marked[(marked["paper"] == "lauriola2018_memo") & (marked["metric"] == RANK_METRIC)]
    assert ranks["status"].str.startswith(NOT_RUN).all()
    before, after = fidelity_summary(record), fidelity_summary(marked)
    lost = before["with_sd"].iloc[-1] - after["with_sd"].iloc[-1]
    assert lost == (record[lauriola]["paper_std"].notna()).sum()
    others = marked["paper"] != "lauriola2018_memo"
    assert marked[others].equals(record[others])


def test_the_code_version_names_the_checkout_or_the_package():
    version = code_version()
    root = Path(__file__).resolve().parents[2]
    if (root / ".git").exists():
        assert version.split("-")[0].isalnum() and len(version.split("-")[0]) >= 7
    else:
        assert version.startswith("mkl ")

"""The record is the configuration as it stands (docs/fidelity.csv): each row
with our numbers names the hash of the experiment file it was run from and
the code that ran it; a run under another version of the file is refused, and
a row whose file changed since is marked not run until it is run again."""

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from mkl.workflow.fidelity import NOT_RUN, OK, RANK_METRIC, fidelity_summary
from mkl.workflow.provenance import code_version, experiment_file, file_sha256
from mkl.workflow.record import (
    SLICE,
    check_provenance,
    mark_stale,
    merge_record,
    read_cells,
    slices_fidelity,
)

from .test_results_doc import EXPERIMENTS, RECORD, ROOT, as_run_today


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
    counted = record[lauriola]["status"].eq(OK) & record[lauriola]["paper_std"].notna()
    assert lost == counted.sum() > 0
    others = marked["paper"] != "lauriola2018_memo"
    assert marked[others].equals(record[others])


def test_the_code_version_names_the_checkout_or_the_package():
    version = code_version()
    root = Path(__file__).resolve().parents[2]
    if (root / ".git").exists():
        assert version.split("-")[0].isalnum() and len(version.split("-")[0]) >= 7
    else:
        assert version.startswith("mkl ")


PAPER_RESULTS = ROOT / "resources" / "paper_results.csv"


def run_directory(tmp_path) -> Path:
    """A run's directory as the record reads it: the checkout's configuration
    and schemas, and results/ to fill."""
    run = tmp_path / "run"
    shutil.copytree(ROOT / "config", run / "config")
    shutil.copytree(ROOT / "workflow" / "schemas", run / "workflow" / "schemas")
    return run


def write_slice(run: Path, experiment: str, dataset: str, accuracy: dict) -> Path:
    """A table slice as rule ``table_slice`` writes it (no rows: no fits)."""
    path = run / SLICE.format(experiment=experiment, dataset=dataset)
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(
        {
            "dataset": dataset,
            "algorithm": list(accuracy),
            "accuracy_mean": list(accuracy.values()),
            "accuracy_std": 0.04,
            "n_failed": 0,
            "n_splits": 30,
            "n_not_converged": 0,
            "grid_edges": "",
            "n_kernels": 21,
            "code_version": "abc1234",
        }
    ).to_csv(path, index=False)
    return path


def test_the_datasets_a_run_under_way_has_finished_merge_from_their_slices(tmp_path):
    """``--slices``: the rows of the datasets whose table slices a run still under
    way has built, with the hash of the run's experiment file; the other
    datasets' rows stay as recorded. A dataset with no slice, a slice older
    than its fits or its experiment file, and a run under another version of
    the file than the checkout's are refused."""
    run = run_directory(tmp_path)
    accuracy = {"uniform": 0.86, "easymkl": 0.85, "memo": 0.84, "linear": 0.74}
    slice_csv = write_slice(run, "lauriola2018_memo", "sonar", accuracy)
    fits = run / "results" / "fits" / "lauriola2018_memo" / "sonar" / "memo"
    fits.mkdir(parents=True)
    fit = fits / "splits_0-4.json"
    fit.write_text("{}")
    os.utime(fit, (slice_csv.stat().st_mtime - 10,) * 2)  # the fits came first
    cells = slices_fidelity(run, ["lauriola2018_memo"], ["sonar"], PAPER_RESULTS)
    sonar = cells[(cells["our_dataset"] == "sonar") & (cells["metric"] == "accuracy")]
    assert len(sonar) == 4 and (sonar["status"] == OK).all()
    today = file_sha256(experiment_file(EXPERIMENTS, "lauriola2018_memo"))
    assert (sonar["config_sha256"] == today).all() and (sonar["code_version"] == "abc1234").all()
    ours = dict(zip(sonar["our_algorithm"], sonar["ours_mean"], strict=True))
    assert ours == pytest.approx({alg: 100 * a for alg, a in accuracy.items()})
    lauriola = cells[(cells["paper"] == "lauriola2018_memo") & (cells["our_dataset"] != "sonar")]
    assert lauriola["status"].str.startswith(NOT_RUN).all()

    record = read_cells(RECORD)
    merged = merge_record(record, cells, ["lauriola2018_memo"], datasets=["sonar"],
                          experiments_dir=EXPERIMENTS)  # fmt: skip

    def sonar_of_lauriola(cells):
        return cells["paper"].eq("lauriola2018_memo") & cells["our_dataset"].eq("sonar")

    taken = sonar_of_lauriola(merged)
    assert (merged.loc[taken, "status"] == OK).all() and taken.sum() == 4
    others = (merged["metric"] != RANK_METRIC) & ~taken
    kept = (record["metric"] != RANK_METRIC) & ~sonar_of_lauriola(record)
    assert merged[others].reset_index(drop=True).equals(record[kept].reset_index(drop=True))

    build = "snakemake --cores 1 --nolock --allowed-rules table_slice .*slices/heart.csv"
    with pytest.raises(ValueError, match=build):
        slices_fidelity(run, ["lauriola2018_memo"], ["sonar", "heart"], PAPER_RESULTS)
    os.utime(fit, (slice_csv.stat().st_mtime + 10,) * 2)  # a fit made after the slice
    with pytest.raises(ValueError, match="slices/sonar.csv is older than .*splits_0-4.json"):
        slices_fidelity(run, ["lauriola2018_memo"], ["sonar"], PAPER_RESULTS)
    os.utime(fit, (slice_csv.stat().st_mtime - 10,) * 2)
    edited = experiment_file(run / "config" / "experiments", "lauriola2018_memo")
    edited.write_text(edited.read_text() + "# an edit\n")
    with pytest.raises(ValueError, match="older than .*lauriola2018_memo.yaml"):
        slices_fidelity(run, ["lauriola2018_memo"], ["sonar"], PAPER_RESULTS)
    os.utime(slice_csv)  # built again after the edit: now it is that file's run
    cells = slices_fidelity(run, ["lauriola2018_memo"], ["sonar"], PAPER_RESULTS)
    with pytest.raises(ValueError, match=f"run under '{file_sha256(edited)}'"):
        merge_record(record, cells, ["lauriola2018_memo"], datasets=["sonar"],
                     experiments_dir=EXPERIMENTS)  # fmt: skip


def test_slices_are_read_with_the_runs_configuration_files_and_only_for_the_fidelity_report(
    tmp_path,
):
    """``--slices --configfile``: the experiment files are those of the run's
    ``experiments_dir`` (its config/config.yaml, then the files it was started
    with), and their hashes the rows'. A sensitivity study's slices
    (``paper: {fidelity: false}``) are not read, and an unavailable dataset's
    slice (no fits) gives its rows the manifest's reason."""
    run = run_directory(tmp_path)
    shutil.copytree(run / "config" / "experiments", run / "our_experiments")
    edited = experiment_file(run / "our_experiments", "lauriola2018_memo")
    edited.write_text(edited.read_text() + "# the run's own version\n")
    override = tmp_path / "override.yaml"
    override.write_text("experiments_dir: our_experiments\n")
    accuracy = {"uniform": 0.86, "easymkl": 0.85, "memo": 0.84, "linear": 0.74}
    for experiment in ("lauriola2018_memo", "lauriola2018_memo_groupings"):
        write_slice(run, experiment, "iris_bin", accuracy)
        write_slice(run, experiment, "heart", {})
    manifest = run / "results" / "raw" / "heart" / "manifest.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text('{"dataset": "heart", "status": "unavailable", "reason": "no copy"}')

    def rows(cells, dataset):
        return cells[(cells["our_dataset"] == dataset) & (cells["metric"] == "accuracy")]

    cells = slices_fidelity(
        run, ["lauriola2018_memo"], ["iris_bin", "heart"], PAPER_RESULTS, configfiles=[override]
    )
    assert set(cells["experiment"]) - {""} == {"lauriola2018_memo"}
    iris, heart = rows(cells, "iris_bin"), rows(cells, "heart")
    assert len(iris) == 4 and (iris["status"] == OK).all()
    assert (iris["config_sha256"] == file_sha256(edited)).all()
    assert len(heart) == 4 and heart["status"].str.contains("not available.*no copy").all()
    # without the run's configuration file, the checkout's experiment files
    cells = slices_fidelity(run, ["lauriola2018_memo"], ["iris_bin", "heart"], PAPER_RESULTS)
    today = file_sha256(experiment_file(EXPERIMENTS, "lauriola2018_memo"))
    assert (rows(cells, "iris_bin")["config_sha256"] == today).all()
    with pytest.raises(ValueError, match="missing.yaml: no such configuration file"):
        slices_fidelity(
            run, ["lauriola2018_memo"], ["iris_bin"], PAPER_RESULTS,
            configfiles=[tmp_path / "missing.yaml"],
        )  # fmt: skip

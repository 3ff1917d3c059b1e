"""The record of the runs the project reports: ``docs/fidelity.csv``, the
fidelity table (:mod:`mkl.workflow.fidelity`) of the runs on record, and the
results block of ``docs/results.md`` generated from it (between
RESULTS_BEGIN and RESULTS_END). A maintainer's tool, run in the repository as
``python -m mkl.workflow.record``; no stage runs it, so editing it reruns
nothing (the fidelity stage's source hash does not cover it).

The record is the configuration as it stands: a row with our numbers
carries the ``config_sha256`` of the experiment file it was run from
(:mod:`mkl.workflow.provenance`), a run made under another version of the
file is refused, and a row whose file has changed since is marked ``not
run`` (``--stale``) until it is run again; ``tests/workflow/test_record.py``
fails while a counted row's hash differs from its file's.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._io import write_text
from .fidelity import (
    FAILED,
    NOT_AVAILABLE,
    NOT_MAPPED,
    NOT_RUN,
    OK,
    RANK_METRIC,
    UNCOUNTED,
    fidelity_summary,
    has_numbers,
    with_mean_ranks,
)
from .provenance import experiment_file, file_sha256
from .tables import fmt_pm, write_csv

RESULTS_DOC = "docs/results.md"
RESULTS_BEGIN = "<!-- fidelity: generated from docs/fidelity.csv; do not edit by hand -->"
RESULTS_END = "<!-- /fidelity -->"
SHORT_STATUS = {NOT_RUN: "not run", NOT_AVAILABLE: "n/a", FAILED: "failed", NOT_MAPPED: ""}


def _cell_text(row) -> str:
    """A table cell "ours (paper)", * beyond two paper sd; else why there is none."""
    digits = 2 if row["metric"] == RANK_METRIC else 1  # ranks as the paper prints them
    paper = fmt_pm(row["paper_mean"], row["paper_std"], digits)
    if row["status"].startswith(UNCOUNTED):  # our numbers, not counted: the status says why
        ours = fmt_pm(row["ours_mean"], row["ours_std"], digits)
        return f"{ours} ({paper}) [{row['status'].split(':')[0]}]"
    if row["status"] != OK:
        word = SHORT_STATUS.get(row["status"].split(":")[0], row["status"])
        return f"{word} ({paper})" if word else ""
    ours = fmt_pm(row["ours_mean"], row["ours_std"], digits)
    mark = " *" if row["within_2sd"] is False else ""
    return f"{ours} ({paper}){mark}"


def results_block(cells: pd.DataFrame) -> str:
    """docs/results.md's generated block, rendered from the fidelity cells: the summary per
    paper, then per paper table (and metric) a wide table, a row per dataset
    and a column per method in the paper's order, each cell "ours (paper)"
    with * beyond two of the paper's sd, [different target] or [not
    identifiable] where it is not counted, or why there is no number (not
    run, n/a: the dataset is not available, failed)."""
    summary = fidelity_summary(cells)
    shown = summary[
        ["paper", "cells", "compared", "with_sd", "within_2sd", "mean_abs_difference"]
        + ["rank_agreement_without_sd", "not_run", "not_available", "not_compared"]
        + ["different_target", "not_identifiable"]
    ].copy()
    shown["mean_abs_difference"] = shown["mean_abs_difference"].round(2)
    shown["rank_agreement_without_sd"] = shown["rank_agreement_without_sd"].round(2)
    out = [
        RESULTS_BEGIN,
        "",
        "Summary (`results/tables/fidelity.md`): cells compared, how many of those with "
        "a paper sd are within two of it, the mean |ours - paper|, and for cells without "
        "an sd the Spearman agreement of the methods' order per dataset.",
        "",
        shown.to_markdown(index=False).replace(" nan ", " - "),
        "",
    ]
    mapped = cells[~cells["status"].str.startswith(NOT_MAPPED)]
    for (paper, table, metric), g in mapped.groupby(["paper", "table", "metric"], sort=False):
        methods = list(dict.fromkeys(g["method"]))
        rows = []
        for dataset, d in g.groupby("dataset", sort=False):
            row = {"dataset": dataset}
            for _, r in d.iterrows():
                row[r["method"]] = _cell_text(r)
            rows.append(row)
        ok = g[g["status"] == OK]
        with_sd = ok[ok["paper_std"].notna()]
        if len(with_sd):
            count = (
                f"{int(with_sd['within_2sd'].astype(bool).sum())} of {len(with_sd)} within two sd"
            )
        elif len(ok):
            count = f"{len(ok)} compared, no paper sd"
        else:
            count = "none compared yet"
        experiments = ", ".join(sorted(set(ok["experiment"]))) or "-"
        out += [
            f"**{paper}, {table}** ({metric}; {count}; ours from {experiments}):",
            "",
            pd.DataFrame(rows, columns=["dataset", *methods]).fillna("").to_markdown(index=False),
            "",
        ]
    out.append(RESULTS_END)
    return "\n".join(out)


def update_results(doc_path, cells_csv) -> bool:
    """Replace the generated block of ``doc_path`` (docs/results.md: between
    RESULTS_BEGIN and RESULTS_END) with :func:`results_block` of
    ``cells_csv``; True if it changed."""
    text = open(doc_path, encoding="utf-8").read()
    if RESULTS_BEGIN not in text or RESULTS_END not in text:
        raise ValueError(f"{doc_path} has no block between {RESULTS_BEGIN} and {RESULTS_END}")
    start, end = text.index(RESULTS_BEGIN), text.index(RESULTS_END) + len(RESULTS_END)
    new = text[:start] + results_block(read_cells(cells_csv)) + text[end:]
    if new != text:
        write_text(doc_path, new)
    return new != text


def read_cells(path) -> pd.DataFrame:
    """A fidelity.csv as written by :func:`~mkl.workflow.fidelity.write_fidelity` (within_2sd: True,
    False or empty)."""
    cells = pd.read_csv(path, keep_default_na=True)
    cells["within_2sd"] = cells["within_2sd"].map(
        lambda v: None if pd.isna(v) else str(v) == "True"
    )
    cells["status"] = cells["status"].fillna("")
    return cells


KEY = ["paper", "table", "dataset", "method", "metric"]
EXPERIMENTS_DIR = "config/experiments"


def provenance_mismatches(
    cells: pd.DataFrame, experiments_dir: str | os.PathLike = EXPERIMENTS_DIR
) -> pd.DataFrame:
    """The rows with our numbers (rank rows aside: they are derived) whose
    ``config_sha256`` is not the hash of their experiment's file in
    ``experiments_dir`` today, with that hash (column ``file_sha256``)."""
    rows = cells[has_numbers(cells["status"]) & (cells["metric"] != RANK_METRIC)]
    current = {
        name: file_sha256(experiment_file(experiments_dir, name))
        if experiment_file(experiments_dir, name).is_file()
        else "(no file)"
        for name in set(rows["experiment"])
    }
    rows = rows.assign(file_sha256=rows["experiment"].map(current))
    return rows[rows["config_sha256"].fillna("").astype(str) != rows["file_sha256"]]


def check_provenance(
    cells: pd.DataFrame, experiments_dir: str | os.PathLike = EXPERIMENTS_DIR
) -> None:
    """Refuse a fidelity table whose rows were run from another version of
    their experiment file than the one in ``experiments_dir``."""
    wrong = provenance_mismatches(cells, experiments_dir)
    if len(wrong):
        runs = "; ".join(
            f"{name}: run under {', '.join(map(repr, sorted(set(rows['config_sha256']))))}, "
            f"{experiment_file(experiments_dir, name)} is {rows['file_sha256'].iloc[0]!r}"
            for name, rows in wrong.groupby("experiment")
        )
        raise ValueError(
            f"{len(wrong)} rows were run from other versions of their experiment files than "
            f"the checkout's: {runs} (e.g. {tuple(wrong.iloc[0][KEY])}). Rerun (or "
            "re-aggregate) under the checkout's files."
        )


def mark_stale(
    record: pd.DataFrame, experiments_dir: str | os.PathLike = EXPERIMENTS_DIR
) -> pd.DataFrame:
    """``record`` with every row whose experiment file changed since its run
    (:func:`provenance_mismatches`) marked ``not run`` with both hashes (its
    numbers kept for reference, no longer counted), rank rows derived again."""
    record = record.copy()
    stale = provenance_mismatches(record, experiments_dir)
    for i, row in stale.iterrows():
        record.loc[i, ["status", "within_2sd"]] = [
            f"{NOT_RUN}: {experiment_file(experiments_dir, row['experiment'])} changed since "
            f"this row's run ({row['config_sha256'] or 'no hash recorded'}, now "
            f"{row['file_sha256']}); rerun pending",
            None,
        ]
    return with_mean_ranks(record)


def merge_record(
    record: pd.DataFrame,
    run: pd.DataFrame,
    papers: Sequence[str],
    algorithms: Sequence[str] | None = None,
    datasets: Sequence[str] | None = None,
    experiments_dir: str | os.PathLike = EXPERIMENTS_DIR,
) -> pd.DataFrame:
    """``record`` with the rows of ``papers`` replaced by those of ``run`` (a
    fidelity table where those papers' experiments were run), the other papers'
    rows kept: a record gathered from runs made at different times, each row
    naming its experiment. With ``algorithms`` and/or ``datasets`` (ours),
    only their rows are replaced (a rerun of one method, or of some datasets,
    after a change to them), rank rows kept for :func:`with_mean_ranks` to
    derive again. Refuses a paper the record does not hold, one with no cell run in
    ``run``, or one whose cells in ``run`` lack some of the record's; cells
    ``run`` adds (cells of the paper newly entered in paper_results.csv)
    follow the paper's other cells, in ``run``'s order. Refuses rows run from
    another version of their experiment file than ``experiments_dir``'s
    (:func:`check_provenance`)."""
    known = set(record["paper"])
    unknown = [p for p in papers if p not in known]
    if unknown:
        raise ValueError(f"papers {unknown} are not in the record; its papers: {sorted(known)}")

    def chosen(cells: pd.DataFrame) -> pd.Series:
        rows = cells["paper"].isin(papers)
        if algorithms or datasets:  # a rank row spans them all: derived again after
            rows &= cells["metric"] != RANK_METRIC
        if algorithms:
            rows &= cells["our_algorithm"].isin(algorithms)
        if datasets:
            rows &= cells["our_dataset"].isin(datasets)
        return rows

    taken = run[chosen(run)]
    which = (f" by {list(algorithms)}" if algorithms else "") + (
        f" on {list(datasets)}" if datasets else ""
    )
    for paper in papers:
        rows = taken[taken["paper"] == paper]
        if rows.empty or rows["status"].str.startswith(NOT_RUN).all():
            raise ValueError(f"no cell of {paper} was run{which} in this fidelity table")
    check_provenance(taken, experiments_dir)
    replaced = chosen(record)
    lost = set(map(tuple, record.loc[replaced, KEY].values)) - set(map(tuple, taken[KEY].values))
    if lost:
        raise ValueError(
            f"the fidelity table lacks {len(lost)} cells of {list(papers)} that the record "
            f"holds, e.g. {sorted(lost)[0]}"
        )
    merged = pd.concat([record[~replaced], taken], ignore_index=True)
    # the record's order; a new cell after its paper's last cell in the record
    order = {tuple(k): float(i) for i, k in enumerate(record[KEY].values)}
    last = {paper: np.flatnonzero(record["paper"].to_numpy() == paper).max() for paper in papers}
    position = [
        order[tuple(k)] if tuple(k) in order else last[k[0]] + 0.5 for k in merged[KEY].values
    ]
    return merged.iloc[np.argsort(position, kind="stable")].reset_index(drop=True)


SLICE = "results/tables/{experiment}/slices/{dataset}.csv"
RUN_CONFIG = "config/config.yaml"
MANIFEST = "results/raw/{dataset}/manifest.json"


def run_config(run: Path, configfiles: Sequence[str | os.PathLike] = ()) -> dict:
    """A run's configuration as Snakemake builds it: the Snakefile's
    ``configfile`` (``config/config.yaml`` in the run's directory), then each
    ``--configfile`` in turn, nested mappings merged key by key."""
    from snakemake.utils import update_config

    from .config import read_mapping

    config: dict = {}
    for path in [run / RUN_CONFIG, *map(Path, configfiles)]:
        if not path.is_file():
            raise ValueError(f"{path}: no such configuration file")
        update_config(config, read_mapping(path, "a configuration file"))
    return config


def slices_fidelity(
    run_dir: str | os.PathLike,
    papers: Sequence[str],
    datasets: Sequence[str],
    paper_results: str | os.PathLike = "resources/paper_results.csv",
    configfiles: Sequence[str | os.PathLike] = (),
) -> pd.DataFrame:
    """The fidelity table of the datasets a run still under way has finished:
    the table slices (rule ``table_slice``, ``results/tables/<experiment>/
    slices/<dataset>.csv`` in the run's directory ``run_dir``) of ``datasets``
    for each experiment of ``papers`` there that the fidelity report reads
    (not a sensitivity study: ``paper: {fidelity: false}``), gathered as that
    experiment's results table with the ``config_sha256`` of the run's
    experiment file (taken, as the aggregate stage takes it, when the tables
    are built). The other cells of the papers are ``not run``: merge with the
    same ``datasets`` (:func:`merge_record`). A dataset without a slice, or
    with a slice older than its experiment file or one of its fit records, is
    refused, with the command that builds it from the fits already made
    (``--allowed-rules table_slice`` refits nothing, so it runs beside the
    rerun; the rule's inputs are every fit of the dataset). ``configfiles``:
    the files the run was started with (``snakemake --configfile``), read
    over the run's ``config/config.yaml`` as Snakemake reads them, so that
    the experiment files and the registry are the run's (its
    ``experiments_dir`` and ``registry``, relative to ``run_dir``)."""
    from .config import experiments_dir, load_experiments, load_registry, registry_path
    from .experiment import supplies_fidelity
    from .fidelity import fidelity_table
    from .tables import unavailable_datasets

    run = Path(run_dir)

    def slice_of(experiment: str, dataset: str) -> Path:
        return run / SLICE.format(experiment=experiment, dataset=dataset)

    def build_hint(experiment: str) -> str:
        slices = " ".join(SLICE.format(experiment=experiment, dataset=ds) for ds in datasets)
        return (
            f"in {run} (with the run's --configfile and --config, if any): "
            f"snakemake --cores 1 --nolock --allowed-rules table_slice {slices} (it builds "
            f"nothing while a fit is missing; snakemake -n {slices} lists what is)"
        )

    config = run_config(run, configfiles)
    schemas = run / "workflow" / "schemas"
    run_experiments = run / experiments_dir(config)
    experiments = load_experiments(
        run_experiments, load_registry(run / registry_path(config), schemas), schemas
    )
    chosen = {
        name: exp
        for name, exp in experiments.items()
        if supplies_fidelity(exp)
        and exp["paper"]["name"] in papers
        and all(slice_of(name, ds).exists() for ds in datasets)
    }
    if not chosen:
        raise ValueError(
            f"no experiment of {list(papers)} in {run} has the slices of {list(datasets)}: "
            f"build them from the fits already made, {build_hint('<experiment>')}"
        )
    summaries = {}
    for name in chosen:
        for ds in datasets:  # a slice older than what it is made from is not this run's
            made = slice_of(name, ds).stat().st_mtime
            sources = [experiment_file(run_experiments, name)]
            sources += sorted((run / "results" / "fits" / name / ds).rglob("*.json"))
            newer = [path for path in sources if path.stat().st_mtime > made]
            if newer:
                more = f" and {len(newer) - 1} more" if len(newer) > 1 else ""
                raise ValueError(
                    f"{slice_of(name, ds)} is older than {newer[0]}{more}: build it again, "
                    + build_hint(name)
                )
        summary = pd.concat([pd.read_csv(slice_of(name, ds)) for ds in datasets])
        summary["config_sha256"] = file_sha256(experiment_file(run_experiments, name))
        summaries[name] = summary.reset_index(drop=True)
    manifests = [path for ds in datasets if (path := run / MANIFEST.format(dataset=ds)).exists()]
    return fidelity_table(
        chosen, summaries, pd.read_csv(paper_results), unavailable_datasets(manifests)
    )


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m mkl.workflow.record [results/tables/fidelity.csv] [--papers P ...
    [--algorithms A ...] [--datasets D ...]]``, run in the repository: copy the
    fidelity table of the runs to docs/fidelity.csv (the record
    docs/results.md reports), or with ``--papers`` only those papers' rows (with
    ``--algorithms`` / ``--datasets``, only those algorithms' / datasets' rows
    of them; the others stay as recorded), and regenerate docs/results.md's
    tables from it. ``--slices RUN_DIR`` (with ``--papers`` and ``--datasets``):
    the rows of the datasets a run still under way has finished, from their
    table slices in that run's directory (:func:`slices_fidelity`; with
    ``--configfile FILE ...``, the files the run was started with). A run made
    under another version of an experiment file than the checkout's is
    refused. ``--stale``: no run read; the record's rows whose experiment file
    changed since their run are marked not run."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m mkl.workflow.record", description=main.__doc__.splitlines()[0]
    )
    parser.add_argument("source", nargs="?", default="results/tables/fidelity.csv")
    parser.add_argument(
        "--papers", nargs="+", metavar="PAPER", help="update only these papers' rows"
    )
    parser.add_argument(
        "--algorithms",
        nargs="+",
        metavar="ALGORITHM",
        help="with --papers: update only the rows of these of our algorithms",
    )
    parser.add_argument(
        "--datasets",
        nargs="+",
        metavar="DATASET",
        help="with --papers: update only the rows of these of our datasets",
    )
    parser.add_argument(
        "--slices",
        metavar="RUN_DIR",
        help="with --papers and --datasets: read those datasets' table slices in the "
        "directory of a run still under way (results/tables/<experiment>/slices/), not "
        "a fidelity table",
    )
    parser.add_argument(
        "--configfile",
        nargs="+",
        metavar="FILE",
        help="with --slices: the configuration files the run was started with "
        "(snakemake --configfile), read over the run's config/config.yaml",
    )
    parser.add_argument(
        "--stale",
        action="store_true",
        help="mark the record's rows whose experiment file changed since their run as not run",
    )
    args = parser.parse_args(argv)
    if (args.algorithms or args.datasets) and not args.papers:
        parser.error("--algorithms and --datasets need --papers")
    if args.stale and args.papers:
        parser.error("--stale reads no run: it takes no --papers")
    if args.slices and not (args.papers and args.datasets):
        parser.error("--slices needs --papers and --datasets")
    if args.configfile and not args.slices:
        parser.error("--configfile needs --slices")
    record = "docs/fidelity.csv"
    if args.stale:
        cells = mark_stale(read_cells(record))
    else:
        cells = (
            slices_fidelity(
                args.slices, args.papers, args.datasets, configfiles=args.configfile or ()
            )
            if args.slices
            else read_cells(args.source)
        )
        if args.papers:
            cells = merge_record(
                read_cells(record), cells, args.papers, args.algorithms, args.datasets
            )
        else:
            check_provenance(cells)
    # the rank rows derived again from the cells they rank (a merge mixes runs)
    write_csv(with_mean_ranks(cells), record)
    changed = update_results(RESULTS_DOC, record)
    print(f"{RESULTS_DOC} " + ("updated" if changed else "unchanged") + " from docs/fidelity.csv")


if __name__ == "__main__":
    main()

"""The fidelity report: every cell of the five papers' tables
(``resources/paper_results.csv``) beside ours, in one table, with a summary per
paper and overall (the ``fidelity`` stage).

A paper cell is compared by the experiment whose ``paper`` section maps it (a
paper table, one of our datasets and algorithms, one of the paper's metrics); where
several experiments map the same cell, the first of them that has been run,
those named after the paper first (``yang2011_gmkl`` over the reduced
``quick``, which stands in for it until it has run: the ``experiment`` column
says which). Each cell's status says why it
holds no comparison when it does not: the experiment has not been run, the
dataset is not available (with the reason), every fit failed, or no
experiment maps the cell (a metric or method we do not compare). A cell whose
paper dataset cannot be compared as the paper meant it keeps our numbers and
the status its experiment's ``paper: {cell_status: {dataset: ...}}`` gives:
``different target: <reason>`` (our data's label is not the paper's) or
``not identifiable: <reason>`` (the paper does not say enough to reproduce
the cell); only ``ok`` cells count. Every compared cell carries the
``config_sha256`` of the experiment file its tables were aggregated under and
the ``code_version`` of its fits (:mod:`mkl.workflow.provenance`).

The record of the runs (``docs/fidelity.csv``, and the tables of
``docs/results.md`` rendered from it) is kept by :mod:`mkl.workflow.record`, a maintainer's tool
outside this stage.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._io import write_text
from . import report_pages as pages
from .experiment import supplies_fidelity
from .tables import (
    COUNT_METRICS,
    PAPER_METRIC_NAMES,
    paper_comparison,
    paper_metrics,
    unavailable_datasets,
    write_csv,
)

OK = "ok"
NOT_RUN = "not run"
NOT_AVAILABLE = "not available"
FAILED = "failed"
NOT_MAPPED = "not compared"
DIFFERENT_TARGET = "different target"
NOT_IDENTIFIABLE = "not identifiable"
# statuses of a cell that has our numbers but is not counted (cell_status)
UNCOUNTED = (DIFFERENT_TARGET, NOT_IDENTIFIABLE)
# the papers' names of count metrics (kernels selected): within two sd is
# counted for them as for every cell, but their differences are in kernels,
# not percentage points, so the mean |ours - paper| leaves them out
COUNTS = frozenset(PAPER_METRIC_NAMES.get(m, m) for m in COUNT_METRICS)
# a paper's rank row (Lauriola et al.'s Table 1): each method's rank by
# RANKED_METRIC on every dataset of the table, 1 the best, averaged over the
# datasets; derived from the table's cells, never fitted (with_mean_ranks)
RANK_METRIC = "mean_rank"
RANKED_METRIC = "accuracy"
# neither counts nor ranks are percentages: the mean |ours - paper| leaves them out
NOT_RATES = COUNTS | {RANK_METRIC}

# the papers' names of their rate metrics, as the fidelity figure's axes say them
RATE_NAMES = {
    "accuracy": "accuracy",
    "f_score": "F-score",
    "f1_percent": "F1",
    "mcc_percent": "MCC",
    "one_minus_mcc_percent": "1 − MCC",
}

COLUMNS = [
    "paper",
    "table",
    "dataset",
    "method",
    "metric",
    "paper_mean",
    "paper_std",
    "ours_mean",
    "ours_std",
    "difference",
    "within_2sd",
    "status",
    "experiment",
    "our_dataset",
    "our_algorithm",
    "n_splits",
    "config_sha256",
    "code_version",
]


def has_numbers(status: pd.Series) -> pd.Series:
    """The cells that hold our numbers: compared (ok) or uncounted (UNCOUNTED)."""
    return (status == OK) | status.str.startswith(UNCOUNTED)


def experiment_order(experiments: Mapping[str, Mapping]) -> list[str]:
    """Experiments with a ``paper`` section, those named after their paper first
    (the full reproduction wins over a reduced one), then by name; not those
    whose section says ``fidelity: false`` (sensitivity studies, such as
    several class groupings for one paper dataset)."""
    named = [e for e, x in experiments.items() if supplies_fidelity(x)]
    return sorted(named, key=lambda e: (experiments[e]["paper"]["name"] != e, e))


def fidelity_table(
    experiments: Mapping[str, Mapping],
    summaries: Mapping[str, pd.DataFrame],
    paper_results: pd.DataFrame,
    unavailable: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """One row per cell of ``paper_results`` (COLUMNS). ``summaries``: the
    results.csv of each experiment that has been run (by name); ``unavailable``:
    dataset -> the reason it could not be obtained."""
    unavailable = dict(unavailable or {})
    # (paper, table, paper dataset, paper method, metric) -> [(experiment, our dataset,
    # algorithm)], in order of preference
    mapping: dict[tuple, list[tuple[str, str, str]]] = {}
    for name in experiment_order(experiments):
        section = experiments[name]["paper"]
        names = section.get("datasets", {})
        for (_, metric), (table, datasets) in itertools.product(
            paper_metrics(section), section["tables"].items()
        ):
            for ds in datasets:
                for alg, method in section["methods"].items():
                    key = (section["name"], table, names.get(ds, ds), method, metric)
                    mapping.setdefault(key, []).append((name, ds, alg))
    compared: dict[str, pd.DataFrame] = {}
    for name, summary in summaries.items():
        if "paper" in experiments.get(name, {}):
            compared[name] = paper_comparison(
                summary, paper_results, experiments[name]["paper"], list(unavailable)
            )
    rows = []
    for cell in paper_results.itertuples(index=False):
        std = float(cell.std) if pd.notna(cell.std) else np.nan
        row = {
            "paper": cell.paper,
            "table": cell.table,
            "dataset": cell.dataset,
            "method": cell.method,
            "metric": cell.metric,
            "paper_mean": float(cell.mean),
            "paper_std": std,
            "ours_mean": np.nan,
            "ours_std": np.nan,
            "difference": np.nan,
            "within_2sd": None,
            "experiment": "",
            "our_dataset": "",
            "our_algorithm": "",
            "n_splits": 0,
            "config_sha256": "",
            "code_version": "",
        }
        candidates = mapping.get((cell.paper, cell.table, cell.dataset, cell.method, cell.metric))
        if not candidates:
            row["status"] = f"{NOT_MAPPED}: no experiment maps this cell"
            rows.append(row)
            continue
        # the preferred experiment among those run (the reduced quick one stands in
        # for its paper's until the full one has run), else the preferred one
        run = [c for c in candidates if c[0] in summaries]
        name, ds, alg = (run or candidates)[0]
        row.update(experiment=name, our_dataset=ds, our_algorithm=alg)
        if ds in unavailable:
            row["status"] = f"{NOT_AVAILABLE}: {unavailable[ds]}"
        elif name not in compared:
            row["status"] = f"{NOT_RUN}: experiment {name}"
        else:
            cmp = compared[name]
            ours = cmp[
                (cmp["table"] == cell.table)
                & (cmp["metric"] == cell.metric)
                & (cmp["dataset"] == ds)
                & (cmp["algorithm"] == alg)
            ]
            summary = summaries[name]
            fitted = summary[(summary["dataset"] == ds) & (summary["algorithm"] == alg)]
            if fitted.empty or ours.empty:
                row["status"] = f"{NOT_RUN}: no fits of {alg} on {ds}"
            elif int(fitted["n_splits"].iloc[0]) == 0 or not np.isfinite(ours["ours_mean"].iloc[0]):
                row["status"] = FAILED
            else:
                o = ours.iloc[0]
                diff = float(o["ours_mean"]) - row["paper_mean"]
                provenance = fitted.iloc[0].reindex(["config_sha256", "code_version"])
                row.update(
                    ours_mean=float(o["ours_mean"]),
                    ours_std=float(o["ours_std"]),
                    difference=diff,
                    within_2sd=bool(abs(diff) <= 2 * std) if np.isfinite(std) else None,
                    n_splits=int(o["n_splits"]),
                    status=experiments[name]["paper"].get("cell_status", {}).get(cell.dataset, OK),
                    **provenance.fillna("").astype(str).to_dict(),
                )
        rows.append(row)
    return with_mean_ranks(pd.DataFrame(rows, columns=COLUMNS))


def with_mean_ranks(cells: pd.DataFrame) -> pd.DataFrame:
    """``cells`` with every rank-row cell (metric RANK_METRIC) filled from the
    RANKED_METRIC cells of its paper's table: on each dataset the methods of the
    rank row are ranked by their means as the paper prints them (two
    decimals), 1 the highest, tied means sharing the best of their ranks, and
    each method's ranks averaged over the table's datasets. That tie rule
    turns Lauriola et al.'s own Table 1 into its printed rank row (2.85, 2.20,
    1.80, 2.90; average ranks give 2.275 and 2.95 for EasyMKL and the linear
    kernel: tests/workflow/test_fidelity.py). A rank row is compared only when
    every cell it ranks has our numbers (:func:`has_numbers`: a cell of a
    different target still ranks the methods on our data); it has no sd."""
    cells = cells.copy()
    is_rank = cells["metric"] == RANK_METRIC
    for (paper, table), rank_rows in cells[is_rank].groupby(["paper", "table"], sort=False):
        methods = list(rank_rows["method"])
        ranked = cells[
            (cells["paper"] == paper)
            & (cells["table"] == table)
            & (cells["metric"] == RANKED_METRIC)
            & cells["method"].isin(methods)
        ]
        n_compared = int(has_numbers(ranked["status"]).sum())
        if ranked.empty or n_compared < len(ranked):
            cells.loc[rank_rows.index, "status"] = (
                f"{NOT_RUN}: the ranks need every {RANKED_METRIC} cell of {table} compared "
                f"({n_compared} of {len(ranked)} are)"
            )
            continue
        wide = ranked.pivot(index="dataset", columns="method", values="ours_mean").round(2)
        ranks = wide.rank(axis=1, method="min", ascending=False).mean()
        for i, row in rank_rows.iterrows():
            mine = ranked[ranked["method"] == row["method"]]
            rank = float(ranks[row["method"]])
            filled = {
                "ours_mean": rank,
                "difference": rank - float(row["paper_mean"]),
                "status": OK,
                "experiment": ", ".join(sorted(set(mine["experiment"]))),
                "our_dataset": "all",
                "our_algorithm": ", ".join(sorted(set(mine["our_algorithm"]))),
                "n_splits": int(mine["n_splits"].min()),
                "config_sha256": " ".join(sorted(set(mine["config_sha256"].fillna("")) - {""})),
                "code_version": " ".join(
                    sorted(set(" ".join(mine["code_version"].fillna("")).split()))
                ),
            }
            cells.loc[i, list(filled)] = list(filled.values())
    return cells


def rank_agreement(cells: pd.DataFrame) -> float:
    """Mean Spearman correlation, over (table, dataset, metric) groups with at
    least three compared methods, between our ranking of the methods and the
    paper's (NaN when no group qualifies). Spearman's rho is Pearson's correlation of
    the average ranks (scipy.stats.spearmanr's definition, without importing
    scipy.stats)."""
    rhos = []
    for _, g in cells[cells["status"] == OK].groupby(["table", "dataset", "metric"]):
        if len(g) < 3 or g["ours_mean"].nunique() < 2 or g["paper_mean"].nunique() < 2:
            continue
        rhos.append(g["ours_mean"].rank().corr(g["paper_mean"].rank()))
    return float(np.mean(rhos)) if rhos else np.nan


def fidelity_summary(cells: pd.DataFrame) -> pd.DataFrame:
    """Per paper and overall: cells, cells compared, those with a paper sd and
    how many of them are within two sd, the mean |ours - paper| (all compared
    cells, and those without an sd; rates only: counts of kernels are in
    other units), the rank agreement of methods per dataset and metric
    (Spearman; for the cells without an sd, where counting is impossible)."""

    def one(label, g):
        ok = g[g["status"] == OK]
        with_sd = ok[ok["paper_std"].notna()]
        rates = ok[~ok["metric"].isin(NOT_RATES)]
        without = rates[rates["paper_std"].isna()]
        return {
            "paper": label,
            "cells": len(g),
            "compared": len(ok),
            "with_sd": len(with_sd),
            "within_2sd": int(with_sd["within_2sd"].astype(bool).sum()),
            "mean_abs_difference": (
                float(rates["difference"].abs().mean()) if len(rates) else np.nan
            ),
            "without_sd": len(without),
            "mean_abs_difference_without_sd": (
                float(without["difference"].abs().mean()) if len(without) else np.nan
            ),
            "rank_agreement_without_sd": rank_agreement(without),
            "not_run": int(g["status"].str.startswith(NOT_RUN).sum()),
            "not_available": int(g["status"].str.startswith(NOT_AVAILABLE).sum()),
            "failed": int((g["status"] == FAILED).sum()),
            "not_compared": int(g["status"].str.startswith(NOT_MAPPED).sum()),
            "different_target": int(g["status"].str.startswith(DIFFERENT_TARGET).sum()),
            "not_identifiable": int(g["status"].str.startswith(NOT_IDENTIFIABLE).sum()),
        }

    rows = [one(paper, g) for paper, g in cells.groupby("paper", sort=True)]
    rows.append(one("all", cells))
    return pd.DataFrame(rows)


def plot_fidelity(cells: pd.DataFrame, path_png, path_pdf) -> None:
    """Ours against the paper's, one point per compared cell (coloured by
    paper), the diagonal drawn, error bars the paper's sd where given; cells
    beyond two of the paper's sd ringed in red. Rates (accuracy, F-score, MCC,
    1 - MCC, in %) and counts (kernels selected) in panels of their own."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .figures import save_figure, save_notice

    ok = cells[(cells["status"] == OK) & (cells["metric"] != RANK_METRIC)]
    if ok.empty:
        save_notice("fidelity: no paper cell compared yet", path_png, path_pdf)
        return
    rates = ok[~ok["metric"].isin(COUNTS)]
    names = ", ".join(RATE_NAMES.get(m, m) for m in dict.fromkeys(rates["metric"]))
    panels = [(rates, f"test {names} (%)"), (ok[ok["metric"].isin(COUNTS)], "kernels selected")]
    panels = [(g, unit) for g, unit in panels if len(g)]
    papers = sorted(ok["paper"].unique())
    fig, axes = plt.subplots(1, len(panels), figsize=(5.4 * len(panels), 5.4), squeeze=False)
    for ax, (g, unit) in zip(axes[0], panels, strict=True):
        for paper, h in g.groupby("paper", sort=True):
            ax.errorbar(
                h["paper_mean"],
                h["ours_mean"],
                xerr=h["paper_std"].fillna(0),
                fmt="o",
                ms=4,
                elinewidth=0.6,
                color=f"C{papers.index(paper) % 10}",
                label=f"{paper} ({len(h)})",
            )
        beyond = g[g["within_2sd"].map(_beyond)]
        if len(beyond):
            ax.scatter(
                beyond["paper_mean"],
                beyond["ours_mean"],
                s=110,
                facecolors="none",
                edgecolors="red",
                linewidths=1.4,
                zorder=3,
                label=f"beyond two paper sd ({len(beyond)})",
            )
        lo = float(min(g["paper_mean"].min(), g["ours_mean"].min()))
        hi = float(max(g["paper_mean"].max(), g["ours_mean"].max()))
        pad = 0.03 * (hi - lo or 1.0)
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="0.5", lw=0.8, zorder=0)
        ax.set_xlabel(f"paper: {unit}\n(mean; bars: the paper's sd)")
        ax.set_ylabel(f"ours: {unit}\n(mean over splits)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", frameon=False)
    with_sd = ok[ok["paper_std"].notna()]
    n_with_sd, n_within = len(with_sd), int(with_sd["within_2sd"].astype(bool).sum())
    fig.suptitle(
        f"Every compared paper cell: ours against the paper's\n({len(ok)} cells; "
        f"{n_within} of {n_with_sd} with a paper sd within two sd)",
        fontsize="medium",
    )
    fig.tight_layout()
    save_figure(fig, path_png, path_pdf)


# the columns of a compared cell in fidelity.md and .html (the csv has them all)
SHOWN = COLUMNS[COLUMNS.index("table") : COLUMNS.index("n_splits") + 1]


def summary_line(row: Mapping) -> str:
    """A paper's summary (a row of :func:`fidelity_summary`) in a sentence."""
    text = f"{int(row['cells'])} cells, {int(row['compared'])} compared"
    if row["with_sd"]:
        text += (
            f": {int(row['within_2sd'])} of the {int(row['with_sd'])} with a paper sd within two sd"
        )
    if np.isfinite(row["mean_abs_difference"]):
        text += f", mean |ours - paper| {row['mean_abs_difference']:.2f} points"
    if np.isfinite(row["rank_agreement_without_sd"]):
        text += f", rank agreement {row['rank_agreement_without_sd']:.2f} where no sd is given"
    others = [
        f"{int(row[key])} {label}"
        for key, label in (
            ("different_target", DIFFERENT_TARGET),
            ("not_identifiable", NOT_IDENTIFIABLE),
            ("not_run", NOT_RUN),
            ("not_available", NOT_AVAILABLE),
            ("failed", FAILED),
            ("not_compared", NOT_MAPPED),
        )
        if row[key]
    ]
    return text + ("; " + ", ".join(others) if others else "") + "."


def by_paper(cells: pd.DataFrame):
    """(paper, its cells holding our numbers, the others) per paper, the papers
    with compared cells first; each part in the paper's table order."""
    groups = []
    for paper, g in cells.groupby("paper", sort=True):
        numbers = has_numbers(g["status"])
        groups.append((paper, g[numbers], g[~numbers]))
    return sorted(groups, key=lambda item: item[1].empty)


def _status_counts(rest: pd.DataFrame) -> list[tuple[str, int, str]]:
    """(status, cells, the tables and metrics they are in) of the cells without
    our numbers, one per status."""
    out = []
    for status, g in rest.groupby("status", sort=False):
        where = ", ".join(
            f"{table} {metric} ({len(t)})"
            for (table, metric), t in g.groupby(["table", "metric"], sort=False)
        )
        out.append((status, len(g), where))
    return out


def fidelity_markdown(cells: pd.DataFrame, summary: pd.DataFrame) -> str:
    """``fidelity.md``: the summary, then per paper (those with compared cells
    first) its summary line, the cells holding our numbers, and the others
    folded into one line per status."""
    md = [
        "# Fidelity: every paper table cell beside ours",
        "",
        "One row per cell of resources/paper_results.csv in fidelity.csv. within_2sd: "
        "|ours - paper| <= 2 paper sd (only where the paper gives an sd). Rank agreement: mean "
        "Spearman correlation of the methods' order per dataset, ours against the paper's, for "
        "tables without an sd. Below, per paper, the cells compared come first; the cells "
        "without our numbers are counted by status.",
        "",
        "## Summary",
        "",
        summary.round(3).to_markdown(index=False),
        "",
    ]
    lines = summary.set_index("paper")
    for paper, compared, rest in by_paper(cells):
        md += [f"## {paper}", "", summary_line(lines.loc[paper]), ""]
        if len(compared):
            shown = compared[SHOWN].copy()
            for c in ("paper_mean", "paper_std", "ours_mean", "ours_std", "difference"):
                shown[c] = shown[c].round(2)
            md += [shown.to_markdown(index=False), ""]
        md += [f"- {status}: {n} cells ({where})" for status, n, where in _status_counts(rest)]
        md.append("")
    return "\n".join(md)


def _pm(mean, std) -> str:
    if not np.isfinite(mean):
        return ""
    return f"{mean:.2f}" if not np.isfinite(std) else f"{mean:.2f} ± {std:.2f}"


def _beyond(within_2sd) -> bool:
    """Whether a cell is beyond two paper sd (``within_2sd`` False; None or NaN:
    the paper gives no sd)."""
    return within_2sd is not None and within_2sd == within_2sd and not bool(within_2sd)


def fidelity_html(cells: pd.DataFrame, summary: pd.DataFrame) -> list[str]:
    """The parts of ``fidelity.html``: as :func:`fidelity_markdown`, ours beside
    the paper's, cells beyond two paper sd shaded, and the cells without our
    numbers folded per status (opened by a click)."""
    parts = [
        pages.heading("Fidelity: every paper table cell beside ours", 1),
        pages.paragraph(
            "Each of the five papers' table cells (resources/paper_results.csv) beside ours, "
            "mean ± sd (ours over the splits run). Within two sd: |ours − paper| ≤ 2 × the "
            "paper's sd, where the paper gives one. Per paper, the cells compared come first; "
            "the cells without our numbers (not run, not available, failed, not compared) are "
            "folded below them by status."
        ),
        pages.heading("Summary"),
        pages.frame_table(summary.round(3)),
    ]
    lines = summary.set_index("paper")
    head = pages.header(
        (
            "table",
            "dataset",
            "method",
            "metric",
            "paper",
            "ours",
            "ours − paper",
            "within 2 sd",
            "status",
            "experiment",
            "ours: dataset, algorithm",
            "splits",
        ),
        keys=4,
    )
    for paper, compared, rest in by_paper(cells):
        parts += [pages.heading(paper), pages.paragraph(summary_line(lines.loc[paper]))]
        body = []
        for c in compared.itertuples():
            beyond = _beyond(c.within_2sd)
            body.append(
                [
                    pages.Cell(c.table),
                    pages.Cell(c.dataset, "row"),
                    pages.Cell(c.method, "row"),
                    pages.Cell(c.metric, "row"),
                    pages.value(_pm(c.paper_mean, c.paper_std), "paper"),
                    pages.value(
                        _pm(c.ours_mean, c.ours_std) + (" *" if beyond else ""),
                        pages.BEYOND if beyond else "",
                    ),
                    pages.number(c.difference, 2),
                    pages.value({True: "yes", False: "no"}.get(c.within_2sd)),
                    pages.Cell(c.status),
                    pages.Cell(c.experiment),
                    pages.Cell(f"{c.our_dataset}, {c.our_algorithm}"),
                    pages.Cell(str(c.n_splits)),
                ]
            )
        if body:
            parts += [pages.table(head, body), pages.BEYOND_LEGEND]
        for status, n, where in _status_counts(rest):
            folded = rest[rest["status"] == status]
            table = pages.frame_table(
                folded[["table", "dataset", "method", "metric", "paper_mean", "paper_std"]]
            )
            parts.append(pages.collapsed(f"{status}: {n} cells ({where})", table))
    return parts


def write_fidelity(
    cells: pd.DataFrame, summary: pd.DataFrame, csv_path, md_path, html_path
) -> None:
    """``fidelity.csv`` (one row per cell), ``fidelity.md`` and ``fidelity.html``
    (the summary, then per paper the compared cells first)."""
    write_csv(cells, csv_path)
    write_text(md_path, fidelity_markdown(cells, summary))
    pages.write_page(html_path, "Fidelity", fidelity_html(cells, summary))


def fidelity(
    experiments: Mapping[str, Mapping],
    results_paths: Mapping[str, str | os.PathLike],
    manifest_paths: Sequence[str | os.PathLike],
    paper_results: str | os.PathLike,
    out: Mapping[str, str | os.PathLike],
) -> pd.DataFrame:
    """The fidelity stage: the results.csv of the experiments that have been
    run (``results_paths``, by name) -> ``csv``, ``md``, ``html``, ``png``, ``pdf``."""
    summaries = {name: pd.read_csv(path) for name, path in results_paths.items()}
    cells = fidelity_table(
        experiments, summaries, pd.read_csv(paper_results), unavailable_datasets(manifest_paths)
    )
    summary = fidelity_summary(cells)
    write_fidelity(cells, summary, out["csv"], out["md"], out["html"])
    plot_fidelity(cells, out["png"], out["pdf"])
    return summary

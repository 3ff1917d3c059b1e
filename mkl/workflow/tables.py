"""Tables: fit records collected, our mean +- std over splits, and the paper's
numbers beside ours (the aggregate stage).

Paper numbers come from ``paper_results.csv`` (columns paper, table, dataset,
method, metric, mean, std, note) and are only ever shown beside measured ones.
A cell is flagged when |ours - paper| exceeds two of the paper's standard
deviations.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .._io import atomic_path, write_text
from ..metrics import ALL_METRICS
from . import report_pages as pages


def read_fit_records(path: str | os.PathLike) -> list[dict]:
    """The fit records of one file: a single split's record, or a batch job's
    ``{"records": [...]}`` (one per split)."""
    with open(path) as fh:
        content = json.load(fh)
    records = content.get("records") if isinstance(content, dict) else None
    records = [content] if records is None else records
    for rec in records:
        if not isinstance(rec, dict) or ("test" not in rec and rec.get("status") != "failed"):
            raise ValueError(f"{path} is not a fit record")
    return records


def collect_fits(paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    """One row per fit record (files as ``read_fit_records`` reads them):
    dataset, algorithm, split, test metrics, fit details."""
    rows = []
    for rec in (rec for p in paths for rec in read_fit_records(p)):
        row = {k: rec[k] for k in ("dataset", "algorithm", "split")}
        row["code_version"] = rec.get("code_version", "")
        if rec.get("status") == "failed":  # the fit raised: no metrics, the error kept
            row.update({m: np.nan for m in ALL_METRICS}, error=rec["error"])
            rows.append(row)
            continue
        row["error"] = ""
        row.update({m: rec["test"].get(m) for m in ALL_METRICS})
        row["n_selected"] = _scalar_mean(rec["fit"]["n_selected"])
        row["spectral_ratio"] = _scalar_mean(rec["fit"].get("spectral_ratio", np.nan))
        row["n_kernels"] = rec["n_kernels"]
        row["seconds"] = rec["fit"]["seconds"]
        row["converged"] = rec["fit"]["converged"]
        row["selected_params"] = json.dumps(rec["selected_params"], sort_keys=True)
        row["grid_edges"] = " ".join(f"{p}:{edge}" for p, edge in grid_edges(rec))
        rows.append(row)
    columns = ["dataset", "algorithm", "split", *ALL_METRICS, "n_selected", "spectral_ratio"]
    columns += ["n_kernels", "seconds", "converged", "selected_params", "grid_edges"]
    columns += ["error", "code_version"]
    if not rows:  # every dataset unavailable: empty tables that say so
        return pd.DataFrame(columns=columns)
    return pd.DataFrame(rows, columns=columns).sort_values(
        ["dataset", "algorithm", "split"], kind="stable"
    )


def grid_edges(record: Mapping) -> list[tuple[str, str]]:
    """(parameter, "bottom" or "top") for each grid parameter whose selected
    value is the smallest or the largest of the values its grid tried (a
    parameter of two or more numbers; a fixed or categorical one has no edge).
    A value chosen at an edge may be short of the best: the grid ends there."""
    points = [p["params"] for p in record.get("grid") or ()]
    selected = record.get("selected_params") or {}
    edges = []
    for param, value in selected.items():
        tried = {p.get(param) for p in points}
        if not _is_number(value) or len(tried) < 2 or not all(map(_is_number, tried)):
            continue
        if value == min(tried):
            edges.append((param, "bottom"))
        elif value == max(tried):
            edges.append((param, "top"))
    return edges


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)


def _scalar_mean(v):
    return float(np.mean(v)) if isinstance(v, list) else v


def summarise(fits: pd.DataFrame, order: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """Mean and std over splits per (dataset, algorithm), in the experiment's order."""
    cols = [*ALL_METRICS, "n_selected", "spectral_ratio", "seconds"]
    fits = fits.copy()
    for c in cols:
        fits[c] = pd.to_numeric(fits[c], errors="coerce")
    g = fits.groupby(["dataset", "algorithm"], sort=False)
    out = g[cols].agg(["mean", "std"])
    out.columns = [f"{c}_{s}" for c, s in out.columns]
    if "error" in fits:  # failed fits count as failed, not as splits
        failed = fits["error"].fillna("").astype(str).ne("")
    else:
        failed = pd.Series(False, index=fits.index)
    out["n_failed"] = failed.groupby([fits["dataset"], fits["algorithm"]], sort=False).sum()
    out["n_splits"] = g.size() - out["n_failed"]
    # fits that stopped at an iteration cap (or whose inner solves did) count
    # among the splits, flagged: the cell gets NOT_CONVERGED, the caption the count
    not_converged = fits["converged"].eq(False) & ~failed
    out["n_not_converged"] = not_converged.groupby(
        [fits["dataset"], fits["algorithm"]], sort=False
    ).sum()
    edges = fits["grid_edges"] if "grid_edges" in fits else pd.Series("", index=fits.index)
    # a failed split's edges left out (NaN); a Series' groupby, so that no fit
    # at all (a dataset unavailable) gives an empty column, not a frame
    out["grid_edges"] = (
        edges.fillna("").astype(str).mask(failed)
        .groupby([fits["dataset"], fits["algorithm"]], sort=False)
        .agg(lambda cell: _frequent_edges(cell.dropna()))
    )  # fmt: skip
    out["n_kernels"] = g["n_kernels"].first()
    if "code_version" in fits:  # the code of the fits behind a cell (several after partial reruns)
        out["code_version"] = g["code_version"].agg(
            lambda v: " ".join(sorted(set(v.fillna("").astype(str)) - {""}))
        )
    out = out.reset_index()
    if order:
        for key in ("dataset", "algorithm"):
            if order.get(key):
                rank = {v: i for i, v in enumerate(order[key])}
                out[f"_{key}"] = out[key].map(lambda v, r=rank: r.get(v, len(r)))
        out = out.sort_values([c for c in ("_dataset", "_algorithm") if c in out], kind="stable")
        out = out.drop(columns=[c for c in ("_dataset", "_algorithm") if c in out])
    return out.reset_index(drop=True)


def _frequent_edges(edges: pd.Series) -> str:
    """The grid edges (``param:edge`` words of ``per_split``'s ``grid_edges``)
    met in more than half of a cell's fitted splits, as ``param:edge:count``."""
    counts: dict[str, int] = {}
    for word in (w for text in edges for w in text.split()):
        counts[word] = counts.get(word, 0) + 1
    return " ".join(f"{w}:{k}" for w, k in counts.items() if k > len(edges) / 2)


def edge_cells(summary: pd.DataFrame) -> list[tuple[str, str, str, str, int, int]]:
    """(dataset, algorithm, parameter, edge, splits at it, fitted splits) for
    each cell whose selected value of a grid parameter sits at an edge of its
    grid in more than half of the splits (``grid_edges`` of :func:`summarise`)."""
    if "grid_edges" not in summary:
        return []
    cells = []
    for r in summary.itertuples():
        for word in str(r.grid_edges or "").split():
            param, edge, count = word.rsplit(":", 2)
            cells.append((r.dataset, r.algorithm, param, edge, int(count), int(r.n_splits)))
    return cells


def grid_edge_mark(edges: Sequence[tuple[str, str]]) -> str:
    """A results cell's mark of its grid edges: `` [C top, p bottom]``."""
    return " [" + ", ".join(f"{p} {edge}" for p, edge in edges) + "]" if edges else ""


def grid_edge_note(summary: pd.DataFrame) -> str:
    """The caption's list of the cells marked with a grid edge, each naming
    the parameter, the edge and in how many splits, with what to do."""
    cells = edge_cells(summary)
    if not cells:
        return ""
    lines = "".join(
        f"\n- {ds} / {alg}: {param} at the {edge} of its grid in {k} of {n} splits"
        for ds, alg, param, edge, k, n in cells
    )
    return (
        "\n\n[C top], [C bottom] (any grid parameter): the selected value sat at that "
        "edge of its grid in more than half of the splits, so the best value may lie "
        "beyond it: extend the grid "
        f"past that end (C is in the unit of the kernels' normalisation: about n_train "
        f"times larger on unit-trace kernels than on unit-diagonal ones):{lines}"
    )


def fmt_pm(mean, std, digits: int = 1) -> str:
    if mean is None or (isinstance(mean, float) and np.isnan(mean)):
        return "n/a"
    if std is None or (isinstance(std, float) and np.isnan(std)):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


NOT_AVAILABLE = "not available"
FAILED = "failed"  # every split's fit raised an error (see the caption and per_split.csv)
NOT_CONVERGED = "†"  # some splits' fits did not converge (the caption says how many)
# our metric name -> the name in paper_results.csv
PAPER_METRIC_NAMES = {"f1": "f_score", "n_selected": "kernels"}
# metrics that are counts (kernels selected), compared as they are: a paper
# section's ``scale`` turns our rates (accuracy, F1, ...) into the paper's units
COUNT_METRICS = frozenset({"n_selected"})
# what a paper reports of a metric's mean (the std is unchanged by both)
TRANSFORMS = {"none": lambda m: m, "one_minus": lambda m: 1.0 - m}


def paper_metrics(paper: Mapping) -> list[tuple[str, str]]:
    """(our metric, its name in paper_results.csv) for each metric a ``paper``
    section compares: ``metric`` is one name or a list (Kundu et al. report
    accuracy and F-score for every cell); ``paper_metric`` renames a single one."""
    metric = paper.get("metric", "accuracy")
    if isinstance(metric, str):  # a list with paper_metric is refused at load (experiment.check)
        return [(metric, paper.get("paper_metric", PAPER_METRIC_NAMES.get(metric, metric)))]
    return [(m, PAPER_METRIC_NAMES.get(m, m)) for m in metric]


def results_table(
    summary: pd.DataFrame,
    metric: str = "accuracy",
    scale: float = 100.0,
    datasets: Sequence[str] | None = None,
    algorithms: Sequence[str] | None = None,
    unavailable: Sequence[str] = (),
    not_run: Iterable[tuple[str, str]] = (),
) -> pd.DataFrame:
    """Datasets as rows, algorithms as columns, cells 'mean ± std' (x scale;
    one decimal for a percentage, scale 100, three significant digits else).
    With ``datasets``/``algorithms`` the table has those rows and columns in
    that order; datasets in ``unavailable`` read "not available", and the
    (dataset, algorithm) pairs in ``not_run`` (an algorithm restricted to other
    datasets) read "-"."""
    datasets = list(datasets) if datasets is not None else list(summary["dataset"].unique())
    algorithms = list(algorithms) if algorithms is not None else list(summary["algorithm"].unique())
    not_run = set(not_run)
    rows = []
    for ds in datasets:
        row = {"dataset": ds}
        for alg in algorithms:
            hit = summary[(summary["dataset"] == ds) & (summary["algorithm"] == alg)]
            if ds in unavailable:
                row[alg] = NOT_AVAILABLE
            elif (ds, alg) in not_run:
                row[alg] = "-"
            elif hit.empty:
                row[alg] = "n/a"
            elif "n_failed" in hit and hit["n_splits"].iloc[0] == 0:
                row[alg] = FAILED
            else:
                m, sd = hit[f"{metric}_mean"].iloc[0], hit[f"{metric}_std"].iloc[0]
                row[alg] = fmt_pm(m * scale, sd * scale, _digits(m * scale, scale))
                failed = int(hit["n_failed"].iloc[0]) if "n_failed" in hit else 0
                if failed:
                    row[alg] += f" ({failed} {FAILED})"
                if int(hit.get("n_not_converged", pd.Series([0])).iloc[0]):
                    row[alg] += f" {NOT_CONVERGED}"
                edges = [(p, e) for d, a, p, e, _, _ in edge_cells(hit) if (d, a) == (ds, alg)]
                row[alg] += grid_edge_mark(edges)
        rows.append(row)
    return pd.DataFrame(rows, columns=["dataset", *algorithms])


def _digits(value, scale: float) -> int:
    """Decimals of a table cell: one for a percentage, else three significant digits."""
    if scale == 100.0 or not np.isfinite(value) or value == 0:
        return 1
    return int(max(0, 2 - np.floor(np.log10(abs(value)))))


def paper_comparison(
    summary: pd.DataFrame,
    paper_results: pd.DataFrame,
    paper: Mapping,
    unavailable: Sequence[str] = (),
) -> pd.DataFrame:
    """Our cells beside the paper's for one experiment's ``paper`` section, a
    row per cell and metric (``metric``: the paper's name of it)::

    paper: {name: yang2011_gmkl, metric: accuracy, scale: 100,
            tables: {table4: [gmkl_toy1]},            # paper table -> our datasets
            datasets: {gmkl_toy1: toy1},              # our name -> paper's name
            methods: {uniform: uniform}}              # our algorithm -> paper's method
    """
    rate_scale = float(paper.get("scale", 100.0))
    # a paper may report a transform of our metric: one_minus -> 1 - mean (Kloft's 1 - MCC)
    rate_transform = TRANSFORMS[paper.get("transform", "none")]
    ref = paper_results[paper_results["paper"] == paper["name"]]
    rows = []
    for (metric, name), (table, datasets) in itertools.product(
        paper_metrics(paper), paper["tables"].items()
    ):
        theirs_all = ref[ref["metric"] == name] if "metric" in ref else ref
        count = metric in COUNT_METRICS
        scale = 1.0 if count else rate_scale
        transform = TRANSFORMS["none"] if count else rate_transform
        for ds in datasets:
            pds = paper.get("datasets", {}).get(ds, ds)
            for alg, pmethod in paper["methods"].items():
                ours = summary[(summary["dataset"] == ds) & (summary["algorithm"] == alg)]
                theirs = theirs_all[
                    (theirs_all["table"] == table)
                    & (theirs_all["dataset"] == pds)
                    & (theirs_all["method"] == pmethod)
                ]
                if theirs.empty:
                    continue
                om = transform(ours[f"{metric}_mean"].iloc[0]) * scale if len(ours) else np.nan
                os_ = ours[f"{metric}_std"].iloc[0] * scale if len(ours) else np.nan
                pm, ps = float(theirs["mean"].iloc[0]), float(theirs["std"].iloc[0])
                diff = om - pm
                rows.append(
                    {
                        "table": table,
                        "metric": name,
                        "dataset": ds,
                        "algorithm": alg,
                        "ours": NOT_AVAILABLE if ds in unavailable else fmt_pm(om, os_),
                        "paper": fmt_pm(pm, ps),
                        "ours_mean": om,
                        "ours_std": os_,
                        "paper_mean": pm,
                        "paper_std": ps,
                        "difference": round(diff, 2) if np.isfinite(diff) else None,
                        "beyond_2sd": bool(np.isfinite(diff) and abs(diff) > 2 * ps),
                        "n_splits": int(ours["n_splits"].iloc[0]) if len(ours) else 0,
                        "n_not_converged": (
                            int(ours["n_not_converged"].iloc[0])
                            if len(ours) and "n_not_converged" in ours
                            else 0
                        ),
                    }
                )
    return pd.DataFrame(rows)


def paper_table_cells(
    comparison: pd.DataFrame, paper: Mapping
) -> dict[str, tuple[list[str], list[list[pd.Series | None]]]]:
    """The layout of the paper's tables, one per paper table (and metric,
    where the section compares several), in the paper's order: the row labels
    (the paper's dataset names; with ours in parentheses where several of ours
    stand for one of the paper's) and, row by row, the ``comparison`` row of
    each method of ``paper["methods"]`` (None where the paper has no cell).
    Keyed by the table's name, or "table, metric" when there are several
    metrics."""
    out = {}
    names = paper.get("datasets", {})
    metrics = [name for _, name in paper_metrics(paper)]
    for table, metric in itertools.product(paper["tables"], metrics):  # the paper's order
        datasets = paper["tables"][table]
        sub = comparison
        if len(sub):
            sub = sub[(sub["table"] == table) & (sub["metric"] == metric)]
        shown = [names.get(ds, ds) for ds in datasets]
        labels, grid = [], []
        for ds, name in zip(datasets, shown, strict=True):
            # several of ours for one paper dataset (a sensitivity study): "iris (iris_bin)"
            labels.append(f"{name} ({ds})" if shown.count(name) > 1 else name)
            row = []
            for alg in paper["methods"]:
                hit = sub[(sub["dataset"] == ds) & (sub["algorithm"] == alg)] if len(sub) else sub
                row.append(hit.iloc[0] if len(hit) else None)
            grid.append(row)
        out[table if len(metrics) == 1 else f"{table}, {metric}"] = (labels, grid)
    return out


def cell_marks(cell: pd.Series) -> str:
    """The marks of a compared cell: " *" beyond two paper sd, " †" where fits
    did not converge."""
    mark = " *" if cell["beyond_2sd"] else ""
    if cell.get("n_not_converged", 0):
        mark += f" {NOT_CONVERGED}"
    return mark


def paper_tables(comparison: pd.DataFrame, paper: Mapping) -> dict[str, pd.DataFrame]:
    """One wide table per paper table (:func:`paper_table_cells`): a row per
    dataset, a column per method (the paper's name), each cell "ours (paper)",
    marked " *" where they differ by more than two of the paper's standard
    deviations."""
    methods = list(paper["methods"].values())
    out = {}
    for key, (labels, grid) in paper_table_cells(comparison, paper).items():
        rows = [
            {
                "dataset": label,
                **{
                    m: "" if h is None else f"{h['ours']} ({h['paper']}){cell_marks(h)}"
                    for m, h in zip(methods, row, strict=True)
                },
            }
            for label, row in zip(labels, grid, strict=True)
        ]
        out[key] = pd.DataFrame(rows, columns=["dataset", *methods])
    return out


def paper_tables_html(comparison: pd.DataFrame, paper: Mapping) -> list[str]:
    """The paper's tables (:func:`paper_table_cells`) as HTML: under each
    method, our mean ± std and the paper's in adjacent columns, ours shaded
    and marked where the two differ by more than two of the paper's sd."""
    methods = list(paper["methods"].values())
    parts = []
    for key, (labels, grid) in paper_table_cells(comparison, paper).items():
        head = [
            [pages.Cell(""), *(pages.Cell(m, span=2) for m in methods)],
            [
                pages.Cell("dataset", "row"),
                *(pages.Cell(w) for _ in methods for w in ("ours", "paper")),
            ],
        ]
        body = []
        for label, row in zip(labels, grid, strict=True):
            cells = [pages.Cell(label)]
            for h in row:
                if h is None:
                    cells += [pages.value(None), pages.value(None)]
                    continue
                css = pages.BEYOND if h["beyond_2sd"] else ""
                ours = pages.value(h["ours"] + cell_marks(h) if h["ours"] != "n/a" else None, css)
                cells += [ours, pages.value(h["paper"], "paper")]
            body.append(cells)
        parts += [pages.heading(key), pages.table(head, body)]
    return parts


def write_paper_tables(
    tables: Mapping[str, pd.DataFrame], md_path, tex_path, caption: str = ""
) -> None:
    """All of one paper's tables in one Markdown file and one LaTeX file."""
    md = [caption, ""] if caption else []
    tex = ["% generated by mkl.report.write_paper_tables", ""]
    for name, df in tables.items():
        md += [f"## {name}", "", df.to_markdown(index=False), ""]
        tex += [
            df.to_latex(
                index=False,
                caption=f"{name}: ours (paper); * beyond two paper standard deviations",
                label=f"tab:{name}",
            ).replace("±", r"$\pm$"),
            "",
        ]
    write_text(md_path, "\n".join(md))
    write_text(tex_path, "\n".join(tex))


def write_table(df: pd.DataFrame, csv_path, md_path, caption: str = "") -> None:
    """CSV (if ``csv_path``) and Markdown, each written atomically."""
    if csv_path is not None:
        with atomic_path(csv_path) as tmp:
            df.to_csv(tmp, index=False)
    md = (f"{caption}\n\n" if caption else "") + df.to_markdown(index=False) + "\n"
    write_text(md_path, md)


def write_csv(df: pd.DataFrame, path) -> None:
    """A table as CSV, written atomically."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def not_converged_note(summary: pd.DataFrame) -> str:
    """The caption's count of fits that did not converge, per marked cell."""
    if "n_not_converged" not in summary:
        return ""
    hit = summary[summary["n_not_converged"] > 0]
    if hit.empty:
        return ""
    cells = "".join(
        f"\n- {r.dataset} / {r.algorithm}: {int(r.n_not_converged)} of {int(r.n_splits)} splits"
        for r in hit.itertuples()
    )
    return (
        f"\n\n{NOT_CONVERGED}: fits that stopped before their convergence test was met "
        f"(an iteration cap of the method or of an inner solve; the gap is in "
        f"per_split.csv):{cells}"
    )


RESULTS_LEGEND = pages.paragraph(
    f"{pages.MISSING} the algorithm does not run on this dataset, or has no fits; "
    f"{NOT_CONVERGED} some splits' fits did not converge (listed above the table); "
    f"({FAILED}) splits whose fit raised an error.",
    "legend",
)


def _status_css(row: pd.Series, column: str) -> str:
    """The class of a results table cell: a note where fits failed or the
    dataset is not available."""
    text = str(row[column])
    return "note" if column != "dataset" and (FAILED in text or NOT_AVAILABLE in text) else ""


def comparison_html(comparison: pd.DataFrame) -> str:
    """The comparison with the paper (:func:`paper_comparison`), a row per cell:
    ours beside the paper's, the difference, ours shaded beyond two paper sd."""
    head = pages.header(
        (
            "table",
            "metric",
            "dataset",
            "algorithm",
            "ours",
            "paper",
            "ours − paper",
            "splits",
        ),
        keys=4,
    )
    body = []
    for c in comparison.itertuples():
        css = pages.BEYOND if c.beyond_2sd else ""
        marks = cell_marks(pd.Series(c._asdict()))
        ours = pages.value(c.ours + marks if c.ours != "n/a" else None, css)
        body.append(
            [
                pages.Cell(c.table),
                pages.Cell(c.metric, "row"),
                pages.Cell(c.dataset, "row"),
                pages.Cell(c.algorithm, "row"),
                ours,
                pages.value(c.paper, "paper"),
                pages.number(c.difference),
                pages.Cell(str(c.n_splits)),
            ]
        )
    return pages.table(head, body)


def unavailable_datasets(manifest_paths: Iterable[str | os.PathLike]) -> dict[str, str]:
    """Dataset -> reason, for the download manifests that say unavailable."""
    unavailable = {}
    for path in manifest_paths:
        with open(path) as fh:
            manifest = json.load(fh)
        if manifest.get("status") == "unavailable":
            unavailable[manifest["dataset"]] = manifest["reason"]
    return unavailable


def aggregate(
    exp: Mapping,
    fit_paths: Sequence[str | os.PathLike],
    manifest_paths: Sequence[str | os.PathLike],
    paper_results: str | os.PathLike,
    out: Mapping[str, str | os.PathLike],
    config_sha256: str = "",
    log=None,
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The aggregate stage of one experiment: every fit record -> ``per_split``
    (one row per fit), ``csv`` (mean and std over splits, each row with the
    ``config_sha256`` of the experiment file aggregated and the
    ``code_version`` of its fits: :mod:`mkl.workflow.provenance`), ``md`` (the
    results table with its caption), and beside the paper: ``paper_csv`` /
    ``paper_md`` (one row per cell) and ``paper_tables_md`` /
    ``paper_tables_tex`` (the paper's tables in its order). ``html``,
    ``paper_html`` and ``paper_tables_html`` are the three tables as pages of
    the report (:mod:`mkl.workflow.report_pages`). Returns the fits and the
    unavailable datasets.

    A cell whose selected value of a grid parameter sat at an edge of its
    grid in more than half of its splits is marked in the results table
    (:func:`grid_edge_mark`), listed in its caption, and warned about on
    ``log`` (a :class:`logging.Logger`) and on stderr."""
    from .experiment import METRIC_NAMES, METRIC_SCALES, runs_on, table_metric

    metric = table_metric(exp)
    scale = METRIC_SCALES.get(metric, 1.0)
    unavailable = unavailable_datasets(manifest_paths)
    fits = collect_fits(fit_paths)
    write_csv(fits, out["per_split"])
    order = {"dataset": exp["datasets"], "algorithm": list(exp["algorithms"])}
    summary = summarise(fits, order)
    summary["config_sha256"] = config_sha256
    write_csv(summary, out["csv"])
    not_run = [
        (ds, alg)
        for ds in exp["datasets"]
        for alg in exp["algorithms"]
        if not runs_on(exp, alg, ds)
    ]
    table = results_table(
        summary,
        metric,
        scale,
        exp["datasets"],
        list(exp["algorithms"]),
        list(unavailable),
        not_run,
    )
    missing = "".join(f"\n- {ds}: {reason}" for ds, reason in unavailable.items())
    not_available = f"\n\nNot available:{missing}" if missing else ""
    failed = fits[fits["error"].fillna("").astype(bool)] if len(fits) else fits
    failures = "".join(
        f"\n- {r.dataset} / {r.algorithm} / split {r.split}: {r.error}" for r in failed.itertuples()
    )
    metric_name = METRIC_NAMES.get(metric, metric.upper())
    caption = f"# {exp['name']}: test {metric_name}, mean ± std over splits"
    caption += f"\n\n{exp.get('description', '')}{not_available}"
    if failures:
        caption += f"\n\nFailed fits (the error of each):{failures}"
    unconverged = not_converged_note(summary)
    caption += unconverged + grid_edge_note(summary)
    for ds, alg, param, edge, k, n in edge_cells(summary):
        message = (
            f"{exp['name']}: {ds} / {alg}: the selected {param} sat at the {edge} of its "
            f"grid in {k} of {n} splits: extend the grid past that end"
        )
        print(f"warning: {message}", file=sys.stderr)
        if log is not None:
            log.warning("%s", message)
    write_table(table, None, out["md"], caption)
    pages.write_page(
        out["html"],
        f"{exp['name']}: results",
        [pages.caption(caption), pages.frame_table(table, _status_css), RESULTS_LEGEND],
    )
    details = f"{exp.get('description', '')}{not_available}{unconverged}"
    if "paper" in exp:
        ref = pd.read_csv(paper_results)
        comparison = paper_comparison(summary, ref, exp["paper"], list(unavailable))
        caption = (
            f"# {exp['name']} beside {exp['paper']['name']} (paper numbers from "
            "paper_results.csv; beyond_2sd: |ours - paper| > 2 paper std)" + not_available
        )
        tables = paper_tables(comparison, exp["paper"])
        measured = " and ".join(
            f"kernels selected ({name})" if m in COUNT_METRICS else f"test {m} in %"
            for m, name in paper_metrics(exp["paper"])
        )
        wide_caption = (
            f"# {exp['name']}: ours (paper), {measured}, "
            "mean ± std over splits; * where the two differ by more than two of the paper's "
            f"standard deviations.\n\n{details}"
        )
        beside = (
            f"# {exp['name']} beside {exp['paper']['name']}: {measured}, mean ± std over splits"
        )
        wide_parts = [pages.caption(f"{beside}\n\n{details}")]
        wide_parts += paper_tables_html(comparison, exp["paper"]) + [pages.BEYOND_LEGEND]
        long_parts = [
            pages.caption(
                f"{beside}, cell by cell (paper numbers from paper_results.csv){not_available}"
            ),
            comparison_html(comparison),
            pages.BEYOND_LEGEND,
        ]
    else:
        comparison = pd.DataFrame({"note": ["this experiment names no paper table"]})
        caption = wide_caption = f"# {exp['name']}: no paper comparison"
        tables = {}
        wide_parts = long_parts = [pages.caption(caption)]
    write_table(comparison, out["paper_csv"], out["paper_md"], caption)
    write_paper_tables(tables, out["paper_tables_md"], out["paper_tables_tex"], wide_caption)
    pages.write_page(out["paper_html"], f"{exp['name']}: ours beside the paper", long_parts)
    pages.write_page(out["paper_tables_html"], f"{exp['name']}: the paper's tables", wide_parts)
    return fits, unavailable


def table_slice(
    exp: Mapping,
    fit_paths: Sequence[str | os.PathLike],
    manifest_paths: Sequence[str | os.PathLike],
    paper_results: str | os.PathLike,
    dataset: str,
    algorithm: str | None,
    out: Mapping[str, str | os.PathLike],
) -> pd.DataFrame:
    """One slice of an experiment's tables, recomputed from its fit records:
    the row of ``dataset`` (every algorithm, or ``algorithm`` alone) as the
    aggregate stage computes it. ``csv``: the rows of results.csv (means and
    std at full precision, the splits, the fits' code version); ``md``: the
    results table's row and, where the experiment has a paper section, the
    slice's cells beside the paper's (paper.md's rows, ours in the paper's
    units at full precision: what docs/fidelity.csv records). Returns the
    summary rows."""
    from .experiment import METRIC_SCALES, runs_on, table_metric

    unavailable = unavailable_datasets(manifest_paths)
    algorithms = (
        [algorithm] if algorithm else [a for a in exp["algorithms"] if runs_on(exp, a, dataset)]
    )
    fits = collect_fits(fit_paths)
    fits = fits[(fits["dataset"] == dataset) & fits["algorithm"].isin(algorithms)]
    summary = summarise(fits, {"dataset": [dataset], "algorithm": algorithms})
    write_csv(summary, out["csv"])
    metric = table_metric(exp)
    table = results_table(
        summary, metric, METRIC_SCALES.get(metric, 1.0), [dataset], algorithms, list(unavailable)
    )
    which = f"{dataset}, {algorithm}" if algorithm else dataset
    md = [f"# {exp['name']}: the slice {which}, test {metric}, mean ± std over splits", ""]
    md += [table.to_markdown(index=False), ""]
    if "paper" in exp:
        ref = pd.read_csv(paper_results)
        comparison = paper_comparison(summary, ref, exp["paper"], list(unavailable))
        if len(comparison):
            mine = comparison["algorithm"].isin(algorithms) & (comparison["dataset"] == dataset)
            comparison = comparison[mine]
        if len(comparison):  # ours in the paper's units at full precision, as the record's
            shown = comparison.to_markdown(index=False, floatfmt="")
            md += [f"## beside {exp['paper']['name']}", "", shown, ""]
    write_text(out["md"], "\n".join(md))
    return summary

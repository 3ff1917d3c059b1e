"""Tables (our mean +- std over splits beside the paper's) and figures.

Paper numbers come from ``paper_results.csv`` (columns paper, table, dataset,
method, metric, mean, std, note) and are only ever shown beside measured ones.
A cell is flagged when |ours - paper| exceeds two of the paper's standard
deviations.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ._io import atomic_path, write_text
from .evaluate import METRICS


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
        if rec.get("status") == "failed":  # the fit raised: no metrics, the error kept
            row.update({m: np.nan for m in METRICS}, error=rec["error"])
            rows.append(row)
            continue
        row["error"] = ""
        row.update({m: rec["test"].get(m) for m in METRICS})
        row["n_selected"] = _scalar_mean(rec["fit"]["n_selected"])
        row["spectral_ratio"] = _scalar_mean(rec["fit"].get("spectral_ratio", np.nan))
        row["n_kernels"] = rec["n_kernels"]
        row["seconds"] = rec["fit"]["seconds"]
        row["converged"] = rec["fit"]["converged"]
        row["selected_params"] = json.dumps(rec["selected_params"], sort_keys=True)
        rows.append(row)
    columns = ["dataset", "algorithm", "split", *METRICS, "n_selected", "spectral_ratio"]
    columns += ["n_kernels", "seconds", "converged", "selected_params", "error"]
    if not rows:  # every dataset unavailable: empty tables that say so
        return pd.DataFrame(columns=columns)
    return pd.DataFrame(rows, columns=columns).sort_values(
        ["dataset", "algorithm", "split"], kind="stable"
    )


def _scalar_mean(v):
    return float(np.mean(v)) if isinstance(v, list) else v


def summarise(fits: pd.DataFrame, order: Mapping[str, Sequence[str]] | None = None) -> pd.DataFrame:
    """Mean and std over splits per (dataset, algorithm), in the experiment's order."""
    cols = [*METRICS, "n_selected", "spectral_ratio", "seconds"]
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
    out["n_kernels"] = g["n_kernels"].first()
    out = out.reset_index()
    if order:
        for key in ("dataset", "algorithm"):
            if order.get(key):
                rank = {v: i for i, v in enumerate(order[key])}
                out[f"_{key}"] = out[key].map(lambda v, r=rank: r.get(v, len(r)))
        out = out.sort_values([c for c in ("_dataset", "_algorithm") if c in out], kind="stable")
        out = out.drop(columns=[c for c in ("_dataset", "_algorithm") if c in out])
    return out.reset_index(drop=True)


def fmt_pm(mean, std, digits: int = 1) -> str:
    if mean is None or (isinstance(mean, float) and np.isnan(mean)):
        return "n/a"
    if std is None or (isinstance(std, float) and np.isnan(std)):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


NOT_AVAILABLE = "not available"
FAILED = "failed"  # every split's fit raised an error (see the caption and per_split.csv)
# our metric name -> the name in paper_results.csv
PAPER_METRIC_NAMES = {"f1": "f_score"}
# what a paper reports of a metric's mean (the std is unchanged by both)
TRANSFORMS = {"none": lambda m: m, "one_minus": lambda m: 1.0 - m}


def results_table(
    summary: pd.DataFrame,
    metric: str = "accuracy",
    scale: float = 100.0,
    datasets: Sequence[str] | None = None,
    algorithms: Sequence[str] | None = None,
    unavailable: Sequence[str] = (),
    not_run: Iterable[tuple[str, str]] = (),
) -> pd.DataFrame:
    """Datasets as rows, algorithms as columns, cells 'mean ± std' (x scale).
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
                row[alg] = fmt_pm(m * scale, sd * scale)
                failed = int(hit["n_failed"].iloc[0]) if "n_failed" in hit else 0
                if failed:
                    row[alg] += f" ({failed} {FAILED})"
        rows.append(row)
    return pd.DataFrame(rows, columns=["dataset", *algorithms])


def paper_comparison(
    summary: pd.DataFrame,
    paper_results: pd.DataFrame,
    paper: Mapping,
    unavailable: Sequence[str] = (),
) -> pd.DataFrame:
    """Our cells beside the paper's for one experiment's ``paper`` section::

    paper: {name: yang2011_gmkl, metric: accuracy, scale: 100,
            tables: {table4: [gmkl_toy1]},            # paper table -> our datasets
            datasets: {gmkl_toy1: toy1},              # our name -> paper's name
            methods: {uniform: uniform}}              # our algorithm -> paper's method
    """
    metric, scale = paper.get("metric", "accuracy"), float(paper.get("scale", 100.0))
    # a paper may report a transform of our metric: one_minus -> 1 - mean (Kloft's 1 - MCC)
    transform = TRANSFORMS[paper.get("transform", "none")]
    ref = paper_results[paper_results["paper"] == paper["name"]]
    if "metric" in ref:  # papers that report several metrics per cell (Kundu et al.)
        name = paper.get("paper_metric", PAPER_METRIC_NAMES.get(metric, metric))
        ref = ref[ref["metric"] == name]
    rows = []
    for table, datasets in paper["tables"].items():
        for ds in datasets:
            pds = paper.get("datasets", {}).get(ds, ds)
            for alg, pmethod in paper["methods"].items():
                ours = summary[(summary["dataset"] == ds) & (summary["algorithm"] == alg)]
                theirs = ref[
                    (ref["table"] == table) & (ref["dataset"] == pds) & (ref["method"] == pmethod)
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
                        "dataset": ds,
                        "algorithm": alg,
                        "ours": NOT_AVAILABLE if ds in unavailable else fmt_pm(om, os_),
                        "paper": fmt_pm(pm, ps),
                        "difference": round(diff, 2) if np.isfinite(diff) else None,
                        "beyond_2sd": bool(np.isfinite(diff) and abs(diff) > 2 * ps),
                        "n_splits": int(ours["n_splits"].iloc[0]) if len(ours) else 0,
                    }
                )
    return pd.DataFrame(rows)


def paper_tables(comparison: pd.DataFrame, paper: Mapping) -> dict[str, pd.DataFrame]:
    """One wide table per paper table, in the paper's order: a row per dataset
    (the paper's name), a column per method (the paper's name), each cell
    "ours (paper)", marked " *" where they differ by more than two of the
    paper's standard deviations."""
    out = {}
    names = paper.get("datasets", {})
    methods = paper["methods"]
    for table, datasets in paper["tables"].items():
        sub = comparison[comparison["table"] == table] if len(comparison) else comparison
        rows = []
        for ds in datasets:
            row = {"dataset": names.get(ds, ds)}
            for alg, pmethod in methods.items():
                hit = sub[(sub["dataset"] == ds) & (sub["algorithm"] == alg)] if len(sub) else sub
                if len(hit) == 0:
                    row[pmethod] = ""
                    continue
                h = hit.iloc[0]
                mark = " *" if h["beyond_2sd"] else ""
                row[pmethod] = f"{h['ours']} ({h['paper']}){mark}"
            rows.append(row)
        out[table] = pd.DataFrame(rows, columns=["dataset", *methods.values()])
    return out


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


def plot_metric(
    summary: pd.DataFrame, path_png, path_pdf, metric: str = "accuracy", title: str = ""
):
    """Grouped bars: one group per dataset, one bar per algorithm, error bars = std over splits."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(summary["dataset"].unique())
    algorithms = list(summary["algorithm"].unique())
    if not datasets:  # nothing was available: a figure that says so
        _save_notice(f"{title}: no dataset available", path_png, path_pdf)
        return
    width = 0.8 / max(len(algorithms), 1)
    fig, ax = plt.subplots(figsize=(1.6 + 1.4 * len(datasets), 3.6))
    x = np.arange(len(datasets))
    for i, alg in enumerate(algorithms):
        sub = summary[summary["algorithm"] == alg].set_index("dataset").reindex(datasets)
        ax.bar(
            x + (i - (len(algorithms) - 1) / 2) * width,
            sub[f"{metric}_mean"],
            width,
            yerr=sub[f"{metric}_std"].fillna(0),
            label=alg,
            capsize=2,
        )
    ax.set_xticks(x, datasets)
    ax.set_ylabel(f"test {metric}")
    lo = np.nanmin(summary[f"{metric}_mean"] - summary[f"{metric}_std"].fillna(0))
    ax.set_ylim(max(0.0, lo - 0.05), 1.0)
    ax.legend(
        fontsize="small",
        ncol=min(len(algorithms), 4),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.1),
        frameon=False,
    )
    if title:
        ax.set_title(title)
    fig.tight_layout()
    _save_figure(fig, path_png, path_pdf)


def plot_weights(
    series: Mapping[str, Sequence[float]],
    kernel_labels: Sequence[str],
    path_png,
    path_pdf,
    title: str = "",
) -> None:
    """Kernel weights, one line per series (algorithm or hyperparameter value),
    kernels in the bank's order on the x axis (the papers' weight figures)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    M = len(kernel_labels)
    fig, ax = plt.subplots(figsize=(min(14.0, 4 + 0.25 * M) if M <= 30 else 14.0, 4.4))
    x = np.arange(1, M + 1)
    for name, w in series.items():
        if len(w) != M:
            raise ValueError(f"series {name!r} has {len(w)} weights for {M} kernels")
        ax.plot(x, w, marker="o", markersize=3, linewidth=1, label=name)
    if M <= 30:
        short = [
            lab.replace("homogeneous_polynomial", "hpk").replace("@all", "")
            for lab in kernel_labels
        ]
        ax.set_xticks(x, short, rotation=90, fontsize="small")
    else:
        ax.set_xlabel("kernel (bank order)")
    ax.set_ylabel("weight")
    ax.legend(
        fontsize="small",
        ncol=min(len(series), 5),
        frameon=False,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
    )
    if title:
        fig.suptitle(title, fontsize="medium")
    fig.tight_layout()
    _save_figure(fig, path_png, path_pdf)


METRIC_LABELS = {
    "accuracy": "test accuracy",
    "f1": "test F1",
    "mcc": "test MCC",
    "auc": "test AUC",
    "n_selected": "kernels selected",
    "seconds": "fit time (s)",
    "spectral_ratio": "spectral ratio",
    "in_F": "fit time in units of F",
}


CURVE_COLUMNS = ["metric", "line", "x", "mean", "std", "n"]


def _curve_point(metric: str, line, x: float, values, standard_error: bool = False) -> dict:
    """One point of a curve: the mean of ``values`` and, as ``std``, their
    standard deviation (or the standard error of the mean)."""
    v = np.asarray(values, dtype=float)
    spread = float(v.std(ddof=1)) if len(v) > 1 else 0.0
    if standard_error:
        spread /= np.sqrt(len(v))
    return {
        "metric": metric,
        "line": line,
        "x": float(x),
        "mean": float(v.mean()),
        "std": spread,
        "n": int(len(v)),
    }


def curves(
    fits: pd.DataFrame, points: Sequence[tuple[str, float, str, str]], metrics: Sequence[str]
) -> pd.DataFrame:
    """Mean and std over splits of each metric at each point (line, x, dataset,
    algorithm); points without fits (an unavailable dataset) are left out, as
    are failed fits' missing values."""
    rows = []
    for metric in metrics:
        for line, x, ds, alg in points:
            mask = (fits["dataset"] == ds) & (fits["algorithm"] == alg)
            vals = pd.to_numeric(fits.loc[mask, metric], errors="coerce").dropna()
            if not vals.empty:
                rows.append(_curve_point(metric, line, x, vals))
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def timing_curves(records: Sequence[Mapping], vary: str) -> pd.DataFrame:
    """Fit time (seconds, and in units of the floor F timed beside it) against
    ``vary`` (n or kernels), one line per series; error bars are standard
    errors over repetitions, as in Kloft et al. (2009), Figure 1."""
    df = pd.DataFrame(records)
    df["in_F"] = df["seconds"] / df["floor_seconds"]
    rows = [
        _curve_point(metric, label, x, g[metric], standard_error=True)
        for (label, x), g in df.groupby(["series", vary], sort=False)
        for metric in ("seconds", "in_F")
    ]
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def sweep_curves(
    fits: pd.DataFrame,
    members: Sequence[tuple[str, float]],
    datasets: Sequence[str],
    metrics: Sequence[str],
) -> pd.DataFrame:
    """A metric against a swept parameter (e.g. GMKL's v): one line per dataset,
    one point per (algorithm name, value) in ``members``."""
    points = [(ds, value, ds, alg) for ds in datasets for alg, value in members]
    return curves(fits, points, metrics)


def dataset_curves(
    fits: pd.DataFrame,
    x_of_dataset: Mapping[str, float],
    algorithms: Sequence[str],
    metrics: Sequence[str],
) -> pd.DataFrame:
    """A metric against a number attached to each dataset (e.g. the ratio of
    relevant features of the SMKL toys): one line per algorithm."""
    points = [(alg, x, ds, alg) for alg in algorithms for ds, x in x_of_dataset.items()]
    return curves(fits, points, metrics)


def plot_curves(
    curves: pd.DataFrame,
    path_png,
    path_pdf,
    x_label: str,
    title: str = "",
    log_x: bool = False,
    log_y_metrics: Sequence[str] = ("seconds",),
) -> None:
    """One panel per metric, one line per ``line`` value, error bars = std
    (the papers' accuracy-versus-parameter and time-versus-size figures)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = list(dict.fromkeys(curves["metric"]))
    if not metrics:
        _save_notice(f"{title}: no data available", path_png, path_pdf)
        return
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics), 3.8), squeeze=False)
    for ax, metric in zip(axes[0], metrics, strict=True):
        sub = curves[curves["metric"] == metric]
        for line, pts in sub.groupby("line", sort=False):
            pts = pts.sort_values("x")
            ax.errorbar(
                pts["x"],
                pts["mean"],
                yerr=pts["std"],
                marker="o",
                markersize=3,
                capsize=2,
                linewidth=1,
                label=str(line),
            )
        ax.set_xlabel(x_label)
        ax.set_ylabel(METRIC_LABELS.get(metric, metric))
        if log_x:
            ax.set_xscale("log")
        if metric in log_y_metrics:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize="small", frameon=False, loc="best")
    if title:
        fig.suptitle(title, fontsize="medium")
    fig.tight_layout()
    _save_figure(fig, path_png, path_pdf)


def _save_notice(text: str, path_png, path_pdf) -> None:
    """A small figure that only says why there is nothing to plot."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 1.5))
    ax.axis("off")
    ax.text(0.5, 0.5, text, ha="center", va="center")
    _save_figure(fig, path_png, path_pdf)


def _save_figure(fig, path_png, path_pdf) -> None:
    """Write a figure as PNG and PDF, each atomically, and release it."""
    import matplotlib.pyplot as plt

    for path in (path_png, path_pdf):
        ext = os.path.splitext(os.fspath(path))[1].lstrip(".")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=120)
    plt.close(fig)

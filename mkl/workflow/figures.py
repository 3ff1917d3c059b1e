"""Figures: a test metric per dataset and algorithm, kernel weights, and curves of a metric
against a swept parameter, a number attached to each dataset or the problem
size (timing). Each is written as PNG and PDF, atomically; matplotlib is
imported by the functions that draw."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .._io import atomic_path


def plot_metric(
    summary: pd.DataFrame,
    path_png,
    path_pdf,
    metric: str = "accuracy",
    title: str = "",
    scale: float = 1.0,
    names: Mapping[str, str] | None = None,
    paper_means: pd.DataFrame | None = None,
):
    """Grouped bars: one group per dataset, one bar per algorithm, error bars =
    std over splits, of a metric that is at most 1 (accuracy, AUC, R^2...),
    times ``scale`` (100: in %, as the tables). ``names`` relabels algorithms
    (the paper tables' names); ``paper_means`` (dataset, algorithm, mean, in
    the plotted units) are drawn as black ticks across their bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(summary["dataset"].unique())
    algorithms = list(summary["algorithm"].unique())
    if not datasets:  # nothing was available: a figure that says so
        save_notice(f"{title}: no dataset available", path_png, path_pdf)
        return
    names = names or {}
    width = 0.8 / max(len(algorithms), 1)
    fig, ax = plt.subplots(figsize=(2.4 + 1.5 * len(datasets), 4.4))
    x = np.arange(len(datasets))
    marked = False
    for i, alg in enumerate(algorithms):
        sub = summary[summary["algorithm"] == alg].set_index("dataset").reindex(datasets)
        at = x + (i - (len(algorithms) - 1) / 2) * width
        ax.bar(
            at,
            sub[f"{metric}_mean"] * scale,
            width,
            yerr=sub[f"{metric}_std"].fillna(0) * scale,
            label=names.get(alg, alg),
            capsize=2,
        )
        if paper_means is not None and len(paper_means):
            theirs = paper_means[paper_means["algorithm"] == alg].set_index("dataset")
            theirs = theirs["mean"].reindex(datasets)
            if theirs.notna().any():
                ax.plot(
                    at,
                    theirs,
                    linestyle="none",
                    marker="_",
                    markersize=max(6.0, 260 * width / max(len(datasets), 1)),
                    markeredgewidth=2.2,
                    color="black",
                    label=None if marked else "the paper's mean",
                )
                marked = True
    ax.set_xticks(x, datasets)
    ax.set_ylabel(METRIC_LABELS.get(metric, f"test {metric}") + (" (%)" if scale == 100 else ""))
    values = summary[f"{metric}_mean"] - summary[f"{metric}_std"].fillna(0)
    if paper_means is not None and len(paper_means):
        values = pd.concat([values, paper_means["mean"] / scale])
    lo = np.nanmin(values)
    ax.set_ylim((max(0.0, lo - 0.05) if lo >= 0 else lo - 0.05) * scale, 1.0 * scale)
    ax.legend(
        fontsize="small",
        ncol=min(len(algorithms) + marked, 4),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.08),
        frameon=False,
    )
    if title:
        ax.set_title(title, fontsize="medium")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    save_figure(fig, path_png, path_pdf)


def results_figure(exp: Mapping, per_split, paper_csv, path_png, path_pdf) -> None:
    """The results figure of an experiment (the figures stage): its figure
    metric (:func:`mkl.workflow.experiment.figure_metric`) per dataset and
    table algorithm, from ``per_split`` (per_split.csv), in % where the tables
    give it in %; algorithms named as in the paper's tables where the
    experiment's ``paper`` section maps them, and the paper's means drawn
    where the paper reports the same metric (``paper_csv``: the comparison
    written by the aggregate stage, paper.csv)."""
    from . import experiment, tables

    fits = pd.read_csv(per_split)
    algorithms = experiment.table_algorithms(exp)  # sweep points have their own figures
    fits = fits[fits["algorithm"].isin(algorithms)]
    order = {"dataset": exp["datasets"], "algorithm": algorithms}
    summary = tables.summarise(fits, order)
    metric = experiment.figure_metric(exp)
    scale = experiment.METRIC_SCALES.get(metric, 1.0)
    section = exp.get("paper", {})
    names = dict(section.get("methods", {}))
    paper_means = _paper_means(pd.read_csv(paper_csv), section, metric, scale)
    repetitions = exp.get("protocol", {}).get("repetitions")
    label = METRIC_LABELS.get(metric, f"test {metric}")
    title = f"{exp['name']}: {label} by dataset and algorithm"
    title += f",\nmean ± sd over {repetitions} splits" if repetitions else ", mean ± sd over splits"
    if paper_means is not None and len(paper_means):
        title += f"; black ticks: {section['name']}'s means"
    plot_metric(summary, path_png, path_pdf, metric, title, scale, names, paper_means)


def _paper_means(
    comparison: pd.DataFrame, section: Mapping, metric: str, scale: float
) -> pd.DataFrame | None:
    """The paper's mean of each (dataset, algorithm) in the units the figure
    plots, where the paper reports ``metric`` itself (not a transform of it,
    not a count); the first table's where a dataset is in several."""
    from .tables import paper_metrics

    if not section or section.get("transform", "none") != "none" or "paper_mean" not in comparison:
        return None
    names = [name for ours, name in paper_metrics(section) if ours == metric]
    if not names:
        return None
    rows = comparison[comparison["metric"] == names[0]]
    rows = rows.drop_duplicates(["dataset", "algorithm"])
    means = rows["paper_mean"] / float(section.get("scale", 100.0)) * scale
    return pd.DataFrame({"dataset": rows["dataset"], "algorithm": rows["algorithm"], "mean": means})


def plot_weights_figure(
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
    save_figure(fig, path_png, path_pdf)


METRIC_LABELS = {
    "accuracy": "test accuracy",
    "f1": "test F1",
    "mcc": "test MCC",
    "auc": "test AUC",
    "rmse": "test RMSE",
    "mae": "test MAE",
    "r2": "test R$^2$",
    "n_selected": "kernels selected",
    "seconds": "fit time (s)",
    "spectral_ratio": "spectral ratio",
    "in_F": "fit time in units of F",
    "test_accuracy": "test accuracy",
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
    """Fit time (seconds, and in units of the floor F timed beside it) and, where
    recorded, test accuracy against ``vary`` (n, kernels or rank), one line per
    series; error bars are standard errors over repetitions, as in Kloft et al.
    (2009), Figure 1. Where dense and factor banks meet in one figure, the dense
    records' lines are labelled "<series> (dense)"; a dense point of a rank
    figure has no x (NaN: drawn as a level line)."""
    df = pd.DataFrame(records)
    df["in_F"] = df["seconds"] / df["floor_seconds"]
    representation = df.get("representation", pd.Series("dense", index=df.index)).fillna("dense")
    mixed = (representation == "dense").any() and (representation != "dense").any()
    df["line"] = np.where(
        mixed & (representation == "dense"), df["series"] + " (dense)", df["series"]
    )
    if vary == "rank":
        df["x"] = pd.to_numeric(df["rank"], errors="coerce")
    else:
        df["x"] = df[vary].astype(float)
    metrics = ["seconds", "in_F"]
    if "test_accuracy" in df and df["test_accuracy"].notna().any():
        metrics.append("test_accuracy")
    rows = [
        _curve_point(metric, label, x, g[metric].dropna(), standard_error=True)
        for (label, x), g in df.groupby(["line", "x"], sort=False, dropna=False)
        for metric in metrics
        if g[metric].notna().any()
    ]
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def timing_frame(curves: pd.DataFrame, x_label: str) -> pd.DataFrame:
    """The timing curves as a wide table: one row per (line, x), mean ±
    standard error of each metric (the numbers behind the figure), each
    series beside its variants."""
    metrics = list(dict.fromkeys(curves["metric"]))
    rows = {}
    for point in curves.itertuples():
        x = "dense" if np.isnan(point.x) else f"{point.x:g}"
        row = rows.setdefault((point.line, x), {"series": point.line, x_label: x})
        row[METRIC_LABELS.get(point.metric, point.metric)] = f"{point.mean:.4g} ± {point.std:.2g}"
    columns = ["series", x_label] + [METRIC_LABELS.get(m, m) for m in metrics]
    order = sorted(
        rows,
        key=lambda key: (
            _line_base(key[0])[0],
            str(key[0]),
            key[1] == "dense",
            float(key[1]) if key[1] != "dense" else 0.0,
        ),
    )
    return pd.DataFrame([rows[key] for key in order], columns=columns).fillna("")


def timing_table(curves: pd.DataFrame, x_label: str) -> str:
    """:func:`timing_frame` as a Markdown table."""
    if curves.empty:
        return "No timing records.\n"
    return timing_frame(curves, x_label).to_markdown(index=False) + "\n"


def write_timing_page(curves: pd.DataFrame, x_label: str, title: str, path) -> None:
    """:func:`timing_frame` as a page of the report, with what its series'
    variants and units mean (:func:`curve_notes`)."""
    from . import report_pages as pages

    parts = [pages.heading(title, 1)]
    if curves.empty:
        parts.append(pages.paragraph("No timing records."))
    else:
        parts.append(pages.frame_table(timing_frame(curves, x_label)))
        parts.append(pages.paragraph("mean ± standard error over repetitions.", "legend"))
        parts += [pages.paragraph(note, "legend") for note in curve_notes(curves)]
    pages.write_page(path, title, parts)


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


# a line's label suffix -> how it is drawn beside the series it varies: its
# line style, its marker (hollow), and what it means (said under the figure)
LINE_VARIANTS = {
    " (dense)": ("--", "s", '"X (dense)": X on the exact, dense kernel bank'),
    ", wrapper": (
        "-.",
        "^",
        '"X, wrapper": X with every SVM solved to svm_tol before each weight step; '
        "X alone interleaves a chunk of SVM steps with each weight step (Kloft et al. 2009, "
        "sec. 2.4)",
    ),
}
# metrics whose unit needs saying under the figure
METRIC_NOTES = {
    "in_F": "F: the floor, one pass forming the uniform kernel combination plus one SVM fit "
    "on it, timed on the same bank in the same job",
}


def _line_base(line) -> tuple[str, str]:
    """(the series a line varies, its line style): "X (dense)" is X on the dense
    bank, dashed; "X, wrapper" is X with the SVM solved before every weight
    step, dash-dotted; any other line is its own series, solid."""
    label = str(line)
    for suffix, (style, _, _) in LINE_VARIANTS.items():
        if label.endswith(suffix):
            return label.removesuffix(suffix), style
    return label, "-"


def _line_look(line, bases: list[str]) -> dict:
    """How a line is drawn: a series in its own colour with filled circles; a
    variant of it ("X (dense)", "X, wrapper") in the lighter shade of that
    colour (matplotlib's tab20 pairs), its own line style and a hollow marker."""
    import matplotlib

    base, style = _line_base(line)
    variant = next((v for v in LINE_VARIANTS if str(line).endswith(v)), None)
    pair = 2 * (bases.index(base) % 10)
    color = matplotlib.colormaps["tab20"](pair + (variant is not None))
    if variant is None:
        return {"color": color, "linestyle": style, "marker": "o"}
    marker = LINE_VARIANTS[variant][1]
    return {"color": color, "linestyle": style, "marker": marker, "markerfacecolor": "white"}


def curve_notes(curves: pd.DataFrame) -> list[str]:
    """What the figure's line variants and units mean (:data:`LINE_VARIANTS`,
    :data:`METRIC_NOTES`), for those it draws."""
    lines = [str(v) for v in curves["line"].unique()]
    notes = [
        note
        for suffix, (_, _, note) in LINE_VARIANTS.items()
        if any(v.endswith(suffix) for v in lines)
    ]
    return notes + [note for m, note in METRIC_NOTES.items() if m in set(curves["metric"])]


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
    (the papers' accuracy-versus-parameter and time-versus-size figures); a
    series and its variants share a hue (:func:`_line_look`), and the
    figure says what the variants and units are (:func:`curve_notes`)."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = list(dict.fromkeys(curves["metric"]))
    if not metrics:
        save_notice(f"{title}: no data available", path_png, path_pdf)
        return
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.8 * len(metrics), 4.0), squeeze=False)
    bases = list(dict.fromkeys(_line_base(v)[0] for v in curves["line"]))
    for ax, metric in zip(axes[0], metrics, strict=True):
        sub = curves[curves["metric"] == metric]
        for line, pts in sub.groupby("line", sort=False):
            look = _line_look(line, bases)
            level = pts[pts["x"].isna()]  # a reference without an x (e.g. the dense bank)
            pts = pts[pts["x"].notna()].sort_values("x")
            if len(pts):
                ax.errorbar(
                    pts["x"],
                    pts["mean"],
                    yerr=pts["std"],
                    markersize=4,
                    capsize=2,
                    linewidth=1,
                    label=str(line),
                    **look,
                )
            for value in level["mean"]:
                ax.axhline(value, linestyle=":", linewidth=1, color=look["color"], label=str(line))
        ax.set_xlabel(x_label)
        ax.set_ylabel(METRIC_LABELS.get(metric, metric))
        if log_x:
            ax.set_xscale("log")
        if metric in log_y_metrics:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    # the legend of the panel where every line is drawn (the last among equals);
    # more than six lines go below the panels, in columns; the notes below all
    counts = [len(ax.get_legend_handles_labels()[1]) for ax in axes[0]]
    legend_ax = axes[0][max(range(len(counts)), key=lambda k: (counts[k], k))]
    handles, labels = legend_ax.get_legend_handles_labels()
    if title:
        fig.suptitle(title, fontsize="medium")
    width = int(16 * 4.8 * len(metrics))  # characters of the notes across the figure
    notes = [textwrap.fill(n, width) for n in curve_notes(curves)]
    # heights below the panels, in inches: the notes, then the legend's rows
    notes_height = 0.18 * sum(n.count("\n") + 1 for n in notes) + 0.1 if notes else 0.0
    columns = min(5, (len(labels) + 1) // 2)
    legend_height = 0.24 * -(-len(labels) // columns) + 0.1 if len(labels) > 6 else 0.0
    height = fig.get_figheight() + notes_height + legend_height
    fig.set_figheight(height)
    if notes:
        fig.text(0.01, 0.02 / height, "\n".join(notes), fontsize="small", va="bottom")
    if legend_height:
        fig.legend(
            handles,
            labels,
            loc="lower center",
            ncol=columns,
            fontsize="small",
            frameon=False,
            bbox_to_anchor=(0.5, notes_height / height),
        )
    else:
        legend_ax.legend(fontsize="small", frameon=False, loc="best")
    fig.tight_layout(rect=(0, (notes_height + legend_height) / height, 1, 1))
    save_figure(fig, path_png, path_pdf)


def save_notice(text: str, path_png, path_pdf) -> None:
    """A small figure that only says why there is nothing to plot."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 1.5))
    ax.axis("off")
    ax.text(0.5, 0.5, text, ha="center", va="center")
    save_figure(fig, path_png, path_pdf)


def save_figure(fig, path_png, path_pdf) -> None:
    """Write a figure as PNG and PDF, each atomically, and release it."""
    import matplotlib.pyplot as plt

    for path in (path_png, path_pdf):
        ext = os.path.splitext(os.fspath(path))[1].lstrip(".")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=120)
    plt.close(fig)

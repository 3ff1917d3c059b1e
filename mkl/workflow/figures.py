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
    summary: pd.DataFrame, path_png, path_pdf, metric: str = "accuracy", title: str = ""
):
    """Grouped bars: one group per dataset, one bar per algorithm, error bars =
    std over splits, of a metric that is at most 1 (accuracy, AUC, R^2...)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = list(summary["dataset"].unique())
    algorithms = list(summary["algorithm"].unique())
    if not datasets:  # nothing was available: a figure that says so
        save_notice(f"{title}: no dataset available", path_png, path_pdf)
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
    ax.set_ylabel(METRIC_LABELS.get(metric, f"test {metric}"))
    lo = np.nanmin(summary[f"{metric}_mean"] - summary[f"{metric}_std"].fillna(0))
    ax.set_ylim(max(0.0, lo - 0.05) if lo >= 0 else lo - 0.05, 1.0)
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
    save_figure(fig, path_png, path_pdf)


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


def timing_table(curves: pd.DataFrame, x_label: str) -> str:
    """The timing curves as a Markdown table: one row per (line, x), mean ±
    standard error of each metric (the numbers behind the figure)."""
    if curves.empty:
        return "No timing records.\n"
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
            str(key[0]).removesuffix(" (dense)"),
            str(key[0]),
            key[1] == "dense",
            float(key[1]) if key[1] != "dense" else 0.0,
        ),
    )
    wide = pd.DataFrame([rows[key] for key in order], columns=columns).fillna("")
    return wide.to_markdown(index=False) + "\n"


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


# a line's label suffix -> how it is drawn beside the series it varies
LINE_VARIANTS = {" (dense)": "--", ", wrapper": "-."}


def _line_base(line) -> tuple[str, str]:
    """(the series a line varies, its line style): "X (dense)" is X on the dense
    bank, dashed; "X, wrapper" is X with the SVM solved before every weight
    step, dash-dotted; any other line is its own series, solid."""
    label = str(line)
    for suffix, style in LINE_VARIANTS.items():
        if label.endswith(suffix):
            return label.removesuffix(suffix), style
    return label, "-"


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
        save_notice(f"{title}: no data available", path_png, path_pdf)
        return
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics), 3.8), squeeze=False)
    for ax, metric in zip(axes[0], metrics, strict=True):
        sub = curves[curves["metric"] == metric]
        # a series, its dense reference and its wrapper variant share a colour
        bases = list(dict.fromkeys(_line_base(v)[0] for v in curves["line"]))
        for line, pts in sub.groupby("line", sort=False):
            base, linestyle = _line_base(line)
            color = f"C{bases.index(base) % 10}"
            level = pts[pts["x"].isna()]  # a reference without an x (e.g. the dense bank)
            pts = pts[pts["x"].notna()].sort_values("x")
            if len(pts):
                ax.errorbar(
                    pts["x"],
                    pts["mean"],
                    yerr=pts["std"],
                    marker="o",
                    markersize=3,
                    capsize=2,
                    linewidth=1,
                    linestyle=linestyle,
                    color=color,
                    label=str(line),
                )
            for value in level["mean"]:
                ax.axhline(value, linestyle=":", linewidth=1, color=color, label=str(line))
        ax.set_xlabel(x_label)
        ax.set_ylabel(METRIC_LABELS.get(metric, metric))
        if log_x:
            ax.set_xscale("log")
        if metric in log_y_metrics:
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    # the legend of the panel where every line is drawn (the last among equals);
    # more than six lines go below the panels, in columns
    counts = [len(ax.get_legend_handles_labels()[1]) for ax in axes[0]]
    legend_ax = axes[0][max(range(len(counts)), key=lambda k: (counts[k], k))]
    handles, labels = legend_ax.get_legend_handles_labels()
    if title:
        fig.suptitle(title, fontsize="medium")
    if len(labels) > 6:
        columns = min(5, (len(labels) + 1) // 2)
        rows = -(-len(labels) // columns)
        fig.legend(handles, labels, loc="lower center", ncol=columns, fontsize="small")
        fig.tight_layout(rect=(0, 0.06 * rows, 1, 1))
    else:
        legend_ax.legend(fontsize="small", frameon=False, loc="best")
        fig.tight_layout()
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

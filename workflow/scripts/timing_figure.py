"""Rule timing_figure: fit time against n or the number of kernels, one line per
series, error bars = standard error over repetitions (as Kloft et al. 2009,
Fig. 1); a second panel gives the same times in units of the floor F."""

from _common import run


def main(snakemake, log):
    import json

    import numpy as np
    import pandas as pd

    from mkl import report
    from mkl._io import write_json

    exp = snakemake.params.experiment
    spec = exp["figures"][snakemake.wildcards.figure]
    records = []
    for path in snakemake.input:
        with open(path) as fh:
            records.extend(json.load(fh)["records"])
    df = pd.DataFrame(records)
    df["in_F"] = df["seconds"] / df["floor_seconds"]
    x = spec["vary"]
    rows = []
    for (label, xv), g in df.groupby(["series", x], sort=False):
        for metric in ("seconds", "in_F"):
            v = g[metric].to_numpy()
            sem = float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0
            rows.append(
                {
                    "metric": metric,
                    "line": label,
                    "x": float(xv),
                    "mean": float(v.mean()),
                    "std": sem,
                    "n": len(v),
                }
            )
    curves = pd.DataFrame(rows)
    x_label = spec.get("x_label", "training examples n" if x == "n" else "number of kernels")
    title = spec.get("title", f"{exp['name']}: {snakemake.wildcards.figure}")
    report.plot_curves(
        curves,
        snakemake.output.png,
        snakemake.output.pdf,
        x_label,
        title,
        log_x=True,
        log_y_metrics=("seconds", "in_F"),
    )
    write_json(snakemake.output.json, {"figure": spec, "points": rows, "records": records})
    log.info("%d timing records", len(records))


run(snakemake, main)  # noqa: F821

"""Rule timing_figure: fit time against n or the number of kernels, one line per
series, error bars = standard error over repetitions (as Kloft et al. 2009,
Fig. 1); a second panel gives the same times in units of the floor F."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    import json

    from mkl._io import write_json
    from mkl.workflow import figures

    exp = snakemake.params.experiment
    spec = exp["figures"][snakemake.wildcards.figure]
    records = []
    for path in snakemake.input:
        with open(path) as fh:
            records.extend(json.load(fh)["records"])
    curves = figures.timing_curves(records, spec["vary"])
    x_label = spec.get(
        "x_label", "training examples n" if spec["vary"] == "n" else "number of kernels"
    )
    title = spec.get("title", f"{exp['name']}: {snakemake.wildcards.figure}")
    figures.plot_curves(
        curves,
        snakemake.output.png,
        snakemake.output.pdf,
        x_label,
        title,
        log_x=True,
        log_y_metrics=("seconds", "in_F"),
    )
    write_json(
        snakemake.output.json,
        {"figure": spec, "points": curves.to_dict("records"), "records": records},
    )
    log.info("%d timing records", len(records))


run(snakemake, main)  # noqa: F821

"""Rule curve_figure: a metric (mean ± std over splits) against a swept
parameter (kind sweep, one line per dataset) or against a number given per
dataset (kind datasets, one line per algorithm); the points also go to JSON."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    import pandas as pd

    from mkl._io import write_json
    from mkl.workflow import experiment, figures
    from mkl.workflow.jobs import job_experiment

    exp = job_experiment(snakemake)
    spec = exp["figures"][snakemake.wildcards.figure]
    fits = pd.read_csv(snakemake.input[0])
    if spec["kind"] == "sweep":
        members = experiment.sweep_members(exp, spec["sweep"])
        curves = figures.sweep_curves(fits, members, spec["datasets"], spec["metrics"])
        param = exp["algorithms"][members[0][0]]["sweep_param"]
        x_label = spec.get("x_label", param)
    else:
        curves = figures.dataset_curves(fits, spec["datasets"], spec["algorithms"], spec["metrics"])
        x_label = spec.get("x_label", "dataset value")
    title = spec.get("title", f"{exp['name']}: {snakemake.wildcards.figure}")
    figures.plot_curves(
        curves, snakemake.output.png, snakemake.output.pdf, x_label, title, spec.get("log_x", False)
    )
    write_json(snakemake.output.json, {"figure": spec, "points": curves.to_dict("records")})
    log.info("%d points", len(curves))


run(snakemake, main)  # noqa: F821

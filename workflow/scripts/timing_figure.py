"""Rule timing_figure: fit time against n, the number of kernels or the factors'
rank, one line per series, error bars = standard error over repetitions (as
Kloft et al. 2009, Fig. 1); a second panel gives the same times in units of the
floor F, a third the test accuracy where the figure draws test points. The
points of a ``compare_with`` figure (the dense bank) are drawn beside, dashed,
for the series this figure has; a wrapper variant ("X, wrapper") dash-dotted.
The numbers behind the figure are also written as a Markdown table and as a
page of the report."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    import json

    from mkl._io import atomic_path, write_json
    from mkl.workflow import figures
    from mkl.workflow.jobs import job_experiment

    exp = job_experiment(snakemake)
    spec = exp["figures"][snakemake.wildcards.figure]
    records = []
    for path in snakemake.input:
        with open(path) as fh:
            records.extend(json.load(fh)["records"])
    # a compared figure's lines are drawn beside this figure's own series only
    records = [r for r in records if r["series"] in spec["series"]]
    curves = figures.timing_curves(records, spec["vary"])
    default_label = {
        "n": "training examples n",
        "kernels": "number of kernels",
        "rank": "rank of each kernel's factors",
    }[spec["vary"]]
    x_label = spec.get("x_label", default_label)
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
    with atomic_path(snakemake.output.md) as tmp, open(tmp, "w") as fh:
        fh.write(f"{title}\n\n" + figures.timing_table(curves, x_label))
    figures.write_timing_page(curves, x_label, title, snakemake.output.html)
    write_json(
        snakemake.output.json,
        {
            "figure": spec,
            # a dense reference of a rank figure has no x: null in JSON
            "points": curves.astype(object).where(curves.notna(), None).to_dict("records"),
            "records": records,
        },
    )
    log.info("%d timing records", len(records))


run(snakemake, main)  # noqa: F821

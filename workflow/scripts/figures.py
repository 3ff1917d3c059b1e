"""Rule figures: the experiment's test metric (accuracy or AUC in %, R^2) per
dataset and algorithm, with error bars over splits and the paper's means."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    from mkl.workflow.figures import results_figure
    from mkl.workflow.jobs import job_experiment

    results_figure(
        job_experiment(snakemake),
        snakemake.input.per_split,
        snakemake.input.paper,
        snakemake.output.png,
        snakemake.output.pdf,
    )


run(snakemake, main)  # noqa: F821

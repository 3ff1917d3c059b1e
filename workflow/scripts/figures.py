"""Rule figures: the experiment's test metric (accuracy, R^2 or AUC) per dataset
and algorithm, with error bars over splits."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    import pandas as pd

    from mkl.workflow import experiment, figures, tables

    exp = snakemake.params.experiment
    fits = pd.read_csv(snakemake.input[0])
    algorithms = experiment.table_algorithms(exp)  # sweep points have their own figures
    fits = fits[fits["algorithm"].isin(algorithms)]
    order = {"dataset": exp["datasets"], "algorithm": algorithms}
    summary = tables.summarise(fits, order)
    figures.plot_metric(
        summary,
        snakemake.output.png,
        snakemake.output.pdf,
        experiment.figure_metric(exp),
        title=exp["name"],
    )


run(snakemake, main)  # noqa: F821

"""Rules table_slice, table_slice_algorithm: one dataset's row of an
experiment's tables (or one algorithm's cell on it), recomputed from the fit
records, beside the paper's."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    from mkl.workflow.jobs import job_experiment
    from mkl.workflow.tables import table_slice

    summary = table_slice(
        job_experiment(snakemake),
        snakemake.input.fits,
        snakemake.input.manifests,
        snakemake.params.paper_results,
        snakemake.wildcards.dataset,
        snakemake.wildcards.get("algorithm"),
        snakemake.output,
    )
    log.info("%d rows from %d fit files", len(summary), len(snakemake.input.fits))


run(snakemake, main)  # noqa: F821

"""Rule aggregate: fit records -> tables (mean ± std over splits; the paper's
numbers beside); datasets whose download manifest says unavailable are listed
as "not available"."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    from mkl.workflow.jobs import job_experiment
    from mkl.workflow.tables import aggregate

    fits, unavailable = aggregate(
        job_experiment(snakemake),
        snakemake.input.fits,
        snakemake.input.manifests,
        snakemake.params.paper_results,
        snakemake.output,
        snakemake.params.config_sha256,
        log,
    )
    n_failed = int(fits["error"].fillna("").astype(bool).sum()) if len(fits) else 0
    log.info(
        "aggregated %d fit records (%d failed); not available: %s",
        len(fits),
        n_failed,
        sorted(unavailable),
    )


run(snakemake, main)  # noqa: F821

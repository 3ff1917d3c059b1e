"""Rule fidelity: every cell of the papers' tables beside ours, from the
results tables of the experiments that have been run (the others are listed
as not run) -> results/tables/fidelity.{csv,md,html}, results/figures/fidelity.{png,pdf}."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    from mkl.workflow.fidelity import fidelity
    from mkl.workflow.jobs import job_experiments

    summary = fidelity(
        job_experiments(snakemake, snakemake.params.experiments),
        dict(zip(snakemake.params.names, snakemake.input.tables, strict=True)),
        snakemake.input.manifests,
        snakemake.params.paper_results,
        snakemake.output,
    )
    overall = summary.iloc[-1]
    log.info(
        "%d paper cells, %d compared, %d of %d with a paper sd within two sd",
        overall["cells"],
        overall["compared"],
        overall["within_2sd"],
        overall["with_sd"],
    )


run(snakemake, main)  # noqa: F821

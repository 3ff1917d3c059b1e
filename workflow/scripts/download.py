"""Rule download: fetch a dataset's raw files (mirrors, then URLs), sha256-checked."""

from pathlib import Path

from _common import run


def main(snakemake, log):
    from mkl.datasets import fetch

    dest = Path(snakemake.output[0]).parent
    manifest = fetch(
        snakemake.wildcards.dataset,
        snakemake.params.entry,
        dest,
        mirrors=snakemake.params.mirrors,
        timeout=snakemake.params.timeout,
    )
    log.info("fetched %s: %s", snakemake.wildcards.dataset, manifest)


run(snakemake, main)  # noqa: F821

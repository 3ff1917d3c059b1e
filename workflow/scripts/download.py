"""Checkpoint download: fetch a dataset's raw files (mirrors, then URLs),
sha256-checked. When no source works, the manifest records the dataset as
unavailable and the reason; the job still succeeds, so the rest of the run
goes on and the tables say "not available"."""

import sys
from pathlib import Path

from mkl.workflow.jobs import run


def main(snakemake, log):
    from mkl._io import write_json
    from mkl.workflow.fetch import DatasetUnavailable, fetch

    name = snakemake.wildcards.dataset
    dest = Path(snakemake.output[0]).parent
    try:
        manifest = fetch(
            name,
            snakemake.params.entry,
            dest,
            mirrors=snakemake.params.mirrors,
            timeout=snakemake.params.timeout,
        )
    except DatasetUnavailable as exc:
        log.error("%s", exc)
        print(f"error in rule download ({name}): {exc}", file=sys.stderr)
        write_json(
            snakemake.output[0], {"dataset": name, "status": "unavailable", "reason": str(exc)}
        )
        return
    log.info("fetched %s: %s", name, manifest)


run(snakemake, main)  # noqa: F821

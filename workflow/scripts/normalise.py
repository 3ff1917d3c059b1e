"""Rule normalise: parse the raw files into results/data/{dataset}.h5 (X, y, classes;
or real targets for a regression)."""

from pathlib import Path

from mkl.workflow.jobs import run


def main(snakemake, log):
    import numpy as np

    from mkl.workflow.dataset import build_dataset

    raw_dir = Path(snakemake.input[0]).parent
    ds = build_dataset(snakemake.wildcards.dataset, snakemake.params.entry, raw_dir)
    if ds.real_target:
        log.info("X %s, real targets in [%g, %g]", ds.X.shape, ds.y.min(), ds.y.max())
    else:
        log.info("X %s, classes %s, counts %s", ds.X.shape, ds.classes, np.bincount(ds.y).tolist())
    ds.save(snakemake.output[0])


run(snakemake, main)  # noqa: F821

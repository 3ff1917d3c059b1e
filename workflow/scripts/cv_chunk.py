"""Rule cv_chunk: inner cross-validation of one contiguous chunk of a grid (the
fit job joins the chunks, then selects, refits and tests)."""

from _common import algorithm_bank, run


def main(snakemake, log):
    from functools import partial

    import mkl
    from mkl._io import write_json
    from mkl.bank import KernelBank
    from mkl.datasets import load_split
    from mkl.evaluate import cross_validate_grid, grid_chunk, grid_points

    w = snakemake.wildcards
    cfg = snakemake.params.algorithm
    points = grid_points(cfg.get("grid", {}))
    indices = grid_chunk(len(points), snakemake.params.chunks, int(w.chunk))
    bank = algorithm_bank(KernelBank.load(snakemake.input.bank), cfg)
    folds = load_split(snakemake.input.splits, int(w.split)).folds
    make = partial(mkl.make_estimator, cfg.get("estimator", w.algorithm), **cfg.get("params", {}))
    records = cross_validate_grid(
        make, bank.train, bank.y_train, folds, [points[i] for i in indices], snakemake.params.metric
    )
    write_json(snakemake.output[0], {"indices": indices, "records": records})
    log.info("chunk %s of %d: grid points %s", w.chunk, snakemake.params.chunks, indices)


run(snakemake, main)  # noqa: F821

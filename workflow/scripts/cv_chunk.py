"""Rule cv_chunk: inner cross-validation of one contiguous chunk of a grid (the
fit job joins the chunks, then selects, refits and tests)."""

from _common import fit_inputs, run


def main(snakemake, log):
    from mkl._io import write_json
    from mkl.evaluate import cross_validate_grid, grid_chunk, grid_points

    w = snakemake.wildcards
    points = grid_points(snakemake.params.algorithm.get("grid", {}))
    indices = grid_chunk(len(points), snakemake.params.chunks, int(w.chunk))
    bank, folds, make = fit_inputs(snakemake, snakemake.input.bank, int(w.split))
    records = cross_validate_grid(
        make, bank.train, bank.y_train, folds, [points[i] for i in indices], snakemake.params.metric
    )
    write_json(snakemake.output[0], {"indices": indices, "records": records})
    log.info("chunk %s of %d: grid points %s", w.chunk, snakemake.params.chunks, indices)


run(snakemake, main)  # noqa: F821

"""Rules cv_chunk and cv_chunk_batch: inner cross-validation of one contiguous
chunk of a grid, on each of the job's splits (one, or a fit job's batch): the
fit job joins the chunks, then selects, refits and tests."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    from mkl._io import write_json
    from mkl.banks.kernel_bank import KernelBank
    from mkl.model_selection import cross_validate_grid, grid_points
    from mkl.workflow.evaluation import algorithm_bank, entry_grid, estimator_factory, grid_chunk
    from mkl.workflow.splits import load_split

    w = snakemake.wildcards
    entry = snakemake.params.algorithm
    indices = grid_chunk(
        len(grid_points(entry.get("grid", {}))), snakemake.params.chunks, int(w.chunk)
    )
    banks = snakemake.input.bank
    banks = [banks] if isinstance(banks, str) else list(banks)
    records = {}  # by split (a JSON object's keys are strings)
    for path, split in zip(banks, snakemake.params.splits, strict=True):
        bank = algorithm_bank(KernelBank.load(path), entry)
        points = grid_points(entry_grid(entry, bank))  # C in the bank's unit, if so stated
        folds = load_split(snakemake.input.splits, split).folds
        records[str(split)] = cross_validate_grid(
            estimator_factory(entry, w.algorithm),
            bank.train,
            bank.y_train,
            folds,
            [points[i] for i in indices],
            snakemake.params.metric,
        )
    write_json(snakemake.output[0], {"indices": indices, "records": records})
    log.info(
        "chunk %s of %d: grid points %s, splits %s",
        w.chunk,
        snakemake.params.chunks,
        indices,
        snakemake.params.splits,
    )


run(snakemake, main)  # noqa: F821

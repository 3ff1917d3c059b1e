"""Rules fit and fit_batch: for each of the job's splits, model selection over
the grid by inner CV, refit, test metrics -> one JSON record per split (a batch
job writes its records as one file, {"records": [...]})."""

import json
import sys

import numpy as np
from _common import fit_inputs, run

# errors of fitting (bad parameters for these data, numerical failure, memory),
# not of the workflow: recorded as a failed fit instead of stopping the run
FIT_ERRORS = (ValueError, ArithmeticError, np.linalg.LinAlgError, MemoryError)


def fit_split(snakemake, log, bank_path, split, chunk_paths):
    """The record of one split: selected params, fit details and test metrics,
    or ``status: failed`` with the error."""
    import mkl
    from mkl.evaluate import evaluate_split

    w = snakemake.wildcards
    bank, folds, make = fit_inputs(snakemake, bank_path, split)
    cv_chunks = None
    if chunk_paths:  # the grid's cross-validation ran as separate jobs
        cv_chunks = []
        for path in chunk_paths:
            with open(path) as fh:
                cv_chunks.append(json.load(fh))
    try:
        record = evaluate_split(
            make,
            bank,
            folds,
            snakemake.params.algorithm.get("grid", {}),
            snakemake.params.metric,
            cv_chunks,
        )
    except FIT_ERRORS as exc:
        # the estimator refused or failed on these data: a record saying so, so that
        # the other jobs and the tables go on and the table marks this cell "failed"
        log.exception("fit of split %d failed", split)
        where = {**dict(w), "split": split}
        print(f"error in rule fit ({where}): {type(exc).__name__}: {exc}", file=sys.stderr)
        record = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
    record.update(
        experiment=w.experiment,
        dataset=w.dataset,
        algorithm=w.algorithm,
        split=split,
        mkl_version=mkl.__version__,
        mkl_source_hash=snakemake.params.mkl_hash,
    )
    log.info(
        "split %d: selected %s, test %s", split, record.get("selected_params"), record.get("test")
    )
    return record


def main(snakemake, log):
    from mkl._io import write_json

    splits = snakemake.params.splits  # one split, or a fit_batch job's first..last
    banks = snakemake.input.bank
    banks = [banks] if isinstance(banks, str) else list(banks)
    chunks = list(snakemake.input.chunks)
    per_split = len(chunks) // len(splits)  # CV chunk files, split by split
    records = [
        fit_split(snakemake, log, bank, split, chunks[i * per_split : (i + 1) * per_split])
        for i, (bank, split) in enumerate(zip(banks, splits, strict=True))
    ]
    batch = hasattr(snakemake.wildcards, "first")
    write_json(snakemake.output[0], {"records": records} if batch else records[0])


run(snakemake, main)  # noqa: F821

"""Rule fit: model selection over the grid by inner CV, refit, test metrics -> JSON."""

import json
import sys
from functools import partial

import numpy as np
from _common import algorithm_bank, run

# errors of fitting (bad parameters for these data, numerical failure, memory),
# not of the workflow: recorded as a failed fit instead of stopping the run
FIT_ERRORS = (ValueError, ArithmeticError, np.linalg.LinAlgError, MemoryError)


def main(snakemake, log):
    import mkl
    from mkl._io import write_json
    from mkl.bank import KernelBank
    from mkl.datasets import load_split
    from mkl.evaluate import evaluate_split, grid_points, merge_chunks

    w = snakemake.wildcards
    cfg = snakemake.params.algorithm
    bank = KernelBank.load(snakemake.input.bank)
    bank = algorithm_bank(bank, cfg)
    folds = load_split(snakemake.input.splits, int(w.split)).folds
    make = partial(mkl.make_estimator, cfg.get("estimator", w.algorithm), **cfg.get("params", {}))
    cv_records = None
    if snakemake.input.chunks:  # the grid's cross-validation ran as separate jobs
        chunks = []
        for path in snakemake.input.chunks:
            with open(path) as fh:
                chunks.append(json.load(fh))
        cv_records = merge_chunks(grid_points(cfg.get("grid", {})), chunks)
    try:
        record = evaluate_split(
            make, bank, folds, cfg.get("grid", {}), snakemake.params.metric, cv_records
        )
    except FIT_ERRORS as exc:
        # the estimator refused or failed on these data: a record saying so, so that
        # the other jobs and the tables go on and the table marks this cell "failed"
        log.exception("fit failed")
        print(f"error in rule fit ({dict(w)}): {type(exc).__name__}: {exc}", file=sys.stderr)
        record = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
    record.update(
        experiment=w.experiment,
        dataset=w.dataset,
        algorithm=w.algorithm,
        split=int(w.split),
        mkl_version=mkl.__version__,
        mkl_source_hash=snakemake.params.mkl_hash,
    )
    write_json(snakemake.output[0], record)
    log.info("selected %s, test %s", record.get("selected_params"), record.get("test"))


run(snakemake, main)  # noqa: F821

"""Rule fit: model selection over the grid by inner CV, refit, test metrics -> JSON."""

import json
import sys

import numpy as np
from _common import fit_inputs, run

# errors of fitting (bad parameters for these data, numerical failure, memory),
# not of the workflow: recorded as a failed fit instead of stopping the run
FIT_ERRORS = (ValueError, ArithmeticError, np.linalg.LinAlgError, MemoryError)


def main(snakemake, log):
    import mkl
    from mkl._io import write_json
    from mkl.evaluate import evaluate_split

    w = snakemake.wildcards
    bank, folds, make = fit_inputs(snakemake)
    cv_chunks = None
    if snakemake.input.chunks:  # the grid's cross-validation ran as separate jobs
        cv_chunks = []
        for path in snakemake.input.chunks:
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

"""Rule fit: model selection over the grid by inner CV, refit, test metrics -> JSON."""

import json
from functools import partial

from _common import algorithm_bank, run


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
    record = evaluate_split(
        make, bank, folds, cfg.get("grid", {}), snakemake.params.metric, cv_records
    )
    record.update(
        experiment=w.experiment,
        dataset=w.dataset,
        algorithm=w.algorithm,
        split=int(w.split),
        mkl_version=mkl.__version__,
        mkl_source_hash=snakemake.params.mkl_hash,
    )
    write_json(snakemake.output[0], record)
    log.info("selected %s, test %s", record["selected_params"], record["test"])


run(snakemake, main)  # noqa: F821

"""Rules fit and fit_batch: for each of the job's splits, model selection over
the grid by inner CV, refit, test metrics -> one JSON record per split (a batch
job writes its records as one file, {"records": [...]})."""

import sys

from mkl.workflow.jobs import run


def main(snakemake, log):
    import mkl
    from mkl._io import write_json
    from mkl.workflow.evaluation import split_record

    w = snakemake.wildcards
    splits = snakemake.params.splits  # one split, or a fit_batch job's first..last
    banks = snakemake.input.bank
    banks = [banks] if isinstance(banks, str) else list(banks)
    chunks = list(snakemake.input.chunks)
    per_split = len(chunks) // len(splits)  # CV chunk files, split by split
    records = []
    for i, (bank, split) in enumerate(zip(banks, splits, strict=True)):
        record = split_record(
            bank,
            snakemake.input.splits,
            split,
            snakemake.params.algorithm,
            w.algorithm,
            snakemake.params.metric,
            chunks[i * per_split : (i + 1) * per_split],
            log,
        )
        if record.get("status") == "failed":
            where = {**dict(w), "split": split}
            print(f"error in rule fit ({where}): {record['error']}", file=sys.stderr)
        record.update(
            experiment=w.experiment,
            dataset=w.dataset,
            algorithm=w.algorithm,
            split=split,
            mkl_version=mkl.__version__,
            mkl_source_hash=snakemake.params.source_hash,
        )
        log.info(
            "split %d: selected %s, test %s",
            split,
            record.get("selected_params"),
            record.get("test"),
        )
        records.append(record)
    batch = hasattr(w, "first")
    write_json(snakemake.output[0], {"records": records} if batch else records[0])


run(snakemake, main)  # noqa: F821

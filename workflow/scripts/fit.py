"""Rules fit, fit_batch and fit_dataset: for each of the job's algorithms and
splits, model selection over the grid by inner CV, refit, test metrics -> one
JSON record per (algorithm, split) (a job of several writes its records as one
file, {"records": [...]})."""

import sys

from mkl.workflow.jobs import run


def main(snakemake, log):
    import mkl
    from mkl._io import write_json
    from mkl.workflow.evaluation import split_record

    w = snakemake.wildcards
    splits = snakemake.params.splits  # one split, or the job's first..last
    banks = snakemake.input.bank
    banks = [banks] if isinstance(banks, str) else list(banks)
    chunks = iter(snakemake.input.chunks)  # CV chunk files: algorithm by algorithm, split by split
    records = []
    for algorithm, spec in snakemake.params.algorithms.items():
        n_chunks = snakemake.params.chunks[algorithm]
        for bank, split in zip(banks, splits, strict=True):
            split_chunks = [next(chunks) for _ in range(n_chunks)] if n_chunks > 1 else []
            record = split_record(
                bank,
                snakemake.input.splits,
                split,
                spec,
                algorithm,
                snakemake.params.metric,
                split_chunks,
                log,
            )
            where = {**dict(w), "algorithm": algorithm, "split": split}
            if record.get("status") == "failed":
                print(
                    f"error in rule {snakemake.rule} ({where}): {record['error']}", file=sys.stderr
                )
            record.update(
                experiment=w.experiment,
                dataset=w.dataset,
                algorithm=algorithm,
                split=split,
                mkl_version=mkl.__version__,
                mkl_source_hash=snakemake.params.source_hash,
            )
            log.info(
                "%s, split %d: selected %s, test %s",
                algorithm,
                split,
                record.get("selected_params"),
                record.get("test"),
            )
            records.append(record)
    one = len(records) == 1 and hasattr(w, "split")
    write_json(snakemake.output[0], records[0] if one else {"records": records})


run(snakemake, main)  # noqa: F821

"""Rules fit, fit_batch and fit_dataset: for each of the job's algorithms and
splits, model selection over the grid by inner CV, refit, test metrics -> one
JSON record per (algorithm, split) (a job of several writes its records as one
file, {"records": [...]})."""

import sys

from mkl.workflow.jobs import run


def main(snakemake, log):
    import mkl
    from mkl._io import write_json
    from mkl.banks.kernel_bank import KernelBank
    from mkl.workflow.evaluation import split_record
    from mkl.workflow.provenance import code_version

    w = snakemake.wildcards
    algorithms = snakemake.params.algorithms  # {algorithm entry: its fit spec}
    splits = snakemake.params.splits  # one split, or the job's first..last
    banks = snakemake.input.bank
    banks = [banks] if isinstance(banks, str) else list(banks)
    # CV chunk files, algorithm by algorithm, each holding the CV of the job's splits
    chunks = iter(snakemake.input.chunks)
    job_chunks = {
        algorithm: [next(chunks) for _ in range(n)] if n > 1 else []
        for algorithm, n in snakemake.params.chunks.items()
    }
    records = {}
    for path, split in zip(banks, splits, strict=True):
        bank = KernelBank.load(path)  # once, for every algorithm of the job
        for algorithm, spec in algorithms.items():
            record = split_record(
                bank,
                snakemake.input.splits,
                split,
                spec,
                algorithm,
                snakemake.params.metric,
                job_chunks[algorithm],
                log,
            )
            if record.get("status") == "failed":
                where = {**dict(w), "algorithm": algorithm, "split": split}
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
                code_version=code_version(),
            )
            log.info(
                "%s, split %d: selected %s, test %s",
                algorithm,
                split,
                record.get("selected_params"),
                record.get("test"),
            )
            records[algorithm, split] = record
    records = [records[algorithm, split] for algorithm in algorithms for split in splits]
    # rule fit: its one record; fit_batch, fit_dataset: {"records": [...]}
    write_json(snakemake.output[0], records[0] if hasattr(w, "split") else {"records": records})


run(snakemake, main)  # noqa: F821

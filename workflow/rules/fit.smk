# One job per (experiment, dataset, algorithm, split): it loops over the
# hyperparameter grid and the inner CV folds with the bank loaded once, then
# refits the selected point and tests it. With grid_chunks = k > 1 the cross-
# validation runs as k cv_chunk jobs instead (of the fit job's splits: one
# job per chunk and batch of splits_per_job), and the fit job joins them.
# With splits_per_job = b > 1 one fit_batch job does b consecutive splits in
# turn (a record per split, in one file), and with batch_algorithms one
# fit_dataset job does every algorithm of the dataset on them (a record per
# algorithm and split, in one file), so that short fits do not each pay for a
# Python start-up and Snakemake's scheduling.


rule cv_chunk:
    input:
        bank=bank_files,
        splits=checked_input("results/splits/{experiment}/{dataset}.h5"),
    output:
        "results/cv/{experiment}/{dataset}/{algorithm}/{split}/{chunk}.json",
    params:
        splits=targets.job_splits,
        algorithm=fit_spec,
        chunks=grid_chunks,
        metric=lambda w: experiment.selection_metric(EXPERIMENTS[w.experiment], w.dataset),
        source_hash=fit_job_hash,
    wildcard_constraints:
        split="[0-9]+",
        chunk="[0-9]+",
    resources:
        mem_mb=fit_mem_mb,
        runtime=fit_runtime,
    log:
        "results/logs/cv_chunk/{experiment}/{dataset}/{algorithm}/{split}/{chunk}.log",
    threads: 1
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/cv_chunk.py"


# the chunk of a batch of splits (splits_per_job > 1): for the fit_batch and
# fit_dataset jobs of those splits, a job per chunk and batch, not per split
use rule cv_chunk as cv_chunk_batch with:
    output:
        "results/cv/{experiment}/{dataset}/{algorithm}/splits_{first}-{last}/{chunk}.json",
    wildcard_constraints:
        first="[0-9]+",
        last="[0-9]+",
        chunk="[0-9]+",
    log:
        "results/logs/cv_chunk/{experiment}/{dataset}/{algorithm}/splits_{first}-{last}/{chunk}.log",


rule fit:
    input:
        bank=bank_files,
        splits=checked_input("results/splits/{experiment}/{dataset}.h5"),
        chunks=cv_chunk_files,
    output:
        "results/fits/{experiment}/{dataset}/{algorithm}/{split}.json",
    params:
        splits=targets.job_splits,
        algorithms=fit_specs,
        chunks=job_grid_chunks,
        metric=lambda w: experiment.selection_metric(EXPERIMENTS[w.experiment], w.dataset),
        source_hash=fit_job_hash,
    resources:
        mem_mb=fit_mem_mb,
        runtime=fit_runtime,
    log:
        "results/logs/fit/{experiment}/{dataset}/{algorithm}/{split}.log",
    threads: 1
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/fit.py"


use rule fit as fit_batch with:
    output:
        "results/fits/{experiment}/{dataset}/{algorithm}/splits_{first}-{last}.json",
    wildcard_constraints:
        first="[0-9]+",
        last="[0-9]+",
    log:
        "results/logs/fit/{experiment}/{dataset}/{algorithm}/splits_{first}-{last}.log",


use rule fit as fit_dataset with:
    output:
        "results/fits/{experiment}/{dataset}/splits_{first}-{last}.json",
    wildcard_constraints:
        first="[0-9]+",
        last="[0-9]+",
    log:
        "results/logs/fit/{experiment}/{dataset}/splits_{first}-{last}.log",

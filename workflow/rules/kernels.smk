# One kernel bank (training and test blocks) per (experiment, dataset, split).


rule kernels:
    input:
        data=checked_input("results/data/{dataset}.h5"),
        splits=checked_input("results/splits/{experiment}/{dataset}.h5"),
    output:
        # temporary_banks: deleted once every fit, CV chunk and figure that reads it is done
        (
            temp("results/kernels/{experiment}/{dataset}/{split}.h5")
            if config.get("temporary_banks", False)
            else "results/kernels/{experiment}/{dataset}/{split}.h5"
        ),
    params:
        bank=lambda w: experiment.kernels(EXPERIMENTS[w.experiment], w.dataset),
        scaling=lambda w: experiment.protocol(EXPERIMENTS[w.experiment], w.dataset).get(
            "feature_scaling", "standardise"
        ),
        source_hash=KERNELS_HASH,
    resources:
        mem_mb=kernels_mem_mb,
        runtime=lambda w, attempt: 30 * attempt,
    log:
        "results/logs/kernels/{experiment}/{dataset}/{split}.log",
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/kernels.py"

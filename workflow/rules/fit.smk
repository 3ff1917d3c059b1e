# One job per (experiment, dataset, algorithm, split); it loops over the
# hyperparameter grid and the inner CV folds with the bank loaded once.


rule fit:
    input:
        bank="results/kernels/{experiment}/{dataset}/{split}.h5",
        splits="results/splits/{experiment}/{dataset}.h5",
    output:
        "results/fits/{experiment}/{dataset}/{algorithm}/{split}.json",
    params:
        algorithm=lambda w: mkl.experiment.algorithm(EXPERIMENTS[w.experiment], w.algorithm, w.dataset),
        metric=lambda w: mkl.experiment.protocol(EXPERIMENTS[w.experiment], w.dataset).get(
            "selection_metric", "accuracy"
        ),
        mkl_hash=FIT_SOURCE_HASH,
    log:
        "results/logs/fit/{experiment}/{dataset}/{algorithm}/{split}.log",
    threads: 1
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/fit.py"

# Raw files -> one normalised HDF5 per dataset -> seeded splits per experiment.


# A checkpoint: a dataset that cannot be obtained gets a manifest saying so (and
# one error line), and the experiments report it as not available. To retry a
# download from the network, delete results/raw/{dataset}; a new mirror copy
# reruns it by itself (mirror_copies).
checkpoint download:
    output:
        "results/raw/{dataset}/manifest.json",
    params:
        entry=lambda w: DATASETS[w.dataset],
        mirrors=config.get("mirrors", []),
        timeout=config.get("download_timeout", 30),
        mirror_copies=lambda w: mirror_copies(DATASETS[w.dataset], config.get("mirrors", [])),
    log:
        "results/logs/download/{dataset}.log",
    localrule: True
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/download.py"


rule normalise:
    input:
        "results/raw/{dataset}/manifest.json",
    output:
        "results/data/{dataset}.h5",
    params:
        entry=lambda w: DATASETS[w.dataset],
        source_hash=NORMALISE_HASH,
    log:
        "results/logs/normalise/{dataset}.log",
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/normalise.py"


rule split:
    input:
        checked_input("results/data/{dataset}.h5"),
    output:
        "results/splits/{experiment}/{dataset}.h5",
    params:
        protocol=lambda w: experiment.split_protocol(EXPERIMENTS[w.experiment], w.dataset),
        source_hash=SPLIT_HASH,
    log:
        "results/logs/split/{experiment}/{dataset}.log",
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/split.py"

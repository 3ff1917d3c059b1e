# Tables (ours beside the paper's) and figures, as report() items.


rule aggregate:
    input:
        fits=lambda w: fit_files(w.experiment),
        manifests=lambda w: [download_manifest(ds) for ds in EXPERIMENTS[w.experiment]["datasets"]],
    output:
        csv="results/tables/{experiment}/results.csv",
        md="results/tables/{experiment}/results.md",
        html=report(
            "results/tables/{experiment}/results.html",
            caption="../report/results.rst",
            category="{experiment}",
            subcategory="tables",
        ),
        per_split="results/tables/{experiment}/per_split.csv",
        paper_csv="results/tables/{experiment}/paper.csv",
        paper_md="results/tables/{experiment}/paper.md",
        paper_html=report(
            "results/tables/{experiment}/paper.html",
            caption="../report/paper.rst",
            category="{experiment}",
            subcategory="tables",
        ),
        paper_tables_md="results/tables/{experiment}/paper_tables.md",
        paper_tables_html=report(
            "results/tables/{experiment}/paper_tables.html",
            caption="../report/paper_tables.rst",
            category="{experiment}",
            subcategory="tables",
        ),
        paper_tables_tex="results/tables/{experiment}/paper_tables.tex",
    params:
        experiment=lambda w: w.experiment,
        experiment_digest=lambda w: experiment_hash(w.experiment),
        config_sha256=lambda w: experiment_sha256(w.experiment),
        paper_results=config.get("paper_results", "resources/paper_results.csv"),
        source_hash=TABLES_HASH,
    log:
        "results/logs/aggregate/{experiment}.log",
    localrule: True
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/aggregate.py"


# One slice of an experiment's table, recomputed from its fit records (and the
# fits it needs, if they are missing or out of date): a dataset's row, or one
# cell. `snakemake --cores 2 results/tables/quick/slices/sonar/gmkl.md`
rule table_slice:
    input:
        fits=lambda w: slice_fit_files(w),
        manifests=lambda w: [download_manifest(w.dataset)],
    output:
        csv="results/tables/{experiment}/slices/{dataset}.csv",
        md="results/tables/{experiment}/slices/{dataset}.md",
    params:
        experiment=lambda w: w.experiment,
        experiment_digest=lambda w: experiment_hash(w.experiment),
        paper_results=config.get("paper_results", "resources/paper_results.csv"),
        source_hash=TABLES_HASH,
    log:
        "results/logs/table_slice/{experiment}/{dataset}.log",
    localrule: True
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/table_slice.py"


use rule table_slice as table_slice_algorithm with:
    output:
        csv="results/tables/{experiment}/slices/{dataset}/{algorithm}.csv",
        md="results/tables/{experiment}/slices/{dataset}/{algorithm}.md",
    log:
        "results/logs/table_slice/{experiment}/{dataset}/{algorithm}.log",


rule figures:
    input:
        per_split="results/tables/{experiment}/per_split.csv",
        paper="results/tables/{experiment}/paper.csv",
    output:
        png=report(
            "results/figures/{experiment}/results.png",
            caption="../report/figure.rst",
            category="{experiment}",
            subcategory="figures",
        ),
        pdf="results/figures/{experiment}/results.pdf",
    params:
        experiment=lambda w: w.experiment,
        experiment_digest=lambda w: experiment_hash(w.experiment),
        source_hash=FIGURES_HASH,
    log:
        "results/logs/figures/{experiment}.log",
    localrule: True
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/figures.py"


rule weights_figure:
    input:
        bank=lambda w: "results/kernels/{experiment}/{dataset}/{split}.h5".format(
            experiment=w.experiment,
            dataset=EXPERIMENTS[w.experiment]["figures"][w.figure]["dataset"],
            split=EXPERIMENTS[w.experiment]["figures"][w.figure].get("split", 0),
        ),
    output:
        png=report(
            "results/figures/{experiment}/{figure}.png",
            caption="../report/weights.rst",
            category="{experiment}",
            subcategory="figures",
        ),
        pdf="results/figures/{experiment}/{figure}.pdf",
        json="results/figures/{experiment}/{figure}.json",
    wildcard_constraints:
        figure=figures_of_kind("weights"),
    params:
        experiment=lambda w: w.experiment,
        experiment_digest=lambda w: experiment_hash(w.experiment),
        source_hash=figure_hash,
    log:
        "results/logs/weights_figure/{experiment}/{figure}.log",
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/weights_figure.py"


rule curve_figure:
    input:
        "results/tables/{experiment}/per_split.csv",
    output:
        png=report(
            "results/figures/{experiment}/{figure}.png",
            caption="../report/curve.rst",
            category="{experiment}",
            subcategory="figures",
        ),
        pdf="results/figures/{experiment}/{figure}.pdf",
        json="results/figures/{experiment}/{figure}.json",
    wildcard_constraints:
        figure=figures_of_kind("sweep", "datasets"),
    params:
        experiment=lambda w: w.experiment,
        experiment_digest=lambda w: experiment_hash(w.experiment),
        source_hash=FIGURES_HASH,
    log:
        "results/logs/curve_figure/{experiment}/{figure}.log",
    localrule: True
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/curve_figure.py"


# A fit-time point runs alone on the machine (threads = all cores, one BLAS
# thread inside), so that no other job disturbs its clock.
rule timing_point:
    input:
        lambda w: "results/data/{}.h5".format(EXPERIMENTS[w.experiment]["figures"][w.figure]["dataset"]),
    output:
        "results/timing/{experiment}/{figure}/{value}.json",
    wildcard_constraints:
        figure=figures_of_kind("timing"),
        value="[0-9]+|dense",
    params:
        experiment=lambda w: EXPERIMENTS[w.experiment],
        source_hash=lambda w: figure_hash(w, extra=hashing.TIMING),
    threads: lambda wildcards: workflow.cores  # evaluated per job, so --unlock needs no --cores
    resources:
        mem_mb=timing_mem_mb,
        runtime=lambda w, attempt: 60 * attempt,
    log:
        "results/logs/timing_point/{experiment}/{figure}/{value}.log",
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/timing_point.py"


rule timing_figure:
    input:
        timing_figure_points,
    output:
        png=report(
            "results/figures/{experiment}/{figure}.png",
            caption="../report/timing.rst",
            category="{experiment}",
            subcategory="figures",
        ),
        pdf="results/figures/{experiment}/{figure}.pdf",
        json="results/figures/{experiment}/{figure}.json",
        md="results/figures/{experiment}/{figure}.md",
        html=report(
            "results/figures/{experiment}/{figure}.html",
            caption="../report/timing_table.rst",
            category="{experiment}",
            subcategory="tables",
        ),
    wildcard_constraints:
        figure=figures_of_kind("timing"),
    params:
        experiment=lambda w: w.experiment,
        experiment_digest=lambda w: experiment_hash(w.experiment),
        source_hash=FIGURES_HASH,
    log:
        "results/logs/timing_figure/{experiment}/{figure}.log",
    localrule: True
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/timing_figure.py"


rule fidelity:
    input:
        tables=[f"results/tables/{e}/results.csv" for e in fidelity_experiments()],
        manifests=fidelity_manifests,
    output:
        csv="results/tables/fidelity.csv",
        md="results/tables/fidelity.md",
        html=report(
            "results/tables/fidelity.html",
            caption="../report/fidelity.rst",
            category="fidelity",
        ),
        png=report(
            "results/figures/fidelity.png",
            caption="../report/fidelity.rst",
            category="fidelity",
        ),
        pdf="results/figures/fidelity.pdf",
    params:
        experiments={e: experiment_hash(e) for e, exp in EXPERIMENTS.items() if "paper" in exp},
        names=fidelity_experiments(),
        paper_results=config.get("paper_results", "resources/paper_results.csv"),
        source_hash=FIDELITY_HASH,
    log:
        "results/logs/fidelity.log",
    localrule: True
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/fidelity.py"


# An experiment file that did not load: its one target fails with the file's error.
rule unusable_experiment:
    output:
        "results/unusable/{experiment}.txt",
    wildcard_constraints:
        experiment="|".join(re.escape(name) for name in UNUSABLE_EXPERIMENTS) or "(?!)",
    params:
        error=lambda w: UNUSABLE_EXPERIMENTS[w.experiment],
    log:
        "results/logs/unusable_experiment/{experiment}.log",
    localrule: True
    conda:
        "../../envs/mkl.yaml"
    script:
        "../scripts/unusable_experiment.py"


for _experiment in [*EXPERIMENTS, *(e for e in UNUSABLE_EXPERIMENTS if re.fullmatch(r"\w+", e))]:

    rule:
        name:
            _experiment
        input:
            experiment_targets(_experiment),
        localrule: True

# MKL research workflow: datasets -> splits -> kernel banks -> fits -> tables and figures.
# See README.md and docs/design.md. Run `snakemake --cores 2` for the quick experiment.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


# the report's landing page: what the workflow is, and each category of results
report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/kernels.smk"
include: "workflow/rules/fit.smk"
include: "workflow/rules/report.smk"


# On a cluster these run where Snakemake runs, not as cluster jobs: downloads
# need the network, which compute nodes often lack, and the tables and figures
# drawn from fit records take a second or two, less than a queue's latency
# (each cluster job also starts Snakemake twice, about 5 CPU-s).
localrules:
    all,
    built,
    download,
    aggregate,
    figures,
    curve_figure,
    timing_figure,
    fidelity,
    unusable_experiment,


onstart:
    # files a killed job was writing (their temporary names are never read as
    # outputs; the working directory is locked, so no other run is writing now)
    remove_stale_temporaries("results")


rule all:
    default_target: True
    input:
        experiment_targets(config["experiments"]),
        rules.fidelity.output,


# The default target and every experiment target already built (on disk): the
# report of everything built is `snakemake --report report.html built`.
rule built:
    input:
        rules.all.input,
        built_targets(),

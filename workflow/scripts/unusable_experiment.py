"""Rule unusable_experiment: the one target of an experiment file that did not
load (empty, not YAML, against the schema, naming what does not exist). The job
fails with the file's error, so that this experiment's targets fail and no
other's (the file was left out when the workflow loaded the experiments)."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    from mkl.workflow.config import ConfigError

    raise ConfigError(f"{snakemake.params.error} (fix the file, or move it out of the folder)")


run(snakemake, main)  # noqa: F821

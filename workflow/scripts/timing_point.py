"""Rule timing_point: one point of a fit-time figure (Kloft et al. 2009, Fig. 1,
and its factor-bank extensions): every series fitted and timed on the same
freshly drawn Gaussian bank, for each repetition. The job runs alone
(threads = all cores) with one BLAS thread."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    import mkl
    from mkl._io import write_json
    from mkl.workflow import experiment
    from mkl.workflow.dataset import Dataset
    from mkl.workflow.timing import timing_point
    from mkl.workflow.timing_settings import timing_point_settings

    exp = snakemake.params.experiment
    spec = exp["figures"][snakemake.wildcards.figure]
    n, kernels, representation = timing_point_settings(spec, snakemake.wildcards.value)
    ds = Dataset.load(snakemake.input[0])
    series = {
        label: experiment.estimator(
            exp["algorithms"][s["algorithm"]], s["algorithm"], s.get("params")
        )
        for label, s in spec["series"].items()
    }
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # the job holds all cores so that nothing runs beside it
        records = timing_point(
            ds.X,
            ds.y,
            n,
            kernels,
            spec["widths"],
            series,
            spec["repetitions"],
            seed=spec.get("seed", 0),
            feature_scaling=spec.get("feature_scaling", "minmax"),
            representation=representation,
            test_points=spec.get("test_points", 0),
            translations=spec.get("translations", 0),
            image_shape=spec.get("image_shape"),
        )
    write_json(
        snakemake.output[0],
        {
            "figure": snakemake.wildcards.figure,
            "n": n,
            "kernels": kernels,
            "representation": representation,
            "records": records,
            "mkl_version": mkl.__version__,
        },
    )
    log.info(
        "n=%d kernels=%d %s: %s",
        n,
        kernels,
        records[0]["representation"],
        {r["series"]: round(r["seconds"], 3) for r in records},
    )


run(snakemake, main)  # noqa: F821

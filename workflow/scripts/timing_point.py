"""Rule timing_point: one point of a fit-time figure (Kloft et al. 2009, Fig. 1):
every series fitted and timed on the same freshly drawn Gaussian bank, for each
repetition. The job runs alone (threads = all cores) with one BLAS thread."""

from _common import run


def main(snakemake, log):
    import numpy as np

    import mkl
    from mkl._io import write_json
    from mkl.datasets import Dataset
    from mkl.timing import timing_point

    exp = snakemake.params.experiment
    spec = exp["figures"][snakemake.wildcards.figure]
    value = int(snakemake.wildcards.value)
    n, kernels = (value, spec["kernels"]) if spec["vary"] == "n" else (spec["n"], value)
    ds = Dataset.load(snakemake.input[0])
    series = {}
    for label, s in spec["series"].items():
        cfg = exp["algorithms"][s["algorithm"]]
        series[label] = (
            cfg.get("estimator", s["algorithm"]),
            {**cfg.get("params", {}), **s.get("params", {})},
        )
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
        )
    write_json(
        snakemake.output[0],
        {
            "figure": snakemake.wildcards.figure,
            "n": n,
            "kernels": kernels,
            "records": records,
            "mkl_version": mkl.__version__,
            "mean_seconds": {
                lab: float(np.mean([r["seconds"] for r in records if r["series"] == lab]))
                for lab in series
            },
        },
    )
    log.info(
        "n=%d kernels=%d: %s", n, kernels, {r["series"]: round(r["seconds"], 3) for r in records}
    )


run(snakemake, main)  # noqa: F821

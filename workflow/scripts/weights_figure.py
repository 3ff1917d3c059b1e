"""Rule weights_figure: fit each series' algorithm on one split's training block
and plot the kernel weights side by side (the weights also go to JSON)."""

from mkl.workflow.jobs import run


def main(snakemake, log):
    import warnings

    import mkl
    from mkl._io import write_json
    from mkl.banks.kernel_bank import KernelBank
    from mkl.workflow import experiment, figures
    from mkl.workflow.evaluation import algorithm_bank
    from mkl.workflow.jobs import job_experiment

    exp = job_experiment(snakemake)
    spec = exp["figures"][snakemake.wildcards.figure]
    full = KernelBank.load(snakemake.input.bank)
    series, labels = {}, None
    for name, s in spec["series"].items():
        cfg = experiment.algorithm(exp, s["algorithm"], spec["dataset"])
        bank = algorithm_bank(full, cfg)
        registry_name, params = experiment.estimator(cfg, s["algorithm"], s.get("params"))
        est = mkl.make_estimator(registry_name, **params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(bank.train, bank.y_train)
        if labels is None:
            labels = bank.labels()
        elif labels != bank.labels():
            raise ValueError(f"figure series {name!r} uses a different kernel selection")
        series[name] = [float(w) for w in est.weights_.ravel()]
        log.info("%s: %s, %d kernels selected", name, params, est.n_selected_)
    title = spec.get("title", f"{exp['name']}: {spec['dataset']}")
    figures.plot_weights_figure(series, labels, snakemake.output.png, snakemake.output.pdf, title)
    write_json(snakemake.output.json, {"kernels": labels, "weights": series, "figure": spec})


run(snakemake, main)  # noqa: F821

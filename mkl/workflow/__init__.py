"""The workflow layer: what the Snakemake workflow (``Snakefile``,
``workflow/``) runs beside the library, one module per concern, each usable
and tested without Snakemake.

Datasets
    ``dataset_registry`` (the dataset registry), ``fetch`` (downloads checked by
    sha256), ``parsers`` (raw formats), ``preprocessing`` (labels, scaling),
    ``dataset`` (the normalised file), ``splits`` (seeded splits and folds).
Experiments and jobs
    ``config`` (loading and validating the configuration, the registry and
    the experiment files), ``experiment`` (what an experiment file asks for),
    ``targets`` (the files a run builds), ``banks`` (a split's kernel bank),
    ``evaluation`` (a fit job: model selection, refit, test), ``timing``
    (fit-time points) and ``timing_settings`` (their n, kernels and
    representation), ``jobs`` (a rule script's start-up and error policy).
Results
    ``tables`` (ours beside the papers'), ``figures``, ``fidelity`` (every
    paper cell beside ours), ``record`` (the record of the runs the README
    reports: a maintainer's tool, no stage).
Machinery
    ``hashing`` (source hashes that rerun stages when their code changes),
    ``resources`` (memory and run time estimates for cluster jobs),
    ``files`` (damaged outputs and leftovers of killed jobs).

Its dependencies (Snakemake, pandas, matplotlib, PyYAML, rdata) come with the
``workflow`` extra: ``pip install "mkl-research[workflow]"``. Nothing in the
library (``mkl`` outside this package) imports it.
"""

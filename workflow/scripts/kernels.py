"""Rule kernels: scale features with training statistics and compute the bank of one split."""

import json

from _common import run


def main(snakemake, log):
    import numpy as np

    import mkl
    from mkl.bank import KernelBank
    from mkl.datasets import Dataset, load_split, scale_features
    from mkl.kernels import compute_bank, expand_bank_spec

    w = snakemake.wildcards
    spec = snakemake.params.bank
    ds = Dataset.load(snakemake.input.data)
    split = load_split(snakemake.input.splits, int(w.split))
    X_tr, X_te = scale_features(ds.X[split.train], ds.X[split.test], snakemake.params.scaling)
    specs = expand_bank_spec(spec, ds.X.shape[1])
    dtype = np.dtype(spec.get("dtype", "float64"))
    train, test, factors = compute_bank(specs, X_tr, X_te, dtype=dtype)
    bank = KernelBank(
        train=train,
        test=test,
        specs=specs,
        y_train=ds.y[split.train],
        y_test=ds.y[split.test],
        factors=factors,
        train_index=split.train,
        test_index=split.test,
        attrs={
            "experiment": w.experiment,
            "dataset": w.dataset,
            "split": int(w.split),
            "feature_scaling": snakemake.params.scaling,
            "bank_spec": json.dumps(spec),
            "data_sha256": ds.attrs.get("sha256", ds.attrs.get("source", "")),
            "mkl_version": mkl.__version__,
        },
    )
    bank.save(snakemake.output[0])
    log.info("bank: %d kernels, train %s, test %s, %s", len(specs), train.shape, test.shape, dtype)


run(snakemake, main)  # noqa: F821

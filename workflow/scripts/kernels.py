"""Rule kernels: scale features with training statistics and compute the bank of
one split; or, for a similarity bank, slice the dataset's similarity matrices
(or ones generated from the features) and, if asked, eigendecompose them."""

import json

from _common import run


def main(snakemake, log):
    import numpy as np

    import mkl
    from mkl.bank import KernelBank
    from mkl.datasets import Dataset, load_split, scale_features
    from mkl.kernels import (
        compute_bank,
        expand_bank_spec,
        most_frequent_features,
        similarity_bank,
    )
    from mkl.similarity import generate_similarity

    w = snakemake.wildcards
    spec = snakemake.params.bank
    ds = Dataset.load(snakemake.input.data)
    split = load_split(snakemake.input.splits, int(w.split))
    dtype = np.dtype(spec.get("dtype", "float64"))
    provenance = {}
    if "similarity" in spec:
        sim = dict(spec["similarity"])
        sim.pop("source", None)
        if ds.S is not None:  # the dataset's own matrices
            S = ds.S
            provenance["similarities"] = json.dumps(ds.similarity_names)
        elif "generator" not in sim:
            raise ValueError(
                f"dataset {w.dataset!r} has no similarity matrices and the bank names no generator"
            )
        else:
            # generated over all examples, scaled with training statistics; the
            # seeded perturbation of a pair is the same in every split
            _, X_all = scale_features(ds.X[split.train], ds.X, snakemake.params.scaling)
            S = generate_similarity(X_all, sim.pop("generator"), **sim)[None]
            provenance["similarities"] = json.dumps([spec["similarity"]])
        specs = expand_bank_spec(spec, ds.X.shape[1], n_similarities=S.shape[0])
        train, test, factors = similarity_bank(specs, S, split.train, split.test, dtype=dtype)
    else:
        singles = None
        if "feature_limit" in spec:  # chosen on the raw training rows, no labels used
            singles = most_frequent_features(ds.X[split.train], spec["feature_limit"])
            provenance["single_features"] = json.dumps(singles)
        X_tr, X_te = scale_features(ds.X[split.train], ds.X[split.test], snakemake.params.scaling)
        specs = expand_bank_spec(spec, ds.X.shape[1], single_features=singles)
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
            **provenance,
        },
    )
    if spec.get("eigendecompose"):
        bank.with_spectra()
    bank.save(snakemake.output[0])
    log.info("bank: %d kernels, train %s, test %s, %s", len(specs), train.shape, test.shape, dtype)


run(snakemake, main)  # noqa: F821

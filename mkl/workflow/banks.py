"""The kernels stage: the kernel bank of one split
(``results/kernels/{experiment}/{dataset}/{split}.h5``).

For a feature dataset the features are scaled with the training rows'
statistics and the bank of the experiment's specification computed (training
block and test-against-training block); for similarity data the dataset's own
matrices, or ones generated from the features, are sliced and, if asked,
eigendecomposed once here so that every algorithm and grid point reuses them.
A spec with a ``representation`` other than dense gives a bank of factors
(Nystroem, random Fourier features, exact linear factors) instead of the
n x n blocks: :func:`mkl.banks.from_features.compute_feature_bank`, which
computes the front ends' banks on raw features as well.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..banks.from_features import compute_feature_bank, expand_on_features
from ..banks.kernel_bank import KernelBank
from ..kernels.dense import similarity_bank
from ..kernels.representation import bank_representation
from ..kernels.similarity import generate_similarity
from ..kernels.specs import bank_dtype, expand_bank_spec
from .preprocessing import scale_features

if TYPE_CHECKING:  # types only: the source hash of this stage leaves their modules out
    from .dataset import Dataset
    from .splits import Split


def split_bank(
    ds: Dataset, split: Split, spec: Mapping, scaling: str, attrs: Mapping | None = None
) -> KernelBank:
    """The bank of one split: ``spec`` is an experiment's ``kernels`` section,
    ``scaling`` its protocol's ``feature_scaling``; ``attrs`` go to the file's
    provenance beside what this function records (scaling, spec, the data's
    checksum, the single features kept, the similarity matrices used)."""
    dtype = bank_dtype(spec)
    provenance = {}
    if "similarity" in spec:
        sim = dict(spec["similarity"])
        sim.pop("source", None)
        if ds.S is not None:  # the dataset's own matrices
            S = ds.S
            provenance["similarities"] = json.dumps(ds.similarity_names)
        elif "generator" not in sim:
            raise ValueError(
                f"dataset {ds.attrs.get('dataset', '?')!r} has no similarity matrices "
                "and the bank names no generator"
            )
        else:
            # generated over all examples, scaled with training statistics; the
            # seeded perturbation of a pair is the same in every split
            _, X_all = scale_features(ds.X[split.train], ds.X, scaling)
            S = generate_similarity(X_all, sim.pop("generator"), **sim)[None]
            provenance["similarities"] = json.dumps([spec["similarity"]])
        specs = expand_bank_spec(spec, ds.X.shape[1], n_similarities=S.shape[0])
        train, test, factors = similarity_bank(specs, S, split.train, split.test, dtype=dtype)
    else:
        # feature_limit or varying_features_only: chosen on the raw training rows
        specs, singles = expand_on_features(spec, ds.X[split.train])
        if singles is not None:
            provenance["single_features"] = json.dumps(singles)
        X_tr, X_te = scale_features(ds.X[split.train], ds.X[split.test], scaling)
        representation = bank_representation(spec)
        train, test, factors = compute_feature_bank(
            specs, X_tr, X_te, representation, dtype, ds.y[split.train], ds.y[split.test]
        )
        if representation["kind"] != "dense":  # factors: their divisors are not recorded
            provenance["representation"] = json.dumps(representation)
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
            **(attrs or {}),
            "feature_scaling": scaling,
            "bank_spec": json.dumps(spec),
            "data_sha256": ds.attrs.get("sha256", ds.attrs.get("source", "")),
            **provenance,
        },
    )
    if spec.get("eigendecompose"):
        bank.with_spectra()
    return bank

"""The workflow's machinery, without running Snakemake: configuration loading
(``config``), the kernel bank of one split (``banks``), the files a run builds
(``targets``), job resource estimates (``resources``), damaged files and
leftovers (``files``) and a rule script's start-up and error policy (``jobs``)."""

import json
import logging
import os
import re
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import h5py
import numpy as np
import pytest
import yaml

from mkl._io import CorruptFile, atomic_path, write_json
from mkl.banks.kernel_bank import KernelBank
from mkl.kernels.representation import bank_representation
from mkl.kernels.specs import KernelSpec
from mkl.workflow import experiment, files, resources, targets
from mkl.workflow.banks import split_bank
from mkl.workflow.config import (
    ConfigError,
    check_targets,
    load_config,
    load_experiment,
    load_experiments,
    load_registry,
)
from mkl.workflow.dataset import Dataset
from mkl.workflow.splits import Split, make_splits, save_splits

from ..conftest import REPO

SCHEMAS = REPO / "workflow" / "schemas"


@pytest.fixture(scope="module")
def registry():
    return load_registry(REPO / "config" / "datasets.yaml", SCHEMAS)


# ================================================================== config
def demo_experiment(name="demo"):
    """A small valid experiment file's content (as YAML would give it)."""
    return {
        "name": name,
        "datasets": ["sonar", "wdbc"],
        "protocol": {"repetitions": 2, "train_fraction": 0.5, "inner_folds": 2, "seed": 0},
        "kernels": {"families": [{"family": "gaussian", "widths": [1, 2]}]},
        "algorithms": {
            "uniform": {"grid": {"C": [1, 10]}},
            "gmkl_v": {"estimator": "gmkl", "sweep": {"v": [0.25, 1.0]}, "grid": {"C": [1]}},
        },
    }


def write_yaml(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_shipped_config_registry_and_experiments_load(registry):
    config = load_config(yaml.safe_load((REPO / "config" / "config.yaml").read_text()), SCHEMAS)
    assert config["experiments"] == ["quick"]
    # schema defaults are filled in
    assert config["experiments_dir"] == "config/experiments"
    assert config["registry"] == "config/datasets.yaml"
    assert config["temporary_banks"] is False
    assert {"sonar", "wdbc", "ionosphere", "gmkl_toy1"} <= set(registry)
    directory = REPO / "config" / "experiments"
    experiments = load_experiments(directory, registry, SCHEMAS)
    assert set(experiments) == {p.stem for p in directory.glob("*.yaml")}
    assert all(exp["name"] == name for name, exp in experiments.items())
    quick = yaml.safe_load((directory / "quick.yaml").read_text())
    assert experiments["quick"]["datasets"] == quick["datasets"]
    assert set(experiments["quick"]["algorithms"]) == set(quick["algorithms"])  # no sweeps
    # sweeps arrive expanded
    assert not any("sweep" in a for e in experiments.values() for a in e["algorithms"].values())
    check_targets(config, experiments, directory)


def test_planning_a_run_imports_no_estimator():
    """What every start of Snakemake does before it schedules a job (the
    config, registry and experiment files loaded and cross-checked against the
    algorithms' parameters, every experiment's fit jobs and grids listed, the
    stages' source hashes) imports neither scikit-learn nor SciPy: they took
    half of each dry run's 6 CPU-s (mkl.algorithms.registry.algorithm_info)."""
    probe = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        import yaml
        from mkl.workflow import hashing, targets
        from mkl.workflow.config import load_config, load_experiments, load_registry
        repo, schemas = Path({str(REPO)!r}), Path({str(SCHEMAS)!r})
        load_config(yaml.safe_load((repo / "config/config.yaml").read_text()), schemas)
        registry = load_registry(repo / "config/datasets.yaml", schemas)
        experiments = load_experiments(repo / "config/experiments", registry, schemas)
        for exp in experiments.values():
            targets.fit_files(exp, exp["datasets"], 2)
            for job in targets.fit_jobs(exp, exp["datasets"]):
                targets.grid_chunks(exp, {{"grid_chunks": 2}}, job[1], job[0])
        for name in ("uniform", "level", "easymkl", "emkl", "smkl"):
            hashing.fit_hash(name)
        hashing.source_hash(hashing.TABLES)
        print(sorted({{m.split(".")[0] for m in sys.modules}} & {{"sklearn", "scipy"}}))
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "[]", f"planning imported {run.stdout.strip()}"


@pytest.mark.parametrize(
    "value, expected",
    [(True, True), ("true", True), ("True", True), (False, False), ("false", False), (None, False)],
)
def test_temporary_banks_is_a_boolean(value, expected):
    config = {"experiments": ["quick"]}
    if value is not None:
        config["temporary_banks"] = value
    assert load_config(config, SCHEMAS)["temporary_banks"] is expected


@pytest.mark.parametrize(
    "config, message",
    [
        ({}, "'experiments' is a required property"),
        ({"experiments": []}, "should be non-empty|is too short"),
        ({"experiments": ["quick"], "bogus": 1}, "'bogus' was unexpected"),
        ({"experiments": ["a-b"]}, "does not match"),
        ({"experiments": ["quick"], "grid_chunks": 0}, "less than the minimum"),
        ({"experiments": ["quick"], "temporary_banks": "yes"}, "not valid under any"),
    ],
)
def test_config_schema_violations(config, message):
    with pytest.raises(ConfigError, match=f"^configuration: (?s:.*)({message})"):
        load_config(config, SCHEMAS)


def test_registry_errors_name_the_file(tmp_path):
    path = tmp_path / "datasets.yaml"
    path.write_text("- sonar\n- wdbc\n")
    with pytest.raises(ConfigError, match=r"dataset registry .* must be a mapping"):
        load_registry(path, SCHEMAS)
    write_yaml(path, {"toy": {"title": "no sources"}})
    with pytest.raises(ConfigError, match=f"^{re.escape(str(path))}: (?s:.*)'sources' is a"):
        load_registry(path, SCHEMAS)
    write_yaml(path, {"toy": {"title": "t", "sources": [{"format": "pmlb", "sha256": "xyz"}]}})
    with pytest.raises(ConfigError, match="does not match"):
        load_registry(path, SCHEMAS)
    write_yaml(path, {"toy": {"title": "t", "sources": [{"format": "generated"}]}})
    assert load_registry(path, SCHEMAS) == {
        "toy": {"title": "t", "sources": [{"format": "generated"}]}
    }


def test_experiment_is_loaded_expanded_and_checked(tmp_path, registry):
    path = write_yaml(tmp_path / "demo.yaml", demo_experiment())
    exp = load_experiment(path, registry, SCHEMAS)
    assert list(exp["algorithms"]) == ["uniform", "gmkl_v_0p25", "gmkl_v_1"]
    assert exp["algorithms"]["gmkl_v_1"]["params"] == {"v": 1.0}
    assert exp["algorithms"]["gmkl_v_1"]["estimator"] == "gmkl"
    # load_experiments: every *.yaml of the folder, by file name; other files ignored
    write_yaml(tmp_path / "other.yaml", demo_experiment("other"))
    (tmp_path / "notes.txt").write_text("not an experiment")
    both = load_experiments(tmp_path, registry, SCHEMAS)
    assert list(both) == ["demo", "other"] and both["demo"] == exp
    assert load_experiments(tmp_path / "empty", registry, SCHEMAS) == {}


def _set(exp, path, value):
    node = exp
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return exp


_DELETE = object()


@pytest.mark.parametrize(
    "path, value, message",
    [
        (("protocol",), _DELETE, "'protocol' is a required property"),
        (("protocol", "train_fraction"), 1.5, "1.5 is greater than or equal to the maximum"),
        (("kernels", "families", 0, "family"), "radial", "'radial' is not one of"),
        (("colour",), "red", "'colour' was unexpected"),
        (("name",), "other", "name 'other' differs from the file name"),
        (("datasets",), ["sonar", "nowhere"], "dataset 'nowhere' is not in the dataset registry"),
        (
            ("figures",),
            {"f": {"dataset": "nowhere", "series": {"s": {"algorithm": "uniform"}}}},
            "figure 'f' uses 'nowhere', not in the dataset registry",
        ),
        (("algorithms", "svm"), {"grid": {"C": [1]}}, "algorithm 'svm' is not in mkl's registry"),
        (
            ("algorithms", "gmkl_v", "estimator"),
            "gmkll",
            "algorithm 'gmkl_v' is not in mkl's registry",
        ),
        (("algorithms", "uniform", "grid"), {"c": [1]}, r"sets \['c'\], not parameters"),
        (("overrides",), {"iris": {}}, "override for 'iris', not one of its datasets"),
        (
            ("kernels", "representation"),
            {"kind": "nystroem"},
            "is not valid under any of the given schemas",
        ),
        (
            ("kernels", "representation"),
            {"kind": "rff", "dimension": 10, "rank": 3},
            "is not valid under any of the given schemas",
        ),
        (
            ("algorithms",),
            {"memo": {"grid": {"C": [1]}}, "uniform": {}},
            _DELETE,  # filled in below: MEMO on a factor bank
        ),
    ],
)
def test_experiment_errors_name_the_file_and_the_problem(tmp_path, registry, path, value, message):
    exp = _set(demo_experiment(), path, value)
    if message is _DELETE:  # a factor bank for an estimator that needs the matrices
        exp["kernels"]["representation"] = {"kind": "nystroem", "rank": 10}
        message = re.escape(
            "algorithm 'memo' (memo) cannot use the nystroem factor bank of 'sonar': "
            "it needs dense kernel matrices"
        )
    file = write_yaml(tmp_path / "demo.yaml", exp)
    with pytest.raises(ConfigError, match=f"^{re.escape(str(file))}: (?s:.*){message}"):
        load_experiment(file, registry, SCHEMAS)


@pytest.mark.parametrize(
    "text", ["", "- a list\n", "name: demo\ndatasets: [sonar,\n"], ids=["empty", "list", "syntax"]
)
def test_unusable_experiment_file_is_a_config_error(tmp_path, registry, text):
    path = tmp_path / "demo.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(str(path))):
        load_experiment(path, registry, SCHEMAS)


def test_an_unusable_experiment_file_fails_only_its_own_targets(tmp_path, registry):
    """Issue 60: one empty or broken file in the experiments folder is left
    out and recorded (its error naming the file) instead of stopping every
    target: its own target is the job that fails with that error, and the
    other experiments load and keep their targets."""
    write_yaml(tmp_path / "demo.yaml", demo_experiment())
    (tmp_path / "empty.yaml").write_text("")
    write_yaml(tmp_path / "typo.yaml", {**demo_experiment("typo"), "algorithm": {}})
    with pytest.raises(ConfigError, match="empty.yaml"):  # without a record: raised
        load_experiments(tmp_path, registry, SCHEMAS)
    unusable = {}
    experiments = load_experiments(tmp_path, registry, SCHEMAS, unusable)
    assert list(experiments) == ["demo"] and sorted(unusable) == ["empty", "typo"]
    assert unusable["empty"] == (
        f"{tmp_path / 'empty.yaml'}: an experiment file must be a mapping, the file holds empty"
    )
    assert unusable["typo"].startswith(f"{tmp_path / 'typo.yaml'}: not valid: ")
    assert "'algorithm' was unexpected" in unusable["typo"] and "$schema" not in unusable["typo"]
    config = {"experiments": ["demo", "empty"]}
    check_targets(config, experiments, tmp_path, unusable)  # empty's target fails, not the run
    with pytest.raises(ConfigError, match="has no file"):
        check_targets({"experiments": ["demo", "nope"]}, experiments, tmp_path, unusable)
    paths = targets.experiment_targets(experiments, config["experiments"], unusable)
    assert paths[-1] == targets.unusable_target("empty") == "results/unusable/empty.txt"
    assert paths[:-1] == targets.experiment_targets(experiments, "demo")


def test_check_targets_names_the_missing_file(tmp_path):
    experiments = {"quick": {}, "demo": {}}
    check_targets({"experiments": ["quick", "demo"]}, experiments, tmp_path)
    missing = re.escape(f"experiment 'nope' has no file {tmp_path / 'nope.yaml'}")
    with pytest.raises(ConfigError, match=missing):
        check_targets({"experiments": ["quick", "nope"]}, experiments, tmp_path)


# ================================================================== banks
def feature_dataset(rng, n=40, d=3, sha="abc123"):
    X = rng.normal(2.0, 3.0, size=(n, d))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 2).astype(int)
    return Dataset(X=X, y=y, classes=["neg", "pos"], attrs={"dataset": "toy", "sha256": sha})


def one_split(y, seed=1):
    return make_splits(y, 2, 0.6, 2, seed=seed)[seed % 2]


GAUSS_SPEC = {
    "families": [
        {"family": "gaussian", "widths": [1.0, 3.0]},
        {"family": "linear", "features": ["all"], "normalise": "none"},
    ],
    "features": ["all", "single"],
    "normalise": "unit_trace",
}


def _gauss(A, B, width):
    sq = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-sq / (2 * width**2))


def test_feature_bank_blocks_labels_and_provenance(rng):
    ds = feature_dataset(rng)
    sp = one_split(ds.y)
    bank = split_bank(ds, sp, GAUSS_SPEC, "standardise", attrs={"experiment": "e", "split": 1})
    n_tr, n_te = len(sp.train), len(sp.test)
    # gaussian x 2 widths on all features, linear on all, gaussian x 2 on each of 3 features
    assert bank.labels() == [
        "gaussian(1)@all",
        "gaussian(3)@all",
        "linear@all",
        *(f"gaussian({w})@x{j}" for j in range(3) for w in (1, 3)),
    ]
    assert bank.train.shape == (9, n_tr, n_tr) and bank.test.shape == (9, n_te, n_tr)
    assert bank.train.dtype == np.float64
    assert np.array_equal(bank.y_train, ds.y[sp.train])
    assert np.array_equal(bank.y_test, ds.y[sp.test])
    assert np.array_equal(bank.train_index, sp.train)
    assert np.array_equal(bank.test_index, sp.test)
    assert bank.eigenvalues is None
    # unit trace on every kernel but the linear one (normalise: none, factor 1)
    traces = np.trace(bank.train, axis1=1, axis2=2)
    assert np.allclose(np.delete(traces, 2), 1.0) and bank.factors[2] == 1.0
    assert bank.attrs["experiment"] == "e" and bank.attrs["split"] == 1
    assert bank.attrs["feature_scaling"] == "standardise"
    assert json.loads(bank.attrs["bank_spec"]) == GAUSS_SPEC
    assert bank.attrs["data_sha256"] == "abc123"
    assert "similarities" not in bank.attrs and "single_features" not in bank.attrs


def test_feature_bank_is_computed_with_training_statistics(rng):
    ds = feature_dataset(rng)
    sp = one_split(ds.y)
    bank = split_bank(ds, sp, GAUSS_SPEC, "standardise")
    Xtr, Xte = ds.X[sp.train], ds.X[sp.test]
    mu, sd = Xtr.mean(0), Xtr.std(0)
    Ztr, Zte = (Xtr - mu) / sd, (Xte - mu) / sd
    K = _gauss(Ztr, Ztr, 3.0)
    assert np.isclose(bank.factors[1], np.trace(K))
    assert np.allclose(bank.train[1], K / np.trace(K))
    assert np.allclose(bank.test[1], _gauss(Zte, Ztr, 3.0) / np.trace(K))
    # single-feature kernel of feature 2, width 1
    K2 = _gauss(Ztr[:, [2]], Ztr[:, [2]], 1.0)
    assert np.allclose(bank.train[7], K2 / np.trace(K2))
    assert np.allclose(bank.test[2], Zte @ Ztr.T)  # linear, unnormalised


def test_normalisation_is_fitted_on_the_training_rows_only(rng):
    ds = feature_dataset(rng)
    sp = one_split(ds.y)
    spec = {
        "families": [
            {"family": "polynomial", "degrees": [2], "normalise": "unit_trace"},
            {"family": "gaussian", "widths": [2.0], "normalise": "unit_variance"},
        ]
    }
    before = split_bank(ds, sp, spec, "minmax")
    Xtr = ds.X[sp.train]
    Z = (Xtr - Xtr.min(0)) / np.ptp(Xtr, axis=0)
    assert np.isclose(before.factors[0], np.trace((Z @ Z.T + 1) ** 2))
    K = _gauss(Z, Z, 2.0)
    assert np.isclose(before.factors[1], np.trace(K) / len(Z) - K.mean())
    X = ds.X.copy()
    X[sp.test] = 10 * X[sp.test] + 5  # the test rows change, nothing else
    after = split_bank(Dataset(X, ds.y, ds.classes, ds.attrs), sp, spec, "minmax")
    assert np.array_equal(after.train, before.train)
    assert np.array_equal(after.factors, before.factors)
    assert not np.allclose(after.test, before.test)
    # the training rows do matter
    X = ds.X.copy()
    X[sp.train[:3]] += 1.0
    moved = split_bank(Dataset(X, ds.y, ds.classes, ds.attrs), sp, spec, "minmax")
    assert np.all(np.abs(moved.factors / before.factors - 1) > 1e-6)


def test_feature_limit_keeps_the_features_most_often_nonzero_in_training_rows(rng):
    n = 30
    X = np.zeros((n, 5))
    sp = Split(train=np.arange(20), test=np.arange(20, 30), folds=np.arange(20) % 2)
    X[:18, 1] = 1.0  # non-zero in 18 training rows
    X[:12, 3] = 2.0  # 12
    X[:5, 0] = 3.0  # 5
    X[20:, 4] = 4.0  # non-zero in every test row, no training row: never chosen
    X[:, 2] = rng.normal(size=n) * (np.arange(n) % 4 == 0)  # 5 training rows, more in test
    y = np.arange(n) % 2
    spec = {
        "families": [{"family": "linear"}],
        "features": ["single"],
        "feature_limit": 2,
        "dtype": "float32",
    }
    bank = split_bank(Dataset(X, y, ["a", "b"], {"source": "generated:x"}), sp, spec, "none")
    assert json.loads(bank.attrs["single_features"]) == [1, 3]
    assert bank.labels() == ["linear@x1", "linear@x3"]
    assert bank.train.dtype == np.float32 and bank.test.dtype == np.float32
    assert bank.train.shape == (2, 20, 20) and bank.test.shape == (2, 10, 20)
    assert np.allclose(bank.train[1], np.outer(X[:20, 3], X[:20, 3]))
    assert bank.attrs["data_sha256"] == "generated:x"  # no sha256: the source


def test_bank_of_the_datasets_own_similarities(rng):
    n = 24
    A = rng.normal(size=(2, n, n))
    S = A @ A.transpose(0, 2, 1)  # so that |S_ij| <= sqrt(S_ii S_jj): no clipping
    y = np.arange(n) % 2
    ds = Dataset(np.empty((n, 0)), y, ["a", "b"], {}, S=S, similarity_names=["p:A", "p:B"])
    sp = make_splits(y, 1, 0.5, 2, seed=3)[0]
    tr, te = sp.train, sp.test
    bank = split_bank(ds, sp, {"similarity": {"source": "dataset"}}, "none")
    assert bank.specs == [KernelSpec("similarity", 0.0), KernelSpec("similarity", 1.0)]
    assert np.array_equal(bank.train, S[:, tr][:, :, tr])
    assert np.array_equal(bank.test, S[:, te][:, :, tr])
    assert json.loads(bank.attrs["similarities"]) == ["p:A", "p:B"]
    cos = split_bank(
        ds, sp, {"similarity": {"source": "dataset"}, "normalise": "unit_diagonal"}, "none"
    )
    assert np.allclose(np.diagonal(cos.train, axis1=1, axis2=2), 1.0)
    d = np.diag(S[1])
    assert np.allclose(cos.test[1], S[1][np.ix_(te, tr)] / np.sqrt(np.outer(d[te], d[tr])))


def test_generated_similarity_with_spectra(rng):
    ds = feature_dataset(rng, n=30)
    a, b = make_splits(ds.y, 2, 0.6, 2, seed=4)
    spec = {
        "similarity": {"generator": "perturbed_gaussian", "width": 2.0, "noise": 0.2, "seed": 5},
        "eigendecompose": True,
    }
    bank = split_bank(ds, a, spec, "none")
    n = len(a.train)
    assert bank.train.shape == (1, n, n) and bank.test.shape == (1, len(a.test), n)
    assert json.loads(bank.attrs["similarities"]) == [spec["similarity"]]
    # spectra stored: ascending eigenvalues and eigenvectors of the training block
    assert bank.eigenvalues.shape == (1, n) and bank.eigenvectors.shape == (1, n, n)
    w, V = bank.eigenvalues[0], bank.eigenvectors[0]
    assert np.all(np.diff(w) >= 0) and np.allclose(w, np.linalg.eigvalsh(bank.train[0]))
    assert np.allclose(V @ np.diag(w) @ V.T, bank.train[0])
    assert w[0] < -1e-3  # the perturbation makes it indefinite
    # the perturbation of a pair is the same in every split (with no feature scaling)
    other = split_bank(ds, b, spec, "none")
    assert other.eigenvalues is not None
    pos_a = {int(i): k for k, i in enumerate(a.train)}
    pos_b = {int(i): k for k, i in enumerate(b.train)}
    common = sorted(set(pos_a) & set(pos_b))
    assert len(common) > 5
    ia, ib = [pos_a[i] for i in common], [pos_b[i] for i in common]
    assert np.allclose(bank.train[0][np.ix_(ia, ia)], other.train[0][np.ix_(ib, ib)])
    # no eigendecomposition unless asked
    assert split_bank(ds, a, {"similarity": spec["similarity"]}, "none").eigenvalues is None


def test_similarity_bank_without_matrices_or_generator_is_refused(rng):
    ds = feature_dataset(rng)
    with pytest.raises(ValueError, match="'toy' has no similarity matrices"):
        split_bank(ds, one_split(ds.y), {"similarity": {"source": "dataset"}}, "none")


def test_split_bank_round_trips_through_its_file(tmp_path, rng):
    ds = feature_dataset(rng)
    bank = split_bank(ds, one_split(ds.y), GAUSS_SPEC, "minmax", attrs={"dataset": "toy"})
    bank.save(tmp_path / "0.h5")
    back = KernelBank.load(tmp_path / "0.h5")
    assert np.array_equal(back.train, bank.train) and np.array_equal(back.test, bank.test)
    assert back.specs == bank.specs and np.array_equal(back.factors, bank.factors)
    assert back.attrs["feature_scaling"] == "minmax" and back.attrs["dataset"] == "toy"
    assert files.unreadable_reason(tmp_path / "0.h5") is None


@pytest.mark.parametrize(
    "representation",
    [{"kind": "nystroem", "rank": 12, "seed": 4}, {"kind": "rff", "dimension": 30}],
)
def test_factor_bank_of_a_split(tmp_path, rng, representation):
    """A representation gives the factors of the spec's kernels, built with the
    training rows' scaling, seeded, labelled, and stored in the bank's file."""
    ds = feature_dataset(rng)
    sp = one_split(ds.y)
    spec = {
        "families": [{"family": "gaussian", "widths": [1.0, 3.0]}],
        "features": ["all", "single"],
        "normalise": "unit_trace",
        "dtype": "float32",
        "representation": representation,
    }
    bank = split_bank(ds, sp, spec, "standardise", attrs={"split": 1})
    dense = split_bank(
        ds, sp, {k: v for k, v in spec.items() if k != "representation"}, "standardise"
    )
    assert bank.factored and bank.train.dtype == np.float32
    assert bank.labels() == dense.labels() and bank.train.names == dense.labels()
    assert (bank.n_train, bank.n_test) == (len(sp.train), len(sp.test))
    assert np.array_equal(bank.y_train, ds.y[sp.train]) and np.array_equal(
        bank.y_test, ds.y[sp.test]
    )
    # unit trace acts on the factors; they approximate the dense kernels
    K = bank.train.dense()
    assert np.allclose(np.trace(K, axis1=1, axis2=2), 1.0, atol=1e-5)
    if representation["kind"] == "nystroem":  # exact on the landmarks' span: close
        assert np.abs(K - dense.train).max() < 0.05
    assert json.loads(bank.attrs["representation"])["kind"] == representation["kind"]
    again = split_bank(ds, sp, spec, "standardise")
    assert np.array_equal(again.train.train, bank.train.train)  # seeded
    bank.save(tmp_path / "1.h5")
    back = KernelBank.load(tmp_path / "1.h5")
    assert np.array_equal(back.train.test, bank.train.test) and back.specs == bank.specs
    assert files.unreadable_reason(tmp_path / "1.h5") is None


def test_exact_factor_bank_of_a_split_has_every_feature_and_no_limit(rng):
    ds = feature_dataset(rng, d=5)
    sp = one_split(ds.y)
    spec = {
        "families": [{"family": "linear"}],
        "features": ["single"],
        "normalise": "unit_trace",
        "representation": "exact",
    }
    bank = split_bank(ds, sp, spec, "standardise")
    assert bank.train.ranks.tolist() == [1] * 5
    dense = split_bank(
        ds, sp, {k: v for k, v in spec.items() if k != "representation"}, "standardise"
    )
    assert np.allclose(bank.train.dense(), dense.train)
    assert np.allclose(bank.train.dense("test"), dense.test)
    with pytest.raises(ValueError, match="exact factors exist for linear kernels only"):
        split_bank(ds, sp, {**GAUSS_SPEC, "representation": "exact"}, "standardise")


@pytest.mark.parametrize(
    "representation, expected",
    [
        (None, {"kind": "dense"}),
        ("exact", {"kind": "exact"}),
        ({"kind": "nystroem", "rank": 50}, {"kind": "nystroem", "rank": 50, "seed": 0}),
        ({"kind": "rff", "dimension": 64, "seed": 3}, {"kind": "rff", "dimension": 64, "seed": 3}),
    ],
)
def test_bank_representation(representation, expected):
    spec = (
        dict(GAUSS_SPEC)
        if representation is None
        else {**GAUSS_SPEC, "representation": representation}
    )
    assert bank_representation(spec) == expected


@pytest.mark.parametrize(
    "representation, message",
    [
        ("lowrank", "unknown kernel representation 'lowrank'"),
        ({"kind": "nystroem"}, "nystroem needs a positive integer rank, got None"),
        ({"kind": "rff", "dimension": 0}, "rff needs a positive integer dimension, got 0"),
    ],
)
def test_bad_representations_are_named(representation, message):
    with pytest.raises(ValueError, match=message):
        bank_representation({**GAUSS_SPEC, "representation": representation})
    with pytest.raises(ValueError, match="similarity bank is stored dense"):
        bank_representation({"similarity": {"source": "dataset"}, "representation": "exact"})


# ================================================================== targets
def targets_experiment():
    exp = {
        "name": "demo",
        "datasets": ["a", "b"],
        "protocol": {"repetitions": 3, "train_fraction": 0.5, "inner_folds": 2, "seed": 0},
        "kernels": {"families": [{"family": "linear"}]},
        "algorithms": {
            "uniform": {"grid": {"C": [1, 10, 100]}},
            "level": {"params": {"C": 10}},
            "gmkl": {"datasets": ["a"], "grid": {"C": [1, 10], "v": [0.2, 0.8]}},
            "linear": {"grid": {"C": [1]}},
        },
        "overrides": {
            "b": {
                "protocol": {"repetitions": 2},
                "algorithms": {"uniform": {"grid": {"C": [1, 10, 100, 1000, 10000]}}},
            }
        },
        "execution": {"grid_chunks": 2, "splits_per_job": 2},
        "figures": {
            "weights_a": {"dataset": "a", "series": {"s": {"algorithm": "uniform"}}},
            "time_n": {"kind": "timing", "dataset": "a", "vary": "n"},
            "by_size": {"kind": "datasets", "datasets": {"a": 1}, "algorithms": ["uniform"]},
        },
    }
    experiment.check(exp)
    return exp


def test_splits_per_job_config_then_experiment_then_one():
    exp = targets_experiment()
    assert targets.splits_per_job(exp, {}) == 2
    assert targets.splits_per_job(exp, {"splits_per_job": 5}) == 5
    del exp["execution"]
    assert targets.splits_per_job(exp, {}) == 1


def test_fit_files_one_split_per_job():
    exp = targets_experiment()
    files_ = targets.fit_files(exp, ["a", "b"], 1)
    expected = [
        *(f"results/fits/demo/a/{alg}/{s}.json" for alg in exp["algorithms"] for s in range(3)),
        *(
            f"results/fits/demo/b/{alg}/{s}.json"
            for alg in ("uniform", "level", "linear")
            for s in range(2)
        ),
    ]
    assert files_ == expected and len(files_) == 12 + 6
    # an unavailable dataset drops out
    assert targets.fit_files(exp, ["b"], 1) == expected[12:]
    assert targets.fit_files(exp, [], 1) == []


def test_fit_files_in_batches_cover_every_split_once():
    exp = targets_experiment()
    batched = targets.fit_files(exp, ["a", "b"], 2)
    assert batched[:2] == [
        "results/fits/demo/a/uniform/splits_0-1.json",
        "results/fits/demo/a/uniform/splits_2-2.json",
    ]
    assert "results/fits/demo/b/uniform/splits_0-1.json" in batched
    assert not any("/b/gmkl/" in p for p in batched)
    assert len(batched) == 4 * 2 + 3 * 1
    assert targets.fit_files(exp, ["a"], 10) == [
        f"results/fits/demo/a/{alg}/splits_0-2.json" for alg in exp["algorithms"]
    ]


def test_job_splits_and_bank_files():
    one = types.SimpleNamespace(experiment="demo", dataset="a", algorithm="uniform", split="2")
    batch = types.SimpleNamespace(
        experiment="demo", dataset="b", algorithm="uniform", first="1", last="3"
    )
    assert targets.job_splits(one) == [2]
    assert targets.job_splits(batch) == [1, 2, 3]
    assert targets.bank_files(one) == ["results/kernels/demo/a/2.h5"]
    assert targets.bank_files(batch) == [f"results/kernels/demo/b/{s}.h5" for s in (1, 2, 3)]


def test_grid_chunks_at_most_one_per_grid_point():
    exp = targets_experiment()
    assert targets.grid_chunks(exp, {}, "uniform", "a") == 2  # the experiment's execution
    assert targets.grid_chunks(exp, {"grid_chunks": 8}, "uniform", "a") == 3  # 3 grid points
    assert targets.grid_chunks(exp, {"grid_chunks": 8}, "uniform", "b") == 5  # b's own grid
    assert targets.grid_chunks(exp, {"grid_chunks": 8}, "gmkl", "a") == 4  # 2 x 2 points
    assert targets.grid_chunks(exp, {"grid_chunks": 1}, "gmkl", "a") == 1  # config wins
    assert targets.grid_chunks(exp, {"grid_chunks": 8}, "level", "a") == 1  # no grid
    # an entry that sets no C is cross-validated over the default C grid
    del exp["algorithms"]["level"]["params"]
    assert targets.grid_chunks(exp, {"grid_chunks": 8}, "level", "a") == 4
    assert targets.grid_chunks(exp, {"grid_chunks": 8}, "linear", "a") == 1  # one point
    del exp["execution"]
    assert targets.grid_chunks(exp, {}, "uniform", "a") == 1


def test_cv_chunk_files_of_the_fit_jobs_split_or_batch():
    w = types.SimpleNamespace(experiment="e", dataset="d", algorithm="uniform", split="4")
    assert targets.cv_chunk_files(w, {"uniform": 1}) == []
    assert targets.cv_chunk_files(w, {"uniform": 3}) == [
        f"results/cv/e/d/uniform/4/{i}.json" for i in range(3)
    ]
    # a batch's chunk files each hold the CV of all its splits: a job per chunk
    batch = types.SimpleNamespace(
        experiment="e", dataset="d", algorithm="gmkl", first="0", last="1"
    )
    assert targets.cv_chunk_files(batch, {"gmkl": 2}) == [
        "results/cv/e/d/gmkl/splits_0-1/0.json",
        "results/cv/e/d/gmkl/splits_0-1/1.json",
    ]
    # a job of every algorithm: algorithm by algorithm (none for one without chunks)
    dataset_job = types.SimpleNamespace(experiment="e", dataset="d", first="0", last="1")
    assert targets.cv_chunk_files(dataset_job, {"level": 1, "gmkl": 2, "uniform": 2}) == [
        *(f"results/cv/e/d/gmkl/splits_0-1/{i}.json" for i in (0, 1)),
        *(f"results/cv/e/d/uniform/splits_0-1/{i}.json" for i in (0, 1)),
    ]


def test_batch_algorithms_config_then_experiment_then_off():
    exp = targets_experiment()
    assert not targets.batch_algorithms(exp, {})
    exp["execution"]["batch_algorithms"] = True
    assert targets.batch_algorithms(exp, {})
    assert not targets.batch_algorithms(exp, {"batch_algorithms": "false"})  # --config's string
    del exp["execution"]
    assert targets.batch_algorithms(exp, {"batch_algorithms": "true"})


def test_fit_files_of_every_algorithm_per_dataset():
    """With batch_algorithms: one file per (dataset, split batch), its job
    fitting the algorithms that run on the dataset (gmkl only on a)."""
    exp = targets_experiment()
    assert targets.fit_files(exp, ["a", "b"], 2, all_algorithms=True) == [
        "results/fits/demo/a/splits_0-1.json",
        "results/fits/demo/a/splits_2-2.json",
        "results/fits/demo/b/splits_0-1.json",  # b: 2 repetitions
    ]
    assert targets.fit_files(exp, ["b"], 1, all_algorithms=True) == [
        "results/fits/demo/b/splits_0-0.json",
        "results/fits/demo/b/splits_1-1.json",
    ]
    assert targets.dataset_algorithms(exp, "a") == list(exp["algorithms"])
    assert targets.dataset_algorithms(exp, "b") == ["uniform", "level", "linear"]
    job = types.SimpleNamespace(experiment="demo", dataset="b", first="0", last="1")
    assert targets.job_algorithms(job, exp) == ["uniform", "level", "linear"]
    one = types.SimpleNamespace(experiment="demo", dataset="b", algorithm="level", split="0")
    assert targets.job_algorithms(one, exp) == ["level"]


def test_figures_of_kind_is_a_wildcard_constraint():
    exp = targets_experiment()
    other = {"figures": {"v_sweep": {"kind": "sweep"}, "weights_b": {"kind": "weights"}}}
    weights = targets.figures_of_kind([exp, other], "weights")
    assert weights == "weights_a|weights_b"  # the default kind is weights
    assert targets.figures_of_kind([exp, other], "datasets", "sweep") == "by_size|v_sweep"
    assert targets.figures_of_kind([exp], "timing") == "time_n"
    nothing = targets.figures_of_kind([exp, {"name": "no_figures"}], "curves")
    for name in ("", "weights_a", "time_n", "x"):
        assert not re.fullmatch(nothing, name)
    assert re.fullmatch(weights, "weights_b") and not re.fullmatch(weights, "time_n")


def test_timing_figure_points_include_the_compared_figure():
    exp = {
        "name": "e",
        "figures": {
            "dense": {"kind": "timing", "vary": "n", "values": [100, 200]},
            "factored": {
                "kind": "timing",
                "vary": "n",
                "values": [1000],
                "compare_with": "dense",
            },
            "rank": {"kind": "timing", "vary": "rank", "values": [50, "dense"]},
        },
    }
    assert targets.timing_points(exp, "dense") == [
        "results/timing/e/dense/100.json",
        "results/timing/e/dense/200.json",
    ]
    assert targets.timing_points(exp, "factored") == [
        "results/timing/e/factored/1000.json",
        "results/timing/e/dense/100.json",
        "results/timing/e/dense/200.json",
    ]
    assert targets.timing_points(exp, "rank")[-1] == "results/timing/e/rank/dense.json"


def test_experiment_targets_are_tables_and_figures():
    experiments = {"demo": targets_experiment(), "bare": {"name": "bare"}}
    demo = [
        "results/tables/demo/results.md",
        "results/tables/demo/paper.md",
        "results/figures/demo/results.png",
        "results/figures/demo/weights_a.png",
        "results/figures/demo/time_n.png",
        "results/figures/demo/by_size.png",
    ]
    bare = [
        "results/tables/bare/results.md",
        "results/tables/bare/paper.md",
        "results/figures/bare/results.png",
    ]
    assert targets.experiment_targets(experiments, "demo") == demo
    assert targets.experiment_targets(experiments, ["bare", "demo"]) == bare + demo
    assert targets.experiment_targets(experiments, []) == []


def test_built_targets_are_the_experiment_targets_on_disk():
    experiments = {"demo": targets_experiment(), "bare": {"name": "bare"}}
    on_disk = {"results/tables/bare/results.md", "results/figures/demo/time_n.png"}
    assert targets.built_targets(experiments, on_disk.__contains__) == [
        "results/figures/demo/time_n.png",
        "results/tables/bare/results.md",
    ]


def test_a_table_slice_reads_its_dataset_s_fit_records_and_refuses_what_is_not_run():
    exp = targets_experiment()  # two splits per job: b has 2 repetitions, a 3
    assert targets.slice_fit_files(exp, "b", None, bool, 2) == [
        f"results/fits/demo/b/{alg}/splits_0-1.json" for alg in ("uniform", "level", "linear")
    ]
    assert targets.slice_fit_files(exp, "a", "gmkl", bool, 2) == [
        "results/fits/demo/a/gmkl/splits_0-1.json",
        "results/fits/demo/a/gmkl/splits_2-2.json",
    ]
    # one job fits every algorithm of the dataset: the slice reads its files
    assert targets.slice_fit_files(exp, "b", "level", bool, 2, all_algorithms=True) == [
        "results/fits/demo/b/splits_0-1.json"
    ]
    assert (
        targets.slice_fit_files(exp, "a", "level", lambda ds: ds != "a", 1) == []
    )  # not available
    for dataset, algorithm, message in [
        ("c", None, "has no dataset 'c'"),
        ("a", "smkl", "has no algorithm 'smkl'"),
        ("b", "gmkl", "does not run gmkl on b"),
    ]:
        with pytest.raises(ValueError, match=message):
            targets.slice_fit_files(exp, dataset, algorithm, pytest.fail, 1)  # asked first


def test_a_table_slice_of_an_unavailable_dataset_says_so(tmp_path, registry):
    """No fit record (the dataset could not be obtained): the slice is the
    results table's columns with no row, and its cells read not available."""
    from mkl.workflow.tables import collect_fits, summarise, table_slice

    exp = load_experiments(REPO / "config" / "experiments", registry, SCHEMAS)["lauriola2018_memo"]
    manifest = tmp_path / "manifest.json"
    write_json(manifest, {"dataset": "duke", "status": "unavailable", "reason": "no copy"})
    out = {"csv": tmp_path / "duke.csv", "md": tmp_path / "duke.md"}
    paper = REPO / "resources" / "paper_results.csv"
    summary = table_slice(exp, [], [manifest], paper, "duke", None, out)
    assert summary.empty
    fit = {
        "dataset": "duke", "algorithm": "memo", "split": 0, "code_version": "abc1234",
        "error": "", "n_kernels": 21, "seconds": 1.0, "converged": True,
        "n_selected": 3.0, "spectral_ratio": 2.0, "grid_edges": "", "accuracy": 0.8,
    }  # fmt: skip
    one = collect_fits([])
    one.loc[0] = {c: fit.get(c) for c in one.columns}
    assert list(summary.columns) == list(summarise(one).columns)
    rows = [line for line in out["md"].read_text().splitlines() if line.startswith("| duke")]
    assert rows and all(line.count("not available") >= 1 for line in rows)


def test_a_job_loads_the_experiment_its_params_name_and_refuses_an_edited_file(tmp_path, registry):
    """The report-facing rules pass an experiment's name and digest, not the
    experiment: the job loads it as the Snakefile did, and refuses a file that
    changed after the run was planned."""
    from mkl.workflow.config import experiment_digest, load_job_experiments

    directory = tmp_path / "experiments"
    shutil.copytree(REPO / "config" / "experiments", directory)
    config = {"experiments_dir": str(directory), "registry": str(REPO / "config/datasets.yaml")}
    planned = load_experiments(directory, registry, SCHEMAS)
    digests = {name: experiment_digest(planned[name]) for name in ("quick", "xu2010_smkl")}
    assert load_job_experiments(config, digests, SCHEMAS) == {
        name: planned[name] for name in digests
    }
    edited = directory / "quick.yaml"
    edited.write_text(edited.read_text().replace("repetitions: 3", "repetitions: 4"))
    with pytest.raises(ConfigError, match="quick.yaml changed after this run was planned"):
        load_job_experiments(config, digests, SCHEMAS)


# ================================================================== resources
@pytest.fixture
def stage_files(tmp_path, rng):
    """A data file and a splits file as the normalise and split stages write them."""
    n, d = 160, 3
    X = rng.normal(size=(n, d))
    y = (X[:, 0] > 0).astype(int)
    Dataset(X, y, ["a", "b"], {"dataset": "toy"}).save(tmp_path / "data.h5")
    splits = make_splits(y, 2, 0.75, 2, seed=0)
    save_splits(tmp_path / "splits.h5", splits, {"experiment": "e"})
    return tmp_path / "data.h5", tmp_path / "splits.h5", splits


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_bank_mb_predicts_the_size_of_the_bank_file(tmp_path, stage_files, dtype):
    data, splits_path, splits = stage_files
    spec = {**GAUSS_SPEC, "dtype": dtype}
    estimate = resources.bank_mb(spec, data, splits_path, 1)
    bank = split_bank(Dataset.load(data), splits[1], spec, "standardise")
    bank.save(tmp_path / "bank.h5")
    actual = os.path.getsize(tmp_path / "bank.h5") / 2**20
    n_train, n = len(splits[1].train), 160
    itemsize = 8 if dtype == "float64" else 4
    assert estimate == pytest.approx(9 * n_train * n * itemsize / 2**20)
    assert estimate == pytest.approx(actual, rel=0.05)


def test_bank_mb_of_feature_limit_similarities_and_spectra(tmp_path, stage_files, rng):
    data, splits_path, splits = stage_files
    n_train, n = len(splits[0].train), 160
    one = n_train * n * 8 / 2**20
    limited = {"families": [{"family": "linear"}], "features": ["single"], "feature_limit": 2}
    assert resources.bank_mb(limited, data, splits_path, 0) == pytest.approx(2 * one)
    big_limit = {**limited, "feature_limit": 50}  # more than the 3 features
    assert resources.bank_mb(big_limit, data, splits_path, 0) == pytest.approx(3 * one)
    generated = {"similarity": {"generator": "sigmoid"}}
    assert resources.bank_mb(generated, data, splits_path, 0) == pytest.approx(one)
    eig = {**generated, "eigendecompose": True}
    assert (
        resources.bank_mb(eig, data, splits_path, 0)
        > resources.bank_mb(generated, data, splits_path, 0) + n_train * n_train * 8 / 2**20
    )
    S = rng.normal(size=(3, n, n))
    Dataset(np.empty((n, 0)), np.arange(n) % 2, ["a", "b"], {}, S=S).save(tmp_path / "sim.h5")
    own = {"similarity": {"source": "dataset"}}
    assert resources.bank_mb(own, tmp_path / "sim.h5", splits_path, 0) == pytest.approx(3 * one)


@pytest.mark.parametrize(
    "representation", [{"kind": "nystroem", "rank": 40}, {"kind": "rff", "dimension": 25}, "exact"]
)
def test_bank_mb_of_factor_banks_follows_the_factor_sizes(tmp_path, stage_files, representation):
    data, splits_path, splits = stage_files
    spec = {
        "families": [{"family": "linear"}],
        "features": ["all", "single"],
        "dtype": "float32",
        "representation": representation,
    }
    if representation != "exact":
        spec["families"] = [{"family": "gaussian", "widths": [1.0, 2.0]}]
    estimate = resources.bank_mb(spec, data, splits_path, 1) * 2**20
    bank = split_bank(Dataset.load(data), splits[1], spec, "standardise")
    bank.save(tmp_path / "bank.h5")
    with h5py.File(tmp_path / "bank.h5", "r") as f:
        stored = sum(f[f"{b}/data"].id.get_storage_size() for b in ("train", "test"))
    planned = {"nystroem": 40 * 8, "rff": 25 * 8, "exact": 3 + 3}  # 2 widths x 4 scopes
    kind = representation if isinstance(representation, str) else representation["kind"]
    R = int(bank.train.offsets[-1])  # Nystroem may keep fewer columns than the rank
    assert R <= planned[kind] and stored == 160 * R * 4
    # the float32 factors plus the float64 pieces they are computed from
    assert estimate == pytest.approx(160 * planned[kind] * (4 + 8))


def test_estimates_without_their_inputs_are_the_planning_defaults(tmp_path, stage_files):
    """A dry run on a partial results/ evaluates resources before the inputs exist."""
    data, splits_path, _ = stage_files
    missing = tmp_path / "missing.h5"
    assert resources.bank_mb(GAUSS_SPEC, missing, splits_path, 0) is None
    assert resources.bank_mb(GAUSS_SPEC, data, missing, 0) is None
    for attempt in (1, 2, 3):
        expected = resources.BASE_MEM_MB * attempt
        assert resources.kernels_mem_mb(GAUSS_SPEC, missing, missing, 0, attempt) == expected
        assert resources.kernels_mem_mb(GAUSS_SPEC, data, missing, 0, attempt) == expected
        assert resources.kernels_mem_mb(GAUSS_SPEC, missing, splits_path, 0, attempt) == expected
        assert resources.fit_mem_mb([missing, tmp_path / "other.h5"], attempt) == expected
        assert resources.fit_mem_mb([], attempt) == expected
    assert resources.fit_runtime(1, 0, 1) == resources.FIT_MINUTES


def test_memory_from_real_inputs_grows_with_the_attempt(tmp_path, stage_files):
    data, splits_path, splits = stage_files
    size = resources.bank_mb(GAUSS_SPEC, data, splits_path, 0)
    mems = [resources.kernels_mem_mb(GAUSS_SPEC, data, splits_path, 0, a) for a in (1, 2, 3)]
    assert mems == [int(600 + 2.5 * size * a) for a in (1, 2, 3)]
    assert mems[0] > resources.BASE_MEM_MB and mems[0] < mems[1] < mems[2]
    # a fit job: the largest of its banks (missing ones ignored)
    small, large = tmp_path / "small.h5", tmp_path / "large.h5"
    small.write_bytes(b"\0" * 2**20)
    large.write_bytes(b"\0" * 3 * 2**20)
    fits = [resources.fit_mem_mb([small, large, tmp_path / "gone.h5"], a) for a in (1, 2, 3)]
    assert fits == [int(600 + 2.5 * 3 * a) for a in (1, 2, 3)]
    assert resources.fit_mem_mb([small], 1) == int(600 + 2.5)


def test_runtime_and_timing_memory_estimates():
    assert resources.fit_runtime(1, 0, 1) == 20
    assert resources.fit_runtime(3, 50, 1) == 70  # 3 x 20 min + 50 MB / 5
    assert resources.fit_runtime(3, 50, 2) == 140
    assert resources.fit_runtime(3, 50, 3) == 210
    fig = {"vary": "n", "kernels": 10, "n": 100}
    mb = 3 * 10 * 1000 * 1000 * 8 / 2**20
    points = 3 * 1000 * resources.TIMING_FEATURES * 8 / 2**20
    assert resources.timing_mem_mb(fig, 1000, 1) == int(600 + mb + points)
    assert resources.timing_mem_mb(fig, 1000, 2) == int(600 + 2 * (mb + points))
    by_kernels = {"vary": "kernels", "kernels": 10, "n": 1000}
    assert resources.timing_mem_mb(by_kernels, 10, 1) == int(600 + mb + points)
    assert resources.timing_mem_mb(by_kernels, 20, 1) == int(600 + 2 * mb + points)
    # test points: their kernel block and their features
    tested = {**fig, "test_points": 500}
    test_mb = (10 * 500 * 1000 * 8 + 3 * 500 * resources.TIMING_FEATURES * 8) / 2**20
    assert resources.timing_mem_mb(tested, 1000, 1) == int(600 + mb + points + test_mb)
    # factors: (n + n_test) x M x rank float32, three times; the rank from the point
    by_rank = {**tested, "vary": "rank", "n": 1000, "representation": "nystroem"}
    factors = 3 * 1500 * 10 * 200 * 4 / 2**20
    points = 3 * 1500 * resources.TIMING_FEATURES * 8 / 2**20
    assert resources.timing_mem_mb(by_rank, 200, 1) == int(600 + factors + points)
    dense = (3 * 10 * 1000 * 1000 + 10 * 500 * 1000) * 8 / 2**20
    assert resources.timing_mem_mb(by_rank, "dense", 1) == int(600 + dense + points)


@pytest.mark.parametrize("damaged", ["data", "splits"])
def test_damaged_inputs_get_the_planning_estimate(tmp_path, stage_files, damaged):
    data, splits_path, _ = stage_files
    path = data if damaged == "data" else splits_path
    content = path.read_bytes()
    path.write_bytes(content[: len(content) // 2])
    assert files.unreadable_reason(path) is not None
    assert resources.kernels_mem_mb(GAUSS_SPEC, data, splits_path, 0, 2) == 2 * 600


# ================================================================== files
def test_unreadable_reason_of_hdf5_files(tmp_path, rng):
    ds = feature_dataset(rng)
    good = tmp_path / "good.h5"
    ds.save(good)
    assert files.unreadable_reason(good) is None
    truncated = tmp_path / "truncated.h5"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    assert files.unreadable_reason(truncated).startswith("OSError: ")
    assert "truncated" in files.unreadable_reason(truncated)
    garbled = tmp_path / "garbled.h5"
    garbled.write_bytes(rng.bytes(4096))
    assert files.unreadable_reason(garbled).startswith("OSError: ")
    bare = tmp_path / "bare.h5"
    with h5py.File(bare, "w") as f:
        f.create_dataset("X", data=np.zeros(3))
    assert files.unreadable_reason(bare) == "an HDF5 file without attributes"


def test_unreadable_reason_of_json_files(tmp_path, rng):
    good = tmp_path / "0.json"
    write_json(good, {"test": {"accuracy": 0.9}, "weights": [0.5, 0.5]})
    assert files.unreadable_reason(good) is None
    truncated = tmp_path / "1.json"
    truncated.write_text(good.read_text()[:20])
    assert files.unreadable_reason(truncated).startswith("JSONDecodeError: ")
    empty = tmp_path / "2.json"
    empty.write_text("")
    assert files.unreadable_reason(empty).startswith("JSONDecodeError: ")
    garbled = tmp_path / "3.json"
    garbled.write_bytes(b"\xff\xfe" + rng.bytes(100))
    assert files.unreadable_reason(garbled) is not None
    other = tmp_path / "notes.md"
    other.write_bytes(b"\xff not checked")
    assert files.unreadable_reason(other) is None


def test_quarantine_moves_a_file_aside_keeping_its_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "results" / "fits" / "e" / "d" / "a" / "0.json"
    path.parent.mkdir(parents=True)
    path.write_text("{broken")
    dest = files.quarantine("results/fits/e/d/a/0.json")  # as the workflow calls it
    assert not path.exists()
    assert dest.parent == Path("results", "quarantine", "fits", "e", "d", "a")
    assert dest.name.startswith("0.json.") and dest.name[7:].replace("T", "").isdigit()
    assert dest.read_text() == "{broken"
    # a file outside results/ goes to the quarantine's top
    outside = tmp_path / "elsewhere" / "x.h5"
    outside.parent.mkdir()
    outside.write_bytes(b"data")
    other = files.quarantine(outside, tmp_path / "results")
    assert other.parent == tmp_path / "results" / "quarantine" and other.read_bytes() == b"data"
    assert not outside.exists()


def test_stale_temporaries_are_the_leftovers_of_atomic_writes(tmp_path):
    results = tmp_path / "results"
    assert files.stale_temporaries(results) == []  # no results/ yet
    fits = results / "fits" / "e" / "d" / "a"
    fits.mkdir(parents=True)
    (fits / "0.json").write_text("{}")
    (fits / "notes.tmp").write_text("not hidden")
    (fits / ".hidden").write_text("not a temporary")
    with atomic_path(fits / "1.json") as tmp:  # a job killed while writing
        tmp.write_text("{")
        assert files.stale_temporaries(results) == [tmp]
    assert files.stale_temporaries(results) == []  # renamed into place
    bank = results / "kernels" / "e" / "d" / ".0.h5.k2j3h4.tmp"
    bank.parent.mkdir(parents=True)
    bank.write_bytes(b"half a bank")
    left = fits / ".2.json.abcd.tmp"
    left.write_text("{")
    assert files.stale_temporaries(results) == sorted([left, bank])


# ================================================================== jobs
@pytest.fixture
def job(tmp_path, monkeypatch):
    """A fake ``snakemake`` object of a rule script; the root logger restored afterwards."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").mkdir()
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield types.SimpleNamespace(
        log=[str(tmp_path / "logs" / "fit.log")],
        rule="fit",
        wildcards={"experiment": "e", "dataset": "d", "split": "0"},
        threads=1,
    )
    for h in root.handlers[:]:
        if h not in handlers:
            root.removeHandler(h)
            h.close()
    for h in handlers:
        if h not in root.handlers:
            root.addHandler(h)
    root.setLevel(level)


def _log_text(job):
    for h in logging.getLogger().handlers:
        h.flush()
    with open(job.log[0]) as fh:
        return fh.read()


def test_job_logs_to_its_rules_log_file(job, tmp_path):
    from threadpoolctl import threadpool_info, threadpool_limits

    from mkl.workflow.jobs import run

    seen = {}

    def main(snakemake, log):
        seen["snakemake"], seen["logger"] = snakemake, log.name
        seen["threads"] = {p["num_threads"] for p in threadpool_info()}
        log.info("working on %s", snakemake.wildcards["dataset"])

    with threadpool_limits(limits=2):  # more than the job's 1 (the suite runs on 1)
        run(job, main)
    assert seen["snakemake"] is job and seen["logger"] == "fit"
    assert seen["threads"] <= {1}  # BLAS limited to the job's threads
    lines = _log_text(job).splitlines()
    assert [line.split(" ", 2)[2] for line in lines] == [
        "INFO start",
        "INFO working on d",
        "INFO done",
    ]


@pytest.mark.parametrize("kind", ["value", "unavailable"])
def test_expected_failure_is_one_error_line_and_fails_the_job(job, kind):
    from mkl.workflow.fetch import DatasetUnavailable
    from mkl.workflow.jobs import run

    def main(snakemake, log):
        if kind == "value":
            raise ValueError("C must be positive, got -1")
        raise DatasetUnavailable("dataset 'd' is not available: tried nowhere")

    with pytest.raises(SystemExit) as exit_:
        run(job, main)
    problem = "C must be positive, got -1" if kind == "value" else "dataset 'd' is not available"
    message = exit_.value.code
    assert message.startswith(
        "error in rule fit ({'experiment': 'e', 'dataset': 'd', 'split': '0'}): "
    )
    assert problem in message and "\n" not in message
    log = _log_text(job)
    assert "ERROR Traceback" in log and problem in log and "INFO done" not in log


def test_failure_on_stderr_and_exit_status(tmp_path):
    """The interpreter of a rule script: one line on stderr, exit status 1."""
    script = textwrap.dedent(
        """
        import types
        from mkl.workflow.jobs import run

        def main(snakemake, log):
            log.info("about to fail")
            raise ValueError("grid point C=-1 is not allowed")

        snakemake = types.SimpleNamespace(
            log=["job.log"], rule="fit", wildcards={"dataset": "d"}, threads=1
        )
        run(snakemake, main)
        print("not reached")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "error in rule fit ({'dataset': 'd'}): grid point C=-1 is not allowed"
    ]
    assert "about to fail" in (tmp_path / "job.log").read_text()


def test_damaged_input_is_quarantined_and_fails_the_job(job, tmp_path):
    from mkl.workflow.jobs import run

    bank = tmp_path / "results" / "kernels" / "e" / "d" / "0.h5"
    bank.parent.mkdir(parents=True)
    bank.write_bytes(b"damaged bank")

    def main(snakemake, log):
        raise CorruptFile("results/kernels/e/d/0.h5", "the train block does not match")

    with pytest.raises(SystemExit) as exit_:
        run(job, main)
    message = exit_.value.code
    assert message.startswith("error in rule fit (") and "\n" not in message
    assert (
        "the train block does not match; moved to results/quarantine/kernels/e/d/0.h5." in message
    )
    assert message.endswith("run again to recompute it")
    assert not bank.exists()
    moved = list((tmp_path / "results" / "quarantine" / "kernels" / "e" / "d").iterdir())
    assert [p.read_bytes() for p in moved] == [b"damaged bank"]


@pytest.mark.parametrize("exc", [RuntimeError("a bug"), MemoryError()])
def test_unexpected_errors_propagate_with_the_traceback_in_the_log(job, exc):
    from mkl.workflow.jobs import run

    def main(snakemake, log):
        raise exc

    with pytest.raises(type(exc)) as raised:
        run(job, main)
    assert raised.value is exc  # not turned into SystemExit: Snakemake retries the job
    log = _log_text(job)
    assert "ERROR unexpected error" in log and "Traceback" in log and type(exc).__name__ in log


def test_another_mkl_is_named(job, monkeypatch):
    import mkl
    from mkl.workflow.jobs import run

    monkeypatch.setattr(mkl, "IS_MKL_RESEARCH", False)
    called = []
    with pytest.raises(SystemExit, match="not this project's library"):
        run(job, lambda s, log: called.append(1))
    assert called == []


def test_a_multiline_problem_is_still_one_error_line(job):
    from mkl.workflow.jobs import run

    def main(snakemake, log):
        raise ValueError("cannot parse raw.csv:\n  line 5: expected 3 fields, saw 4")

    with pytest.raises(SystemExit) as exit_:
        run(job, main)
    assert len(exit_.value.code.splitlines()) == 1

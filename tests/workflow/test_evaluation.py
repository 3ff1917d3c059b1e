"""A fit job's work: model selection, refit and test on one split's bank; CV chunks."""

import dataclasses
import functools
import json

import numpy as np
import pytest

import mkl
from mkl.banks.kernel_bank import KernelBank
from mkl.kernels.specs import KernelSpec
from mkl.model_selection import cross_validate_grid, grid_points
from mkl.workflow.evaluation import evaluate_split, grid_chunk, merge_chunks

from ..conftest import random_problem


def test_evaluate_split_record_is_complete_and_json(rng):
    X, y, K = random_problem(rng, n=60)
    tr, te = np.arange(40), np.arange(40, 60)
    specs = [KernelSpec("gaussian", float(w)) for w in range(1, 5)]
    bank = KernelBank(
        train=K[:, tr][:, :, tr], test=K[:, te][:, :, tr], specs=specs, y_train=y[tr], y_test=y[te]
    )
    make = functools.partial(mkl.make_estimator, "uniform")
    rec = evaluate_split(make, bank, np.arange(40) % 4, {"C": [0.1, 10]})
    json.dumps(rec, allow_nan=False)
    assert rec["selected_params"] in ({"C": 0.1}, {"C": 10})
    assert set(rec["test"]) == {"accuracy", "f1", "mcc", "auc"}
    assert 0 <= rec["test"]["accuracy"] <= 1
    assert len(rec["weights"]) == 4 and rec["n_kernels"] == 4
    assert len(rec["grid"]) == 2 and rec["kernel_labels"][0] == "gaussian(1)@all"


def test_evaluate_split_of_a_regressor_selects_by_rmse(rng):
    """The fit job's record for an MKL regressor: selection by the smallest CV
    RMSE, test RMSE / MAE / R^2, no classes."""
    X, _, K = random_problem(rng, n=60)
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=60)
    tr, te = np.arange(40), np.arange(40, 60)
    specs = [KernelSpec("gaussian", float(w)) for w in range(1, 5)]
    bank = KernelBank(
        train=K[:, tr][:, :, tr], test=K[:, te][:, :, tr], specs=specs, y_train=y[tr], y_test=y[te]
    )
    make = functools.partial(mkl.make_estimator, "simplemkl", task="regression", epsilon=0.05)
    rec = evaluate_split(make, bank, np.arange(40) % 4, {"C": [0.01, 10.0]}, "rmse")
    json.dumps(rec, allow_nan=False)
    means = [g["mean_score"] for g in rec["grid"]]
    assert rec["selected"] == int(np.argmin(means)) and rec["classes"] is None
    assert set(rec["test"]) == {"rmse", "mae", "r2"}
    refit = make(**rec["selected_params"]).fit(bank.train, y[tr])
    rmse = np.sqrt(np.mean((refit.predict(bank.test) - y[te]) ** 2))
    assert rec["test"]["rmse"] == pytest.approx(rmse)


def test_evaluate_split_on_a_stored_factor_bank(tmp_path, rng):
    """A fit job on a bank of factors: inner CV on the factors' rows, a kernel
    selection (select/exclude), refit, test on the test factors; the record is
    that of fitting the FactorBank by hand with the selected C."""
    from mkl.banks.factor_builders import nystroem_bank
    from mkl.workflow.evaluation import algorithm_bank

    X, y, _ = random_problem(rng, n=90)
    specs = [KernelSpec("gaussian", w) for w in (0.5, 1.0, 2.0)] + [KernelSpec("linear")]
    factors = nystroem_bank(specs, X[:60], X[60:], rank=25, dtype=np.float32)
    KernelBank(train=factors, specs=specs, y_train=y[:60], y_test=y[60:]).save(tmp_path / "b.h5")
    bank = algorithm_bank(KernelBank.load(tmp_path / "b.h5"), {"exclude": {"family": "linear"}})
    make = functools.partial(mkl.make_estimator, "level")
    rec = evaluate_split(make, bank, np.arange(60) % 3, {"C": [0.1, 10.0]})
    json.dumps(rec, allow_nan=False)
    assert rec["n_kernels"] == 3 and (rec["n_train"], rec["n_test"]) == (60, 30)
    assert rec["kernel_labels"] == ["gaussian(0.5)@all", "gaussian(1)@all", "gaussian(2)@all"]
    assert all(len(g["fold_scores"]) == 3 for g in rec["grid"])
    by_hand = make(**rec["selected_params"]).fit(bank.train, y[:60])
    assert rec["test"]["accuracy"] == pytest.approx(np.mean(by_hand.predict(bank.train) == y[60:]))
    assert np.allclose(rec["weights"], by_hand.weights_)


def test_grid_chunks_cover_the_grid_once_and_merge_back(rng):

    assert [grid_chunk(7, 3, i) for i in range(3)] == [[0, 1, 2], [3, 4], [5, 6]]
    assert grid_chunk(4, 4, 3) == [3]
    with pytest.raises(ValueError, match="cannot split 2 grid points into 3"):
        grid_chunk(2, 3, 0)
    with pytest.raises(ValueError, match="chunk index 3"):
        grid_chunk(5, 3, 3)
    _, y, K = random_problem(rng)
    folds = np.arange(len(y)) % 3
    points = grid_points({"C": [0.1, 1.0, 10.0], "tol": [0.01, 0.1]})
    make = functools.partial(mkl.make_estimator, "uniform")
    whole = cross_validate_grid(make, K, y, folds, points)
    chunks = []
    for i in range(4):
        idx = grid_chunk(len(points), 4, i)
        recs = cross_validate_grid(make, K, y, folds, [points[j] for j in idx])
        chunks.append({"indices": idx, "records": recs})
    merged = merge_chunks(points, chunks[::-1])  # any order of chunks
    strip = lambda recs: [(r["params"], r["fold_scores"], r["mean_score"]) for r in recs]  # noqa: E731
    assert strip(merged) == strip(whole)
    with pytest.raises(ValueError, match=r"grid points \[0, 1\] are in no CV chunk"):
        merge_chunks(points, chunks[1:])
    with pytest.raises(ValueError, match="appears in two CV chunks"):
        merge_chunks(points, chunks + chunks[:1])
    stale = [{"indices": [0], "records": [dict(whole[0], params={"C": 99})]}]
    with pytest.raises(ValueError, match="has params"):
        merge_chunks(points, stale + chunks[1:])


@pytest.fixture
def split_files(tmp_path, rng):
    """A bank file and a splits file of one split, as the workflow writes them."""
    from mkl.workflow.splits import Split, save_splits

    _, y, K = random_problem(rng, n=60)
    tr, te = np.arange(40), np.arange(40, 60)
    specs = [KernelSpec("gaussian", float(w)) for w in range(1, 5)]
    bank = KernelBank(
        train=K[:, tr][:, :, tr], test=K[:, te][:, :, tr], specs=specs, y_train=y[tr], y_test=y[te]
    )
    bank.save(tmp_path / "bank.h5")
    save_splits(tmp_path / "splits.h5", [Split(tr, te, np.arange(40) % 4)], {})
    return tmp_path / "bank.h5", tmp_path / "splits.h5"


def test_split_record_of_a_fit_that_fails_on_its_data(split_files):
    from mkl.workflow.evaluation import split_record

    bank, splits = split_files
    entry = {"estimator": "lp_newton", "grid": {"p": [0.5, 0.9]}}
    rec = split_record(bank, splits, 0, entry, "lp")
    assert rec["status"] == "failed"
    assert rec["error"].startswith("SolverError: no grid point gave a finite")
    assert "p must be a finite number > 1" in rec["error"]
    # one failing grid point among good ones: a normal record, the failure kept
    rec = split_record(bank, splits, 0, {**entry, "grid": {"p": [0.5, 2.0]}}, "lp")
    assert rec["selected_params"] == {"p": 2.0}
    assert "InputError" in rec["grid"][0]["error"] and "error" not in rec["grid"][1]
    json.dumps(rec, allow_nan=False)


def test_split_record_joins_its_splits_cv_from_chunk_files(split_files, tmp_path):
    """A CV chunk's file holds the chunk's records on every split of its job
    (a fit job's batch): the fit of a split joins its own, the same records as
    one job's CV; a chunk without the split is refused, naming both."""
    from mkl.model_selection import grid_points
    from mkl.workflow.evaluation import grid_chunk, split_record

    bank, splits = split_files
    entry = {"estimator": "uniform", "grid": {"C": [0.1, 1.0, 10.0]}}
    whole = split_record(bank, splits, 0, entry, "uniform")
    points = grid_points(entry["grid"])
    paths = []
    for k in range(2):
        indices = grid_chunk(len(points), 2, k)
        records = {"0": [whole["grid"][i] for i in indices], "3": []}  # split 3: another's
        paths.append(tmp_path / f"{k}.json")
        paths[-1].write_text(json.dumps({"indices": indices, "records": records}))
    joined = split_record(bank, splits, 0, entry, "uniform", cv_chunk_paths=paths)
    assert joined["grid"] == whole["grid"] and joined["test"] == whole["test"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"indices": [0, 1, 2], "records": {"3": [], "12": []}}))
    with pytest.raises(ValueError, match=r"other.json holds splits \['3', '12'\], not split 0"):
        split_record(bank, splits, 0, entry, "uniform", cv_chunk_paths=[other])
    other.write_text(json.dumps({"indices": [0, 1, 2], "records": whole["grid"]}))  # one split's
    with pytest.raises(ValueError, match="holds no records by split .* not split 0"):
        split_record(bank, splits, 0, entry, "uniform", cv_chunk_paths=[other])


@pytest.mark.parametrize("exc", [MemoryError, KeyError])
def test_split_record_lets_memory_errors_and_bugs_fail_the_job(split_files, monkeypatch, exc):
    """Not a failed record: the job fails, and Snakemake retries it with more memory."""
    from mkl.workflow import evaluation

    def boom(*args, **kwargs):
        raise exc("x")

    monkeypatch.setattr(evaluation, "evaluate_split", boom)
    bank, splits = split_files
    with pytest.raises(exc):
        evaluation.split_record(bank, splits, 0, {"estimator": "uniform"}, "uniform")


def _novelty_bank(rng):
    """Three classes, class 1 the largest: the inliers of a novelty experiment."""
    X = np.vstack(
        [-3 + rng.normal(size=(20, 3)), rng.normal(size=(40, 3)), 4 + rng.normal(size=(12, 3))]
    )
    y = np.repeat([0, 1, 2], [20, 40, 12])
    order = rng.permutation(len(y))
    X, y = X[order], y[order]
    K = np.stack([np.exp(-w * ((X[:, None] - X[None]) ** 2).sum(-1)) for w in (0.1, 0.5, 2.0)])
    tr, te = np.arange(48), np.arange(48, 72)
    specs = [KernelSpec("gaussian", w) for w in (0.1, 0.5, 2.0)]
    return KernelBank(
        train=K[:, tr][:, :, tr], test=K[:, te][:, :, tr], specs=specs, y_train=y[tr], y_test=y[te]
    )


def test_novelty_entries_label_the_largest_training_class_inliers(rng):
    from mkl.workflow.evaluation import algorithm_bank

    bank = _novelty_bank(rng)
    relabelled = algorithm_bank(bank, {"task": "novelty"})
    assert np.array_equal(relabelled.y_train, np.where(bank.y_train == 1, 1, -1))
    assert np.array_equal(relabelled.y_test, np.where(bank.y_test == 1, 1, -1))
    assert algorithm_bank(bank, {"task": "regression"}) is bank


def test_novelty_fit_job_trains_on_inliers_and_tests_by_auc(rng):
    """The record of a novelty entry: CV over nu fits each fold's training
    inliers and scores its held-out rows; the refit is the detector fitted on
    the training inliers alone, and the test AUC is that of its scores."""
    from sklearn.metrics import roc_auc_score

    from mkl.workflow.evaluation import InlierTrainedDetector, algorithm_bank, estimator_factory

    bank = algorithm_bank(_novelty_bank(rng), {"task": "novelty"})
    make = estimator_factory({"estimator": "simplemkl", "task": "novelty"}, "simplemkl")
    rec = evaluate_split(make, bank, np.arange(48) % 3, {"nu": [0.1, 0.5]}, "auc")
    json.dumps(rec, allow_nan=False)
    assert set(rec["test"]) == {"auc"} and rec["classes"] is None
    assert all(len(g["fold_scores"]) == 3 for g in rec["grid"])
    inl = np.flatnonzero(bank.y_train == 1)
    by_hand = mkl.make_estimator("simplemkl", task="novelty", **rec["selected_params"]).fit(
        bank.train[:, inl][:, :, inl]
    )
    scores = by_hand.score_samples(bank.test[:, :, inl])
    assert rec["test"]["auc"] == pytest.approx(roc_auc_score(bank.y_test == 1, scores))
    assert rec["test"]["auc"] > 0.9  # the outlier classes lie away from the inliers
    assert np.allclose(rec["weights"], by_hand.weights_)
    detector = make(nu=0.5).fit(bank.train, bank.y_train)
    assert isinstance(detector, InlierTrainedDetector)
    by_hand.set_params(nu=0.5).fit(bank.train[:, inl][:, :, inl])
    assert np.array_equal(detector.predict(bank.test), by_hand.predict(bank.test[:, :, inl]))


def test_novelty_and_regression_fit_jobs_on_a_factor_bank(rng):
    """Both tasks on a bank of factors: the novelty record is the detector
    fitted by hand on the training inliers' factor rows; the regression record
    the regressor refitted on the factors with the selected C."""
    from sklearn.metrics import roc_auc_score

    from mkl.banks.factor_builders import nystroem_bank
    from mkl.workflow.evaluation import algorithm_bank, estimator_factory

    specs = [KernelSpec("gaussian", w) for w in (0.1, 0.5, 2.0)]
    X = np.vstack(
        [-3 + rng.normal(size=(20, 3)), rng.normal(size=(40, 3)), 4 + rng.normal(size=(12, 3))]
    )
    y = np.repeat([0, 1, 2], [20, 40, 12])
    order = rng.permutation(72)
    X, y = X[order], y[order]
    factors = nystroem_bank(specs, X[:48], X[48:], rank=20)
    bank = algorithm_bank(
        KernelBank(train=factors, specs=specs, y_train=y[:48], y_test=y[48:]), {"task": "novelty"}
    )
    make = estimator_factory({"estimator": "level", "task": "novelty"}, "level")
    rec = evaluate_split(make, bank, np.arange(48) % 3, {"nu": [0.1, 0.5]}, "auc")
    inl = np.flatnonzero(bank.y_train == 1)
    by_hand = mkl.make_estimator("level", task="novelty", **rec["selected_params"]).fit(
        bank.train.rows(inl)
    )
    scores = by_hand.score_samples(bank.train)
    assert rec["test"]["auc"] == pytest.approx(roc_auc_score(bank.y_test == 1, scores))
    assert rec["test"]["auc"] > 0.9
    targets = np.sin(X[:, 0]) + X[:, 1] ** 2
    reg_bank = KernelBank(train=factors, specs=specs, y_train=targets[:48], y_test=targets[48:])
    make = estimator_factory({"estimator": "level", "task": "regression"}, "level")
    rec = evaluate_split(make, reg_bank, np.arange(48) % 3, {"C": [0.1, 10.0]}, "rmse")
    refit = make(**rec["selected_params"]).fit(reg_bank.train, targets[:48])
    rmse = np.sqrt(np.mean((refit.predict(reg_bank.train) - targets[48:]) ** 2))
    assert rec["test"]["rmse"] == pytest.approx(rmse)


def test_novelty_detector_of_the_workflow_refuses_bad_labels(rng):
    from mkl.exceptions import InputError
    from mkl.workflow.evaluation import InlierTrainedDetector

    bank = _novelty_bank(rng)
    detector = InlierTrainedDetector(mkl.make_estimator("uniform", task="novelty"))
    with pytest.raises(InputError, match=r"\+1 \(inlier\) or -1 \(outlier\)"):
        detector.fit(bank.train, bank.y_train)  # class codes, not +1 / -1
    with pytest.raises(InputError, match="1 inlier rows: too few"):
        detector.fit(bank.train, np.where(np.arange(48) == 0, 1, -1))


def test_a_default_C_grid_is_in_the_unit_of_the_banks_normalisation(rng):
    """Issue 60: an entry's default C grid (``C_units: normalisation``) is
    multiplied by n_train on unit-trace kernels (their entries are n times
    smaller than a unit-diagonal kernel's) and by 1 otherwise; a stated grid is
    used as written."""
    from mkl.workflow.evaluation import entry_grid

    _, y, K = random_problem(rng, n=30)
    specs = [KernelSpec("gaussian", float(w), normalise="unit_trace") for w in range(1, 5)]
    bank = KernelBank(train=K[:, :20, :20], specs=specs, y_train=y[:20])
    entry = {"grid": {"C": [0.1, 1.0], "tol": [0.1]}, "C_units": "normalisation"}
    assert entry_grid(entry, bank) == {"C": [2.0, 20.0], "tol": [0.1]}
    assert entry_grid({"grid": {"C": [0.1, 1.0]}}, bank) == {"C": [0.1, 1.0]}
    mixed = dataclasses.replace(
        bank, specs=[KernelSpec("gaussian", 1.0, normalise="unit_diagonal"), *specs[1:]]
    )
    assert entry_grid(entry, mixed)["C"] == [0.1, 1.0]
    with pytest.raises(ValueError, match="unknown C_units 'n'"):
        entry_grid({**entry, "C_units": "n"}, bank)


@pytest.mark.parametrize("name", ["rmkl", "gram"])
def test_a_fit_job_of_the_radius_margin_methods(rng, name):
    X, y, K = random_problem(rng, n=60)
    tr, te = np.arange(40), np.arange(40, 60)
    specs = [KernelSpec("gaussian", float(w)) for w in range(1, 5)]
    bank = KernelBank(
        train=K[:, tr][:, :, tr], test=K[:, te][:, :, tr], specs=specs, y_train=y[tr], y_test=y[te]
    )
    make = functools.partial(mkl.make_estimator, name)
    grid = {"C": [0.1, 10]} if name == "rmkl" else {}
    rec = evaluate_split(make, bank, np.arange(40) % 4, grid)
    json.dumps(rec, allow_nan=False)
    assert rec["fit"]["converged"] and 0.5 <= rec["test"]["accuracy"] <= 1
    assert len(rec["weights"]) == 4 and abs(sum(rec["weights"]) - 1) < 1e-9

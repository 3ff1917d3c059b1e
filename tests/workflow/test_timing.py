"""The fit-time points of Kloft et al. (2009), Figure 1: draws, banks, records."""

import numpy as np
import pytest

from mkl.banks.factor_bank import FactorBank
from mkl.datasets import gmkl_toy
from mkl.workflow.timing import (
    draw,
    draw_points,
    gaussian_bank,
    point_bank,
    time_floor,
    timing_point,
    translate_images,
)
from mkl.workflow.timing_settings import timing_point_settings


def test_draw_is_stratified_seeded_and_sorted():
    y = np.repeat([0, 1], [300, 100])
    idx = draw(y, 80, seed=3)
    assert len(idx) == 80 and np.all(np.diff(idx) > 0)
    assert np.bincount(y[idx]).tolist() == [60, 20]
    assert np.array_equal(idx, draw(y, 80, seed=3))
    assert not np.array_equal(idx, draw(y, 80, seed=4))
    with pytest.raises(ValueError, match="cannot draw n=400"):
        draw(y, 400, seed=0)


def test_gaussian_bank_has_unit_diagonal_and_geometric_widths():
    X = np.random.default_rng(0).normal(size=(30, 4))
    K = gaussian_bank(X, 5, [0.5, 8.0])
    assert K.shape == (5, 30, 30)
    assert np.allclose(np.diagonal(K, axis1=1, axis2=2), 1.0)
    # wider kernels are larger off the diagonal, monotonically
    off = K[:, 0, 1]
    assert np.all(np.diff(off) > 0)
    d2 = ((X[0] - X[1]) ** 2).sum()
    assert off[-1] == pytest.approx(np.exp(-d2 / (2 * 8.0**2)))
    with pytest.raises(ValueError, match="widths"):
        gaussian_bank(X, 5, [2.0, 1.0])
    with pytest.raises(ValueError, match="number of kernels"):
        gaussian_bank(X, 0, [1.0, 2.0])


def test_timing_point_records_every_series_and_repetition():
    X, y = gmkl_toy(1, n=120, seed=0)
    y = (y > 0).astype(int)
    series = {"sum": ("uniform", {"C": 1.0}), "l1": ("silp", {"C": 1.0, "tol": 1e-3})}
    recs = timing_point(X, y, 60, 4, [0.5, 4.0], series, repetitions=2, seed=1)
    assert len(recs) == 4
    assert {(r["repetition"], r["series"]) for r in recs} == {
        (r, s) for r in (0, 1) for s in ("sum", "l1")
    }
    for r in recs:
        assert r["n"] == 60 and r["kernels"] == 4
        assert r["seconds"] > 0 and r["floor_seconds"] > 0
        assert 1 <= r["n_selected"] <= 4
    l1 = [r for r in recs if r["series"] == "l1"]
    assert all(r["converged"] and r["gap"] <= 1e-3 for r in l1)
    with pytest.raises(ValueError, match="must fix C"):
        timing_point(X, y, 60, 4, [0.5, 4.0], {"x": ("uniform", {})}, repetitions=1)
    with pytest.raises(ValueError, match="repetitions"):
        timing_point(X, y, 60, 4, [0.5, 4.0], series, repetitions=0)


def test_every_series_is_fitted_once_before_any_clock_runs(monkeypatch):
    """The warm-up: a process's first fit loads numba's context and the compiled
    solvers; each series fits once on a small bank before repetition 0 is timed."""
    import mkl.workflow.timing as timing

    X, y = gmkl_toy(1, n=120, seed=0)
    y = (y > 0).astype(int)
    calls = []
    real = timing.time_fit

    def spy(name, params, K, *args):
        calls.append((name, np.shape(K)))
        return real(name, params, K, *args)

    monkeypatch.setattr(timing, "time_fit", spy)
    series = {"sum": ("uniform", {"C": 1.0}), "l1": ("silp", {"C": 1.0, "tol": 1e-3})}
    timing.timing_point(X, y, 60, 4, [0.5, 4.0], series, repetitions=2, seed=1)
    warm = (2, timing.WARM_UP_POINTS, timing.WARM_UP_POINTS)
    assert calls[:2] == [("uniform", warm), ("silp", warm)]
    assert [c[1] for c in calls[2:]] == [(4, 60, 60)] * 4  # then the timed fits


# --------------------------------------------------------------------------- #
# Factor-bank points: test points, translated images, rank and dense reference


def _digits(n=400, side=6, seed=0):
    """Small 'images': a bright square at a random place, label = left or right half."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, side, side))
    cols = rng.integers(0, side - 1, n)
    rows = rng.integers(0, side - 1, n)
    X[np.arange(n), rows, cols] = 1.0
    y = (cols >= side // 2).astype(int)
    return X.reshape(n, side * side), y


def test_translate_images_moves_each_pixel_with_zero_fill():
    X = np.arange(1, 10, dtype=float).reshape(1, 9)  # one 3 x 3 image
    codes = np.arange(9)  # every shift by up to 1 pixel
    out = translate_images(X, np.zeros(9, dtype=int), codes, 1, (3, 3)).reshape(9, 3, 3)
    image = X.reshape(3, 3)
    assert np.array_equal(out[4], image)  # code 4: no shift
    # code 5: dx = +1 (right), the first column uncovered
    assert np.array_equal(out[5], [[0, 1, 2], [0, 4, 5], [0, 7, 8]])
    # code 1: dy = -1 (up), the last row uncovered
    assert np.array_equal(out[1], [[4, 5, 6], [7, 8, 9], [0, 0, 0]])
    assert np.array_equal(out[0], [[5, 6, 0], [8, 9, 0], [0, 0, 0]])  # up and left
    with pytest.raises(ValueError, match="image_shape"):
        translate_images(X, np.zeros(1, dtype=int), np.zeros(1, dtype=int), 1, (2, 4))


def test_draw_points_keeps_test_images_out_of_the_training_pool():
    X, y = _digits()
    X = X + np.arange(len(X))[:, None] * 1e-6  # every image identifiable by its offset
    X_tr, y_tr, X_te, y_te = draw_points(
        X, y, 500, seed=2, test_points=100, translations=1, image_shape=(6, 6)
    )
    assert X_tr.shape == (500, 36) and X_te.shape == (100, 36)
    assert len(y_tr) == 500 and len(y_te) == 100
    test_ids = set(np.round(X_te[:, 0] * 1e6).astype(int))
    # a translated image keeps its identifying offset on the pixels it keeps
    train_ids = {int(round(v * 1e6)) for row in X_tr for v in row if 0 < v < 1e-3}
    assert not test_ids & train_ids
    assert abs(np.mean(y_te) - np.mean(y)) < 0.02 and abs(np.mean(y_tr) - np.mean(y)) < 0.02
    again = draw_points(X, y, 500, seed=2, test_points=100, translations=1, image_shape=(6, 6))
    assert np.array_equal(again[0], X_tr) and np.array_equal(again[2], X_te)
    # without translations: disjoint rows of X
    X_tr, _, X_te, _ = draw_points(X, y, 200, seed=0, test_points=100)
    assert not {tuple(r) for r in X_tr} & {tuple(r) for r in X_te}
    # without test points: the draw of Kloft et al.'s figure, as before
    X_tr, y_tr, X_te, y_te = draw_points(X, y, 80, seed=3)
    assert X_te is None and np.array_equal(X_tr, X[draw(y, 80, 3)])
    with pytest.raises(ValueError, match="image_shape"):
        draw_points(X, y, 80, seed=0, translations=1)
    with pytest.raises(ValueError, match="cannot draw n=400"):
        draw_points(X, y, 400, seed=0, test_points=100)  # 300 images left, no translations


def test_point_bank_dense_and_factored():
    X = np.random.default_rng(0).normal(size=(40, 3))
    K, K_test = point_bank(X[:30], X[30:], 3, [0.5, 4.0])
    assert K.shape == (3, 30, 30) and K_test.shape == (3, 10, 30)
    bank, same = point_bank(X[:30], X[30:], 3, [0.5, 4.0], {"kind": "nystroem", "rank": 30})
    assert isinstance(bank, FactorBank) and same is bank and bank.dtype == np.float32
    # Nystroem with every training point as a landmark reproduces the kernels
    assert np.allclose(bank.dense(), K, atol=1e-4)
    assert np.allclose(bank.dense("test"), K_test, atol=1e-4)
    with pytest.raises(ValueError, match="dense, nystroem or rff"):
        point_bank(X[:30], None, 3, [0.5, 4.0], {"kind": "exact"})


def test_timing_point_on_factors_records_rank_and_test_accuracy():
    X, y = gmkl_toy(1, n=300, seed=0)
    series = {"sum": ("uniform", {"C": 1.0}), "l1": ("silp", {"C": 1.0, "tol": 1e-3})}
    rep = {"kind": "nystroem", "rank": 20, "seed": 0}
    recs = timing_point(X, y, 100, 3, [0.5, 4.0], series, 2, representation=rep, test_points=80)
    assert len(recs) == 4
    for r in recs:
        assert r["representation"] == "nystroem-20" and r["rank"] == 20
        assert r["seconds"] > 0 and r["floor_seconds"] > 0
        assert 0.5 < r["test_accuracy"] <= 1.0
    assert all(r["converged"] and r["gap"] <= 1e-3 for r in recs if r["series"] == "l1")
    dense = timing_point(X, y, 100, 3, [0.5, 4.0], series, 1, test_points=80)
    assert {r["representation"] for r in dense} == {"dense"} and dense[0]["rank"] is None
    assert all(0.5 < r["test_accuracy"] <= 1.0 for r in dense)
    # without test points, no accuracy
    assert timing_point(X, y, 100, 3, [0.5, 4.0], series, 1)[0]["test_accuracy"] is None


def test_floor_is_one_solve_on_the_uniform_weights_for_both_representations():
    X, y = gmkl_toy(1, n=120, seed=1)
    K, _ = point_bank(X, None, 3, [0.5, 4.0])
    bank, _ = point_bank(X, None, 3, [0.5, 4.0], {"kind": "rff", "dimension": 50})
    assert time_floor(K, y, 1.0) > 0 and time_floor(bank, y, 1.0) > 0


@pytest.mark.parametrize(
    "figure, value, expected",
    [
        ({"vary": "n"}, 300, (300, 5, {"kind": "dense"})),
        ({"vary": "kernels"}, 9, (100, 9, {"kind": "dense"})),
        (
            {"vary": "n", "representation": {"kind": "nystroem", "rank": 20}},
            "400",
            (400, 5, {"kind": "nystroem", "rank": 20, "seed": 0}),
        ),
        (
            {"vary": "rank", "representation": "nystroem"},
            "50",
            (100, 5, {"kind": "nystroem", "rank": 50, "seed": 0}),
        ),
        (
            {"vary": "rank", "representation": {"kind": "rff", "seed": 3}},
            70,
            (100, 5, {"kind": "rff", "dimension": 70, "seed": 3}),
        ),
        ({"vary": "rank", "representation": "nystroem"}, "dense", (100, 5, {"kind": "dense"})),
    ],
)
def test_timing_point_settings(figure, value, expected):
    assert timing_point_settings({"n": 100, "kernels": 5, **figure}, value) == expected


@pytest.mark.parametrize(
    "figure, value, message",
    [
        ({"vary": "n"}, "dense", "only in a figure with vary: rank"),
        ({"vary": "rank"}, 50, "needs a nystroem or rff representation"),
        ({"vary": "n", "representation": "nystroem"}, 50, "needs a positive integer rank"),
        ({"vary": "n", "representation": "exact"}, 50, "no exact factors"),
        ({"vary": "depth"}, 50, "unknown timing axis"),
    ],
)
def test_timing_point_settings_refuse_bad_points(figure, value, message):
    with pytest.raises(ValueError, match=message):
        timing_point_settings({"n": 100, "kernels": 5, **figure}, value)


def test_timing_curves_table_and_figure_with_a_dense_reference(tmp_path):
    from mkl.workflow import figures

    def rec(series, rank, rep, seconds, acc):
        label = "dense" if rank is None else f"nystroem-{rank}"
        return {
            "series": series,
            "n": 50,
            "kernels": 2,
            "rank": rank,
            "representation": label,
            "repetition": rep,
            "seconds": seconds,
            "floor_seconds": 0.5,
            "test_accuracy": acc,
        }

    records = [rec("l1", r, i, 1.0 + i, 0.8 + 0.01 * i) for r in (10, 20, None) for i in (0, 1)]
    curves = figures.timing_curves(records, "rank")
    assert set(curves["metric"]) == {"seconds", "in_F", "test_accuracy"}
    dense = curves[curves["line"] == "l1 (dense)"]
    assert dense["x"].isna().all() and len(dense) == 3
    acc = curves[
        (curves["line"] == "l1") & (curves["x"] == 10) & (curves["metric"] == "test_accuracy")
    ]
    assert acc["mean"].item() == pytest.approx(0.805) and acc["std"].item() == pytest.approx(0.005)
    table = figures.timing_table(curves, "rank")
    lines = table.splitlines()
    assert "test accuracy" in lines[0] and len(lines) == 2 + 3
    assert lines[-1].startswith("| l1 (dense) | dense") and "0.805 ± 0.005" in table
    figures.plot_curves(curves, tmp_path / "f.png", tmp_path / "f.pdf", "rank", log_x=True)
    assert (tmp_path / "f.png").stat().st_size > 1000
    # one representation only: no "(dense)" suffix, no accuracy panel without accuracies
    plain = [dict(r, rank=None, representation="dense", test_accuracy=None) for r in records[:2]]
    curves = figures.timing_curves(plain, "n")
    assert set(curves["line"]) == {"l1"} and set(curves["metric"]) == {"seconds", "in_F"}


@pytest.mark.parametrize(
    "line, base, style",
    [
        ("lp Newton (p = 4/3)", "lp Newton (p = 4/3)", "-"),
        ("lp Newton (p = 4/3), wrapper", "lp Newton (p = 4/3)", "-."),
        ("l1 SILP (dense)", "l1 SILP", "--"),
        ("wrapper", "wrapper", "-"),
    ],
)
def test_a_wrapper_or_dense_variant_is_drawn_beside_its_series(line, base, style):
    from mkl.workflow.figures import _line_base

    assert _line_base(line) == (base, style)

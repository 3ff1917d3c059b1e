"""The fit-time points of Kloft et al. (2009), Figure 1: draws, banks, records."""

import numpy as np
import pytest

from mkl.synthetic import gmkl_toy
from mkl.workflow.timing import draw, gaussian_bank, timing_point


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

"""Memory and run-time estimates of the workflow's jobs, for cluster schedulers
(``resources: mem_mb, runtime`` of each rule), from the sizes of their inputs.
Each grows with the ``attempt`` (1, 2, 3): a job killed for lack of memory or
time is retried with more.

Snakemake evaluates these functions when it builds the DAG, before the inputs
of most jobs exist (a dry run, or a job whose inputs another job of the same
run produces), and again, with every input present, just before it submits
the job. Where an input is missing (or damaged: a dry run leaves it in place)
they therefore return a planning estimate
(``BASE_MEM_MB`` for memory, the per-split allowance for run time); the job
itself is sized from its real inputs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ..kernels.representation import bank_representation
from ..kernels.specs import ALL_FEATURES, expand_bank_spec
from .timing_settings import timing_point_settings

BASE_MEM_MB = 600  # Python, numpy, the libraries
MEMORY_FACTOR = 2.5  # a bank in memory, plus the fold blocks or results built from it
FIT_MINUTES = 20  # per (algorithm, split) fit, generous: MKL solvers differ by orders of magnitude


def bank_mb(
    spec: Mapping, data_path: str | os.PathLike, splits_path: str | os.PathLike, split: int
) -> float | None:
    """The size in MB of the bank a kernels job writes: kernels x n_train x
    (n_train + n_test) x item size (plus the eigendecompositions if asked);
    for a bank of factors, (n_train + n_test) x total rank x (item size + 8,
    the float64 pieces a factor is computed in),
    from the headers of the data and split files; None if either is missing
    or unreadable (a dry run leaves a damaged file in place: it only warns)."""
    import h5py

    if not (os.path.exists(data_path) and os.path.exists(splits_path)):
        return None
    try:
        with h5py.File(data_path, "r") as f:
            n_features = f["X"].shape[1]
            n_similarities = f["S"].shape[0] if "S" in f else 0
        with h5py.File(splits_path, "r") as f:
            n_train, n_test = len(f[f"{split}/train"]), len(f[f"{split}/test"])
    except (OSError, KeyError):  # damaged: a real run moves it aside and recomputes it
        return None
    if "similarity" in spec:
        m = max(n_similarities, 1)
    else:
        singles = range(min(spec.get("feature_limit", n_features), n_features))
        specs = expand_bank_spec(spec, n_features, single_features=singles)
        m = len(specs)
    itemsize = 4 if spec.get("dtype") == "float32" else 8
    rep = bank_representation(spec)
    if rep["kind"] != "dense":  # factors: (n_train + n_test) x R numbers
        columns = {
            "nystroem": rep.get("rank"),
            "rff": rep.get("dimension"),
            "exact": None,  # linear kernels: all features, or one
        }[rep["kind"]]
        R = sum(columns or (n_features if s.feature == ALL_FEATURES else 1) for s in specs)
        # plus the n_train x rank kernel values of the landmarks a Nystroem job holds
        return (n_train + n_test) * R * (itemsize + 8) / 2**20
    eig = 2 * m * n_train * n_train * 8 if spec.get("eigendecompose") else 0
    return (m * n_train * (n_train + n_test) * itemsize + eig) / 2**20


def kernels_mem_mb(spec: Mapping, data_path, splits_path, split: int, attempt: int) -> int:
    """A kernels job: the bank it computes, held in memory with its pieces."""
    size = bank_mb(spec, data_path, splits_path, split)
    return int(
        BASE_MEM_MB * attempt if size is None else BASE_MEM_MB + MEMORY_FACTOR * size * attempt
    )


def fit_mem_mb(bank_paths: Sequence[str | os.PathLike], attempt: int) -> int:
    """A fit or CV-chunk job: one bank in memory (a batch loads its splits'
    banks in turn) plus the inner-CV fold blocks sliced from it."""
    sizes = [os.path.getsize(b) for b in bank_paths if os.path.exists(b)]
    if not sizes:
        return BASE_MEM_MB * attempt
    return int(BASE_MEM_MB + MEMORY_FACTOR * max(sizes) / 2**20 * attempt)


def fit_runtime(n_fits: int, input_mb: float, attempt: int) -> int:
    """Minutes for a fit job of ``n_fits`` (algorithm, split) fits reading ``input_mb`` MB."""
    return int((FIT_MINUTES * n_fits + input_mb / 5) * attempt)


TIMING_FEATURES = 1000  # features per point assumed when sizing a timing point's data


def timing_mem_mb(figure: Mapping, value, attempt: int) -> int:
    """A timing point: its dense Gaussian bank (M x n x n float64, three times for
    the combined kernels and the estimators' working copies, plus the M x n_test
    x n test block), or its float32 factors ((n + n_test) x M x rank, three times:
    the per-kernel factors, the stacked matrix and the solver's working set),
    plus the drawn and scaled points (up to TIMING_FEATURES features)."""
    n, m, rep = timing_point_settings(figure, value)
    t = figure.get("test_points", 0)
    if rep["kind"] == "dense":
        bank = (3 * m * n * n + m * t * n) * 8
    else:
        bank = 3 * (n + t) * m * rep.get("rank", rep.get("dimension")) * 4
    points = 3 * (n + t) * TIMING_FEATURES * 8
    return int(BASE_MEM_MB + (bank + points) / 2**20 * attempt)

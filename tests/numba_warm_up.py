"""Compile the library's numba functions into their on-disk cache, once, at
the start of the suite (tests/conftest.py starts this module in the
background: ``python -m tests.numba_warm_up``).

On a fresh clone (as in CI) nothing is compiled yet, and every process that
reaches a solver before the cache is written compiles it again: the test
workers, and the end-to-end runs' first jobs, which all start at once. A
run of the small experiment took 56 CPU-s from a cold cache and 41 from a
warm one; compiling everything here, alone, takes about 19 s. The fits cover
what the suite's processes use: the SMO alone and in the interleaved engine,
the bank check's combinations, the factored coordinate descent, on float64
and float32 banks."""

import warnings

import numpy as np

from mkl.banks.factor_bank import FactorBank
from mkl.estimators.factory import make_estimator


def warm_up() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    distances = ((X[:, None] - X[None]) ** 2).sum(-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dtype in (np.float64, np.float32):
            K = np.stack([np.exp(-distances / w) for w in (1.0, 4.0)]).astype(dtype)
            for name in ("uniform", "level", "simplemkl", "easymkl"):
                make_estimator(name).fit(K, y)
            factors = FactorBank.from_matrix(np.hstack([X, X**2]).astype(dtype), [3, 3])
            make_estimator("level").fit(factors, y)


if __name__ == "__main__":
    warm_up()

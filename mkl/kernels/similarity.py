"""Indefinite similarity matrices generated from features, for datasets that come
without similarities (Kundu et al. 2010's UCI sets). The eigendecompositions
and spectrum transforms of similarities are in :mod:`mkl.kernels.spectra`.

Generated similarities. Ying, Campbell & Girolami (NIPS 2009), whose recipe
Kundu et al. follow for the UCI sets, is not among the available texts. Two
documented generators are offered; the bank records which one was used:

* ``perturbed_gaussian``: exp(-||x - z||^2 / (2 width^2)) + noise E, with E a
  seeded symmetric standard-normal matrix over all examples (zero diagonal),
  so a pair's perturbation does not depend on the split (the perturbed-kernel
  construction of Luss & d'Aspremont 2007). ``width="median"`` takes the
  median distance between the examples (the median heuristic; no label is
  read), so the median similarity is exp(-1/2) on every dataset and the noise
  has the same size relative to it;
* ``sigmoid``: tanh(a x'z / d + c), d the number of features, indefinite for
  most (a, c) (Lin & Lin 2003).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import pdist

from ..exceptions import InputError
from .functions import kernel_function
from .specs import KernelSpec

GENERATORS = ("perturbed_gaussian", "sigmoid")


def generate_similarity(X: np.ndarray, generator: str, **params) -> np.ndarray:
    """An (N, N) symmetric, generally indefinite similarity over all rows of ``X``."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or not np.isfinite(X).all():
        raise InputError("similarity generator needs a finite 2-D feature matrix")
    if generator == "perturbed_gaussian":
        width = params.get("width", 1.0)
        if width == "median":
            width = float(np.median(pdist(X))) if len(X) > 1 else 0.0
            if not width > 0:
                raise InputError("perturbed_gaussian: the examples' median distance is 0")
        elif isinstance(width, str):
            raise InputError(f"perturbed_gaussian's width is a number or 'median', got {width!r}")
        width = float(width)
        noise = float(params.get("noise", 0.1))
        if width <= 0 or noise < 0:
            raise InputError(f"perturbed_gaussian needs width > 0 and noise >= 0, got {params}")
        S = kernel_function(KernelSpec("gaussian", width), X, X, same=True)
        E = np.random.default_rng(int(params.get("seed", 0))).standard_normal(S.shape)
        E = np.triu(E, 1)
        return S + noise * (E + E.T)
    if generator == "sigmoid":
        a, c = float(params.get("a", 1.0)), float(params.get("c", -1.0))
        return np.tanh(a * (X @ X.T) / X.shape[1] + c)
    raise InputError(f"unknown similarity generator {generator!r}; known: {GENERATORS}")

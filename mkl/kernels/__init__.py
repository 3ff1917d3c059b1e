"""Kernels from features: the bank specification language
(:mod:`~mkl.kernels.specs`, :mod:`~mkl.kernels.representation`), the kernel
functions and normalisations (:mod:`~mkl.kernels.functions`), dense banks
(:mod:`~mkl.kernels.dense`), and indefinite similarities: generators
(:mod:`~mkl.kernels.similarity`) and eigen transforms (:mod:`~mkl.kernels.spectra`).

One public name is reached from here, ``mkl.kernels.center`` (feature-space
centring, :func:`mkl.kernels.functions.center`), loaded on first use as
:mod:`mkl`'s names are: this file imports nothing at import time (see
:mod:`mkl.algorithms`), and the library's modules import the defining module.
"""


def __getattr__(name: str):
    if name == "center":
        from .functions import center

        return center
    raise AttributeError(f"module 'mkl.kernels' has no attribute {name!r}")

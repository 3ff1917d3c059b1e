"""Kernels from features: the bank specification language
(:mod:`~mkl.kernels.specs`, :mod:`~mkl.kernels.representation`), the kernel
functions and normalisations (:mod:`~mkl.kernels.functions`), dense banks
(:mod:`~mkl.kernels.dense`), and indefinite similarities: generators
(:mod:`~mkl.kernels.similarity`) and eigen transforms (:mod:`~mkl.kernels.spectra`).

This file imports nothing (see :mod:`mkl.algorithms`).
"""

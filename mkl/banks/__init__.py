"""Kernel banks as the solvers take them: :class:`~mkl.banks.kernel_bank.KernelBank`
(training and test blocks of a split, and its HDF5 file),
:class:`~mkl.banks.factor_bank.FactorBank` (kernels K_m = Z_m Z_m' as factors,
in memory or read from an HDF5 file by row blocks: :mod:`~mkl.banks.row_blocks`)
and its builders (:mod:`~mkl.banks.factor_builders`: Nystroem, random Fourier
features, rank-one, feature groups), the combination algebra every solver's hot
loop runs on (:mod:`~mkl.banks.algebra`) and the input checks of a training
bank (:mod:`~mkl.banks.checks`).

This file imports nothing (see :mod:`mkl.algorithms`).
"""

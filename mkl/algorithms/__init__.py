"""The bank-level estimators: one module per algorithm family, the contract they
share (:mod:`~mkl.algorithms.base`), the loop and oracle of the wrapper methods
(:mod:`~mkl.algorithms.wrapper`, :mod:`~mkl.algorithms.domains`,
:mod:`~mkl.algorithms.iterations`) and the registry of their names
(:mod:`~mkl.algorithms.registry`; also :data:`mkl.ALGORITHMS`).

This file imports nothing: the library's modules import the concrete modules
they use, so that the workflow's source hashes, which follow imports, see them.
"""

"""The inner problems: the SVM duals solved for fixed kernel weights (libsvm,
:mod:`~mkl.solvers.libsvm`; the warm-started SMO, :mod:`~mkl.solvers.smo`; the
dual coordinate descent on factors, :mod:`~mkl.solvers.coordinate_descent`),
the task of each dual (:mod:`~mkl.solvers.tasks`), the inner problem per bank
representation behind the one oracle (:mod:`~mkl.solvers.inner`), the KOMD
margin problem (:mod:`~mkl.solvers.komd`) and the SVM solutions shared within
a model-selection fold (:mod:`~mkl.solvers.solution_cache`).

This file imports nothing (see :mod:`mkl.algorithms`).
"""

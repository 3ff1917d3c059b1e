"""The inner problems: the SVM duals solved for fixed kernel weights (libsvm,
:mod:`~mkl.solvers.libsvm`; the warm-started SMO, :mod:`~mkl.solvers.smo`; the
dual coordinate descent on factors, :mod:`~mkl.solvers.coordinate_descent`),
the solution they return (:mod:`~mkl.solvers.solution`), the dual of each task
(:mod:`~mkl.solvers.task_duals`), the one choice of solver per task and
representation (:mod:`~mkl.solvers.dispatch`), the inner problem per bank
representation behind the one oracle (:mod:`~mkl.solvers.inner`), the KOMD
margin problem (:mod:`~mkl.solvers.komd`), SpicyMKL's dense box QP
(:mod:`~mkl.solvers.box_qp`) and the SVM solutions shared within a
model-selection fold (:mod:`~mkl.solvers.solution_cache`).

This file imports nothing (see :mod:`mkl.algorithms`).
"""

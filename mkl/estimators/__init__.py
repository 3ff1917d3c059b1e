"""What a user constructs: the factory :func:`~mkl.estimators.factory.make_estimator`,
the regressor and novelty detector on kernel banks (:mod:`~mkl.estimators.task_estimators`)
and the front ends on raw features (:mod:`~mkl.estimators.feature_estimators`,
on the bank their shared base computes: :mod:`~mkl.estimators.feature_bank`),
which pass their own parameters and their ``algorithm_params`` on to the
registry method they wrap (:mod:`~mkl.estimators.algorithm_params`). The
bank-level estimators themselves are in :mod:`mkl.algorithms`.

This file imports nothing (see :mod:`mkl.algorithms`).
"""

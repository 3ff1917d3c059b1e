"""What a user constructs: the factory :func:`~mkl.estimators.factory.make_estimator`,
the regressor and novelty detector on kernel banks (:mod:`~mkl.estimators.tasks`)
and the front ends on raw features (:mod:`~mkl.estimators.features`). The
bank-level estimators themselves are in :mod:`mkl.algorithms`.

This file imports nothing (see :mod:`mkl.algorithms`).
"""

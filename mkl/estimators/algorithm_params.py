"""An estimator that wraps a registry method has parameters of its own (``C``,
``p``, ``epsilon``...) and passes the method's others on in its
``algorithm_params``: :func:`own_and_algorithm_params` splits keywords given
together into the two (the factory, :func:`mkl.estimators.factory.make_estimator`),
:func:`algorithm_parameters` merges them back into what the method is given
(at fit: the task estimators, :mod:`mkl.estimators.task_estimators`, and the
front ends on raw features, :mod:`mkl.estimators.feature_estimators`).
"""

from __future__ import annotations

from ..exceptions import InputError


def algorithm_parameters(est, named: tuple[str, ...], reserved: tuple[str, ...] = ()) -> dict:
    """What an estimator that wraps a registry method passes to it: its
    ``algorithm_params``, and those of its own parameters ``named`` that it
    sets (None leaves the method's default). ``algorithm_params`` may not
    repeat C, ``named`` or ``reserved`` (the estimator's other own parameters)."""
    extra = dict(est.algorithm_params or {})
    clash = {"C", *named, *reserved} & set(extra)
    if clash:
        raise InputError(
            f"set {sorted(clash)} with the estimator's own parameters, not algorithm_params"
        )
    own = {name: getattr(est, name) for name in named}
    return {**extra, **{name: value for name, value in own.items() if value is not None}}


def own_and_algorithm_params(cls, params: dict) -> dict:
    """Split the keywords into the estimator class's own parameters and the
    method's (``algorithm_params``, also accepted as such)."""
    params = dict(params)
    extra = dict(params.pop("algorithm_params", None) or {})
    own = set(cls().get_params()) - {"algorithm", "algorithm_params"}
    extra.update({k: v for k, v in params.items() if k not in own})
    return {**{k: v for k, v in params.items() if k in own}, "algorithm_params": extra or None}

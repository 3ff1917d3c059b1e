"""Validation shared by the library: array dtypes, and the estimators'
hyperparameters declared as ``_parameter_constraints`` (scikit-learn's
constraint language, checked in ``fit`` and reported as :class:`InputError`).
"""

from __future__ import annotations

import numbers

import numpy as np

from .exceptions import InputError


def as_real_float(A, name: str):
    """``A`` (an array or a scipy.sparse matrix) as float32/float64: kept when it
    is already one of those, other real numeric dtypes promoted to float64,
    anything else (strings, objects, complex) refused with an InputError naming ``name``."""
    if A.dtype in (np.float32, np.float64):
        return A
    values = A.data if hasattr(A, "tocsr") else A
    if not np.issubdtype(A.dtype, np.number) or np.iscomplexobj(values):
        raise InputError(f"{name} must be real-valued, got dtype {A.dtype}")
    return A.astype(np.float64)


def check_target_vector(y, n: int, what: str, missing: str) -> np.ndarray:
    """``y`` as a 1-D array of ``n`` entries, the fitted targets of one bank:
    ``what`` names them in the messages ("labels", "targets"), ``missing`` is
    the message when there are none. Their values are the caller's to check."""
    if y is None:
        raise InputError(missing)
    y = np.asarray(y)
    if y.ndim != 1:
        raise InputError(f"y must be 1-D, got shape {y.shape}")
    if y.shape[0] != n:
        raise InputError(f"y has {y.shape[0]} {what} but the kernels have {n} samples")
    return y


def check_label_types(y: np.ndarray) -> None:
    """Refuse class labels of mixed kinds (strings beside numbers, or None):
    they cannot be sorted into classes (scikit-learn says "Unknown label type",
    NumPy that '<' is not supported), so say which kinds and what to do."""
    if y.dtype != object:
        return
    kinds = {}
    for value in y:
        if isinstance(value, (str, bytes, np.str_)):
            kind = "text"
        elif isinstance(value, (bool, np.bool_)):
            kind = "boolean"
        elif isinstance(value, (numbers.Number, np.number)):
            kind = "number"
        else:
            kind = type(value).__name__
        kinds.setdefault(kind, value)
    if len(kinds) > 1:
        shown = ", ".join(f"{kind} (e.g. {value!r})" for kind, value in kinds.items())
        raise InputError(
            f"y mixes kinds of class labels: {shown}; labels must all be numbers or all "
            "text: convert them (e.g. y.astype(str)), and drop or fill missing ones"
        )


def validate_params(estimator) -> None:
    """Check an estimator's hyperparameters against its ``_parameter_constraints``
    (scikit-learn's constraint language: ``Interval``, ``StrOptions``, types,
    None), as scikit-learn's own estimators do in ``fit``; a violation is an
    :class:`InputError` naming the parameter, what it must be and what it got."""
    from sklearn.utils._param_validation import (
        InvalidParameterError,
        validate_parameter_constraints,
    )

    constraints = estimator._parameter_constraints
    params = estimator.get_params(deep=False)
    for name, value in params.items():
        # True is an Integral to Python, never a number to a user: refused where
        # the constraints do not name booleans themselves
        allowed = constraints.get(name, ())
        if isinstance(value, bool) and not any(c in ("boolean", "verbose", bool) for c in allowed):
            raise InputError(
                f"The {name!r} parameter of {type(estimator).__name__} must be a number, not a "
                f"boolean. Got {value!r} instead."
            )
    try:
        validate_parameter_constraints(constraints, params, caller_name=type(estimator).__name__)
    except InvalidParameterError as exc:
        raise InputError(str(exc)) from None

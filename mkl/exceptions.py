"""What the library raises, so that a caller can tell a fit that failed on its
data from a bug.

* :class:`InputError` (a ``ValueError``): input an estimator cannot use --
  shapes, NaN/inf, asymmetric or indefinite kernels where PSD ones are needed,
  one class, hyperparameters out of range. Its message names the problem.
* :class:`SolverError` (a ``RuntimeError``): a numerical solver failed (a
  weight subproblem, a root finder) on input that passed validation.
* :class:`DegenerateKernelWarning` (a warning, not an error): a kernel of the
  bank is numerically the identity or constant on the training rows;
  :class:`NegativeWeightsWarning` and :class:`SmallCombinationWarning`: a fit
  that is what its method defines, with a property the user should know of.
  :func:`warn_at_caller` issues such a warning at the caller's line (the first
  frame outside the library and scikit-learn), however deep the fit made it.

:func:`is_fit_failure` tells the exceptions that mean "this fit failed on
these data and hyperparameters": the two above and the numerical errors of numpy
and scipy (``LinAlgError``, ``ArithmeticError``, ARPACK's errors). Model
selection records them per grid point and goes on; any other exception
(``MemoryError``, ``TypeError``, a bare ``ValueError`` or ``RuntimeError`` from
a bug) propagates. The library's own solvers raise :class:`SolverError` (not a
bare ``RuntimeError``) when they fail, so that they are told apart.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

_LIBRARY = os.path.dirname(os.path.abspath(__file__)) + os.sep


class InputError(ValueError):
    """Input or hyperparameters an estimator cannot use; the message names the problem."""


class SolverError(RuntimeError):
    """A numerical solver failed on input that passed validation."""


class SubproblemError(SolverError):
    """A cutting-plane or projection subproblem of a wrapper method could not be solved."""


class DegenerateKernelWarning(UserWarning):
    """A kernel that cannot help the fit: numerically the identity on the
    training rows (it memorises them) or constant (a constant feature). The
    fit is still what it says; the warning names the kernels."""


class NegativeWeightsWarning(UserWarning):
    """A method that may weight kernels negatively (MKLpy's CKA) did: the
    combination may then be indefinite, and the SVM on an indefinite kernel
    stops at a stationary point, not at an optimum. The fit is what the method
    defines; the warning names the kernels."""


class SmallCombinationWarning(UserWarning):
    """A learned combination whose centred part is tiny beside the uniform
    combination's (weights on kernels nearly constant on the training rows):
    the SVM on it sees a small kernel, and C acts correspondingly weaker. The
    fit is what the method defines; the warning says how far to widen C's grid."""


def is_fit_failure(exc: BaseException) -> bool:
    """Whether ``exc`` means the fit failed on its data (module docstring)."""
    from scipy.sparse.linalg import ArpackError, ArpackNoConvergence

    numerical = (np.linalg.LinAlgError, ArithmeticError, ArpackError, ArpackNoConvergence)
    return isinstance(exc, (InputError, SolverError, *numerical))


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` at the first frame outside this library and
    scikit-learn (whose fit wrappers sit between a user's call and ours): the
    user's line, whichever path (one-vs-rest tasks, model selection) led to
    the warning."""
    import sklearn

    skipped = (_LIBRARY, os.path.dirname(os.path.abspath(sklearn.__file__)) + os.sep)
    frame, level = sys._getframe(1), 2  # stacklevel 2: this function's caller
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(skipped):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)

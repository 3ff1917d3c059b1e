"""What the library raises, so that a caller can tell a fit that failed on its
data from a bug.

* :class:`InputError` (a ``ValueError``): input an estimator cannot use --
  shapes, NaN/inf, asymmetric or indefinite kernels where PSD ones are needed,
  one class, hyperparameters out of range. Its message names the problem.
* :class:`SolverError` (a ``RuntimeError``): a numerical solver failed (a
  weight subproblem, a root finder) on input that passed validation.

:func:`is_fit_failure` tells the exceptions that mean "this fit failed on
these data and hyperparameters": the two above and the numerical errors of numpy
and scipy (``LinAlgError``, ``ArithmeticError``, solver ``RuntimeError``s such
as ARPACK's). Model selection records them per grid point and goes on; any
other exception (``MemoryError``, ``TypeError``, a bare ``ValueError`` from a
bug) propagates.
"""

from __future__ import annotations

import numpy as np


class InputError(ValueError):
    """Input or hyperparameters an estimator cannot use; the message names the problem."""


class SolverError(RuntimeError):
    """A numerical solver failed on input that passed validation."""


def is_fit_failure(exc: BaseException) -> bool:
    """Whether ``exc`` means the fit failed on its data (module docstring)."""
    if isinstance(exc, (InputError, SolverError, np.linalg.LinAlgError, ArithmeticError)):
        return True
    # solver RuntimeErrors (ARPACK's ArpackNoConvergence, brentq's "failed to
    # converge"); not the RuntimeErrors that are bugs
    return isinstance(exc, RuntimeError) and not isinstance(
        exc, (NotImplementedError, RecursionError)
    )

"""What every inner SVM solve returns, and the box it is solved on.

Every task's dual (``mkl.solvers.task_duals``) has the form

    J(theta) = max_{beta in B}  S(beta) - 1/2 sum_m theta_m beta' K_m beta,

and every solver of it (libsvm, ``mkl.solvers.libsvm``; the warm-started SMO,
``mkl.solvers.smo``; the dual coordinate descent on factors,
``mkl.solvers.coordinate_descent``) returns an :class:`SVMSolution`: the
multipliers, the coefficients beta of the decision function, its bias, the
dual value J and its part S that does not depend on the kernel.
:class:`SMOSolution` and :class:`FactoredSolution` add the iterations or
epochs their solver took.

The box of the C-SVM, 0 <= alpha_i <= C_i, is one number C or one bound per
point (per-sample C, e.g. C times sample weights): :func:`box_bounds` checks it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exceptions import InputError


@dataclass
class SVMSolution:
    alpha: np.ndarray  # (n,) multipliers, 0 <= alpha <= C
    dual_coef: np.ndarray  # (n,) alpha * y, the coefficients of the decision function
    bias: float  # decision(x) = sum_i alpha_i y_i k(x_i, x) + bias
    objective: float  # dual value 1'alpha - 1/2 (alpha y)'K(alpha y)
    C: float | np.ndarray  # box actually used (finite also for hard margin); (n,) per sample
    at_bound: bool  # hard margin only: not separable (an alpha hit the box, or the cap)
    converged: bool  # libsvm stopped on its tolerance, not its iteration cap
    # b^2/2 (y'alpha)^2 where the intercept is a regularised constant feature b
    # (the factored path, mkl.solvers.coordinate_descent); 0 with a free bias (y'alpha = 0)
    bias_penalty: float = 0.0
    # S of a dual whose linear term is not 1'alpha (regression, novelty: mkl.solvers.task_duals)
    linear: float | None = None
    # an upper bound on the optimum for this kernel (the primal at this solution,
    # weak duality); set by the interleaved engine, whose solutions are inexact
    primal: float | None = None

    @property
    def linear_term(self) -> float:
        """S, the part of the dual value that does not depend on the kernel:
        J = S - 1/2 sum_m theta_m q_m. The C-SVM's S = 1'alpha - bias_penalty."""
        if self.linear is not None:
            return self.linear
        return float(self.alpha.sum()) - self.bias_penalty


@dataclass
class SMOSolution(SVMSolution):
    """An :class:`SVMSolution` with the SMO iterations it took (``mkl.solvers.smo``)."""

    iterations: int = 0


@dataclass
class FactoredSolution(SVMSolution):
    """An :class:`SVMSolution` of a dual on factors, with the coordinate-descent
    epochs it took (``mkl.solvers.coordinate_descent``)."""

    epochs: int = 0


def box_bounds(C, n: int) -> float | np.ndarray:
    """The upper bounds of the C-SVM's box from ``C``, checked: a positive
    finite number, the same for every point (returned as a float), or n
    nonnegative finite numbers C_i, not all zero (per-sample C, e.g. C times
    sample weights; a point of C_i = 0 takes no part in the fit)."""
    if np.ndim(C) == 0:
        if not (C is not None and C > 0 and np.isfinite(C)):
            raise InputError(f"C must be a positive finite number, got {C!r}")
        return float(C)
    U = np.asarray(C, dtype=np.float64)
    if U.shape != (n,):
        raise InputError(f"per-sample C must have shape ({n},), got {U.shape}")
    if not (np.isfinite(U).all() and (U >= 0).all() and U.max() > 0):
        raise InputError("per-sample C must be finite, nonnegative and not all zero")
    return U


def box_of(C, n: int) -> float | np.ndarray:
    """``C`` as the solvers take it: a number as a float (checked where it is
    used), or the checked per-point bounds (:func:`box_bounds`)."""
    return float(C) if np.ndim(C) == 0 else box_bounds(C, n)


@dataclass
class SummedSolution:
    """The solutions of C duals at one weight vector, one per target (the
    shared-weights multiclass fit: ``mkl.solvers.inner.SummedProblems``), read
    as one solution of their sum sum_c J_c(theta): the dual value, S and the
    primal bound are the sums of the parts', ``converged`` holds when every
    part's did, and ``dual_coef`` stacks the parts' coefficients (C, n), the
    beta_c of q_m = sum_c beta_c' K_m beta_c."""

    parts: list[SVMSolution]

    @property
    def objective(self) -> float:
        return float(sum(s.objective for s in self.parts))

    @property
    def linear_term(self) -> float:
        return float(sum(s.linear_term for s in self.parts))

    @property
    def primal(self) -> float | None:
        bounds = [s.primal for s in self.parts]
        return None if any(b is None for b in bounds) else float(sum(bounds))

    @property
    def converged(self) -> bool:
        return all(s.converged for s in self.parts)

    @property
    def dual_coef(self) -> np.ndarray:
        return np.stack([s.dual_coef for s in self.parts])

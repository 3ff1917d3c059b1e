"""Radius-margin MKL: R-MKL (Do, Kalousis, Woznica & Hilario, "Margin and
radius based multiple kernel learning", ECML PKDD 2009) and GRAM (Lauriola,
Polato & Aiolli, "Radius-margin ratio optimization for dot-product boolean
kernel learning", ICANN 2017; MKLpy's ``GRAM``).

Both minimise the radius-margin bound R^2 ||w||^2 on the leave-one-out error of
an SVM (Vapnik 1998; Chapelle, Vapnik, Bousquet & Mukherjee 2002) over the
weights mu of K_mu = sum_r mu_r K_r on the simplex S_M, where the margin alone
(SimpleMKL and the other margin methods) prefers the kernel of the largest
scale. With Y = diag(y), Gamma the pairs of class simplices of
:mod:`mkl.solvers.komd` and B = {beta >= 0, 1'beta = 1}:

* the squared radius of the minimum enclosing ball of the points in K's
  feature space (:func:`mkl.solvers.geometry.minimum_enclosing_ball`),

      R^2(K) = max_{beta in B}  beta'diag(K) - beta'K beta,

  convex in K (a maximum of functions linear in K); and
* the squared distance between the class hulls (the KOMD problem,
  :func:`mkl.solvers.komd.komd_margin`), rho(K) = min_{gamma in Gamma}
  gamma'YKYgamma, concave in K, with ||w||^2 = 4 / rho for the hard-margin SVM.

GRAM (:class:`GRAM`) minimises the ratio itself (MKLpy's ``ratio`` divides it
by n, the bound's 1/n),

    min_{mu in S_M}  Phi(mu) = R^2(K_mu) / rho(K_mu),                    (GRAM)

a hard-margin criterion: it needs classes that a kernel of the bank separates
(otherwise rho = 0 for every mu).

R-MKL (:class:`RMKL`) replaces R^2(K_mu) by its upper bound linear in mu,
R^2(K_mu) <= R_mu = sum_r mu_r R_r^2 with R_r^2 = R^2(K_r) (the maximum of a
sum is at most the sum of the maxima), and takes the soft margin with squared
slacks, whose radius-margin bound holds (Chapelle et al. 2002):

    min_{mu in S_M} min_{w, b, xi}  1/2 R_mu ||w||^2_{K_mu} + C/2 sum_i xi_i^2
        s.t.  y_i (f(x_i) + b) >= 1 - xi_i.                              (R-MKL)

For fixed mu this is the squared-slack SVM at C / R_mu times R_mu; its dual is
the hard-margin SVM's on K~_mu = K_mu + (R_mu / C) I, whose value is
2 / rho(K~_mu), so the objective is

    P(mu) = 2 R_mu / rho(K_mu + (R_mu / C) I),

the radius bound over the margin of the soft-margin kernel. Scaling a kernel
leaves P unchanged (R_r^2 and K_r scale together), the point of the paper.
``C=None`` drops the slacks: P = 2 R_mu / rho(K_mu). MKLpy 0.6's ``RMKL``
differs in what it maximises: the margin rho(K~_mu) alone, without the R_mu
above it, at a gamma taken from a hinge-loss SVC rather than from the margin
problem (docs/design.md, "Radius-margin MKL", measures the difference).

Both are ratios N(mu) / D(mu) of a nonnegative convex N (R^2(K_mu), or the
linear R_mu) and a positive concave D (rho of K_mu, or of K~_mu, a minimum of
functions linear in mu), both positively homogeneous of degree 1. Neither is
convex in mu, but such a ratio is pseudoconvex (Mangasarian 1965): every
stationary point on the simplex is a global minimum, and the solution is
certified by a bound. At the current beta in B and gamma in Gamma (the
solutions of the two problems at mu) let

    a_r = beta'diag(K_r) - beta'K_r beta   (GRAM; R-MKL: a_r = R_r^2),
    b_r = gamma'Y K_r Y gamma              (R-MKL: + (R_r^2 / C) ||gamma||^2),

the partial derivatives of N and D (Danskin). Since N(nu) >= sum_r nu_r a_r
and D(nu) <= sum_r nu_r b_r for every nu in S_M (N a maximum, D a minimum),

    Phi(nu) >= sum_r nu_r a_r / sum_r nu_r b_r >= L = min_r a_r / b_r,

so the relative gap (Phi(mu) - L) / Phi(mu) bounds the distance to the
optimum; it is 0 exactly at a KKT point (there a_r / b_r >= Phi wherever
mu_r = 0, and = Phi where mu_r > 0). Here Phi is N / D without R-MKL's 2.

Algorithm (both, as the papers and MKLpy: mu = softmax(beta) and descent on
beta from the uniform weights, beta = 0): the step is beta <- beta - eta g
with g_r = dPhi/dmu_r = (a_r - Phi b_r) / D, the exponentiated-gradient step
on mu (MEMO's, :mod:`mkl.algorithms.margin`). The papers and MKLpy step along
dPhi/dbeta_r = mu_r g_r instead, whose step for a kernel vanishes with its
weight, so that a kernel nearly dropped is slow to come back; both have the
same fixed points. eta comes from a backtracking line search (Armijo's
condition on Phi; each search starts from the last accepted step, times 1.25
when that was accepted at its first trial), where MKLpy takes a fixed
learning rate for a fixed number of steps. The loop stops when the gap above
is at most ``tol`` (converged), after ``max_iter`` iterations, or when the
line search finds no descent step moving beta by 1e-12 or more (not
converged: the ratio is flat to the inner solvers' precision, which a smaller
``inner_tol`` refines). The margin problems run with the margin metric's
iteration cap (:data:`mkl.solvers.geometry.MARGIN_MAX_ITER_PER_POINT`), not
the fits' 20 n, which stops where the hulls nearly touch: there the ratio is
large and its value is what the loop compares.
Each iterate costs one margin problem (and for GRAM one enclosing ball) on the
combination, and its gradient one or two passes over the bank.

``objective_`` is the best Phi (GRAM) or P (R-MKL), ``gap_`` the certified
gap; ``history_`` adds the radius term N (``radius``: R^2(K_mu), or R_mu),
the margin D (``margin``), the bound L scaled as the objective
(``lower_bound``) and the step. Softmax weights are never exactly zero: those
below 1e-6 of the largest are set to zero, and the classifier is built on the
weights as reported: GRAM's base learner (the hard-margin SVM of the last
margin solve by default, as MKLpy's; a C-SVM at ``C`` when given), R-MKL's
the squared-slack SVM of its own problem, the hard-margin SVM on K~_mu
(alpha = 2 gamma / rho; the ridge (R_mu / C) I is on the training points only,
so test points meet K_mu).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.special import softmax
from sklearn.utils._param_validation import Interval

from ..banks.algebra import combine, psd_quadratic_forms, spectral_ratio
from ..exceptions import InputError
from ..solvers.geometry import MARGIN_MAX_ITER_PER_POINT, minimum_enclosing_ball
from ..solvers.komd import komd_margin
from .base import BaseMKL, BinaryFit, threshold_weights
from .iterations import IterationLog
from .margin import base_learner


class _RadiusMarginRatio(BaseMKL):
    """The loop both methods share (module docstring): minimise N(mu) / D(mu)
    over mu = softmax(beta). A subclass defines ``_evaluate(K, y, mu, K_mu)``
    (N, D and what the partials and the classifier need, at the combination
    K_mu = sum_r mu_r K_r: the point's own array, which it may change),
    ``_partials(K, point)`` (a, b and the passes they took) and
    ``_classifier(K, y, point)`` (the SVM solution and the kernel it is on)."""

    ARMIJO = 1e-4  # sufficient-decrease constant of the line search
    MAX_HALVINGS = 40
    GROWTH = 1.25  # the step tried after a step accepted at its first trial
    # the smallest move of beta tried: below it a decrease of the ratio is the
    # inner solvers' rounding, not a step
    SMALLEST_MOVE = 1e-12

    # objective_ = SCALE x N / D (R-MKL's primal value is twice its ratio)
    SCALE = 1.0

    _parameter_constraints: dict = {
        **BaseMKL._parameter_constraints,
        "inner_tol": [Interval(Real, 0, None, closed="neither")],
    }

    def _evaluate(self, K, y, mu, K_mu) -> dict:
        raise NotImplementedError

    def _partials(self, K, point) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _classifier(self, K, y, point):
        raise NotImplementedError

    def _point(self, mu, K_mu, numerator, margin, **extra) -> dict:
        """An evaluated iterate: the ratio N / D (inf where the hulls touch)."""
        D = margin.value if margin.svm is not None else 0.0
        ratio = numerator / D if D > 0 else np.inf
        return {"mu": mu, "K": K_mu, "N": numerator, "D": D, "margin": margin,
                "ratio": ratio, **extra}  # fmt: skip

    def _fit_binary(self, K, y, K_mean):
        M = K.shape[0]
        method = type(self).__name__
        counters = {"solves": 0, "passes": 0}
        log = IterationLog(method, self.tol, self.max_iter, verbose=self.verbose)

        def evaluate(mu, K_mu=None, beta=None):
            if K_mu is None:
                K_mu = combine(K, mu)
                counters["passes"] += 1
            point = self._evaluate(K, y, mu, K_mu)
            counters["solves"] += point.pop("solves")
            point["beta"] = beta
            return point

        pt = evaluate(np.full(M, 1.0 / M), K_mean.copy(), np.zeros(M))  # beta = 0: uniform
        if not np.isfinite(pt["ratio"]):
            raise InputError(
                f"{method}: the classes' convex hulls meet in every combination of the "
                "bank (the hard margin is 0 on the uniform one, so on every one), and "
                "the radius-margin ratio is infinite; it needs a kernel that separates "
                "the classes" + (" (or a soft margin: C > 0)" if isinstance(self, RMKL) else "")
            )
        step = None
        grow = False
        for it in range(1, self.max_iter + 1):
            log.consider(pt["ratio"], pt)  # accepted steps only decrease the ratio
            a, b = self._partials(K, pt)
            counters["passes"] += pt["partial_passes"]
            ratios = np.divide(a, b, out=np.full(M, np.inf), where=b > 0)
            ratios[(a == 0) & (b == 0)] = np.inf  # a zero kernel bounds nothing
            lower = float(ratios.min())
            gap = max((pt["ratio"] - lower) / pt["ratio"], 0.0) if pt["ratio"] > 0 else 0.0
            log.record(
                self.SCALE * pt["ratio"],
                gap=gap,
                weights=pt["mu"],
                svm_solves=counters["solves"],
                passes=counters["passes"],
                radius=pt["N"],
                margin=pt["D"],
                lower_bound=self.SCALE * lower,
                step=np.nan if step is None else step,
            )
            if gap <= self.tol:
                log.stop("gap", converged=True)
                break
            if it == self.max_iter:
                break
            g = (a - pt["ratio"] * b) / pt["D"]  # dPhi/dmu_r
            direction = g - float(pt["mu"] @ g)
            slope = float(pt["mu"] @ direction**2)  # -dPhi/deta at eta = 0
            if step is None:  # first step: beta moves by at most 1
                eta = 1.0 / max(float(np.ptp(g)), 1e-300)
            else:  # the last step, grown if it was accepted at its first trial
                eta = self.GROWTH * step if grow else step
            new = None
            for attempt in range(self.MAX_HALVINGS):
                if eta * float(np.abs(direction).max()) < self.SMALLEST_MOVE:
                    break  # the weights would not move: below the ratio's rounding
                beta = pt["beta"] - eta * direction
                trial = evaluate(softmax(beta), beta=beta)
                if trial["ratio"] <= pt["ratio"] - self.ARMIJO * eta * slope:
                    new, grow = trial, attempt == 0
                    break
                eta /= 2.0
            if new is None:  # flat to the inner solvers' precision: say so
                log.stop("line search found no descent step", converged=False)
                break
            pt, step = new, eta
        best = log.best
        # softmax weights are never exactly zero; the classifier is built on the
        # weights as reported, with negligible ones set to zero
        mu = threshold_weights(best["mu"])
        if np.any(mu != best["mu"]):
            best = evaluate(mu / mu.sum())
        sol, K_final = self._classifier(K, y, best)
        log.inner(sol.converged, "classifier")
        log.finish()
        return BinaryFit(
            weights=best["mu"],
            dual_coef=sol.dual_coef,
            intercept=sol.bias,
            objective=self.SCALE * log.best_objective,
            spectral_ratio=spectral_ratio(K_final),
            **log.fit_fields(),
        )


class GRAM(_RadiusMarginRatio):
    """GRAM (Lauriola, Polato & Aiolli 2017; MKLpy's ``GRAM``): the weights of
    least radius-margin ratio R^2(K_mu) / rho(K_mu) on the simplex (module
    docstring), by descent on mu = softmax(beta) to a certified gap, then the
    base learner on the combination.

    The classes must be separable by the combination (a hard margin): a bank
    in which no kernel separates them is refused. ``history_`` adds
    ``radius`` (R^2(K_mu)), ``margin`` (rho(K_mu)), ``lower_bound`` and
    ``step``; ``svm_solves`` counts the enclosing-ball and margin solves.

    Parameters
    ----------
    C : float or None, the base SVM's soft-margin parameter (None: the
        hard-margin SVM, as MKLpy's GRAM).
    tol : float, the certified relative gap at which to stop.
    max_iter : int, iterations (accepted steps).
    inner_tol : float, relative tolerance of the enclosing-ball and margin problems.
    svm_tol : float, libsvm's tolerance for a soft-margin base SVM.
    verbose : int, 1: one line per iteration through the ``mkl`` logger.
    """

    def __init__(self, C=None, tol=1e-3, max_iter=500, inner_tol=1e-8, svm_tol=1e-3, verbose=0):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol
        self.svm_tol = svm_tol
        self.verbose = verbose

    def _prepare(self, K, K_mean):
        # diag(K_r) of every kernel, for a_r = beta'diag(K_r) - beta'K_r beta
        return np.einsum("mii->mi", K).astype(np.float64)

    def _evaluate(self, K, y, mu, K_mu):
        ball = minimum_enclosing_ball(K_mu, self.inner_tol)
        margin = komd_margin(K_mu, y, self.inner_tol, MARGIN_MAX_ITER_PER_POINT)
        return self._point(mu, K_mu, ball.squared_radius, margin, ball=ball, solves=2)

    def _partials(self, K, point):
        beta = point["ball"].coef
        a = self._shared @ beta - psd_quadratic_forms(K, beta)  # dR^2/dmu_r
        b = psd_quadratic_forms(K, point["margin"].coef)  # drho/dmu_r
        point["partial_passes"] = 2
        return np.maximum(a, 0.0), b

    def _classifier(self, K, y, point):
        sol = base_learner(
            point["K"], y, self.C, self.svm_tol, self.inner_tol, point["margin"], K, point["mu"]
        )
        return sol, point["K"]


class RMKL(_RadiusMarginRatio):
    """R-MKL (Do, Kalousis, Woznica & Hilario 2009): the weights minimising
    P(mu) = 2 R_mu / rho(K_mu + (R_mu / C) I) on the simplex, R_mu =
    sum_r mu_r R_r^2 the radius bound (module docstring), by descent on
    mu = softmax(beta) to a certified gap; the classifier is the solution of
    the same problem at the weights found: the squared-slack SVM at
    C / R_mu on K_mu.

    The kernels' squared radii R_r^2 are computed once per fit (one enclosing
    ball per kernel, shared by the one-vs-rest problems). ``history_`` adds
    ``radius`` (R_mu), ``margin`` (rho of the soft-margin kernel),
    ``lower_bound`` and ``step``; ``svm_solves`` counts margin solves.

    Parameters
    ----------
    C : float or None, the squared slacks' weight (None: a hard margin, which
        needs separable classes).
    tol : float, the certified relative gap at which to stop.
    max_iter : int, iterations (accepted steps).
    inner_tol : float, relative tolerance of the margin problems and of the
        kernels' enclosing balls.
    verbose : int, 1: one line per iteration through the ``mkl`` logger.
    """

    SCALE = 2.0

    def __init__(self, C=1.0, tol=1e-3, max_iter=500, inner_tol=1e-8, verbose=0):
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.inner_tol = inner_tol
        self.verbose = verbose

    def _prepare(self, K, K_mean):
        radii = np.array([minimum_enclosing_ball(k, self.inner_tol).squared_radius for k in K])
        if not (radii > 0).any():
            raise InputError("RMKL: every kernel's enclosing ball has radius 0 (constant kernels)")
        return radii

    def _ridge(self, weights) -> float:
        """(R_mu / C): the soft margin's ridge on the training points' kernel."""
        return 0.0 if self.C is None else float(weights @ self._shared) / self.C

    def _evaluate(self, K, y, mu, K_mu):
        K_mu[np.diag_indices_from(K_mu)] += self._ridge(mu)  # K_mu is this point's own
        margin = komd_margin(K_mu, y, self.inner_tol, MARGIN_MAX_ITER_PER_POINT)
        return self._point(mu, K_mu, float(mu @ self._shared), margin, solves=1)

    def _partials(self, K, point):
        gamma = point["margin"].coef
        b = psd_quadratic_forms(K, gamma)
        if self.C is not None:
            b = b + self._shared / self.C * float(gamma @ gamma)
        point["partial_passes"] = 1
        return self._shared.copy(), b

    def _classifier(self, K, y, point):
        # the hard-margin SVM on K_mu + (R_mu / C) I, from the last margin solve
        sol = point["margin"].svm
        K_mu = point["K"].copy()
        K_mu[np.diag_indices_from(K_mu)] -= self._ridge(point["mu"])
        return sol, K_mu

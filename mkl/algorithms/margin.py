"""Margin-and-complexity MKL: EasyMKL (Aiolli & Donini, Neurocomputing 2015) and
MEMO (Lauriola, Polato & Aiolli, ESANN 2018).

Both score the kernels of a bank by the distance between the class convex hulls
in feature space. With Y = diag(y) and

    Gamma = {gamma >= 0 : sum_{i: y_i = +1} gamma_i = sum_{i: y_i = -1} gamma_i = 1},

the squared margin of a kernel K is the value of the KOMD problem

    rho(K) = min_{gamma in Gamma} gamma' Y K Y gamma                  (MEMO, eq. 3)

(the squared distance between the hulls; 2/rho is the hard-margin SVM's dual
optimum). ``komd_margin`` solves it, and

* :class:`EasyMKL` solves it once, on (1 - lam) sum_r K_r + lam I, and weights
  kernel r by d_r = gamma' Y K_r Y gamma;
* :class:`MEMO` maximises rho(K_mu) + theta/2 mu'Q mu over mu = softmax(beta)
  (eq. 2), trading the margin against the spectral ratio of K_mu (eq. 1).

The margin problem, solved in :mod:`mkl.solvers.komd`, is the hot loop
(libsvm's nu-SVC dual with nu = 2/n; benchmarks/bench_margin.py).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.special import softmax
from sklearn.utils._param_validation import Interval

from ..banks.algebra import combine, psd_quadratic_forms, spectral_ratio
from ..exceptions import InputError
from ..solvers.inner import inner_problem
from ..solvers.komd import komd_margin, komd_margin_factored
from ..solvers.libsvm import solve_svm_dual
from ..solvers.solution import SVMSolution
from ..solvers.solution_cache import shared_solution
from .base import BaseMKL, BinaryFit, threshold_weights
from .iterations import IterationLog, single_solve


def base_learner(
    K: np.ndarray,
    y: np.ndarray,
    C,
    svm_tol: float,
    margin_tol: float,
    margin=None,
    bank: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> SVMSolution:
    """The SVM on the learned kernel ``K`` = sum_r weights_r bank_r. Hard margin
    (``C=None``, as in Lauriola et al. 2018): the classifier of a margin solve
    on ``K`` at ``margin_tol`` (``margin`` when it was solved on this very
    kernel); a C-SVM at ``svm_tol`` otherwise, or when the classes are not
    separable in ``K``. Given ``bank`` and ``weights``, a C-SVM already solved
    on the same combination in a :func:`mkl.solvers.solution_cache.shared_solutions` block (other
    grid points of model selection) is reused."""
    if C is None:
        margin = margin if margin is not None else komd_margin(K, y, margin_tol)
        if margin.svm is not None:
            return margin.svm
    if bank is None:
        return solve_svm_dual(K, y, C, svm_tol)
    return shared_solution(
        bank, weights, y, ("C-SVM", C, svm_tol), lambda: solve_svm_dual(K, y, C, svm_tol)
    )


class EasyMKL(BaseMKL):
    """EasyMKL (Aiolli & Donini 2015): one KOMD solve on the sum kernel.

    With trace-normalised kernels K~_r = K_r / tr K_r and K = sum_r K~_r:

      1. gamma* = argmin_{gamma in Gamma} (1 - lam) gamma'YKYgamma + lam ||gamma||^2
         (the KOMD problem on the kernel (1 - lam) K + lam I),
      2. eta_r = d_r / sum_s d_s with d_r = gamma*' Y K~_r Y gamma*,
      3. the base learner (an SVM, hard margin by default as in Lauriola et al.
         2018) on sum_r eta_r K~_r.

    With ``trace_normalise=False`` the kernels enter as given, K~_r = K_r: the
    KOMD kernel is (1 - lam) sum_r K_r + lam I, as in the authors' MKLpy
    (every version 2016-2020, ``EasyMKL._arrange_kernel`` and
    ``_combine_kernels``) that Lauriola et al. 2018 ran. On a bank of M
    unit-diagonal kernels of n points its kernel part is n times the
    trace-normalised one, so a given lam regularises far less.

    ``weights_`` are expressed on the bank as given: w_r proportional to
    eta_r / tr K_r (eta_r without trace normalisation), normalised to sum 1
    (equal to eta when the traces are equal, as for unit-trace or
    unit-diagonal banks; a positive rescaling of the combined kernel, which
    leaves a hard-margin SVM's predictions unchanged). ``objective_`` is the
    KOMD value and ``gap_`` its relative duality gap.

    Parameters
    ----------
    lam : float in [0, 1], the KOMD regularisation (0: pure margin, 1: centroids).
    C : float or None, the base SVM's soft-margin parameter (None: hard margin).
    trace_normalise : bool, divide each kernel by its trace (Aiolli & Donini
        2015) or take the kernels as given (MKLpy).
    tol : float, relative tolerance of the margin problems (KOMD, and the
        hard-margin base SVM).
    svm_tol : float, libsvm's tolerance for a soft-margin base SVM.
    """

    accepts_factors = True
    _parameter_constraints: dict = {
        **BaseMKL._parameter_constraints,
        "lam": [Interval(Real, 0, 1, closed="both")],
        "trace_normalise": ["boolean"],
    }

    def __init__(self, lam=0.1, C=None, tol=1e-5, svm_tol=1e-3, trace_normalise=True):
        self.lam = lam
        self.C = C
        self.tol = tol
        self.svm_tol = svm_tol
        self.trace_normalise = trace_normalise

    def _prepare(self, K, K_mean):
        problem = inner_problem(K, K_mean)
        traces = problem.traces()
        if self.trace_normalise and not np.all(traces > 0):
            m = int(np.flatnonzero(~(traces > 0))[0])
            raise InputError(
                f"EasyMKL needs kernels with positive trace; K[{m}] has trace {traces[m]:g}"
            )
        return problem, traces

    def _fit_binary(self, K, y, K_mean):
        problem, traces = self._shared
        M, n = problem.n_kernels, problem.n
        # K~_r = scales_r K_r: trace-normalised (Aiolli & Donini) or as given (MKLpy)
        scales = 1.0 / traces if self.trace_normalise else np.ones(M)
        komd_weights = (1.0 - self.lam) * scales
        if problem.representation == "dense":
            # (1 - lam) sum_r K~_r + lam I; the validation pass's average kernel
            # serves when the scales are equal (as given, or equal traces)
            if np.allclose(scales, scales[0], rtol=1e-10):
                K_komd = K_mean * ((1.0 - self.lam) * M * scales[0])
            else:
                K_komd = combine(K, komd_weights)
            K_komd[np.diag_indices(n)] += self.lam
            margin = komd_margin(K_komd, y, self.tol)  # step 1
        else:  # the same kernel through two passes over the factors
            bank, lam = problem.bank, self.lam
            s = bank.column_weights(komd_weights)

            def matvec(v):
                return bank.times(s * bank.project(v)) + lam * v

            margin = komd_margin_factored(matvec, y, self.tol)
        d = problem.forms(margin.coef) * scales  # step 2
        if not d.sum() > 0:
            raise InputError("EasyMKL: every kernel gives the margin vector a zero score")
        eta = d / d.sum()
        weights = eta * scales
        weights /= weights.sum()
        K_final = problem.combine(weights)  # step 3
        if problem.representation == "dense":
            sol = base_learner(K_final, y, self.C, self.svm_tol, self.tol, None, K, weights)
        else:  # C=None: the bias-free hard margin (mkl.solvers.coordinate_descent)
            sol = problem.solve(K_final, weights, y, self.C, self.svm_tol)
        log = single_solve(
            "EasyMKL",
            margin.value,
            margin.converged,
            gap=margin.gap,
            what="margin (KOMD)",
            svm_solves=2,
            passes=3,
        )
        log.inner(sol.converged, "base SVM")
        log.finish()
        return BinaryFit(
            weights=weights,
            dual_coef=sol.dual_coef,
            intercept=sol.bias,
            objective=margin.value,
            spectral_ratio=problem.spectral_ratio(K_final),
            **log.fit_fields(),
        )


class MEMO(BaseMKL):
    """MEMO, Minimum Effort Maximum Output MKL (Lauriola, Polato & Aiolli 2018).

    Maximises over beta, with mu = softmax(beta) and K_mu = sum_r mu_r K_r,

        Psi(beta) = rho(K_mu) + theta/2 mu'Q mu,   Q_rs = <K_r, K_s>_F        (eq. 2)

    where rho is the squared margin (eq. 3): for normalised kernels the trace of
    K_mu is constant, so a large ||K_mu||_F^2 = mu'Q mu is a small spectral
    ratio (eq. 1), a simpler kernel. Q is divided by the mean of its diagonal,
    which makes theta independent of n: the scaling of the authors' MKLpy
    since July 2020 (``MEMO.initialize_optimization``). Its versions of June
    2019 to June 2020 divided by the trace of Q, M times more (the paper, of
    2018, states neither): on the paper's grid of powers of ten, chosen by
    inner CV, a shift of log10(M) steps (1.3 for its 21 kernels).

    Each iteration (Section 3): solve (3) at the current beta, take the gradient
    with gamma held constant (exact by Danskin's theorem when gamma is unique),

        g_r = gamma'Y K_r Y gamma + theta mu'Q_r,

    and step beta <- beta + eta g: on mu this is the exponentiated-gradient
    (mirror ascent) step on the simplex. eta comes from a backtracking line
    search: Armijo's condition along g, each search starting from the last
    accepted step, times 1.25 when that step was accepted at its first trial.

    Stops after ``max_iter`` iterations or when an accepted step improves Psi
    by less than ``tol`` (relative), the paper's rules, or when the relative
    Frank-Wolfe gap (max_r g_r - mu'g) / Psi falls below ``tol``. That gap is
    what the best point of the simplex would add to the locally-constant-gamma
    objective; for theta = 0 it is the duality gap of the convex max-margin
    problem. It is first order, so it closes more slowly than the objective:
    the paper's improvement rule usually stops first, and ``gap_`` reports
    where the gap stood. When the line search finds no ascent step (Psi flat
    to the margin solver's precision, or an inexact gradient) the loop stops
    and the fit is reported as not converged, with that reason. ``converged_``
    also requires every margin solve and the base SVM to have converged.

    ``history_`` has the common columns (``iterations.py``; ``svm_solves``
    counts margin solves) and Psi's margin and mu'Q mu, the improvement and
    the step per iteration; ``objective_`` is the last (best) Psi. Softmax
    weights are never exactly zero: those below 1e-6 of the largest are set
    to zero, and the classifier, the base learner (a hard-margin SVM by
    default, as in the paper), is trained on the reported weights.

    Parameters
    ----------
    theta : float >= 0, weight of the complexity term (0: pure margin maximisation).
    C : float or None, the base SVM's soft-margin parameter (None: hard margin).
    tol : float, relative improvement / gap at which to stop.
    max_iter : int, iterations (accepted steps).
    margin_tol : float, relative tolerance of the margin problems.
    svm_tol : float, libsvm's tolerance for a soft-margin final SVM.
    verbose : int, 1: one line per iteration through the ``mkl`` logger.
    """

    ARMIJO = 1e-4  # sufficient-increase constant of the line search
    MAX_HALVINGS = 40
    GROWTH = 1.25  # the step tried after a step accepted at its first trial

    _parameter_constraints: dict = {
        **BaseMKL._parameter_constraints,
        "theta": [Interval(Real, 0, np.inf, closed="left")],
        "margin_tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self, theta=0.0, C=None, tol=1e-4, max_iter=100, margin_tol=1e-6, svm_tol=1e-3, verbose=0
    ):
        self.theta = theta
        self.C = C
        self.tol = tol
        self.max_iter = max_iter
        self.margin_tol = margin_tol
        self.svm_tol = svm_tol
        self.verbose = verbose

    def _prepare(self, K, K_mean):
        """Q_rs = <K_r, K_s>_F (one product of the flattened bank with itself),
        scaled by its mean diagonal."""
        if self.theta == 0:
            return None
        flat = K.reshape(K.shape[0], -1)
        Q = (flat @ flat.T).astype(np.float64)
        Q = (Q + Q.T) / 2
        scale = float(np.mean(np.diag(Q)))
        if not scale > 0:
            raise InputError("MEMO: the kernels are all zero")
        return Q / scale

    def _fit_binary(self, K, y, K_mean):
        M = K.shape[0]
        Q = self._shared
        counters = {"margin_solves": 0, "passes": 0}
        log = IterationLog("MEMO", self.tol, self.max_iter, maximise=True, verbose=self.verbose)

        def evaluate(beta, K_mu=None):
            mu = softmax(beta)
            if K_mu is None:
                K_mu = combine(K, mu)
                counters["passes"] += 1
            margin = komd_margin(K_mu, y, self.margin_tol)
            counters["margin_solves"] += 1
            log.inner(margin.converged, "margin (KOMD)")
            complexity = float(mu @ Q @ mu) if Q is not None else 0.0
            return {
                "beta": beta,
                "mu": mu,
                "K": K_mu,
                "margin": margin,
                "complexity": complexity,
                "psi": margin.value + 0.5 * self.theta * complexity,  # eq. (2)
            }

        pt = evaluate(np.zeros(M), K_mean)  # beta = 0: the uniform combination
        step = improvement = None
        grow = False
        for it in range(1, self.max_iter + 1):
            log.consider(pt["psi"], pt)  # accepted steps only increase Psi
            d = psd_quadratic_forms(K, pt["margin"].coef)  # gamma' Y K_r Y gamma: one pass
            counters["passes"] += 1
            g = d if Q is None else d + self.theta * (Q @ pt["mu"])  # dPsi/dmu_r
            mean_g = float(pt["mu"] @ g)
            gap = (float(g.max()) - mean_g) / max(abs(pt["psi"]), 1e-300)
            log.record(
                pt["psi"],
                gap=gap,
                weights=pt["mu"],
                svm_solves=counters["margin_solves"],
                passes=counters["passes"],
                margin=pt["margin"].value,
                complexity=pt["complexity"],
                improvement=np.nan if improvement is None else improvement,
                step=np.nan if step is None else step,
            )
            if gap <= self.tol:
                log.stop("gap", converged=True)
                break
            if improvement is not None and improvement < self.tol:
                log.stop("improvement below tol", converged=True)
                break
            if it == self.max_iter:
                break
            # backtracking line search along beta + eta (g - mu'g)
            direction = g - mean_g
            slope = float(pt["mu"] @ direction**2)  # dPsi/deta at eta = 0
            if step is None:  # first step: beta moves by at most 1
                eta = 1.0 / max(float(np.ptp(g)), 1e-300)
            else:  # the last step, grown if it was accepted at its first trial
                eta = self.GROWTH * step if grow else step
            new = None
            for attempt in range(self.MAX_HALVINGS):
                trial = evaluate(pt["beta"] + eta * direction)
                if trial["psi"] >= pt["psi"] + self.ARMIJO * eta * slope:
                    new, grow = trial, attempt == 0
                    break
                eta /= 2.0
            if new is None:  # stationary to the margin solver's precision, or not: say so
                log.stop("line search found no ascent step", converged=False)
                break
            improvement = (new["psi"] - pt["psi"]) / max(abs(pt["psi"]), 1e-300)
            pt, step = new, eta
        # softmax weights are never exactly zero; the classifier is trained on the
        # weights as reported, with negligible ones set to zero
        mu, K_mu, margin = pt["mu"], pt["K"], pt["margin"]
        reported = threshold_weights(mu)
        if np.any(reported != mu):
            mu = reported / reported.sum()
            K_mu = combine(K, mu)
        same_kernel = K_mu is pt["K"]  # then the last margin solve was on K_mu
        sol = base_learner(
            K_mu,
            y,
            self.C,
            self.svm_tol,
            self.margin_tol,
            margin if same_kernel else None,
            K,
            mu,
        )
        log.inner(sol.converged, "base SVM")
        log.finish()
        return BinaryFit(
            weights=mu,
            dual_coef=sol.dual_coef,
            intercept=sol.bias,
            objective=pt["psi"],
            spectral_ratio=spectral_ratio(K_mu),
            **log.fit_fields(),
        )

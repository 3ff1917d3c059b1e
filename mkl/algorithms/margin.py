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

The margin problem is the hot loop. It is libsvm's nu-SVC dual with nu = 2/n
(see ``komd_margin``). Measured against the alternatives (benchmarks/
bench_margin.py): as fast as a hard-margin C-SVM (10 ms at n = 1000, 21 HPK
kernels, where one soft-margin SVC fit takes 6 ms) and as accurate (relative
duality gap 1e-6 to 1e-5), but where the hulls nearly touch the C-SVM with a
huge C took 0.5 s and, where they intersect, 50 s, against 5 ms; an
interior-point QP (Clarabel) took seconds at n = 1000. Every solve reports its
Frank-Wolfe duality gap, exact for this convex QP.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import softmax
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import NuSVC

from ..base import BinaryFit, MKLClassifier, threshold_weights
from ..exceptions import InputError
from ..kernels import combine, psd_quadratic_forms, spectral_ratio
from ..solution_cache import shared_solution
from ..svm import SVMSolution, solve_svm_dual
from .inner import inner_problem
from .iterations import IterationLog, single_solve


@dataclass
class Margin:
    """Solution of min_{gamma in Gamma} gamma' Y K Y gamma."""

    gamma: np.ndarray  # (n,) in Gamma
    coef: np.ndarray  # y * gamma: the kernels' scores are d_r = coef' K_r coef
    value: float  # rho = gamma' Y K Y gamma, the squared distance between the class hulls
    gap: float  # relative Frank-Wolfe duality gap, an upper bound on (value - rho*) / value
    converged: bool  # libsvm stopped on its tolerance, not on the iteration cap
    svm: SVMSolution | None  # the hard-margin SVM on K (None: the hulls touch, no such SVM)


# libsvm's iterations per training point before the margin solve gives up
# (well-separated classes take 3-5 n, nearly touching hulls hundreds of n, where
# rho is ~0 anyway and a more accurate ~0 is not worth 0.5 s at n = 1000)
MAX_ITER_PER_POINT = 20


def komd_margin(K: np.ndarray, y: np.ndarray, tol: float = 1e-7) -> Margin:
    """rho(K) = min_{gamma in Gamma} gamma' Y K Y gamma for a PSD kernel ``K`` (n, n)
    and labels ``y`` in {-1, +1} (KOMD; MEMO eq. 3).

    This QP is libsvm's nu-SVC dual with nu = 2/n: min 1/2 a'YKYa s.t.
    0 <= a_i <= 1, y'a = 0, 1'a = nu n = 2, i.e. each class's a sums to 1,
    which makes the box redundant. So gamma = a, solved by libsvm's SMO through
    ``NuSVC``; unlike a hard-margin C-SVM with a huge C, it needs no box and
    stays fast when the hulls touch or intersect (rho = 0). libsvm's absolute
    tolerance is ``tol`` times the squared distance between the class centroids
    (an upper bound on rho), so that ``tol`` acts relative to the margin.
    When the hulls are apart, libsvm's classifier is the hard-margin SVM on K:
    alpha = 2 gamma / rho, objective 2 / rho. ``converged`` is False when
    libsvm stopped at its iteration cap (hulls touching: rho is about 0).
    Where libsvm fails (its margin variable rounds to zero and its coefficients
    come out infinite) the QP is solved by :func:`komd_margin_factored` on
    ``K @ v`` instead, whose result has no classifier (``svm`` None).
    """
    y = np.asarray(y, dtype=np.float64)
    n = len(y)
    pos = y > 0
    centroid_gap = np.where(pos, 1.0 / pos.sum(), -1.0 / (~pos).sum())
    scale = float(centroid_gap @ K @ centroid_gap)
    if not scale > 1e-12 * float(np.mean(np.diag(K))):  # equal centroids: rho = 0
        scale = float(np.mean(np.diag(K))) or 1.0
    # the dual has no linear term, so its gradient scales with K: stopping at
    # tol * scale on K is stopping at tol on K / scale, without the copy
    svc = NuSVC(nu=2.0 / n, kernel="precomputed", tol=tol * scale, max_iter=MAX_ITER_PER_POINT * n)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        try:
            svc.fit(np.ascontiguousarray(K, dtype=np.float64), y)
        except ValueError as exc:
            # libsvm's nu-SVC divides by its margin r; when r rounds to zero
            # (a margin at rounding level, e.g. nearly constant kernels) its
            # coefficients are inf and scikit-learn refuses them
            if "not finite" not in str(exc):
                raise
            return komd_margin_factored(lambda v: K @ v, y, tol)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    a = np.zeros(n)
    a[svc.support_] = np.abs(svc.dual_coef_[0])
    gamma = np.where(pos, a / a[pos].sum(), a / a[~pos].sum())
    v = y * gamma
    Kv = K @ v
    rho = float(v @ Kv)
    # Frank-Wolfe gap of the convex QP: grad = 2 Y K Y gamma, and the linear
    # minimiser over Gamma puts each class's mass on its smallest gradient entry
    grad = 2.0 * y * Kv
    gap = max(float(grad @ gamma - grad[pos].min() - grad[~pos].min()), 0.0)
    svm = None
    if rho > 1e-8 * scale:  # separable: libsvm's nu-SVC classifier is the hard-margin SVM
        alpha = 2.0 * gamma / rho
        svm = SVMSolution(
            alpha=alpha,
            dual_coef=y * alpha,
            bias=float(svc.intercept_[0]),
            objective=2.0 / rho,
            C=np.inf,
            at_bound=False,
            converged=converged,
        )
    return Margin(gamma, v, rho, gap / max(rho, 1e-300), converged, svm)


def project_class_simplices(g: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Euclidean projection onto Gamma: each class's entries onto the unit simplex
    (the sort-based projection of Held, Wolfe & Crowder 1974)."""
    out = np.empty_like(g)
    for mask in (pos, ~pos):
        v = g[mask]
        u = np.sort(v)[::-1]
        css = np.cumsum(u) - 1.0
        k = np.arange(1, len(u) + 1)
        rho = int(np.flatnonzero(u - css / k > 0)[-1])
        out[mask] = np.maximum(v - css[rho] / (rho + 1), 0.0)
    return out


# accelerated projected-gradient iterations before a factored margin solve gives up
KOMD_MAX_ITER = 5000


def komd_margin_factored(matvec, y: np.ndarray, tol: float = 1e-7) -> Margin:
    """rho(K) = min_{gamma in Gamma} gamma' Y K Y gamma when K is known only through
    ``matvec`` (v -> K v; for a factor bank two passes over the factors), by
    accelerated projected gradient (Beck & Teboulle 2009, FISTA) with a
    backtracking estimate of the Lipschitz constant and adaptive restart
    (O'Donoghue & Candes 2015) when the objective increases. Stops when the
    relative Frank-Wolfe gap, an upper bound on (value - rho*) / value for this
    convex QP, is at most ``tol`` (``converged`` False after KOMD_MAX_ITER
    iterations). ``svm`` is None: the factored path trains its base learner by
    its own SVM (mkl.factor_svm)."""
    y = np.asarray(y, dtype=np.float64)
    pos = y > 0
    gamma = np.where(pos, 1.0 / pos.sum(), 1.0 / (~pos).sum())  # the centroids

    def value_grad(g):
        Kv = matvec(y * g)
        return float((y * g) @ Kv), 2.0 * y * Kv

    f, grad = value_grad(gamma)
    # a first Lipschitz estimate from a few power iterations on K
    x = np.random.default_rng(0).normal(size=len(y))
    for _ in range(5):
        x = matvec(x)
        x /= max(np.linalg.norm(x), 1e-300)
    L = max(2.0 * float(x @ matvec(x)), 1e-12)
    z, f_z, grad_z, t = gamma.copy(), f, grad, 1.0
    best = (f, gamma, grad)
    gap = np.inf
    converged = False
    for _ in range(KOMD_MAX_ITER):
        fb, gb, gradb = best
        gap = max(float(gradb @ gb - gradb[pos].min() - gradb[~pos].min()), 0.0)
        if gap <= tol * max(fb, 1e-300):
            converged = True
            break
        while True:  # backtracking on L
            new = project_class_simplices(z - grad_z / L, pos)
            f_new, grad_new = value_grad(new)
            d = new - z
            if f_new <= f_z + float(grad_z @ d) + 0.5 * L * float(d @ d) + 1e-15 * abs(f_z):
                break
            L *= 2.0
        if f_new > f and t > 1.0:  # adaptive restart: momentum lost
            t = 1.0
            z, f_z, grad_z = gamma, f, grad
            continue
        # (from a restart, the plain projected-gradient step is accepted: it
        # decreases f up to rounding, and refusing it would stall at the optimum)
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        z = new + (t - 1.0) / t_next * (new - gamma)
        gamma, f, grad, t = new, f_new, grad_new, t_next
        f_z, grad_z = value_grad(z)
        if f < best[0]:
            best = (f, gamma, grad)
    f, gamma, _ = best
    return Margin(gamma, y * gamma, f, gap / max(f, 1e-300), converged, None)


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
    on the same combination in a :func:`mkl.solution_cache.shared_solutions` block (other
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


def _check_unit_interval(name: str, value) -> None:
    if not (isinstance(value, numbers.Real) and 0.0 <= value <= 1.0):
        raise InputError(f"{name} must be a number in [0, 1], got {name}={value!r}")


class EasyMKL(MKLClassifier):
    """EasyMKL (Aiolli & Donini 2015): one KOMD solve on the sum kernel.

    With trace-normalised kernels K~_r = K_r / tr K_r and K = sum_r K~_r:

      1. gamma* = argmin_{gamma in Gamma} (1 - lam) gamma'YKYgamma + lam ||gamma||^2
         (the KOMD problem on the kernel (1 - lam) K + lam I),
      2. eta_r = d_r / sum_s d_s with d_r = gamma*' Y K~_r Y gamma*,
      3. the base learner (an SVM, hard margin by default as in Lauriola et al.
         2018) on sum_r eta_r K~_r.

    ``weights_`` are expressed on the bank as given: w_r proportional to
    eta_r / tr K_r, normalised to sum 1 (equal to eta when the traces are equal,
    as for unit-trace or unit-diagonal banks; a positive rescaling of the
    combined kernel, which leaves a hard-margin SVM's predictions unchanged).
    ``objective_`` is the KOMD value and ``gap_`` its relative duality gap.

    Parameters
    ----------
    lam : float in [0, 1], the KOMD regularisation (0: pure margin, 1: centroids).
    C : float or None, the base SVM's soft-margin parameter (None: hard margin).
    tol : float, relative tolerance of the margin problems (KOMD, and the
        hard-margin base SVM).
    svm_tol : float, libsvm's tolerance for a soft-margin base SVM.
    """

    accepts_factors = True

    def __init__(self, lam=0.1, C=None, tol=1e-5, svm_tol=1e-3):
        self.lam = lam
        self.C = C
        self.tol = tol
        self.svm_tol = svm_tol

    def _check_params(self):
        super()._check_params()
        _check_unit_interval("lam", self.lam)

    def _prepare(self, K, K_mean):
        problem = inner_problem(K, K_mean)
        traces = problem.traces()
        if not np.all(traces > 0):
            m = int(np.flatnonzero(~(traces > 0))[0])
            raise InputError(
                f"EasyMKL needs kernels with positive trace; K[{m}] has trace {traces[m]:g}"
            )
        return problem, traces

    def _fit_binary(self, K, y, K_mean):
        problem, traces = self._shared
        M, n = problem.n_kernels, problem.n
        komd_weights = (1.0 - self.lam) / traces
        if problem.representation == "dense":
            # (1 - lam) sum_r K_r / tr K_r + lam I; the validation pass's average
            # kernel serves when the traces are equal (unit-trace/unit-diagonal banks)
            if np.allclose(traces, traces[0], rtol=1e-10):
                K_komd = K_mean * ((1.0 - self.lam) * M / traces[0])
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
        d = problem.forms(margin.coef) / traces  # step 2
        if not d.sum() > 0:
            raise InputError("EasyMKL: every kernel gives the margin vector a zero score")
        eta = d / d.sum()
        weights = eta / traces
        weights /= weights.sum()
        K_final = problem.combine(weights)  # step 3
        if problem.representation == "dense":
            sol = base_learner(K_final, y, self.C, self.svm_tol, self.tol, None, K, weights)
        else:  # C=None: the bias-free hard margin (mkl.factor_svm)
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


class MEMO(MKLClassifier):
    """MEMO, Minimum Effort Maximum Output MKL (Lauriola, Polato & Aiolli 2018).

    Maximises over beta, with mu = softmax(beta) and K_mu = sum_r mu_r K_r,

        Psi(beta) = rho(K_mu) + theta/2 mu'Q mu,   Q_rs = <K_r, K_s>_F        (eq. 2)

    where rho is the squared margin (eq. 3): for normalised kernels the trace of
    K_mu is constant, so a large ||K_mu||_F^2 = mu'Q mu is a small spectral
    ratio (eq. 1), a simpler kernel. Q is divided by the mean of its diagonal
    (as in the authors' MKLpy), which makes theta independent of n.

    Each iteration (Section 3): solve (3) at the current beta, take the gradient
    with gamma held constant (exact by Danskin's theorem when gamma is unique),

        g_r = gamma'Y K_r Y gamma + theta mu'Q_r,

    and step beta <- beta + eta g: on mu this is the exponentiated-gradient
    (mirror ascent) step on the simplex. eta comes from a backtracking line
    search: Armijo's condition along g, each search starting from the last
    accepted step, times 1.25 when that step was accepted at its first trial
    (measured on HPK banks: per margin solve, 1.25 gains more than 1 or 2).

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
    GROWTH = 1.25  # the step tried after a step accepted at its first trial (measured)

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

    def _check_params(self):
        super()._check_params()
        t = self.theta
        if not (isinstance(t, numbers.Real) and np.isfinite(t) and t >= 0):
            raise InputError(f"theta must be a finite number >= 0, got theta={t!r}")

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

"""Kernels learned from (possibly indefinite) similarity matrices: IndSVM (Luss &
d'Aspremont, NIPS 2007) and the entropic mirror-descent methods of Kundu,
Tankasali, Bhattacharyya & Ben-Tal, "Efficient algorithms for learning kernels
from multiple similarity matrices with general convex loss functions" (NIPS
2010). The fixed-kernel baselines that paper compares against (eigen
transforms, similarities as features) are in mkl.algorithms.eigen_transforms.

The input bank holds m similarity matrices S_1..S_m (training blocks, symmetric,
possibly indefinite; their eigendecompositions come from
:func:`mkl.kernels.spectra.spectra`, stored once per bank). Each method learns
a PSD kernel close to them together with the SVM on it. With the SVM value

    omega(K) = max_{alpha in A} 1'alpha - 1/2 alpha'Y K Y alpha                 (1)

* :class:`IndSVM` (Luss & d'Aspremont 2007): max_alpha min_{K psd} of (1) +
  rho ||K - S||_F^2, whose inner minimiser is K*(alpha) = (S + vv'/(4 rho))_+
  (eq. 3), v = Y alpha; projected gradient ascent on alpha with its duality gap;
* :class:`ESKL` (Algorithm 1): one kernel, min_{K psd, tr K = tau} omega(K) +
  rho sum_i L(K - S_i) (eq. 4), by entropic (matrix exponentiated) mirror descent;
* :class:`EMKL` (Algorithm 2): one kernel K_i per S_i, combined by MKL (eq. 6),
  mirror descent on the product of trace-constrained PSD sets;
* :class:`REKL` (Algorithm 3): K_i = sum_j mu_ij v_ij v_ij' restricted to the
  eigenvectors of S_i (eq. 7), entropic mirror descent on the simplices of mu_i.

Losses (Section 4): ``l1`` = sum |K - S|, ``l2`` = ||K - S||_F, ``l3`` =
sum (K - S)^2; REKL's loss is ||mu_i - lambda_i||^2.

Choices where the paper is silent or its extracted text is garbled (see
docs/protocols.md, "Reading the papers' equations"):

* The mirror step is K_{t+1} = tau exp(log K_t - eta_t f'_t) / tr(...), the
  entropic mirror descent of Ben-Tal et al. that Algorithms 1-2 cite, kept in
  the log domain (H_{t+1} = H_t - eta_t f'_t, one ``eigh`` per kernel per
  step). The printed algorithms update the eigenvalues of K in the
  eigenbasis of the subgradient, which equals this only when the two commute.
* MKL in EMKL/REKL is the non-sparse MKL of eq. (10) (Nath et al. 2009, the
  paper's [10]): Omega(K_1..K_m) = max_{gamma in simplex} max_{alpha in A}
  1'alpha - 1/2 alpha'Y (sum_i K_i / gamma_i) Y alpha, solved by
  :func:`mkl.algorithms.nonsparse.nonsparse_mkl`; by Danskin's theorem a
  subgradient in K_i is -1/(2 gamma_i*) v v' (eq. 12), v = Y alpha*.
* Step sizes are those of Proposition 3.1 / Theorem 3.2 / Proposition 3.2,
  eta_t = sqrt(2 log n / (m t)) / Lip, with Lip the largest subgradient norm
  seen so far (the propositions need a bound on the norms along the iterates).
  ``history_`` records the objective; ``objective_`` is the best one, whose
  kernel the final classifier uses.
* Test similarities are used as they are, with the learned SVM's
  coefficients and ``weights_`` (mkl/kernels/spectra.py).
* the trace ``tau`` defaults to that of the average similarity block (n for
  unit-diagonal similarities).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.linalg
from scipy.optimize import brentq
from sklearn.utils._param_validation import Interval, StrOptions

from ..banks.algebra import spectral_ratio
from ..exceptions import InputError, SolverError
from ..kernels.spectra import from_spectrum, spectra, symmetric_eigh
from ..solvers.libsvm import primal_objective, solve_svm_dual
from .base import BaseMKL, BinaryFit
from .iterations import IterationLog
from .nonsparse import nonsparse_mkl

LOSSES = ("l1", "l2", "l3")


def _finite_C(C) -> float:
    if C is None:
        raise InputError("this method needs a finite C (soft margin), got C=None")
    return float(C)


# --------------------------------------------------------------------------- #
# IndSVM                                                                      #
# --------------------------------------------------------------------------- #
def project_svm_set(z: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """Euclidean projection onto A = {0 <= alpha <= C, y'alpha = 0}: alpha =
    clip(z - t y, 0, C) with t the root of the decreasing y'alpha(t)."""

    def balance(t):
        return float(y @ np.clip(z - t * y, 0.0, C))

    bound = float(np.abs(z).max()) + C + 1.0
    if balance(0.0) == 0.0:
        t = 0.0
    else:
        try:
            t = brentq(balance, -bound, bound, xtol=1e-14 * bound, rtol=1e-15, maxiter=500)
        except (ValueError, RuntimeError) as exc:  # no sign change / no convergence
            raise SolverError(f"IndSVM: projection onto the SVM set failed ({exc})") from exc
    return np.clip(z - t * y, 0.0, C)


class IndSVM(BaseMKL):
    """SVM with an indefinite kernel (Luss & d'Aspremont, NIPS 2007):

        max_{alpha in A} min_{K psd} 1'alpha - 1/2 alpha'YKYalpha + rho ||K - S||_F^2

    with S the (average) similarity. The inner minimiser is K*(alpha) =
    (S + vv'/(4 rho))_+, v = Y alpha (Kundu et al. eq. 3), so the outer problem
    maximises the concave g(alpha), gradient 1 - Y K*(alpha) Y alpha. Projected
    gradient ascent with an Armijo backtracking line search, started from the
    SVM on the denoised S. Duality gap: f(K*(alpha)) - g(alpha) >= 0 with
    f(K) = omega(K) + rho ||K - S||_F^2, omega bounded from above by the SVM
    primal at libsvm's solution, so the gap is certified whatever ``svm_tol``;
    ``history_`` records both bounds and the loop stops when the relative gap
    is below ``tol`` (or, not converged, when the line search finds no ascent
    step).
    The classifier is the SVM on the best K*; test similarities are used as given.
    """

    learns_kernel = True
    requires_psd = False
    _parameter_constraints: dict = {
        **BaseMKL._parameter_constraints,
        "rho": [Interval(Real, 0, np.inf, closed="neither")],
    }

    def __init__(self, C=1.0, rho=1.0, tol=1e-3, max_iter=300, svm_tol=1e-4, verbose=0):
        self.C = C
        self.rho = rho
        self.tol = tol
        self.max_iter = max_iter
        self.svm_tol = svm_tol
        self.verbose = verbose

    def _prepare(self, K, K_mean):
        S = (K_mean + K_mean.T) / 2
        lam, V = symmetric_eigh(S)
        return S, from_spectrum(V, np.maximum(lam, 0.0))

    def _fit_binary(self, K, y, K_mean):
        C = _finite_C(self.C)
        S, S_denoised = self._shared
        rho = float(self.rho)

        def inner(alpha):
            """K*(alpha), g(alpha), its gradient, rho ||K* - S||^2 and K*'s largest eigenvalue."""
            v = y * alpha
            lam, V = symmetric_eigh(S + np.outer(v, v) / (4.0 * rho))
            lam = np.maximum(lam, 0.0)
            Kstar = from_spectrum(V, lam)
            Kv = Kstar @ v
            penalty = rho * float(np.sum((Kstar - S) ** 2))
            g = alpha.sum() - 0.5 * v @ Kv + penalty
            return Kstar, float(g), 1.0 - y * Kv, penalty, float(lam[-1])

        start = solve_svm_dual(S_denoised, y, C, self.svm_tol)
        alpha = start.alpha
        Kstar, g, grad, penalty, lam_max = inner(alpha)
        step = 1.0 / max(lam_max, 1e-300)
        log = IterationLog("IndSVM", self.tol, self.max_iter, verbose=self.verbose)
        log.inner(start.converged, "SVM")
        solves = 1
        for it in range(1, self.max_iter + 1):
            # upper bound f(K*(alpha)) >= min f, with omega bounded by the SVM primal
            sol = solve_svm_dual(Kstar, y, C, self.svm_tol)
            solves += 1
            upper = primal_objective(Kstar, y, C, sol) + penalty
            log.consider(upper, (Kstar, sol))
            gap = max(log.best_objective - g, 0.0) / max(abs(log.best_objective), 1e-300)
            log.record(upper, gap=gap, svm_solves=solves, lower_bound=g, step=step)
            if gap <= self.tol:
                log.stop("gap", converged=True)
                break
            if it == self.max_iter:
                break
            # projected gradient step with backtracking (Armijo on the projection arc)
            accepted = False
            for _ in range(30):
                trial = project_svm_set(alpha + step * grad, y, C)
                K_t, g_t, grad_t, penalty_t, _ = inner(trial)
                if g_t >= g + 1e-4 * float(grad @ (trial - alpha)) and g_t > g:
                    accepted = True
                    break
                step /= 2.0
            if not accepted:  # no ascent left at this precision: the gap is what it is
                log.stop("line search found no ascent step", converged=False)
                break
            alpha, Kstar, g, grad, penalty = trial, K_t, g_t, grad_t, penalty_t
            step *= 1.5
        log.finish()
        K_best, sol = log.best
        M = K.shape[0]
        return BinaryFit(
            weights=np.full(M, 1.0 / M),
            dual_coef=sol.dual_coef,
            intercept=sol.bias,
            objective=log.best_objective,
            spectral_ratio=spectral_ratio(K_best),
            **log.fit_fields(),
        )


# --------------------------------------------------------------------------- #
# Entropic mirror descent: ESKL, EMKL, REKL                                   #
# --------------------------------------------------------------------------- #
def loss_and_subgradient(D: np.ndarray, loss: str) -> tuple[float, np.ndarray]:
    """L(D) and a subgradient for D = K - S: l1 = sum |D|, l2 = ||D||_F, l3 = sum D^2."""
    if loss == "l1":
        return float(np.abs(D).sum()), np.sign(D)
    if loss == "l2":
        norm = float(np.linalg.norm(D))
        return norm, (D / norm if norm > 0 else np.zeros_like(D))
    if loss == "l3":
        return float(np.sum(D * D)), 2.0 * D
    raise InputError(f"unknown loss {loss!r}; known: {LOSSES}")


def entropic_kernel(H: np.ndarray, tau: float) -> np.ndarray:
    """tau exp(H) / tr exp(H): the PSD matrix of trace tau whose log is H (up to
    a multiple of I), by one symmetric eigendecomposition."""
    w, V = symmetric_eigh((H + H.T) / 2)
    e = np.exp(w - w.max())
    return from_spectrum(V, tau * e / e.sum())


class _EntropicMirrorDescent(BaseMKL):
    """The loop shared by ESKL, EMKL and REKL: evaluate the objective and its
    subgradient at the current point (an SVM or MKL solve), keep the best
    point, step with eta_t = sqrt(2 log n / (m t)) / Lip. Subclasses define
    ``_start``, ``_evaluate`` (objective, subgradient blocks, classifier info)
    and ``_move``. Stops after ``max_iter`` steps, or when the best objective
    improved by less than ``tol`` (relative) over the last ``patience`` steps."""

    learns_kernel = True
    requires_psd = False

    patience = 20
    _parameter_constraints: dict = {
        **BaseMKL._parameter_constraints,
        "rho": [Interval(Real, 0, np.inf, closed="left")],
        "tau": [Interval(Real, 0, np.inf, closed="neither"), None],
        "loss": [StrOptions(set(LOSSES))],
    }
    _inner_solve = "SVM"  # what _evaluate solves (its info["converged"])

    def __init__(self, C=1.0, rho=1.0, tau=None, tol=1e-4, max_iter=200, svm_tol=1e-6, verbose=0):
        self.C = C
        self.rho = rho
        self.tau = tau
        self.tol = tol
        self.max_iter = max_iter
        self.svm_tol = svm_tol
        self.verbose = verbose

    def _tau(self, K_mean) -> float:
        tau = float(np.trace(K_mean)) if self.tau is None else float(self.tau)
        if not tau > 0:
            raise InputError(
                f"the trace of the average similarity is {tau:g}; pass tau > 0 explicitly"
            )
        return tau

    def _fit_binary(self, K, y, K_mean):
        _finite_C(self.C)
        M, n, _ = K.shape
        tau = self._tau(K_mean)
        state = self._start(K, K_mean, tau)
        m_blocks = self._n_blocks(M)
        log = IterationLog(type(self).__name__, self.tol, self.max_iter, verbose=self.verbose)
        lip, lower, upper, solves = 0.0, -np.inf, np.inf, 0
        for t in range(1, self.max_iter + 1):
            objective, grads, info = self._evaluate(K, y, state, tau)
            log.inner(info["converged"], self._inner_solve)
            solves += info["svm_solves"]
            log.consider(objective, info)
            lip = max(lip, max(self._norm(g) for g in grads))
            gap = np.nan
            if "lower" in info:  # a certified bound pair (ESKL)
                lower, upper = max(lower, info["lower"]), min(upper, info["upper"])
                gap = max(upper - lower, 0.0) / max(abs(upper), 1e-300)
            step = np.sqrt(2.0 * np.log(n) / (m_blocks * t)) / max(lip, 1e-300)
            log.record(
                objective,
                gap=gap,
                weights=info["weights"] if M > 1 and m_blocks > 1 else None,
                svm_solves=solves,
                lipschitz=lip,
                step=step,
            )
            if t > self.patience:
                before = log.rows[-1 - self.patience]["best_objective"]
                if before - log.best_objective <= self.tol * abs(before):
                    log.stop(f"best objective settled (tol over {self.patience} steps)", True)
                    break
            if t == self.max_iter:
                break
            state = self._move(state, grads, step, tau)
        log.finish()
        info = log.best
        return BinaryFit(
            weights=info["weights"],
            dual_coef=info["sol"].dual_coef,
            intercept=info["sol"].bias,
            objective=log.best_objective,
            spectral_ratio=spectral_ratio(info["kernel"]),
            **log.fit_fields(),
        )

    # hooks
    def _n_blocks(self, M: int) -> int:
        return 1

    @staticmethod
    def _norm(g: np.ndarray) -> float:
        return float(np.linalg.norm(g))


class ESKL(_EntropicMirrorDescent):
    """Entropic single kernel learning (Kundu et al. 2010, Algorithm 1): one
    kernel K from all similarity matrices,

        min_{K psd, tr K = tau} omega(K) + rho sum_i L(K - S_i)            (4)

    subgradient -1/2 v v' + rho sum_i L'(K - S_i) (eq. 8), v = Y alpha*, started
    at K = tau/n I. Parameters: C, rho, ``loss`` (l1, l2, l3), ``tau`` (the trace,
    default: that of the average similarity), tol, max_iter, svm_tol, verbose.

    (4) is convex, so every step also certifies a duality gap: with alpha the
    SVM's multipliers at K_t, f_alpha(K) = 1'alpha - 1/2 alpha'YKYalpha +
    rho L(K) is a convex minorant of the objective with gradient G_t at K_t,
    so min f >= f_alpha(K_t) + tau lambda_min(G_t) - <G_t, K_t> (the linear
    minimum over {K psd, tr K = tau} is tau times the smallest eigenvalue);
    the SVM primal at alpha bounds omega(K_t) from above. ``gap_`` is the
    relative gap between the best of each; the loop stops on the rule of
    :class:`_EntropicMirrorDescent`, whatever the gap.
    """

    def __init__(
        self,
        C=1.0,
        rho=1.0,
        loss="l3",
        tau=None,
        tol=1e-4,
        max_iter=200,
        svm_tol=1e-6,
        verbose=0,
    ):
        super().__init__(
            C=C, rho=rho, tau=tau, tol=tol, max_iter=max_iter, svm_tol=svm_tol, verbose=verbose
        )
        self.loss = loss

    def _start(self, K, K_mean, tau):
        n = K.shape[1]
        return {"H": np.zeros((n, n)), "K": np.eye(n) * (tau / n)}

    def _evaluate(self, K, y, state, tau):
        Kt = state["K"]
        sol = solve_svm_dual(Kt, y, self.C, self.svm_tol)
        v = sol.dual_coef
        G = -0.5 * np.outer(v, v)
        penalty = 0.0
        for S_i in K:
            value, sub = loss_and_subgradient(Kt - S_i, self.loss)
            penalty += value
            G += self.rho * sub
        M = K.shape[0]
        objective = sol.objective + self.rho * penalty  # f_alpha(K_t)
        lam_min = float(scipy.linalg.eigh(G, eigvals_only=True, subset_by_index=[0, 0])[0])
        info = {
            "weights": np.full(M, 1.0 / M),
            "sol": sol,
            "kernel": Kt,
            "converged": sol.converged,
            "svm_solves": 1,
            "lower": objective + tau * lam_min - float(np.sum(G * Kt)),
            "upper": primal_objective(Kt, y, self.C, sol) + self.rho * penalty,
        }
        return objective, [G], info

    def _move(self, state, grads, eta, tau):
        H = state["H"] - eta * grads[0]
        return {"H": H, "K": entropic_kernel(H, tau)}


class _EntropicMKL(_EntropicMirrorDescent):
    """What EMKL and REKL share: one kernel K_i per similarity matrix, the m
    kernels combined at every step by the non-sparse MKL of eq. (10)
    (:func:`mkl.algorithms.nonsparse.nonsparse_mkl`, solved to the relative
    duality gap ``mkl_tol``), the step size counting m blocks. ``weights_``
    are the combination's weights, 1/gamma_i normalised to sum 1."""

    _inner_solve = "inner non-sparse MKL"

    def __init__(
        self,
        C=1.0,
        rho=1.0,
        tau=None,
        tol=1e-4,
        max_iter=200,
        svm_tol=1e-6,
        mkl_tol=1e-3,
        verbose=0,
    ):
        super().__init__(
            C=C, rho=rho, tau=tau, tol=tol, max_iter=max_iter, svm_tol=svm_tol, verbose=verbose
        )
        self.mkl_tol = mkl_tol

    def _n_blocks(self, M):
        return M

    def _omega(self, kernels: np.ndarray, y: np.ndarray) -> tuple[float, dict]:
        """Omega(K_1..K_m) (eq. 10) and the classifier info of its solution,
        with gamma* and v = Y alpha* for the subgradient (eq. 12)."""
        beta, sol, K_beta, info = nonsparse_mkl(kernels, y, self.C, self.svm_tol, self.mkl_tol)
        info.update(weights=beta, sol=sol, kernel=K_beta)
        return sol.objective, info


class EMKL(_EntropicMKL):
    """Entropic multiple kernel learning (Kundu et al. 2010, Algorithm 2): one
    kernel K_i per similarity matrix, combined by the non-sparse MKL of eq. (10),

        min_{K_i psd, tr K_i = tau} Omega(K_1..K_m) + rho sum_i L(K_i - S_i)   (6)

    subgradient in K_i: -1/(2 gamma_i*) v v' + rho L'(K_i - S_i) (eq. 12), one
    MKL solve (:func:`mkl.algorithms.nonsparse.nonsparse_mkl`) and m
    eigendecompositions per step. ``weights_`` are the combination's weights,
    1/gamma_i normalised to sum 1; ``mkl_tol`` is the inner MKL's relative
    duality gap.
    """

    def __init__(
        self,
        C=1.0,
        rho=1.0,
        loss="l3",
        tau=None,
        tol=1e-4,
        max_iter=200,
        svm_tol=1e-6,
        mkl_tol=1e-3,
        verbose=0,
    ):
        super().__init__(
            C=C,
            rho=rho,
            tau=tau,
            tol=tol,
            max_iter=max_iter,
            svm_tol=svm_tol,
            mkl_tol=mkl_tol,
            verbose=verbose,
        )
        self.loss = loss

    def _start(self, K, K_mean, tau):
        M, n, _ = K.shape
        return {"H": np.zeros((M, n, n)), "K": np.repeat((np.eye(n) * (tau / n))[None], M, 0)}

    def _evaluate(self, K, y, state, tau):
        omega, info = self._omega(state["K"], y)
        v = info["v"]  # Y alpha* (eq. 12)
        grads, penalty = [], 0.0
        for i, S_i in enumerate(K):
            value, sub = loss_and_subgradient(state["K"][i] - S_i, self.loss)
            penalty += value
            grads.append(-0.5 / info["gamma"][i] * np.outer(v, v) + self.rho * sub)
        return omega + self.rho * penalty, grads, info

    def _move(self, state, grads, eta, tau):
        H = state["H"] - eta * np.stack(grads)
        return {"H": H, "K": np.stack([entropic_kernel(H_i, tau) for H_i in H])}


class REKL(_EntropicMKL):
    """Restricted entropic kernel learning (Kundu et al. 2010, Algorithm 3):
    K_i = sum_j mu_ij v_ij v_ij' over the eigenvectors of S_i (computed once, or
    read from the bank), mu_i >= 0, sum_j mu_ij = tau,

        min Omega(K_1..K_m) + rho sum_i ||mu_i - lambda_i||^2                 (7)

    Omega as in :class:`EMKL` (eq. 10), subgradient -1/(2 gamma_i*) (v_ij'Y alpha)^2
    + 2 rho (mu_ij - lambda_ij), and the entropic (exponentiated-gradient) step
    on each simplex: no eigendecomposition per step. ``weights_`` are the
    combination's weights, 1/gamma_i normalised to sum 1; ``mkl_tol`` is the
    inner MKL's relative duality gap.
    """

    @staticmethod
    def _norm(g):
        return float(np.abs(g).max())

    def _start(self, K, K_mean, tau):
        sp = spectra(K)
        M, n, _ = K.shape
        return {"spectra": sp, "log_mu": np.zeros((M, n)), "mu": np.full((M, n), tau / n)}

    def _evaluate(self, K, y, state, tau):
        sp, mu = state["spectra"], state["mu"]
        kernels = np.stack([from_spectrum(sp.vectors[i], mu[i]) for i in range(len(mu))])
        omega, info = self._omega(kernels, y)
        z = np.einsum("mji,j->mi", sp.vectors, info["v"])  # v_ij' Y alpha*
        diff = mu - sp.values
        grads = list(-0.5 / info["gamma"][:, None] * z**2 + 2.0 * self.rho * diff)
        return omega + self.rho * float(np.sum(diff**2)), grads, info

    def _move(self, state, grads, eta, tau):
        log_mu = state["log_mu"] - eta * np.stack(grads)
        log_mu -= log_mu.max(axis=1, keepdims=True)
        e = np.exp(log_mu)
        return {**state, "log_mu": log_mu, "mu": tau * e / e.sum(axis=1, keepdims=True)}

"""Smooth MKL (Xu, Jin, King, Lyu, AAAI 2010): Nesterov's method on the
entropy-smoothed, bias-free L1-MKL dual.

With G_i = diag(y) K_i diag(y) and the box Q' = {0 <= alpha <= C} (no bias, so
no y'alpha = 0), the L1-MKL dual is min_alpha f(alpha), f = -1'alpha + 1/2 max_i alpha'G_i alpha
(eq. 8). Its smoothing (eq. 10) is

    f_lambda(alpha) = -1'alpha + lambda/2 ln sum_i exp(alpha'G_i alpha / lambda - 1),

within lambda/2 (ln m - 1) above f (Theorem 1) and at most lambda/2 below it.

Derivative. The gradient printed as eq. (12) carries a factor 1/2 that the
derivative of (10) does not have (see docs/protocols.md); we use the derivative of
(10), grad = -1 + sum_i theta_i G_i alpha, with theta = softmax(alpha'G_i alpha / lambda)
(eq. 13). Its Hessian is sum_i theta_i G_i + (2/lambda) Cov_theta(G_i alpha), so
the Lipschitz constant of Corollary 3 becomes, for this gradient,

    L = Lambda + 2 n C^2 Lambda^2 / lambda,   Lambda = max_i lambda_max(K_i).

The smoothing lambda (``smoothing``; the paper does not fix it) defaults to the
value that balances the two error terms of Theorem 4 after ``max_iter`` steps,
lambda = 2 sqrt(2) n C^2 Lambda / ((N + 1) sqrt(ln m)).

Algorithm 2: alpha^0 is the SVM solution on the average kernel; each step k
  beta^k  = T(alpha^k - grad^k / L)                          (15)
  gamma^k = T(-1/L sum_{j<=k} (j+1)/2 grad^j)                (18)
  alpha^{k+1} = tau_k gamma^k + (1 - tau_k) beta^k, tau_k = 2/(k+3)   (19)
with T the clipping to [0, C]. Each step costs one pass over the bank (all
alpha'G_i alpha and the gradient come from one matrix-vector product).

Stopping: relative gap (UB - LB) / |UB| <= tol, UB the best f_lambda seen and
LB the best lower bound from convexity, f_lambda(alpha^k) + min_{Q'} grad^k'(a - alpha^k).
The weights are eq. (13) at the best alpha; as the paper does, the final
classifier is an SVM (with bias) on the combined kernel; on a factor bank,
the bias-free SVM with a regularised constant feature (``inner.py``).

Factor banks: alpha'G_i alpha = ||Z_i'(alpha*y)||^2 and the gradient's
sum_i theta_i K_i beta = Z (s * Z'beta) (two passes over the factors per step),
Lambda_i = sigma_max(Z_i)^2 from the r_i x r_i Gram matrix.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp, softmax

from ..base import BinaryFit, MKLClassifier
from ..exceptions import InputError
from .inner import inner_problem
from .iterations import IterationLog


class SMKL(MKLClassifier):
    """Smooth MKL by Nesterov's method (Xu et al. 2010, Algorithm 2).

    ``objective_`` is f_lambda at the returned alpha (a minimum, eq. 10);
    ``weights_`` are eq. (13) there; ``smoothing_`` and ``lipschitz_`` hold the
    lambda and L used.
    """

    accepts_factors = True

    def __init__(self, C=1.0, smoothing=None, tol=1e-2, max_iter=500, verbose=0):
        self.C = C
        self.smoothing = smoothing
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose

    def _check_params(self):
        super()._check_params()
        if self.C is None:
            raise InputError("SMKL needs a finite C: its dual lives on the box [0, C]^n")
        if self.smoothing is not None and not (
            isinstance(self.smoothing, (int, float)) and self.smoothing > 0
        ):
            raise InputError(f"smoothing must be a positive number or None, got {self.smoothing!r}")

    def _fit_binary(self, K, y, K_mean):
        problem = inner_problem(K, K_mean)
        M, n = problem.n_kernels, problem.n
        C = float(self.C)
        Lam = float(problem.largest_eigenvalues().max())
        N = self.max_iter
        lam = self.smoothing
        if lam is None:
            lam = 2.0 * np.sqrt(2.0) * n * C**2 * Lam / ((N + 1) * np.sqrt(max(np.log(M), 1.0)))
        L = Lam + 2.0 * n * C**2 * Lam**2 / lam

        def f_and_grad(alpha):
            # a_i = alpha'G_i alpha, and what forms sum_i theta_i K_i beta: one pass
            a, products = problem.forms_and_products(alpha * y)
            z = a / lam - 1.0
            theta = softmax(z)
            f = -alpha.sum() + 0.5 * lam * logsumexp(z)  # eq. (10)
            # derivative of (10); (12) up to its factor
            grad = -1.0 + y * problem.combined_product(theta, products)
            return f, grad, theta

        def clip(u):
            return np.clip(u, 0.0, C)

        uniform = np.full(M, 1.0 / M)
        start_K = problem.uniform_combination(uniform)
        if start_K is None:
            start_K = problem.combine(uniform)
        start = problem.solve(start_K, uniform, y, C, 1e-3)  # Algorithm 2, step 2
        alpha = start.alpha
        log = IterationLog("SMKL", self.tol, N, verbose=self.verbose)
        log.inner(start.converged, "SVM")
        grad_sum = np.zeros(n)
        lower = -np.inf
        for k in range(N + 1):
            f, grad, theta = f_and_grad(alpha)
            log.consider(f, (alpha, theta))
            # convexity: f(a) >= f + grad'(a - alpha), minimised over the box
            lower = max(lower, f + float(np.minimum(-grad * alpha, grad * (C - alpha)).sum()))
            gap = (log.best_objective - lower) / max(abs(log.best_objective), 1e-300)
            log.record(f, gap=gap, weights=theta, svm_solves=1, passes=k + 1)
            if gap <= self.tol:
                log.stop("gap", converged=True)
                break
            if k == N:
                break
            beta_k = clip(alpha - grad / L)  # (15)
            grad_sum += 0.5 * (k + 1) * grad
            gamma_k = clip(-grad_sum / L)  # (18)
            tau = 2.0 / (k + 3.0)
            alpha = tau * gamma_k + (1.0 - tau) * beta_k  # (19)
        _, weights = log.best
        self.smoothing_, self.lipschitz_ = float(lam), float(L)
        K_final = problem.combine(weights)
        sol = problem.solve(K_final, weights, y, C, 1e-3)  # the final classifier
        log.inner(sol.converged, "SVM")
        log.finish()
        return BinaryFit(
            weights=weights,
            dual_coef=sol.dual_coef,
            intercept=sol.bias,
            objective=log.best_objective,
            spectral_ratio=problem.spectral_ratio(K_final),
            **log.fit_fields(),
        )

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
lambda = 2 sqrt(2) n C^2 Lambda / ((N + 1) sqrt(ln m)), times ``smoothing_scale``
(default 1). That balance holds for Corollary 3's step; the adaptive step
converges far faster, so smaller lambdas (sparser weights) are within reach:
``smoothing_scale`` searches them on the problem's own scale (lambda grows
with n C^2 Lambda), which a grid of absolute lambdas cannot do across C.

Algorithm 2 (``step="theory"``): alpha^0 is the SVM solution on the average
kernel; each step k
  beta^k  = T(alpha^k - grad^k / L)                          (15)
  gamma^k = T(-1/L sum_{j<=k} (j+1)/2 grad^j)                (18)
  alpha^{k+1} = tau_k gamma^k + (1 - tau_k) beta^k, tau_k = 2/(k+3)   (19)
with T the clipping to [0, C]. Each step costs one pass over the bank (all
alpha'G_i alpha and the gradient come from one matrix-vector product).

Corollary 3's L is a worst case over the box, orders of magnitude above the
curvature along the path, so the theory step crawls (docs/design.md,
performance). The
default, ``step="adaptive"``, is the same accelerated scheme with the step
found by backtracking (FISTA, Beck & Teboulle 2009: L doubled until the
quadratic upper bound holds at the new point, starting from the curvature of
the average kernel, lambda_max(sum_i K_i / m); on factors from the mean of the
lambda_max(K_i), which bounds it from above) and restarted when f_lambda increases (O'Donoghue &
Candes 2015: the momentum is reset, the point kept). It minimises the same
f_lambda with the same gap; a step costs one gradient (one pass) and one
value per backtracking trial: one pass over the bank each, the extrapolated
point's products being the same combination of two passes' products.

Stopping: relative gap (UB - LB) / |UB| <= tol, UB the best f_lambda seen and
LB the best lower bound from convexity, f_lambda(alpha^k) + min_{Q'} grad^k'(a - alpha^k).
The weights are eq. (13) at the best alpha; as the paper does, the final
classifier is an SVM (with bias) on the combined kernel; on a factor bank,
the bias-free SVM with a regularised constant feature (``inner.py``).

Factor banks: alpha'G_i alpha = ||Z_i'(alpha*y)||^2 and the gradient's
sum_i theta_i K_i beta = Z (s * Z'beta) (two passes over the factors per step),
Lambda_i = sigma_max(Z_i)^2 from the r_i x r_i Gram matrix. On a dense bank
Lambda comes from one pass of bounds per kernel (the Rayleigh quotient of the
ones vector below, the largest absolute row sum above) and Lanczos on the
few kernels whose upper bound exceeds the largest eigenvalue found.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.special import logsumexp, softmax
from sklearn.utils._param_validation import Interval, StrOptions

from ..solvers.inner import inner_problem
from .base import BaseMKL, BinaryFit
from .iterations import IterationLog


class SMKL(BaseMKL):
    """Smooth MKL by Nesterov's method (Xu et al. 2010, Algorithm 2).

    ``objective_`` is f_lambda at the returned alpha (a minimum, eq. 10);
    ``weights_`` are eq. (13) there; ``smoothing_`` holds the lambda used and
    ``lipschitz_`` the L of the last step (Corollary 3's with ``step="theory"``,
    the backtracked estimate with ``step="adaptive"``).

    ``smoothing``: lambda of eq. (10); None for Theorem 4's balanced value times
    ``smoothing_scale`` (a positive factor; ignored when ``smoothing`` is given).
    """

    accepts_factors = True
    STEPS = ("adaptive", "theory")
    _parameter_constraints: dict = {
        **BaseMKL._parameter_constraints,
        # finite: the dual lives on the box [0, C]^n (no hard margin)
        "C": [Interval(Real, 0, np.inf, closed="neither")],
        "smoothing": [Interval(Real, 0, np.inf, closed="neither"), None],
        "smoothing_scale": [Interval(Real, 0, np.inf, closed="neither")],
        "step": [StrOptions(set(STEPS))],
    }

    def __init__(
        self,
        C=1.0,
        smoothing=None,
        smoothing_scale=1.0,
        tol=1e-2,
        max_iter=500,
        step="adaptive",
        verbose=0,
    ):
        self.C = C
        self.smoothing = smoothing
        self.smoothing_scale = smoothing_scale
        self.tol = tol
        self.max_iter = max_iter
        self.step = step
        self.verbose = verbose

    def _fit_binary(self, K, y, K_mean):
        problem = inner_problem(K, K_mean)
        M, n = problem.n_kernels, problem.n
        C = float(self.C)
        Lam, L_start = problem.eigenvalue_scales()
        N = self.max_iter
        lam = self.smoothing
        if lam is None:
            lam = 2.0 * np.sqrt(2.0) * n * C**2 * Lam / ((N + 1) * np.sqrt(max(np.log(M), 1.0)))
            lam *= float(self.smoothing_scale)
        L_corollary3 = Lam + 2.0 * n * C**2 * Lam**2 / lam  # for this gradient

        def values(alpha, products=None):
            # a_i = alpha'G_i alpha (one pass, none when the products are given)
            # -> f_lambda (eq. 10) and theta (eq. 13)
            if products is None:
                a, products = problem.forms_and_products(alpha * y)
            else:
                a = problem.forms_of(products, alpha * y)
            z = a / lam - 1.0
            return -alpha.sum() + 0.5 * lam * logsumexp(z), softmax(z), products

        # a gradient from the products: no pass on a dense bank, one on factors
        gradient_passes = int(problem.representation == "factors")

        def gradient(theta, products):
            # derivative of (10), (12) up to its factor: -1 + sum_i theta_i G_i alpha
            return -1.0 + y * problem.combined_product(theta, products)

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
        lower = -np.inf
        passes = 0

        def bound(f, point, grad):
            """The convexity bound f(a) >= f + grad'(a - point), minimised over the box
            (valid at any point, inside the box or not)."""
            return f + float(np.minimum(-grad * point, grad * (C - point)).sum())

        def record(f, theta, alpha, new_lower):
            """Offer the iterate alpha (in the box), raise the lower bound and log
            the relative gap; True when it is within tol."""
            nonlocal lower
            log.consider(f, (alpha, theta))
            lower = max(lower, new_lower)
            gap = (log.best_objective - lower) / max(abs(log.best_objective), 1e-300)
            log.record(f, gap=gap, weights=theta, svm_solves=1, passes=passes)
            return gap <= self.tol

        def finished(k, f, theta, alpha, new_lower):
            """Record step k; True when the gap is within tol or the steps are spent."""
            if record(f, theta, alpha, new_lower):
                log.stop("gap", converged=True)
                return True
            return k == N

        if self.step == "theory":
            L = L_corollary3
            grad_sum = np.zeros(n)
            for k in range(N + 1):
                f, theta, products = values(alpha)
                grad = gradient(theta, products)
                passes += 1 + gradient_passes
                if finished(k, f, theta, alpha, bound(f, alpha, grad)):
                    break
                beta_k = clip(alpha - grad / L)  # (15)
                grad_sum += 0.5 * (k + 1) * grad
                gamma_k = clip(-grad_sum / L)  # (18)
                tau = 2.0 / (k + 3.0)
                alpha = tau * gamma_k + (1.0 - tau) * beta_k  # (19)
        else:
            # FISTA with backtracking and function-value restart (module docstring):
            # x the iterates (in the box), point the extrapolated point
            L = max(L_start, 1e-12)
            eps = float(np.finfo(problem.dtype).eps)
            x, t = alpha, 1.0
            f_x, theta_x, products_x = values(x)
            point, f_point, theta_point, products = x, f_x, theta_x, products_x
            for k in range(N + 1):
                grad = gradient(theta_point, products)
                passes += gradient_passes
                if finished(k, f_x, theta_x, x, bound(f_point, point, grad)):
                    break
                # f at the extrapolated point comes from combined products, f_new
                # from a pass: they differ by the pass's rounding (float32 banks)
                rounding = 100.0 * eps * (abs(f_point) + float(np.abs(point).sum()))
                while True:  # backtracking: the quadratic upper bound at the new point
                    x_new = clip(point - grad / L)
                    f_new, theta_new, products_new = values(x_new)
                    passes += 1
                    d = x_new - point
                    upper = f_point + float(grad @ d) + 0.5 * L * float(d @ d)
                    # Corollary 3's L bounds the curvature everywhere: beyond it a
                    # failed test is rounding, and the loop must end
                    if f_new <= upper + rounding or L >= L_corollary3:
                        break
                    L *= 2.0
                if f_new > f_x:  # restart: momentum off, from the last iterate
                    t = 1.0
                    point, f_point, theta_point, products = x, f_x, theta_x, products_x
                    continue
                t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
                momentum = (t - 1.0) / t_new
                point = x_new + momentum * (x_new - x)
                # the products are linear in alpha: the point's need no pass
                products = products_new + momentum * (products_new - products_x)
                f_point, theta_point, _ = values(point, products)
                x, f_x, theta_x, products_x, t = x_new, f_new, theta_new, products_new, t_new
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

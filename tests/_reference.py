"""More CVXPY + Clarabel references (test-only), beside tests/reference.py.

Formulations that reference.py does not have, or that stay accurate where its
versions stop early (Clarabel's NumericalError or "inaccurate" status):

* ``smkl_f_lambda``: min of Xu et al. (2010) eq. (10) with the log-sum-exp
  written as an explicit exponential-cone constraint. reference.smkl_f_lambda
  (CVXPY's log_sum_exp of the quadratic forms) fails with NumericalError at the
  default smoothing of SMKL (lambda of order 1-1000), the experiments' setting;
  this one is also scaled to alpha = C u, without which C = 100 fails.
* ``max_margin_mkl``: the max-margin MKL problem at Clarabel's default
  tolerances, which end "optimal" where reference.max_margin_mkl's 1e-9 ones end
  "optimal_inaccurate" (a bank with the identity kernel).
* ``similarity_kernel``: Kundu et al. (2010) problem (4) for each of the three
  losses (reference.similarity_kernel_l3 has the L3 one only).
"""

import cvxpy as cp
import numpy as np

from .reference import _omega_sdp, psd_factor


def smkl_f_lambda(K, y, C, lam):
    """min over [0, C]^n of -1'alpha + lam/2 (log sum_i exp(alpha'G_i alpha / lam) - 1),
    as min -1'alpha + lam/2 (s - 1) s.t. q_i(alpha)/lam <= t_i, sum_i exp(t_i - s) <= 1,
    in alpha = C u (u in [0, 1]^n) and divided by C: at C = 100 the unscaled form
    fails too (NumericalError)."""
    Ls = [psd_factor(Km) for Km in K]
    u, t, s = cp.Variable(len(y)), cp.Variable(len(K)), cp.Variable()
    cons = [u >= 0, u <= 1, cp.sum(cp.exp(t - s)) <= 1]
    cons += [
        cp.sum_squares(L.T @ cp.multiply(u, y)) * (C**2 / lam) <= t[m] for m, L in enumerate(Ls)
    ]
    prob = cp.Problem(cp.Minimize(-cp.sum(u) + lam / (2 * C) * (s - 1)), cons)
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == cp.OPTIMAL, prob.status
    return prob.value * C, C * u.value


def max_margin_mkl(K, y):
    """max_{mu in simplex} min_{gamma in Gamma} gamma'Y K_mu Y gamma (MEMO with theta = 0)
    by its epigraph form; returns the value and mu (the constraints' multipliers)."""
    g, t = cp.Variable(len(y)), cp.Variable()
    quad = [cp.sum_squares(psd_factor(Km).T @ cp.multiply(g, y)) <= t for Km in K]
    gamma = [g >= 0, cp.sum(g[y > 0]) == 1, cp.sum(g[y < 0]) == 1]
    prob = cp.Problem(cp.Minimize(t), gamma + quad)
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == cp.OPTIMAL, prob.status
    mu = np.array([c.dual_value for c in quad]).ravel()
    return prob.value, mu / mu.sum()


def similarity_kernel(S, y, C, rho, loss, trace=None):
    """Kundu et al. (2010) problem (4): min over K psd (tr K = trace, if given) of
    omega(K) + rho sum_i L(K - S_i), with L = sum |.| (l1), ||.||_F (l2) or
    sum (.)^2 (l3); omega by the SDP of Lanckriet et al. (reference._omega_sdp)."""
    n = len(y)
    K = cp.Variable((n, n), symmetric=True)
    omega, cons = _omega_sdp(K, y, C)
    cons.append(K >> 0)
    if trace is not None:
        cons.append(cp.trace(K) == trace)
    losses = {
        "l1": lambda D: cp.sum(cp.abs(D)),
        "l2": lambda D: cp.norm(D, "fro"),
        "l3": lambda D: cp.sum_squares(D),
    }
    penalty = sum(losses[loss](K - S_i) for S_i in S)
    prob = cp.Problem(cp.Minimize(omega + rho * penalty), cons)
    prob.solve(solver=cp.CLARABEL)
    # the L1 loss's many epigraph variables often end "inaccurate" at 1e-7 or so
    assert prob.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE), prob.status
    return prob.value, K.value

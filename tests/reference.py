"""Independent reference solutions by CVXPY + Clarabel (test-only)."""

import cvxpy as cp
import numpy as np


def psd_factor(K):
    """L with K = L L' (eigendecomposition, tiny negative eigenvalues clipped)."""
    lam, V = np.linalg.eigh((K + K.T) / 2)
    return V * np.sqrt(np.clip(lam, 0, None))


def svm_dual_value(K, y, C=None, intercept_sq=None):
    """max 1'a - 1/2 (a y)'K(a y), 0 <= a <= C, y'a = 0 (C=None: no upper bound).
    ``intercept_sq`` = b^2: the bias-free SVM whose intercept is a constant feature
    b (mkl.solvers.coordinate_descent): no y'a = 0, and K + b^2 11'."""
    n = len(y)
    a = cp.Variable(n)
    L = psd_factor(K)
    cons = [a >= 0] + ([y @ a == 0] if intercept_sq is None else [])
    if C is not None:
        cons.append(a <= C)
    objective = _linear_term(a, y, intercept_sq) - 0.5 * cp.sum_squares(L.T @ cp.multiply(a, y))
    prob = cp.Problem(cp.Maximize(objective), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9)
    assert prob.status == cp.OPTIMAL, prob.status
    return prob.value, a.value


def dual_value(K, y, C, intercept_sq=None, task=None):
    """The optimal value of one inner dual (``_dual``) on one kernel K."""
    a, S, cons, beta = _dual(y, C, intercept_sq, task)
    L = psd_factor(K)
    prob = cp.Problem(cp.Maximize(S - 0.5 * cp.sum_squares(L.T @ beta)), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9)
    assert prob.status == cp.OPTIMAL, prob.status
    return prob.value, a.value


def _svm_box(a, y, C, intercept_sq=None):
    """The C-SVM's feasible set; with ``intercept_sq`` the bias-free one (no y'a = 0)."""
    return [a >= 0, a <= C] + ([y @ a == 0] if intercept_sq is None else [])


def _linear_term(a, y, intercept_sq=None):
    """S(a) = 1'a, less b^2/2 (y'a)^2 for the bias-free SVM with a constant feature b."""
    if intercept_sq is None:
        return cp.sum(a)
    return cp.sum(a) - 0.5 * intercept_sq * cp.square(y @ a)


def _dual(y, C, intercept_sq=None, task=None):
    """The inner dual of a task, written from its textbook definition:
    (variable, S(variable), constraints, beta with q_m = beta'K_m beta).

    * None: the C-SVM (beta = a * y);
    * ("regression", epsilon): the epsilon-SVR, S = y'b - epsilon ||b||_1,
      1'b = 0, |b| <= C (beta = b); with ``intercept_sq`` the SVR of factor
      banks, whose intercept is a constant feature b: no 1'b = 0, and S gains
      -b^2/2 (1'b)^2;
    * ("novelty", nu): the one-class SVM, S = 0, 0 <= a <= 1/(nu n), 1'a = 1
      (on factor banks too: ``intercept_sq`` does not apply)."""
    n = len(y)
    a = cp.Variable(n)
    if task is None:
        return (
            a,
            _linear_term(a, y, intercept_sq),
            _svm_box(a, y, C, intercept_sq),
            (cp.multiply(a, y)),
        )
    kind, value = task
    if kind == "regression":
        S = y @ a - value * cp.norm1(a)
        if intercept_sq is not None:
            return a, S - 0.5 * intercept_sq * cp.square(cp.sum(a)), [a <= C, a >= -C], a
        return a, S, [cp.sum(a) == 0, a <= C, a >= -C], a
    if kind == "novelty":
        return a, cp.Constant(0.0), [a >= 0, a <= 1.0 / (value * n), cp.sum(a) == 1], a
    raise ValueError(kind)


def _forms(Ls, beta):
    return [cp.sum_squares(L.T @ beta) for L in Ls]


def _solve(objective, cons):
    prob = cp.Problem(cp.Maximize(objective), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-8, tol_gap_rel=1e-8, tol_feas=1e-8, max_iter=500)
    assert prob.status == cp.OPTIMAL, prob.status
    return prob


def l1_mkl(K, y, C, intercept_sq=None, task=None):
    """max_{alpha in A, t} 1'alpha - t  s.t. 1/2 q_m(alpha) <= t (Lanckriet et al. 2004's
    QCQP); the weights are the multipliers of the quadratic constraints.
    ``intercept_sq``: the bias-free problem of factor banks (``_linear_term``);
    ``task``: another inner dual (``_dual``)."""
    Ls = [psd_factor(Km) for Km in K]
    a, S, cons, beta = _dual(y, C, intercept_sq, task)
    t = cp.Variable()
    quad = [0.5 * q <= t for q in _forms(Ls, beta)]
    prob = _solve(S - t, cons + quad)
    return prob.value, np.array([c.dual_value for c in quad]).ravel()


def lp_mkl(K, y, C, p, intercept_sq=None, task=None):
    """Kloft et al. 2009, eq. (9): max 1'alpha - 1/2 ||q(alpha)||_{p*};
    theta_m = (q_m / ||q||_{p*})^{1/(p-1)}."""
    Ls = [psd_factor(Km) for Km in K]
    a, S, cons, beta = _dual(y, C, intercept_sq, task)
    t = cp.Variable(len(K))
    ps = p / (p - 1)
    cons += [q <= t[m] for m, q in enumerate(_forms(Ls, beta))]
    prob = _solve(S - 0.5 * cp.pnorm(t, ps), cons)
    q = t.value
    return prob.value, (q / np.linalg.norm(q, ps)) ** (1 / (p - 1))


def gmkl(K, y, C, v, intercept_sq=None, task=None):
    """max 1'alpha - 1/2 sigma(q(alpha)), sigma the support function of
    {theta >= 0: v 1'theta + (1-v)||theta||^2 <= 1}, by its dual
    sigma(q) = min_{mu > 0} mu + sum_m (q_m - mu v)_+^2 / (4 mu (1 - v));
    theta_m = (q_m - mu v)_+ / (2 mu (1 - v))."""
    Ls = [psd_factor(Km) for Km in K]
    a, S, cons, beta = _dual(y, C, intercept_sq, task)
    t, mu = cp.Variable(len(K)), cp.Variable(pos=True)
    cons += [q <= t[m] for m, q in enumerate(_forms(Ls, beta))]
    sigma = mu + sum(
        cp.quad_over_lin(cp.pos(t[m] - v * mu), 4 * (1 - v) * mu) for m in range(len(K))
    )
    prob = _solve(S - 0.5 * sigma, cons)
    theta = np.maximum(t.value - v * mu.value, 0) / (2 * mu.value * (1 - v))
    return prob.value, theta


def smkl_f_lambda(K, y, C, lam):
    """min over the box [0, C]^n of Xu et al. 2010's eq. (10),
    -1'alpha + lam/2 log sum_i exp(alpha'G_i alpha / lam - 1)."""
    Ls = [psd_factor(Km) for Km in K]
    a = cp.Variable(len(y))
    quads = cp.hstack([cp.sum_squares(L.T @ cp.multiply(a, y)) for L in Ls])
    obj = -cp.sum(a) + lam / 2 * (cp.log_sum_exp(quads / lam) - 1)
    prob = cp.Problem(cp.Minimize(obj), [a >= 0, a <= C])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-8, tol_gap_rel=1e-8, tol_feas=1e-8)
    assert prob.status == cp.OPTIMAL, prob.status
    q = np.array([float(a.value @ (np.diag(y) @ Km @ np.diag(y)) @ a.value) for Km in K])
    z = q / lam
    theta = np.exp(z - z.max())
    return prob.value, theta / theta.sum()


def _gamma_constraints(g, y):
    return [g >= 0, cp.sum(g[y > 0]) == 1, cp.sum(g[y < 0]) == 1]


def komd(K, y, tol=1e-11):
    """min_{gamma in Gamma} gamma' Y K Y gamma (the KOMD / squared-margin problem),
    as a QP with its Hessian given directly (more accurate here than a cone form)."""
    g = cp.Variable(len(y))
    H = cp.psd_wrap((y[:, None] * K) * y[None, :])
    prob = cp.Problem(cp.Minimize(cp.quad_form(g, H)), _gamma_constraints(g, y))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
    assert prob.status == cp.OPTIMAL, prob.status
    return prob.value, g.value


def max_margin_mkl(K, y, offsets=None):
    """max_{mu in simplex} min_{gamma in Gamma} sum_r mu_r (gamma' Y K_r Y gamma + c_r),
    by its epigraph form min_{gamma, t} t s.t. gamma' Y K_r Y gamma + c_r <= t
    (Sion's minimax theorem); mu = the multipliers. ``offsets`` c (default 0: the
    max-margin MKL problem)."""
    g, t = cp.Variable(len(y)), cp.Variable()
    offsets = np.zeros(len(K)) if offsets is None else offsets
    quad = [
        cp.sum_squares(psd_factor(Km).T @ cp.multiply(g, y)) + c_r <= t
        for Km, c_r in zip(K, offsets, strict=True)
    ]
    prob = cp.Problem(cp.Minimize(t), _gamma_constraints(g, y) + quad)
    # 1e-8, not 1e-9: Clarabel 0.11.1 stops "optimal_inaccurate" at 1e-9 on
    # test_memo_large_theta_reaches_the_certified_maximum_at_a_vertex's problem
    # (its value then 1e-10 from the 1e-8 solve's; the tests compare at >= 1e-7)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-8, tol_gap_rel=1e-8, tol_feas=1e-8)
    assert prob.status == cp.OPTIMAL, prob.status
    return prob.value, np.array([c.dual_value for c in quad]).ravel()


def _omega_sdp(K, y, C):
    """omega(K) = max_{alpha in A} 1'alpha - 1/2 alpha'YKYalpha as the SDP of
    Lanckriet et al. (JMLR 2004, Theorem 16; their value is 2 omega): t/2 at
    min t s.t. [[YKY, u], [u', t - 2C 1'delta]] psd, u = 1 + nu - delta + lam y,
    nu, delta >= 0. ``K`` may be a CVXPY expression (affine in the variables)."""
    n = len(y)
    t, lam = cp.Variable(), cp.Variable()
    nu, delta = cp.Variable(n, nonneg=True), cp.Variable(n, nonneg=True)
    u = cp.reshape(1 + nu - delta + lam * y, (n, 1), order="C")
    corner = cp.reshape(t - 2 * C * cp.sum(delta), (1, 1), order="C")
    lmi = cp.bmat([[cp.multiply(np.outer(y, y), K), u], [u.T, corner]])
    return t / 2, [(lmi + lmi.T) / 2 >> 0]


def svm_value_sdp(K, y, C):
    value, cons = _omega_sdp(K, y, C)
    prob = cp.Problem(cp.Minimize(value), cons)
    prob.solve(solver=cp.CLARABEL)
    return prob.value


def similarity_kernel_l3(S, y, C, rho, trace=None):
    """Kundu et al. (2010) problem (4) with the L3 loss: min over K psd (and
    tr K = trace, if given) of omega(K) + rho sum_i ||K - S_i||_F^2, an SDP.
    With one S and no trace constraint it is IndSVM's problem."""
    return similarity_kernel(S, y, C, rho, "l3", trace)


# ---------------------------------------------------------------------------
# Variants that stay accurate where the versions above stop early (Clarabel's
# NumericalError or "inaccurate" status):
#
# * ``smkl_f_lambda_expcone``: min of Xu et al. (2010) eq. (10) with the log-sum-exp
#   written as an explicit exponential-cone constraint. smkl_f_lambda
#   (CVXPY's log_sum_exp of the quadratic forms) fails with NumericalError at the
#   default smoothing of SMKL (lambda of order 1-1000), the experiments' setting;
#   this one is also scaled to alpha = C u, without which C = 100 fails.
# * ``max_margin_mkl_default_tol``: the max-margin MKL problem at Clarabel's default
#   tolerances, which end "optimal" where max_margin_mkl's 1e-9 ones end
#   "optimal_inaccurate" (a bank with the identity kernel).
# * ``similarity_kernel``: Kundu et al. (2010) problem (4) for each of the three
#   losses (similarity_kernel_l3 is its L3 case).


def smkl_f_lambda_expcone(K, y, C, lam):
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


def max_margin_mkl_default_tol(K, y):
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


def _minimise(objective, cons, variable, tol=1e-10):
    prob = cp.Problem(cp.Minimize(objective), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol, max_iter=500)
    assert prob.status == cp.OPTIMAL, prob.status
    return float(prob.value), variable.value


def level_projection(theta0, S, Q, level):
    """min ||theta - theta0||^2 over the simplex with the cuts S_k - 1/2 Q_k theta <= level."""
    theta = cp.Variable(len(theta0))
    cons = [theta >= 0, cp.sum(theta) == 1, S - 0.5 * Q @ theta <= level]
    return _minimise(cp.sum_squares(theta - theta0), cons, theta)


def cutting_plane_minimum(S, Q):
    """min over the simplex of max_k S_k - 1/2 Q_k theta (the cutting-plane model)."""
    theta = cp.Variable(Q.shape[1])
    return _minimise(cp.max(S - 0.5 * Q @ theta), [theta >= 0, cp.sum(theta) == 1], theta)


def lp_ball_model_minimum(S, Q, p):
    """min over {theta >= 0, ||theta||_p <= 1} of max_k S_k - 1/2 Q_k theta."""
    theta = cp.Variable(Q.shape[1])
    cons = [theta >= 0, cp.norm(theta, p) <= 1]
    # CVXPY's p-norm (its power-cone tower) stalls short of 1e-10
    return _minimise(cp.max(S - 0.5 * Q @ theta), cons, theta, tol=1e-9)


def lp_ball_level_projection(theta0, S, Q, level, p):
    """min ||theta - theta0||^2 over the lp ball with the cuts S_k - 1/2 Q_k theta <= level."""
    theta = cp.Variable(len(theta0))
    cons = [theta >= 0, cp.norm(theta, p) <= 1, S - 0.5 * Q @ theta <= level]
    return _minimise(cp.sum_squares(theta - theta0), cons, theta, tol=1e-9)


def smkl_f_lambda_lbfgs(K, y, C, lam, alpha0=None):
    """min over the box [0, C]^n of Xu et al. 2010's eq. (10) by L-BFGS-B (scipy)
    with the exact gradient, at tolerances far below the tests' (an independent
    minimiser where the conic one reports an inaccurate solution)."""
    from scipy.optimize import minimize
    from scipy.special import logsumexp, softmax

    G = np.array([np.outer(y, y) * Km for Km in K], dtype=float)

    def fun(a):
        z = np.einsum("i,mij,j->m", a, G, a) / lam - 1.0
        grad = -1.0 + np.einsum("m,mij,j->i", softmax(z), G, a)
        return -a.sum() + lam / 2 * logsumexp(z), grad

    n = len(y)
    start = np.full(n, C / 2) if alpha0 is None else alpha0
    res = minimize(
        fun,
        start,
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, C)] * n,
        options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 100000, "maxfun": 200000},
    )
    return float(res.fun), res.x


def block_norm_mkl(K, y, C, C1, C2):
    """SpicyMKL's primal (Suzuki & Tomioka 2011) in the feature coordinates
    u_m = L_m' alpha_m of K_m = L_m L_m':  min C sum_i hinge(y_i f_i) +
    sum_m C1 ||u_m|| + C2/2 ||u_m||^2, f = sum_m L_m u_m + b. Returns
    (optimal value, f at the optimum)."""
    Ls = [psd_factor(k) for k in K]
    u = [cp.Variable(L.shape[1]) for L in Ls]
    b = cp.Variable()
    f = sum(L @ um for L, um in zip(Ls, u, strict=True)) + b
    objective = C * cp.sum(cp.pos(1 - cp.multiply(y, f)))
    objective += sum(C1 * cp.norm(um) + C2 / 2 * cp.sum_squares(um) for um in u)
    prob = cp.Problem(cp.Minimize(objective))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9, max_iter=500)
    assert prob.status == cp.OPTIMAL, prob.status
    return prob.value, f.value


def nonsparse_mkl(K, y, C):
    """Kundu et al. 2010, eq. (10): max_{alpha in A} 1'alpha - 1/2 (sum_i ||L_i'Y alpha||)^2
    (the inner max over gamma in the simplex in closed form), as an SOCP."""
    Ls = [psd_factor(Km) for Km in K]
    a, S, cons, beta = _dual(y, C)
    norms = [cp.norm(L.T @ beta, 2) for L in Ls]
    prob = _solve(S - 0.5 * cp.square(sum(norms)), cons)
    return prob.value


def spicy_inner_value(K, y, alpha, b, gamma, C, C1, C2):
    """The minimum over the box [0, C]^n of SpicyMKL's proximal inner problem
    phi(a) = -1'a + sum_m max(0, ||L_m'w_m|| - gamma C1)^2 / (2 gamma (1 + gamma C2))
    + gamma/2 (y'a)^2 + b y'a, with w_m = alpha_m + gamma y*a (Suzuki & Tomioka 2011)."""
    Ls = [psd_factor(k) for k in K]
    a = cp.Variable(len(y))
    scale = 2.0 * gamma * (1.0 + gamma * C2)
    excess = [
        cp.pos(cp.norm(L.T @ (alpha[m] + gamma * cp.multiply(y, a))) - gamma * C1)
        for m, L in enumerate(Ls)
    ]
    objective = -cp.sum(a) + sum(cp.square(e) for e in excess) / scale
    objective += gamma / 2 * cp.square(y @ a) + b * (y @ a)
    prob = cp.Problem(cp.Minimize(objective), [a >= 0, a <= C])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9)
    assert prob.status == cp.OPTIMAL, prob.status
    return prob.value


def box_qp(H, p, lo, hi):
    """min 1/2 x'Hx + p'x over lo <= x <= hi (H positive semidefinite)."""
    x = cp.Variable(len(p))
    objective = 0.5 * cp.quad_form(x, cp.psd_wrap(H)) + p @ x
    prob = cp.Problem(cp.Minimize(objective), [x >= lo, x <= hi])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    assert prob.status == cp.OPTIMAL, prob.status
    return prob.value


def enclosing_ball(K):
    """The minimum enclosing ball's primal, min R s.t. ||l_i - c|| <= R over
    the rows l_i of a factor L of K (K = L L'), a second-order cone program: R^2."""
    L = psd_factor(K)
    L = L[:, np.abs(L).max(axis=0) > 1e-12 * np.abs(L).max()]  # the null directions dropped
    c, r = cp.Variable(L.shape[1]), cp.Variable()
    cons = [cp.norm(L[i] - c) <= r for i in range(L.shape[0])]
    prob = cp.Problem(cp.Minimize(r), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9)
    assert prob.status == cp.OPTIMAL, prob.status
    return prob.value**2


def svm_primal_margin(K, y, C=None):
    """1/||w|| of the SVM's primal on the rows of a factor L of K:
    min 1/2 ||w||^2 (+ C sum xi) s.t. y_i (w'l_i + b) >= 1 (- xi_i)."""
    L = psd_factor(K)
    w, b = cp.Variable(L.shape[1]), cp.Variable()
    slack = 0 if C is None else cp.Variable(len(y), nonneg=True)
    objective = 0.5 * cp.sum_squares(w) + (0 if C is None else C * cp.sum(slack))
    prob = cp.Problem(cp.Minimize(objective), [cp.multiply(y, L @ w + b) >= 1 - slack])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9)
    assert prob.status == cp.OPTIMAL, prob.status
    return 1.0 / float(np.linalg.norm(w.value))


def max_alignment_weights(K, y, nonnegative=True):
    """Cortes et al. (JMLR 2012)'s alignment maximisation in its own form,
    max a'theta s.t. ||theta||_F-norm of the centred combination <= 1 (a
    second-order cone), from the centred matrices formed explicitly:
    theta >= 0 (alignf) or free; returned on the simplex (or as is, free)."""
    n = K.shape[1]
    H = np.eye(n) - np.ones((n, n)) / n
    Kc = np.stack([H @ k @ H for k in K]).reshape(len(K), -1)
    scale = np.abs(Kc).max()
    Kc = Kc / scale
    a = Kc @ np.outer(y, y).ravel() / n
    L = psd_factor(Kc @ Kc.T)  # ||sum_k theta_k K_k^c||_F = ||L'theta||
    theta = cp.Variable(len(K), nonneg=nonnegative)
    prob = cp.Problem(cp.Maximize(a @ theta), [cp.norm(L.T @ theta) <= 1])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == cp.OPTIMAL, prob.status
    return theta.value / theta.value.sum() if nonnegative else theta.value


def radius_margin_primal(K, y, C, R):
    """R-MKL's problem at fixed weights in its own primal form (Do et al. 2009,
    squared slacks), on the rows of a factor L of the combination K:
    min 1/2 R ||w||^2 + C/2 sum xi_i^2 s.t. y_i (w'l_i + b) >= 1 - xi_i
    (C=None: no slacks)."""
    L = psd_factor(K)
    w, b = cp.Variable(L.shape[1]), cp.Variable()
    slack = 0 if C is None else cp.Variable(len(y))
    objective = 0.5 * R * cp.sum_squares(w) + (0 if C is None else 0.5 * C * cp.sum_squares(slack))
    prob = cp.Problem(cp.Minimize(objective), [cp.multiply(y, L @ w + b) >= 1 - slack])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == cp.OPTIMAL, prob.status
    return prob.value

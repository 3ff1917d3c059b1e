"""The KOMD margin problem of EasyMKL and MEMO (:mod:`mkl.algorithms.margin`).
With Y = diag(y) and

    Gamma = {gamma >= 0 : sum_{i: y_i = +1} gamma_i = sum_{i: y_i = -1} gamma_i = 1},

the squared margin of a kernel K is the value of the KOMD problem

    rho(K) = min_{gamma in Gamma} gamma' Y K Y gamma                  (MEMO, eq. 3)

(the squared distance between the hulls; 2/rho is the hard-margin SVM's dual
optimum). :func:`komd_margin` solves it on a dense kernel and
:func:`komd_margin_factored` on one known through matrix-vector products.

The margin problem is those methods' hot loop. It is libsvm's nu-SVC dual with nu = 2/n
(see ``komd_margin``), which needs no box: unlike a hard-margin C-SVM with a
huge C, it stays fast where the hulls nearly touch or intersect
(benchmarks/bench_margin.py sets it against the alternatives). Every solve
reports its Frank-Wolfe duality gap, exact for this convex QP.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import NuSVC

from .solution import SVMSolution


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


def komd_margin(
    K: np.ndarray, y: np.ndarray, tol: float = 1e-7, max_iter_per_point: int = MAX_ITER_PER_POINT
) -> Margin:
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
    libsvm stopped at its iteration cap, ``max_iter_per_point`` x n (hulls
    touching: rho is about 0; the margin metric, which wants rho itself,
    raises the cap: :func:`mkl.solvers.geometry.margin`).
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
    svc = NuSVC(nu=2.0 / n, kernel="precomputed", tol=tol * scale, max_iter=max_iter_per_point * n)
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
    its own SVM (mkl.solvers.coordinate_descent)."""
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

"""The sets Theta that MKL formulations constrain the kernel weights to.

Every wrapper method minimises the convex function
``J(theta) = max_{alpha in A} 1'alpha - 1/2 sum_m theta_m q_m(alpha)`` over one of:

* :class:`Simplex`        {theta >= 0, 1'theta = 1}                      (L1-MKL)
* :class:`LpBall`         {theta >= 0, ||theta||_p <= 1}, p > 1          (lp-MKL, Kloft et al. 2009)
* :class:`ElasticNetBall` {theta >= 0, v 1'theta + (1-v)||theta||^2 <= 1} (GMKL, Yang et al. 2011)

Each set provides what the methods need: a starting point on its boundary,
its support function sigma(q) = max_{theta in Theta} theta'q (which gives the
dual bound D(alpha) = 1'alpha - 1/2 sigma(q(alpha)) <= J*, hence a duality gap
for every method), and the two convex subproblems of cutting-plane and level
methods over the cuts J(theta) >= S_k - 1/2 q_k'theta:

* ``minimise_model``: min_{theta in Theta} max_k S_k - 1/2 q_k'theta  (lower bound)
* ``project_level``:  min ||theta - theta0||^2 s.t. S_k - 1/2 q_k'theta <= level, theta in Theta

These are LPs (simplex), SOCPs (the elastic net's quadratic constraint) or
power-cone programs (the lp ball: theta_m^p <= t_m, sum t_m <= 1); they are
solved by Clarabel, an open-source interior-point conic solver that handles
these constraints exactly and returns 1e-8-accurate solutions on these
M-variable problems in milliseconds. Over the simplex, where M reaches the
thousands (one kernel per term of a text collection), both have their own
solvers: the model minimum, a plain LP, is one HiGHS model kept across the
iterations (``cut_model.py``), and the level projection to projected Newton on its K-variable dual
(``project_level_simplex``), with the interior point as the fallback.
"""

from __future__ import annotations

from typing import NamedTuple

import clarabel
import numpy as np
import scipy.sparse as sp
from scipy.optimize import brentq

from ..exceptions import InputError, SubproblemError
from .cut_model import SimplexCutModel, cut_scale


class WeightDomain:
    """Base class: constraints on theta in Clarabel's form A x + s = b, s in K,
    for a variable vector x whose first M entries are theta and whose last
    :meth:`n_auxiliary` entries are the set's own auxiliary variables."""

    def n_auxiliary(self, M: int) -> int:
        """Variables the set's constraints add beyond theta (the last columns of x)."""
        return 0

    def initial(self, M: int) -> np.ndarray:
        raise NotImplementedError

    def support(self, q: np.ndarray) -> float:
        raise NotImplementedError

    def project(self, z: np.ndarray) -> np.ndarray:
        """The Euclidean projection of z onto Theta (projected-gradient methods)."""
        raise NotImplementedError

    def _blocks(self, M: int, n_vars: int) -> list[tuple[Triplets, np.ndarray, object]]:
        """Constraint blocks (A rows, b, cone) on theta = x[:M]; theta >= 0 included.
        Blocks are their nonzeros (:class:`Triplets`), made one matrix per
        subproblem by :func:`_stack`: a scipy matrix per block, or scipy's
        hstack/vstack, cost more than Clarabel's solve."""
        A = _sparse(np.arange(M), np.arange(M), np.full(M, -1.0), (M, n_vars))
        return [(A, np.zeros(M), clarabel.NonnegativeConeT(M))]

    # ------------------------------------------------------------ subproblems
    def minimise_model(self, S: np.ndarray, Q: np.ndarray) -> tuple[float, np.ndarray]:
        """Lower bound min_{theta in Theta} max_k (S_k - 1/2 Q_k theta) and its minimiser.
        Variables x = (theta, eta); minimise eta s.t. S_k - 1/2 Q_k theta <= eta.

        The bound is taken from the cuts' multipliers lambda (normalised onto the
        simplex): sum_k lambda_k S_k - 1/2 sigma(sum_k lambda_k Q_k) is a valid
        lower bound for any such lambda, so an inexact solve never overstates it."""
        K, M = Q.shape
        scale = cut_scale(S, Q)
        n_vars = M + 1 + self.n_auxiliary(M)  # x = (theta, eta, auxiliary)
        c = np.zeros(n_vars)
        c[M] = 1.0
        cuts = np.zeros((K, n_vars))
        cuts[:, :M] = -0.5 * Q / scale
        cuts[:, M] = -1.0
        blocks = [(cuts, -S / scale, clarabel.NonnegativeConeT(K)), *self._blocks(M, n_vars)]
        x, z = solve_conic(_zero_objective(n_vars), c, blocks)
        lam = np.maximum(z[:K], 0.0)
        if lam.sum() > 0:
            lam /= lam.sum()
            lower = float(lam @ S - 0.5 * self.support(lam @ Q))
        else:  # pragma: no cover - no usable multipliers: the trivial bound
            lower = -np.inf
        return lower, self._clean(x[:M])

    def project_level(
        self, theta0: np.ndarray, S: np.ndarray, Q: np.ndarray, level: float
    ) -> np.ndarray:
        """Projection of theta0 onto {theta in Theta : S_k - 1/2 Q_k theta <= level for all k}."""
        K, M = Q.shape
        scale = cut_scale(S, Q)
        n_vars = M + self.n_auxiliary(M)  # x = (theta, auxiliary)
        cuts = np.zeros((K, n_vars))
        cuts[:, :M] = -0.5 * Q / scale
        blocks = [
            (cuts, (level - S) / scale, clarabel.NonnegativeConeT(K)),
            *self._blocks(M, n_vars),
        ]
        c = np.zeros(n_vars)
        c[:M] = -theta0
        x, _ = solve_conic(_identity_objective(M, n_vars), c, blocks)
        return self._clean(x[:M])

    def _clean(self, theta: np.ndarray) -> np.ndarray:
        """Interior-point solutions sit a hair inside the constraints: clip the
        tiny negatives and return to the boundary where the set requires it."""
        return np.maximum(theta, 0.0)

    def to_boundary(self, theta: np.ndarray) -> np.ndarray:
        """Scale theta >= 0 onto the boundary of Theta. J(s theta) <= J(theta) for
        s >= 1 (q >= 0), so the minimum lies there and scaling never hurts."""
        raise NotImplementedError


class Simplex(WeightDomain):
    """{theta >= 0, sum theta = 1}: L1-MKL (SimpleMKL, SILP, level method)."""

    name = "simplex"

    def initial(self, M: int) -> np.ndarray:
        return np.full(M, 1.0 / M)

    def support(self, q: np.ndarray) -> float:
        return float(np.max(q))

    def project(self, z: np.ndarray) -> np.ndarray:
        return project_simplex(z)

    def _blocks(self, M, n_vars):
        A = _sparse(np.zeros(M, dtype=np.int64), np.arange(M), np.ones(M), (1, n_vars))
        return [*super()._blocks(M, n_vars), (A, np.ones(1), clarabel.ZeroConeT(1))]

    def __init__(self):
        self._model: SimplexCutModel | None = None  # kept across the calls of one fit

    def minimise_model(self, S, Q):
        """The model's minimum over the simplex is a linear program,
        min eta s.t. S_k - 1/2 Q_k theta <= eta, 1'theta = 1, theta >= 0, kept
        in one HiGHS model that gains a row per cut, and over many kernels a
        column per kernel priced in (``cut_model.py``)."""
        if self._model is None or self._model.n_kernels != Q.shape[1]:
            self._model = SimplexCutModel(Q.shape[1])
        return self._model.minimum(S, Q)

    def project_level(self, theta0, S, Q, level):
        """Projection of theta0 onto {theta in simplex : S_k - 1/2 Q_k theta <= level}
        by projected Newton on its dual over the K cut multipliers (K << M: the
        level method keeps one cut per iteration), see :func:`project_level_simplex`;
        where that stops short, by the interior-point solver (the base class)."""
        theta = project_level_simplex(theta0, S, Q, level)
        if theta is None:
            return super().project_level(theta0, S, Q, level)
        return theta

    def _clean(self, theta):
        return self.to_boundary(np.maximum(theta, 0.0))

    def to_boundary(self, theta):
        return theta / theta.sum()


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of v onto {theta >= 0, 1'theta = 1}: theta = max(v - tau, 0)
    with the threshold tau from the sorted values (Held, Wolfe & Crowder 1974;
    Duchi et al. 2008), O(M log M)."""
    v = v - v.max()  # the projection is unchanged by a common shift; this keeps the sums exact
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - 1.0
    rho = np.flatnonzero(u * np.arange(1, len(u) + 1) > cumulative)[-1]
    return np.maximum(v - cumulative[rho] / (rho + 1.0), 0.0)


PROJECTION_TOL = 1e-10  # on the scaled cuts: primal infeasibility and complementarity
PROJECTION_MAX_ITER = 100


def project_level_simplex(
    theta0: np.ndarray, S: np.ndarray, Q: np.ndarray, level: float
) -> np.ndarray | None:
    """min 1/2 ||theta - theta0||^2 s.t. theta in simplex, a_k'theta >= b_k
    (a_k = Q_k / 2, b_k = S_k - level, both divided by ``cut_scale``), by its dual

        max_{lambda >= 0} d(lambda),  theta(lambda) = P_simplex(theta0 + A'lambda),
        grad d = b - A theta(lambda),  generalised Hessian -A_T (I - 11'/|T|) A_T'

    (T the support of theta(lambda)): projected Newton for bound constraints
    (Bertsekas 1982) with an Armijo search on d, a K-dimensional problem whose
    steps cost one simplex projection and O(K |T|) each, against an interior
    point on the M-variable QP (0.2-0.5 s at M = 2,000 and 100 cuts). Returns
    None when it stops short of PROJECTION_TOL (the caller then solves the QP)."""
    scale = cut_scale(S, Q)
    A = 0.5 * Q / scale
    b = (S - level) / scale
    K = len(b)
    lam = np.zeros(K)

    def dual(lam):
        """d(lambda), theta(lambda) and grad d = b - A theta (> 0: cut k violated)."""
        theta = project_simplex(theta0 + A.T @ lam)
        grad = b - A @ theta
        # d = min_theta 1/2||theta - theta0||^2 - lam'(A theta - b) at theta(lam)
        value = 0.5 * float(np.sum((theta - theta0) ** 2)) + float(lam @ grad)
        return value, theta, grad

    value, theta, grad = dual(lam)
    for _ in range(PROJECTION_MAX_ITER):
        # optimality: grad <= 0 where lam = 0, grad = 0 where lam > 0
        projected = np.where(lam > 0, grad, np.maximum(grad, 0.0))
        if np.abs(projected).max() <= PROJECTION_TOL:
            return theta
        free = (lam > 1e-12) | (grad > 0)
        support = theta > 0
        A_T = A[np.ix_(free, support)]
        # the support of a simplex projection is never empty
        H = (A_T - A_T.mean(axis=1, keepdims=True)) @ A_T.T  # A_F (I - 11'/|T|) A_F'
        direction = np.zeros(K)
        try:
            direction[free] = np.linalg.solve(
                H + 1e-12 * (np.trace(H) / max(len(H), 1) + 1.0) * np.eye(len(H)), grad[free]
            )
        except np.linalg.LinAlgError:
            return None
        if not float(grad[free] @ direction[free]) > 0:  # not an ascent direction:
            direction[free] = grad[free]  # the projected gradient instead
        step = 1.0
        while step > 1e-12:
            trial = np.maximum(lam + step * direction, 0.0)
            trial_value, trial_theta, trial_grad = dual(trial)
            if trial_value >= value + 1e-4 * float(grad @ (trial - lam)):
                break
            step *= 0.5
        else:
            return None
        lam, value, theta, grad = trial, trial_value, trial_theta, trial_grad
    return None


class LpBall(WeightDomain):
    """{theta >= 0, ||theta||_p <= 1}, p > 1: lp-norm MKL. The support function
    is the dual norm ||q||_{p*}, 1/p + 1/p* = 1 (Kloft et al. 2009, eq. 9)."""

    name = "lp_ball"

    def __init__(self, p: float):
        if not (isinstance(p, (int, float)) and p > 1 and np.isfinite(p)):
            raise InputError(
                "p must be a finite number > 1 for lp-norm MKL "
                f"(p = 1: use an L1 method), got {p!r}"
            )
        self.p = float(p)
        self.p_dual = self.p / (self.p - 1.0)

    def n_auxiliary(self, M: int) -> int:
        return M  # t_m >= theta_m^p

    def _blocks(self, M, n_vars):
        """sum_m theta_m^p <= 1, exactly: sum_m t_m <= 1 and theta_m^p <= t_m, the
        latter the power cone (t_m, 1, theta_m) in {x^(1/p) y^(1-1/p) >= |z|}.
        Kloft et al. (2009, sec. 2.4.2) replace the constraint by its
        second-order Taylor expansion around the current theta and expand
        again at the minimiser until it settles; the limit is this model's
        minimiser (the expansion matches the constraint's value and gradient
        there), which one conic solve gives."""
        t = n_vars - M + np.arange(M)  # the auxiliary columns
        budget = _sparse(np.zeros(M, dtype=np.int64), t, np.ones(M), (1, n_vars))
        rows = 3 * np.arange(M)
        cones = _sparse(
            np.concatenate([rows, rows + 2]),
            np.concatenate([t, np.arange(M)]),
            np.full(2 * M, -1.0),
            (3 * M, n_vars),
        )
        b = np.tile([0.0, 1.0, 0.0], M)
        return [
            *super()._blocks(M, n_vars),
            (budget, np.ones(1), clarabel.NonnegativeConeT(1)),
            (cones, b, [clarabel.PowerConeT(1.0 / self.p)] * M),
        ]

    def _clean(self, theta):
        return self.normalise(np.maximum(theta, 0.0))

    def initial(self, M: int) -> np.ndarray:
        return np.full(M, M ** (-1.0 / self.p))

    def support(self, q: np.ndarray) -> float:
        return float(np.linalg.norm(q, self.p_dual))

    def to_boundary(self, theta: np.ndarray) -> np.ndarray:
        return self.normalise(theta)

    def normalise(self, theta: np.ndarray) -> np.ndarray:
        """Scale onto the sphere ||theta||_p = 1 (J decreases along theta, so the
        optimum lies on it)."""
        return theta / np.linalg.norm(theta, self.p)


class ElasticNetBall(WeightDomain):
    """{theta >= 0, v ||theta||_1 + (1-v) ||theta||_2^2 <= 1}: GMKL (Yang et al.
    2011, eq. 9). v = 1 is the simplex's L1 ball, v = 0 the L2 ball."""

    name = "elastic_net"

    def __init__(self, v: float):
        if not 0.0 <= v <= 1.0:
            raise InputError(f"v must be in [0, 1], got v={v!r}")
        self.v = float(v)

    def initial(self, M: int) -> np.ndarray:
        # Algorithm 1: theta0 = c 1 with (1-v) c^2 + v c - 1/M = 0 (positive root)
        v = self.v
        if v == 1.0:
            return np.full(M, 1.0 / M)
        c = (-v + np.sqrt(v * v + 4.0 * (1.0 - v) / M)) / (2.0 * (1.0 - v))
        return np.full(M, c)

    def value(self, theta: np.ndarray) -> float:
        return float(self.v * theta.sum() + (1.0 - self.v) * theta @ theta)

    def support(self, q: np.ndarray) -> float:
        """max theta'q over the set: theta_m = max(0, q_m / mu - v) / (2(1-v)),
        with mu > 0 making the constraint tight (a monotone 1-D root)."""
        v = self.v
        q = np.asarray(q, dtype=float)
        if v == 1.0 or q.max() <= 0:
            return float(max(q.max(), 0.0))
        if v == 0.0:
            return float(np.linalg.norm(np.maximum(q, 0.0)))

        def theta_of(mu):
            return np.maximum(0.0, q / mu - v) / (2.0 * (1.0 - v))

        def excess(mu):
            return self.value(theta_of(mu)) - 1.0

        hi = q.max() / v  # theta = 0 there: excess = -1
        lo = hi
        for _ in range(1100):  # halving from q.max()/v reaches the smallest float
            if excess(lo) >= 0:
                break
            lo /= 2.0
        try:
            mu = brentq(excess, lo, hi, xtol=1e-15 * hi, rtol=1e-15)
        except (ValueError, RuntimeError) as exc:  # no sign change / no convergence
            raise SubproblemError(f"elastic-net dual norm: root not found ({exc})") from exc
        return float(theta_of(mu) @ q)

    def project(self, z: np.ndarray) -> np.ndarray:
        """argmin ||theta - z|| over the set. Inside it, max(z, 0); otherwise the
        constraint is tight and stationarity gives, for a multiplier mu > 0,
        theta(mu) = max(0, z - mu v) / (1 + 2 mu (1 - v)), whose
        v 1'theta + (1-v)||theta||^2 falls with mu: one monotone 1-D root
        (closed form at v = 0, theta = max(z, 0) / ||max(z, 0)||)."""
        v = self.v
        z = np.asarray(z, dtype=float)
        inside = np.maximum(z, 0.0)
        if self.value(inside) <= 1.0:
            return inside
        if v == 0.0:
            return inside / np.linalg.norm(inside)

        def theta_of(mu):
            return np.maximum(0.0, z - mu * v) / (1.0 + 2.0 * mu * (1.0 - v))

        hi = float(z.max()) / v  # theta(hi) = 0: value 0 < 1
        try:
            mu = brentq(
                lambda mu: self.value(theta_of(mu)) - 1.0, 0.0, hi, xtol=1e-15 * hi, rtol=1e-15
            )
        except (ValueError, RuntimeError) as exc:
            raise SubproblemError(f"elastic-net projection: root not found ({exc})") from exc
        return self.to_boundary(theta_of(mu))

    def _blocks(self, M, n_vars):
        v = self.v
        if v == 1.0:
            A = _sparse(np.zeros(M, dtype=np.int64), np.arange(M), np.ones(M), (1, n_vars))
            return [*super()._blocks(M, n_vars), (A, np.ones(1), clarabel.NonnegativeConeT(1))]
        # (1-v) ||theta||^2 + v 1'theta <= 1
        quad = _quadratic_constraint(np.full(M, np.sqrt(1.0 - v)), np.full(M, v), 1.0, n_vars)
        return [*super()._blocks(M, n_vars), quad]

    def _clean(self, theta):
        theta = np.maximum(theta, 0.0)
        val = self.value(theta)
        if val > 1.0:  # back inside by the solver's tolerance
            theta = theta / _elastic_scale(self.v, theta)
        return theta

    def to_boundary(self, theta: np.ndarray) -> np.ndarray:
        """Scale theta onto v 1'theta + (1-v)||theta||^2 = 1."""
        return theta / _elastic_scale(self.v, theta)


def _elastic_scale(v: float, theta: np.ndarray) -> float:
    """s > 0 with v 1'theta/s + (1-v)||theta||^2/s^2 = 1."""
    a, b = (1.0 - v) * theta @ theta, v * theta.sum()
    return (b + np.sqrt(b * b + 4.0 * a)) / 2.0


def _quadratic_constraint(d: np.ndarray, c: np.ndarray, r: float, n_vars: int):
    """sum_m d_m^2 theta_m^2 + c'theta <= r as a second-order cone on x[:M]:
    with u = r - c'theta, ||(2 D theta, u - 1)|| <= u + 1."""
    M = len(d)
    cols = np.arange(M)
    A = _sparse(
        np.concatenate([np.zeros(M, dtype=np.int64), cols + 1, np.full(M, M + 1)]),
        np.concatenate([cols, cols, cols]),
        # s0 = (r + 1) - c'theta;  s = 2 D theta;  s_last = (r - 1) - c'theta
        np.concatenate([c, -2.0 * d, c]),
        (M + 2, n_vars),
    )
    b = np.concatenate([[r + 1.0], np.zeros(M), [r - 1.0]])
    return A, b, clarabel.SecondOrderConeT(M + 2)


class Triplets(NamedTuple):
    """A constraint block by its nonzeros, (row, column, value) triplets: the
    blocks of one subproblem become one CSC matrix in one construction
    (:func:`_stack`), without a scipy matrix per block."""

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    shape: tuple[int, int]


def _sparse(rows, cols, values, shape) -> Triplets:
    """The block with these nonzeros (made a matrix once, by :func:`_stack`)."""
    return Triplets(np.asarray(rows), np.asarray(cols), np.asarray(values, dtype=float), shape)


def _zero_objective(n: int) -> sp.csc_matrix:
    """The n x n zero matrix in CSC form, built from its (empty) arrays."""
    return sp.csc_matrix(
        (np.zeros(0), np.zeros(0, dtype=np.int32), np.zeros(n + 1, dtype=np.int32)), shape=(n, n)
    )


def _identity_objective(n: int, size: int | None = None) -> sp.csc_matrix:
    """The identity on the first n of ``size`` variables (default n), zero on
    the rest, in CSC form, built from its arrays."""
    size = n if size is None else size
    index = np.minimum(np.arange(size + 1, dtype=np.int32), n)
    return sp.csc_matrix((np.ones(n), index[:n], index), shape=(size, size))


_INFEASIBLE = {
    "PrimalInfeasible",
    "DualInfeasible",
    "AlmostPrimalInfeasible",
    "AlmostDualInfeasible",
}


def _stack(blocks) -> sp.csc_matrix:
    """The blocks (:class:`Triplets`, or dense arrays like the cuts) one above
    the other, from their nonzeros in one construction (not scipy's vstack)."""
    rows, cols, values, offset = [], [], [], 0
    for A in blocks:
        if isinstance(A, Triplets):
            r, c, v = A.rows, A.cols, A.values
        else:
            r, c = np.nonzero(A)
            v = A[r, c]
        rows.append(r + offset)
        cols.append(c)
        values.append(v)
        offset += A.shape[0]
    return sp.csc_matrix(
        (np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))),
        shape=(offset, blocks[0].shape[1]),
    )


def solve_conic(P, c, blocks) -> tuple[np.ndarray, np.ndarray]:
    """Primal x and dual z of min 1/2 x'Px + c'x s.t. A x + s = b, s in K, for
    ``P`` given by its upper triangle (CSC; the zero matrix or the identity here).

    Near convergence hundreds of nearly parallel cuts make the KKT systems
    ill-conditioned and the interior-point method may stop short of its 1e-9
    tolerances (InsufficientProgress, NumericalError); its last iterate is
    still accurate to about 1e-10 here and is used: the methods clean it onto
    Theta, and lower bounds come from multipliers, valid whatever their accuracy."""
    A = _stack([blk[0] for blk in blocks])
    b = np.concatenate([blk[1] for blk in blocks])
    cones = [cone for blk in blocks for cone in (blk[2] if isinstance(blk[2], list) else [blk[2]])]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = 1e-9
    settings.tol_feas = 1e-9
    sol = clarabel.DefaultSolver(P, np.asarray(c, float), A, b, cones, settings).solve()
    x = np.asarray(sol.x)
    if str(sol.status) in _INFEASIBLE or x.size == 0 or not np.all(np.isfinite(x)):
        raise SubproblemError(f"weight subproblem not solved: {sol.status}")
    return x, np.asarray(sol.z)

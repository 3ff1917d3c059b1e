"""A dense box-constrained convex QP, min 1/2 x'Hx + p'x over lo <= x <= hi,
by gradient projection and Newton steps on the face (More & Toraldo, SIAM J.
Optim. 1, 1991): a projected gradient step along the arc P(x - t g) first
(from the Cauchy step of the free part, halved until Armijo's decrease), which
moves many coordinates onto their bounds at once; then Newton's step on the
coordinates strictly inside the box, again along the projected arc. The
objective is evaluated exactly (O(n^2) a trial), each Newton step factors the
free block (O(n_free^3)).

Why not coordinate descent (``coordinate_descent.py``): the Newton models of
SpicyMKL's inner problem carry a stiff rank-one term gamma yy' (gamma up to
1e4) on top of Gram matrices with eigenvalues near 0, where coordinate descent
needs thousands of epochs; SciPy has no box QP, and an interior-point solver
(Clarabel) would be a runtime dependency for a problem of a few hundred
variables.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

# Armijo's sufficient decrease along the projected arc, and its halvings
ARMIJO = 1e-4
HALVINGS = 60


def _value(H, p, x):
    return 0.5 * float(x @ (H @ x)) + float(p @ x)


def _arc_search(H, p, lo, hi, x, value, g, direction, t):
    """The first x(t) = P(x + t direction), t halved from ``t``, with
    q(x(t)) <= q(x) + ARMIJO g'(x(t) - x) < q(x); None if there is none."""
    for _ in range(HALVINGS):
        trial = np.clip(x + t * direction, lo, hi)
        slope = float(g @ (trial - x))
        if slope < 0.0:
            trial_value = _value(H, p, trial)
            if trial_value <= value + ARMIJO * slope and trial_value < value:
                return trial, trial_value
        t *= 0.5
    return None


def _newton_on_face(H, g, free):
    """Newton's step on the free coordinates: -H_FF^{-1} g_F, with a shift of
    1e-12 of the block's largest diagonal entry (raised tenfold until it
    factors) where H is only semidefinite."""
    block = H[np.ix_(free, free)]
    shift = 1e-12 * max(float(np.max(np.diag(block))), 1e-300)
    identity = np.eye(len(free))
    for _ in range(12):
        try:
            factor = cho_factor(block + shift * identity, lower=True, check_finite=False)
            return -cho_solve(factor, g[free], check_finite=False)
        except np.linalg.LinAlgError:
            shift *= 10.0
    return -np.linalg.lstsq(block, g[free], rcond=None)[0]


def box_qp(H, p, lo, hi, x, tol, max_iter=500):
    """min 1/2 x'Hx + p'x over lo <= x <= hi (H symmetric positive semidefinite,
    lo and hi scalars or arrays) from ``x``, until every coordinate's projected
    gradient is at most ``tol``. Returns (x, iterations, converged)."""
    x = np.clip(np.asarray(x, dtype=np.float64), lo, hi)
    value = _value(H, p, x)
    for it in range(max_iter):
        g = H @ x + p
        projected = x - np.clip(x - g, lo, hi)
        if float(np.abs(projected).max()) <= tol:
            return x, it, True
        # gradient projection: the Cauchy step of the moving coordinates first
        moving = projected != 0.0
        curvature = float(g[moving] @ (H[np.ix_(moving, moving)] @ g[moving]))
        t = float(g[moving] @ g[moving]) / curvature if curvature > 0 else 1.0
        found = _arc_search(H, p, lo, hi, x, value, g, -g, max(t, 1e-300))
        if found is None:  # no decrease in floating point
            return x, it, False
        x, value = found
        # Newton on the face: the coordinates strictly inside the box
        free = np.flatnonzero((x > lo) & (x < hi))
        if free.size:
            g = H @ x + p
            direction = np.zeros_like(x)
            direction[free] = _newton_on_face(H, g, free)
            found = _arc_search(H, p, lo, hi, x, value, g, direction, 1.0)
            if found is not None:
                x, value = found
    g = H @ x + p
    return x, max_iter, float(np.abs(x - np.clip(x - g, lo, hi)).max()) <= tol

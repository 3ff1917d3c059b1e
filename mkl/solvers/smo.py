"""A warm-startable SMO solver for the SVM duals in libsvm's form,

    min_a  1/2 a'Q a + p'a,  Q_st = sign_s sign_t K(idx_s, idx_t),
    s.t.   0 <= a_t <= U_t,  sign'a = const,

on a kernel K that is either formed (an n x n matrix) or the combination
K(theta) = sum_m theta_m K_m of a bank whose rows are formed as the working
sets ask for them. The C-SVM is sign = y, p = -1, U = C (``idx`` the
identity); the epsilon-SVR and the one-class SVM are the tasks' other forms
(``mkl.solvers.task_duals``). This is what libsvm (``mkl.solvers.libsvm``) does not
offer: a start from a given feasible point, and a kernel that changes between
chunks of working-set steps.

* :func:`solve_svm_smo` -- the C-SVM on a formed kernel from a warm start:
  the wrapper MKL methods solve a sequence of SVMs whose kernels change
  little, and started at the previous alpha a solve needs a fraction of a cold
  solve's iterations.
* :class:`BankSMO` -- the interleaved engine's state (Kloft et al. 2009,
  sec. 2.4; Sonnenburg et al. 2006, sec. 4.2): the weights change every few
  working-set steps, and the per-kernel products g_m = K_m beta are kept up
  to date from the rows of the variables a chunk moved, so q_m = beta'g_m and
  K(theta) beta = sum_m theta_m g_m never need a pass over the bank.

The algorithm is libsvm's (Chang & Lin 2011, Section 4; Fan, Chen & Lin 2005):
working-set selection by second-order information (WSS 2), the two-variable
update clipped to the box, and the same stopping rule, max_{I_up} -y_t G_t +
max_{I_low} y_t G_t <= tol, so ``tol`` means what it means for libsvm. The
shrinking heuristic of libsvm (Section 5.1) drops bound multipliers whose
gradient says they will stay at their bound from the working-set search and
the gradient updates, and checks the whole set once before stopping. The loop
is compiled by numba; rows are read from the C-contiguous kernel (a formed
kernel needs no cache) or formed once per weight vector from the bank.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..banks.algebra import add_rows, refuse_indefinite
from ..exceptions import InputError
from .solution import SMOSolution, box_bounds

TAU = 1e-12  # libsvm's floor on the second-order term
# a formed kernel is a bank of one kernel of weight 1 whose rows are read directly
_ONE = np.ones(1)
_NO_ROWS = np.zeros((0, 0))
_NO_FLAGS = np.zeros(0, dtype=np.bool_)
_NO_MOVES = np.zeros(0)


def _box(U, t):
    """The upper bound of variable t: ``U`` itself when it is one number for all
    (as the unweighted duals have it), ``U[t]`` for per-sample bounds. Compiled
    per type (:func:`_box_overload`), so that the common case reads no array
    in the working-set loops."""
    return U if np.ndim(U) == 0 else U[t]


@overload(_box, jit_options={"cache": True})
def _box_overload(U, t):
    if isinstance(U, types.Number):
        return lambda U, t: U
    return lambda U, t: U[t]


def _minus_ones(n: int) -> np.ndarray:
    return np.full(n, -1.0)


@njit(cache=True, nogil=True)
def _row(K, theta, direct, rows, formed, i):
    """Row i of K(theta) = sum_m theta_m K_m: the bank's own row when it holds
    one formed kernel (``direct``), else formed into ``rows`` once per weight
    vector (``formed`` marks the rows that are current)."""
    if direct:
        return K[0, i]
    if not formed[i]:
        r = rows[i]
        r[:] = 0.0
        M = K.shape[0]
        m = 0
        # four kernels a sweep: the row is written M/4 times, not M (measured
        # at n = 500, M = 50: a pass in 4.2 ms, as fast as BLAS's gemv)
        while m + 4 <= M:
            t0, t1, t2, t3 = theta[m], theta[m + 1], theta[m + 2], theta[m + 3]
            if t0 != 0.0 or t1 != 0.0 or t2 != 0.0 or t3 != 0.0:
                K0, K1, K2, K3 = K[m, i], K[m + 1, i], K[m + 2, i], K[m + 3, i]
                for k in range(r.shape[0]):
                    r[k] += t0 * K0[k] + t1 * K1[k] + t2 * K2[k] + t3 * K3[k]
            m += 4
        while m < M:
            t = theta[m]
            if t != 0.0:
                Km = K[m, i]
                for k in range(r.shape[0]):
                    r[k] += t * Km[k]
            m += 1
        formed[i] = True
    return rows[i]


@njit(cache=True, nogil=True)
def _track(K, g, pending, i, d, fresh):
    """beta_i moved by d: g_m += d K_m[i] for every kernel now if row i was
    formed in this very step (its M kernel rows are still in cache: the
    formation's read serves the update), else d is kept in ``pending`` for
    one read of the row at the end of the chunk (:func:`~mkl.banks.algebra.add_rows`)."""
    if d == 0.0:
        return
    if fresh:
        for m in range(K.shape[0]):
            gm = g[m]
            Kmi = K[m, i]
            for k in range(gm.shape[0]):
                gm[k] += d * Kmi[k]
    else:
        pending[i] += d


@njit(cache=True, nogil=True)
def _smo(
    K,
    theta,
    direct,
    rows,
    formed,
    sign,
    idx,
    p,
    qd,
    U,
    a,
    G,
    beta,
    tol,
    max_iter,
    shrinking,
    g,
    pending,
    track,
):
    """libsvm's Solver::Solve for the boxes 0 <= a_t <= U_t (``U`` per variable:
    libsvm's C_i, the per-sample weights), in place on a, its gradient
    G = Q a + p and the coefficients beta (beta_i = sum_{idx_t = i} sign_t a_t);
    qd the diagonal of Q. Rows of K(theta) come from :func:`_row`. With
    ``track``, the per-kernel products g_m = K_m beta follow beta
    (:func:`_track`; ``pending`` holds the moves still to apply). Returns
    (iterations, converged)."""
    n = sign.shape[0]
    active = np.arange(n)
    active_size = n
    unshrunk = False
    counter = min(n, 1000) + 1
    iteration = 0
    while iteration < max_iter:
        counter -= 1
        if counter == 0 and shrinking:
            counter = min(n, 1000)
            # --- shrinking (libsvm do_shrinking)
            gmax1 = -np.inf  # max { -y_t G_t : t in I_up }
            gmax2 = -np.inf  # max { y_t G_t : t in I_low }
            for k in range(active_size):
                t = active[k]
                if sign[t] > 0:
                    if a[t] < _box(U, t) and -G[t] >= gmax1:
                        gmax1 = -G[t]
                    if a[t] > 0 and G[t] >= gmax2:
                        gmax2 = G[t]
                else:
                    if a[t] > 0 and G[t] >= gmax1:
                        gmax1 = G[t]
                    if a[t] < _box(U, t) and -G[t] >= gmax2:
                        gmax2 = -G[t]
            if not unshrunk and gmax1 + gmax2 <= tol * 10:
                unshrunk = True
                active_size = _unshrink(
                    K, theta, direct, rows, formed, sign, idx, p, G, beta, active, active_size
                )
            k = 0
            while k < active_size:
                t = active[k]
                if _shrinkable(sign[t], a[t], G[t], _box(U, t), gmax1, gmax2):
                    active_size -= 1
                    active[k], active[active_size] = active[active_size], active[k]
                else:
                    k += 1
        # --- working-set selection (WSS 2)
        gmax = -np.inf
        i = -1
        for k in range(active_size):
            t = active[k]
            if sign[t] > 0:
                if a[t] < _box(U, t) and -G[t] >= gmax:
                    gmax = -G[t]
                    i = t
            else:
                if a[t] > 0 and G[t] >= gmax:
                    gmax = G[t]
                    i = t
        gmax2 = -np.inf
        j = -1
        best = np.inf
        fresh_i = False
        if i >= 0:
            Kii = qd[i]
            fresh_i = not direct and not formed[idx[i]]
            Ki = _row(K, theta, direct, rows, formed, idx[i])
            for k in range(active_size):
                t = active[k]
                if sign[t] > 0:
                    if a[t] > 0:
                        diff = gmax + G[t]
                        if G[t] >= gmax2:
                            gmax2 = G[t]
                    else:
                        continue
                else:
                    if a[t] < _box(U, t):
                        diff = gmax - G[t]
                        if -G[t] >= gmax2:
                            gmax2 = -G[t]
                    else:
                        continue
                if diff > 0:
                    quad = Kii + qd[t] - 2.0 * Ki[idx[t]]
                    if quad <= 0:
                        quad = TAU
                    obj = -(diff * diff) / quad
                    if obj <= best:
                        best = obj
                        j = t
        if gmax + gmax2 < tol or j == -1:
            if active_size < n:  # stop only on the whole set: select on it next,
                active_size = _unshrink(
                    K, theta, direct, rows, formed, sign, idx, p, G, beta, active, active_size
                )
                unshrunk = True
                counter = 2  # and shrink again the iteration after (libsvm)
                continue
            return iteration, True
        iteration += 1
        # --- the two-variable update, clipped to the box (libsvm)
        fresh_j = not direct and not formed[idx[j]]
        Ki = _row(K, theta, direct, rows, formed, idx[i])
        Kj = _row(K, theta, direct, rows, formed, idx[j])
        Kij = Ki[idx[j]]
        old_i, old_j = a[i], a[j]
        Ui, Uj = _box(U, i), _box(U, j)
        if sign[i] != sign[j]:
            quad = qd[i] + qd[j] + 2.0 * (sign[i] * sign[j] * Kij)
            if quad <= 0:
                quad = TAU
            delta = (-G[i] - G[j]) / quad
            diff = a[i] - a[j]
            a[i] += delta
            a[j] += delta
            if diff > 0:
                if a[j] < 0:
                    a[j] = 0.0
                    a[i] = diff
            else:
                if a[i] < 0:
                    a[i] = 0.0
                    a[j] = -diff
            if diff > Ui - Uj:
                if a[i] > Ui:
                    a[i] = Ui
                    a[j] = Ui - diff
            else:
                if a[j] > Uj:
                    a[j] = Uj
                    a[i] = Uj + diff
        else:
            quad = qd[i] + qd[j] - 2.0 * (sign[i] * sign[j] * Kij)
            if quad <= 0:
                quad = TAU
            delta = (G[i] - G[j]) / quad
            total = a[i] + a[j]
            a[i] -= delta
            a[j] += delta
            if total > Ui:
                if a[i] > Ui:
                    a[i] = Ui
                    a[j] = total - Ui
            else:
                if a[j] < 0:
                    a[j] = 0.0
                    a[i] = total
            if total > Uj:
                if a[j] > Uj:
                    a[j] = Uj
                    a[i] = total - Uj
            else:
                if a[i] < 0:
                    a[i] = 0.0
                    a[j] = total
        di = (a[i] - old_i) * sign[i]
        dj = (a[j] - old_j) * sign[j]
        beta[idx[i]] += di
        beta[idx[j]] += dj
        if track:
            _track(K, g, pending, idx[i], di, fresh_i)
            _track(K, g, pending, idx[j], dj, fresh_j)
        for k in range(active_size):
            t = active[k]
            G[t] += sign[t] * (Ki[idx[t]] * di + Kj[idx[t]] * dj)
        # the shrunk variables' gradients are rebuilt when they return
    return iteration, False


@njit(cache=True, nogil=True)
def _shrinkable(yt, at, Gt, C, gmax1, gmax2):
    """libsvm be_shrunk: a bound multiplier whose gradient keeps it there."""
    if at >= C:
        if yt > 0:
            return -Gt > gmax1
        return -Gt > gmax2
    if at <= 0:
        if yt > 0:
            return Gt > gmax2
        return Gt > gmax1
    return False


@njit(cache=True, nogil=True)
def _unshrink(K, theta, direct, rows, formed, sign, idx, p, G, beta, active, active_size):
    """Bring every variable back; the shrunk ones' gradients are recomputed from
    the coefficients (G_t = sign_t K(theta)[idx_t] beta + p_t)."""
    n = sign.shape[0]
    if active_size == n:
        return n
    for k in range(active_size, n):
        t = active[k]
        row = _row(K, theta, direct, rows, formed, idx[t])
        g = 0.0
        for s in range(beta.shape[0]):
            if beta[s] != 0.0:
                g += row[s] * beta[s]
        G[t] = sign[t] * g + p[t]
    return n


@njit(cache=True, nogil=True)
def _form_rows(K, theta, rows, formed, which):
    """Rows ``which`` of K(theta) into the cache (:func:`_row`)."""
    for c in range(which.shape[0]):
        _row(K, theta, False, rows, formed, which[c])


@njit(cache=True, nogil=True)
def _rho(y, alpha, G, U):
    """libsvm calculate_rho: the mean of y_t G_t over free multipliers (strictly
    inside their boxes [0, U_t]), else the middle of the feasible interval."""
    ub = np.inf
    lb = -np.inf
    free = 0
    total = 0.0
    for t in range(y.shape[0]):
        if _box(U, t) <= 0.0:  # a point of weight 0 takes no part (libsvm drops it)
            continue
        yG = y[t] * G[t]
        if alpha[t] >= _box(U, t):
            if y[t] < 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif alpha[t] <= 0:
            if y[t] > 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            free += 1
            total += yG
    if free > 0:
        return total / free
    return (ub + lb) / 2.0


def feasible_start(alpha0, y: np.ndarray, C) -> np.ndarray:
    """alpha0 made feasible for (C, y): clipped to [0, C_i], then the larger class's
    multipliers scaled down until y'alpha = 0 (a start from another C or from a
    problem whose labels differ is projected, never used as given)."""
    alpha = np.clip(np.asarray(alpha0, dtype=np.float64), 0.0, C)
    pos, neg = alpha[y > 0].sum(), alpha[y < 0].sum()
    if pos > neg:
        alpha[y > 0] *= neg / pos
    elif neg > pos:
        alpha[y < 0] *= pos / neg
    return alpha


def solve_svm_smo(
    K: np.ndarray,
    y: np.ndarray,
    C=1.0,
    tol: float = 1e-3,
    alpha0: np.ndarray | None = None,
    max_iter: int | None = None,
    shrinking: bool = True,
) -> SMOSolution:
    """The C-SVM dual on the precomputed kernel ``K`` (n, n), labels ``y`` in
    {-1, +1}, box ``C`` (a number, or one bound C_i per point: ``mkl.solvers.solution.box_bounds``),
    libsvm's stopping tolerance ``tol``; started at ``alpha0`` when given (made
    feasible by :func:`feasible_start`), else at 0. ``max_iter``: cap on SMO
    iterations (default: libsvm's, 1e7 or 100 n)."""
    K = np.ascontiguousarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[0]
    if K.shape != (n, n):
        raise InputError(f"K must be ({n}, {n}) for {n} labels, got {K.shape}")
    U = box_bounds(C, n)
    if not np.all(np.abs(y) == 1):
        raise InputError("labels must be -1 or +1")
    if alpha0 is None:
        alpha = np.zeros(n)
        G = -np.ones(n)
    else:
        if np.shape(alpha0) != (n,):
            raise InputError(f"alpha0 must have shape ({n},), got {np.shape(alpha0)}")
        alpha = feasible_start(alpha0, y, U)
        G = y * (K @ (y * alpha)) - 1.0
    if max_iter is None:
        max_iter = max(10_000_000, 100 * n)
    QD = np.ascontiguousarray(np.diag(K))
    iterations, converged = _smo(
        K[None], _ONE, True, _NO_ROWS, _NO_FLAGS, y, np.arange(n), _minus_ones(n), QD,
        U, alpha, G, alpha * y, float(tol), int(max_iter), shrinking,
        _NO_ROWS, _NO_MOVES, False,
    )  # fmt: skip
    np.clip(alpha, 0.0, U, out=alpha)
    beta = alpha * y
    G = y * (K @ beta) - 1.0  # exact (shrunk variables' entries are stale at a cap)
    objective = float(alpha.sum() - 0.5 * (alpha.sum() + alpha @ G))  # G = Q alpha - 1
    return SMOSolution(
        alpha=alpha,
        dual_coef=beta,
        bias=-float(_rho(y, alpha, G, U)),
        objective=objective,
        C=U,  # float, or C_i per point
        at_bound=False,
        converged=bool(converged),
        iterations=int(iterations),
    )


def chunk_steps(n: int) -> int:
    """SMO steps per chunk of the interleaved engine: between weight steps the
    SVM moves about n/CHUNK_FRACTION pairs (at least MIN_CHUNK)."""
    return max(MIN_CHUNK, n // CHUNK_FRACTION)


MIN_CHUNK = 20
CHUNK_FRACTION = 16
# g moves by one product over the whole bank when more than this fraction of
# the coefficients moved (n = 500, M = 50: BLAS's pass 3.7 ms, the rows
# gathered 5.1 ms a pass-equivalent)
WHOLE_BANK_FRACTION = 0.7


class BankSMO:
    """SMO on K(theta) = sum_m theta_m K_m for weights that change between chunks
    of working-set steps: the state of the interleaved engine (Kloft et al. 2009,
    sec. 2.4 and Algorithm 1; Sonnenburg et al. 2006, sec. 4.2) on a dense bank
    ``K`` (M, n, n), for the dual ``form`` of a task (``mkl.solvers.task_duals``).

    Kept across chunks: the multipliers a, the coefficients beta and the
    per-kernel products g_m = K_m beta (M, n). A chunk (:meth:`advance`) runs at
    most ``max_steps`` SMO steps on K(theta), forming the rows it reads once
    per weight vector; g follows beta step by step (sum_m over the M kernel
    rows of a moved coefficient: read once, by the formation of its row in
    the same step, when that step formed it; otherwise once at the end of the
    chunk, for all the step's moves of it together), so that

        q_m = beta' g_m,   K(theta) beta = sum_m theta_m g_m,   G = sign * K(theta)beta[idx] + p

    cost O(M n) and never a pass over the bank. ``rows_read`` counts the kernel
    rows (of length n) read so far: the SVM work of the fit, a pass being M n."""

    def __init__(self, K: np.ndarray, form, task, y: np.ndarray, C):
        self.K, self.form, self.task, self.y, self.C = K, form, task, y, C
        self.M, self.n = K.shape[0], K.shape[1]
        self.diag = np.einsum("mii->mi", K).astype(np.float64)
        self.diag_max = np.abs(self.diag).max(axis=1)
        self.a = np.array(form.start, dtype=np.float64)
        self.beta = form.coefficients(self.a, self.n)
        self.g = np.zeros((self.M, self.n))
        self.pending = np.zeros(self.n)  # moves of beta not yet in g (_track)
        self.untracked = False  # a solve moved the multipliers without g (solve)
        self.rows = np.empty((self.n, self.n), dtype=K.dtype)
        self.formed = np.zeros(self.n, dtype=np.bool_)
        self.theta: np.ndarray | None = None
        self.rows_read = 0
        self.steps = 0
        self.chunk_steps = chunk_steps(self.n)
        self._move(self.beta)

    def _move(self, delta: np.ndarray) -> None:
        """g_m += K_m delta, reading the rows of delta's nonzero entries; when
        most of them moved, one matrix-vector product over the whole bank
        (BLAS streams it faster than the rows are gathered)."""
        changed = np.flatnonzero(delta)
        if changed.size > WHOLE_BANK_FRACTION * self.n and self.K.dtype == np.float64:
            self.g += (self.K.reshape(self.M * self.n, self.n) @ delta).reshape(self.M, self.n)
            self.rows_read += self.M * self.n
        elif changed.size:
            add_rows(self.K, self.g, changed, delta)
            self.rows_read += self.M * changed.size

    def _flush(self) -> None:
        """Apply the moves kept in ``pending`` to g."""
        self._move(self.pending)
        self.pending[:] = 0.0

    def _at(self, theta: np.ndarray) -> np.ndarray:
        """Make ``theta`` the current weights (the formed rows of other weights are stale)."""
        theta = np.asarray(theta, dtype=np.float64)
        if self.theta is None or not np.array_equal(theta, self.theta):
            self.theta = theta.copy()
            self.formed[:] = False
        return self.theta

    def combination(self, theta: np.ndarray, K_theta: np.ndarray | None = None) -> np.ndarray:
        """K(theta) as the row cache: ``K_theta`` when it is known (no pass),
        else the rows not yet formed at these weights, formed from the bank."""
        theta = self._at(theta)
        if K_theta is not None:
            self.rows[...] = K_theta
            self.formed[:] = True
        missing = np.flatnonzero(~self.formed)
        if missing.size > WHOLE_BANK_FRACTION * self.n and self.K.dtype == np.float64:
            np.dot(theta, self.K.reshape(self.M, -1), out=self.rows.reshape(-1))
            self.formed[:] = True
            self.rows_read += self.M * self.n
        elif missing.size:
            _form_rows(self.K, theta, self.rows, self.formed, missing)
            self.rows_read += self.M * missing.size
        return self.rows

    def solve(
        self, theta: np.ndarray, tol: float, K_theta=None, track: bool = True, whole: bool = True
    ):
        """The SVM at ``theta`` solved to ``tol`` from the current state, on the
        whole combination (:meth:`combination`: most rows are read by a full
        solve, and the learned kernel's spectral ratio needs them all).
        ``whole=False``: only the rows the working sets read are formed (a
        loose solve from a nearby point moves a fraction of the multipliers).
        ``track=False`` (a fit's last solve): q is not needed, and the
        per-kernel products are brought up to date only if a chunk follows;
        q is then None."""
        theta = self._at(theta)
        if whole or not track:
            rows = self.combination(theta, K_theta)
        if track:
            return self.advance(theta, max(10_000_000, 100 * self.n), tol, shrinking=True)
        self._sync()
        form = self.form
        f = rows @ self.beta
        G = form.sign * f[form.idx] + form.p
        qd = np.ascontiguousarray(np.diagonal(rows)[form.idx], dtype=np.float64)
        beta = self.beta.copy()
        steps, converged = _smo(
            self.K, theta, False, rows, self.formed, form.sign, form.idx, form.p, qd,
            form.upper, self.a, G, beta, float(tol * form.tol_scale),
            max(10_000_000, 100 * self.n), True, _NO_ROWS, _NO_MOVES, False,
        )  # fmt: skip
        self.steps += int(steps)
        self.untracked = True  # g and self.beta stay at the multipliers before the solve
        beta = form.coefficients(self.a, self.n)
        f = rows @ beta
        G = form.sign * f[form.idx] + form.p
        rho = float(_rho(form.sign, self.a, G, form.upper))
        sol = self.task.solution(
            self.a.copy(), beta, rho, float(beta @ f), self.y, self.C, f, bool(converged)
        )
        return sol, None

    def _sync(self) -> None:
        """Bring g up to the current multipliers after an untracked solve."""
        if self.untracked:
            beta = self.form.coefficients(self.a, self.n)
            self._move(beta - self.beta)
            self.beta = beta
            self.untracked = False

    def advance(self, theta: np.ndarray, max_steps: int, tol: float, shrinking=False):
        """At most ``max_steps`` SMO steps on K(theta) (to libsvm's ``tol``):
        returns the task's solution at the new point (``mkl.solvers.task_duals``,
        with ``primal`` an upper bound on J(theta)) and q (M,)."""
        theta = self._at(theta)
        self._sync()
        form = self.form
        f = theta @ self.g
        G = form.sign * f[form.idx] + form.p
        qd = np.ascontiguousarray((theta @ self.diag)[form.idx])
        before = int(self.formed.sum())
        steps, converged = _smo(
            self.K, theta, False, self.rows, self.formed, form.sign, form.idx, form.p, qd,
            form.upper, self.a, G, self.beta, float(tol * form.tol_scale),
            int(max_steps), shrinking, self.g, self.pending, True,
        )  # fmt: skip
        self.steps += int(steps)
        self.rows_read += self.M * (int(self.formed.sum()) - before)
        self._flush()
        # beta is the loop's running sum, which g follows; a fresh sum of the
        # multipliers would differ in the last digits at every moved entry
        beta = self.beta.copy()
        f = theta @ self.g
        q = refuse_indefinite(self.K, self.g @ beta, beta, self.diag_max)
        G = form.sign * f[form.idx] + form.p
        rho = float(_rho(form.sign, self.a, G, form.upper))
        sol = self.task.solution(
            self.a.copy(), beta, rho, float(theta @ q), self.y, self.C, f, bool(converged)
        )
        return sol, q

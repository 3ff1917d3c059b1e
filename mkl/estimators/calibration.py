"""Probabilities from decision values: Platt's sigmoid.

Platt (1999), "Probabilistic outputs for support vector machines", fits

    P(y = 1 | f) = 1 / (1 + exp(A f + B))

to decision values f by maximum likelihood against the smoothed targets
t+ = (N+ + 1) / (N+ + 2) and t- = 1 / (N- + 2) (his eq. 11), which keep the
fit finite when the classes separate. Lin, Lin & Weng (2007, "A note on
Platt's probabilistic outputs for support vector machines") write the
negative log-likelihood stably as sum_i log(1 + exp(z_i)) - (1 - t_i) z_i with
z_i = A f_i + B; here it is minimised by scipy's L-BFGS with its exact
gradient, from Platt's start A = 0, B = log((N- + 1) / (N+ + 1)).

As in libsvm (``SVC(probability=True)``), the decision values to fit on are
out-of-fold values of an internal cross-validation, so that the sigmoid is
not fitted on the training points' own (overconfident) margins; with more
than two classes each one-vs-rest column gets its sigmoid and the
probabilities are normalised to sum to 1, as scikit-learn's
``CalibratedClassifierCV`` does for one-vs-rest classifiers.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from ..exceptions import SolverError


def platt_sigmoid(scores: np.ndarray, positive: np.ndarray) -> tuple[float, float]:
    """(A, B) of Platt's sigmoid P(positive | f) = 1 / (1 + exp(A f + B)),
    fitted to the decision values ``scores`` (n,) of rows whose class is
    ``positive`` (n,) bool (module docstring)."""
    f = np.asarray(scores, dtype=np.float64).ravel()
    positive = np.asarray(positive, dtype=bool).ravel()
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    # Platt's eq. 11: targets pulled towards 1/2 by one point of each class
    t = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def loss_and_gradient(ab):
        z = ab[0] * f + ab[1]
        loss = float(np.sum(np.logaddexp(0.0, z) - (1.0 - t) * z))
        g = expit(z) - (1.0 - t)  # d loss / d z_i
        return loss, np.array([g @ f, g.sum()])

    start = np.array([0.0, np.log((n_neg + 1.0) / (n_pos + 1.0))])
    result = minimize(loss_and_gradient, start, jac=True, method="L-BFGS-B")
    if not np.all(np.isfinite(result.x)):
        raise SolverError(f"Platt's sigmoid fit failed: {result.message}")
    return float(result.x[0]), float(result.x[1])


def sigmoid_probabilities(scores: np.ndarray, sigmoids: np.ndarray) -> np.ndarray:
    """Class probabilities (n, n_classes) from decision values and the fitted
    sigmoids: (n,) scores of two classes with one (A, B) (the probability of
    the second class), or (n, k) one-vs-rest scores with k rows of (A, B),
    normalised per row."""
    sigmoids = np.asarray(sigmoids, dtype=np.float64).reshape(-1, 2)
    if np.ndim(scores) == 1:
        p = expit(-(sigmoids[0, 0] * scores + sigmoids[0, 1]))
        return np.column_stack([1.0 - p, p])
    p = expit(-(scores * sigmoids[:, 0] + sigmoids[:, 1]))
    total = p.sum(axis=1, keepdims=True)
    # every one-vs-rest sigmoid near 0: no column says more than another
    return np.divide(p, total, out=np.full_like(p, 1.0 / p.shape[1]), where=total > 0)

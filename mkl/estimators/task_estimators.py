"""MKL for regression and novelty detection on kernel banks.

Each estimator runs a registry method's own weight update (SimpleMKL, the
level method, lp-norm MKL, GMKL...) with another inner problem behind the one
oracle (:mod:`mkl.solvers.task_duals`): the epsilon-SVR for :class:`MKLRegressor`, the
one-class SVM (Schoelkopf et al. 2001) for :class:`MKLNoveltyDetector`. It
fits an instance of the registry class with its ``task`` parameter set, and
keeps it as ``estimator_``: nothing of the loops is copied. Users get them
from ``mkl.make_estimator(name, task="regression" | "novelty")``.

The methods whose math is the classifier's own do not carry over: EasyMKL and
MEMO (the KOMD margin between two classes), SMKL (its smoothed objective is
the bias-free hinge loss) and the indefinite-similarity family (SVMs on
transformed spectra or learned PSD kernels, built for the C-SVM). The wrapper
methods and the baselines ``uniform`` and ``linear`` do, and ``single_best``
for regression (selection by cross-validated squared error; novelty has no
held-out score to select by)
(:func:`mkl.algorithms.registry.algorithms_for_task`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, OutlierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..algorithms.registry import ALGORITHMS, algorithms_for_task, new_algorithm
from ..exceptions import InputError
from ..solvers.task_duals import Novelty, Regression
from .algorithm_params import algorithm_parameters

# the fitted attributes of the bank-level estimator that the task estimators show
FITTED_ATTRIBUTES = (
    "weights_",
    "dual_coef_",
    "intercept_",
    "objective_",
    "gap_",
    "n_iter_",
    "n_selected_",
    "converged_",
    "history_",
    "spectral_ratio_",
)


def _solver(algorithm, task, **params):
    """An unfitted registry estimator for ``algorithm`` solving ``task`` (its
    ``task`` parameter, which ``clone`` keeps)."""
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
        raise InputError(
            f"unknown algorithm {algorithm!r}; for {task.name}: "
            f"{', '.join(algorithms_for_task(task.name))}"
        )
    if task.name not in ALGORITHMS[algorithm].tasks:
        raise InputError(
            f"algorithm {algorithm!r} does not do {task.name} (its math is the "
            f"classifier's); for {task.name}: {', '.join(algorithms_for_task(task.name))}"
        )
    return new_algorithm(algorithm, task=task, **params)


class _TaskEstimator(BaseEstimator):
    """What the task estimators share: fitting the solver on a validated bank,
    showing its fitted attributes, and its decision values."""

    # a FactorBank goes to the registry method, which takes it if its math allows
    # (the task's dual on factors: mkl.solvers.coordinate_descent)
    accepts_factors = True

    def _fit_solver(self, solver, K, y, sample_weight=None):
        solver.fit(K, y, **({} if sample_weight is None else {"sample_weight": sample_weight}))
        self.estimator_ = solver
        for name in FITTED_ATTRIBUTES:
            setattr(self, name, getattr(solver, name))
        self.n_kernels_ = solver.n_kernels_
        return self

    def decision_function(self, K_test):
        """K(theta)(x, X) beta + bias on the test block (M, n_test, n_train)."""
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(K_test)


class MKLRegressor(RegressorMixin, _TaskEstimator):
    """Multiple kernel epsilon-SVR: the weights of ``algorithm`` (a registry
    name; :func:`~mkl.algorithms.registry.algorithms_for_task` ``("regression")``)
    learned with the dual

        J(theta) = max_beta y'beta - epsilon ||beta||_1 - 1/2 sum_m theta_m beta'K_m beta
        s.t. 1'beta = 0, -C <= beta <= C,

    minimised over the method's weight set (as in SHOGUN's MKLRegression and
    Rakotomamonjy et al. 2008, section 5 for SimpleMKL). ``fit(K, y)`` with K
    (M, n, n) or a KernelBank and y real; ``predict(K_test)`` with K_test
    (M, n_test, n). ``objective_`` is J at the returned weights and ``gap_``
    the method's relative duality or bound gap. ``p`` (lp-norm methods) and
    ``v`` (GMKL) are passed when set; any other parameter of the method in
    ``algorithm_params``.
    """

    def __init__(
        self, algorithm="simplemkl", C=1.0, epsilon=0.1, p=None, v=None, algorithm_params=None
    ):
        self.algorithm = algorithm
        self.C = C
        self.epsilon = epsilon
        self.p = p
        self.v = v
        self.algorithm_params = algorithm_params

    def fit(self, K, y=None, sample_weight=None):
        """Fit on the training kernels and real targets y; ``sample_weight``
        (n,) scales C per point, as in scikit-learn's SVR."""
        solver = _solver(
            self.algorithm,
            Regression(self.epsilon),
            C=self.C,
            **algorithm_parameters(self, ("p", "v"), reserved=("epsilon", "nu")),
        )
        return self._fit_solver(solver, K, y, sample_weight)

    def predict(self, K_test):
        """Predicted targets: K(theta)(x, X) beta + bias."""
        return self.decision_function(K_test)


class MKLNoveltyDetector(OutlierMixin, _TaskEstimator):
    """Multiple kernel one-class SVM (Schoelkopf et al. 2001): the weights of
    ``algorithm`` (:func:`~mkl.algorithms.registry.algorithms_for_task`
    ``("novelty")``) learned with

        J(theta) = max_alpha -1/2 sum_m theta_m alpha'K_m alpha
        s.t. 0 <= alpha_i <= 1/(nu n), 1'alpha = 1,

    minimised over the weight set, i.e. the weights maximise the one-class
    dual value min_alpha 1/2 alpha'K(theta)alpha. ``objective_`` is J (<= 0;
    the one-class dual value is -J). ``fit(K)`` on training kernels of normal
    points; ``decision_function`` = K(theta)(x, X) alpha - rho (>= 0 inside the
    estimated support; the scale is libsvm's divided by nu n), ``score_samples``
    = K(theta)(x, X) alpha, ``predict`` +1 (inlier) or -1 (outlier).
    """

    def __init__(self, algorithm="simplemkl", nu=0.5, p=None, v=None, algorithm_params=None):
        self.algorithm = algorithm
        self.nu = nu
        self.p = p
        self.v = v
        self.algorithm_params = algorithm_params

    def fit(self, K, y=None):
        """Fit on the training kernels; ``y`` is ignored."""
        solver = _solver(
            self.algorithm,
            Novelty(self.nu),
            **algorithm_parameters(self, ("p", "v"), reserved=("epsilon", "nu")),
        )
        self._fit_solver(solver, K, None)
        self.offset_ = -self.intercept_  # decision_function = score_samples - offset_
        return self

    def score_samples(self, K_test):
        """K(theta)(x, X) alpha: larger is more normal."""
        return self.decision_function(K_test) + self.offset_

    def predict(self, K_test):
        return np.where(self.decision_function(K_test) >= 0, 1, -1)

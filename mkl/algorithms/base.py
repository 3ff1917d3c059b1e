"""The MKL estimator contract (docs/design.md, "The estimator contract").

Every estimator is a scikit-learn classifier whose input is a bank of
precomputed kernels: ``fit(K, y)`` with ``K`` of shape (M, n, n) or a
:class:`~mkl.banks.kernel_bank.KernelBank`, ``predict(K_test)`` with ``K_test`` of shape
(M, n_test, n). Estimators with ``accepts_factors`` also take a
:class:`~mkl.banks.factor_bank.FactorBank` (kernels K_m = Z_m Z_m' given by factors):
``fit(bank, y)``, then ``predict(bank)`` on its test factors (or another
FactorBank whose ``test`` factors match). Subclasses implement one method,
:meth:`BaseMKL._fit_binary`, for labels in {-1, +1} (or, for a method that
solves other tasks, one real target vector); this class does input
validation, label encoding, one-vs-rest for more than two classes, the task,
prediction and the fitted attributes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._validation import check_label_types, check_target_vector, validate_params
from ..banks.checks import as_kernel_array, check_training_kernels, locate_bad_kernel
from ..banks.factor_bank import FactorBank
from ..banks.kernel_bank import KernelBank
from ..exceptions import DegenerateKernelWarning, InputError, warn_at_caller
from ..solvers.task_duals import CLASSIFICATION, Novelty, Regression
from .registry import algorithms_where

# A weight below this fraction of the largest weight is reported as zero.
WEIGHT_THRESHOLD = 1e-6


@dataclass
class BinaryFit:
    """What one binary MKL problem returns to the estimator."""

    weights: np.ndarray  # (M,) kernel weights theta
    dual_coef: np.ndarray  # (n,) alpha * y
    intercept: float
    objective: float  # J(theta) at the returned weights (see docs/design.md)
    n_iter: int = 1
    converged: bool = True  # the stopping rule was met and every inner solve converged
    gap: float = float("nan")  # relative duality or bound gap at the end; NaN: none computed
    history: list[dict] = field(default_factory=list)  # rows of iterations.COLUMNS
    spectral_ratio: float = float("nan")  # C(K) = tr K / ||K||_F of the learned kernel
    # (M, n) per-kernel coefficients for the test block, when a method maps test
    # similarities through a training-block transform (mkl.kernels.spectra); None:
    # every kernel uses dual_coef
    test_coef: np.ndarray | None = None
    # factor banks: w = Z' dual_coef (R,), all test scores need (set by fit)
    factor_coef: np.ndarray | None = None


class BaseMKL(ClassifierMixin, BaseEstimator):
    """Base class: subclasses define ``__init__`` (hyperparameters only, as in
    scikit-learn), ``_parameter_constraints`` (checked in ``fit``) and
    ``_fit_binary(K, y, K_mean)``.

    ``learns_kernel``: False for methods whose classifier is an SVM on
    sum_m weights_m K_m of the given bank; True for those that learn a new
    kernel from it (mkl/algorithms/eigen_transforms.py, indefinite.py), whose
    ``weights_`` say how the given matrices enter the test-time kernel.

    ``task``: a constructor parameter of the methods whose math carries over to
    other inner duals (``tasks`` lists them; mkl/solvers/task_duals.py):
    ``"classification"`` (the default), ``Regression(epsilon)`` or
    ``Novelty(nu)``. ``fit(K, y)`` then fits the real targets y, or the
    training points (y ignored), and ``predict`` returns the predicted targets,
    or +1 (inlier) / -1 (outlier). Users get these estimators as
    scikit-learn regressors and outlier detectors from
    ``mkl.make_estimator(name, task="regression" | "novelty")``."""

    learns_kernel = False
    # whether the method's math needs PSD kernels (the indefinite-similarity
    # methods take symmetric indefinite ones)
    requires_psd = True
    # whether ``fit`` takes a FactorBank (the method's math needs only
    # combinations, SVM solves and quadratic forms: mkl/solvers/inner.py)
    accepts_factors = False
    # the tasks whose inner problem the method can solve (mkl/solvers/task_duals.py)
    tasks = ("classification",)
    # whether ``fit`` takes ``sample_weight``: per-sample C, C_i = C s_i, in every
    # SVM solve of the fit (:meth:`_box`)
    takes_sample_weight = False
    # whether ``weights_`` may be negative (CKA: mkl/algorithms/alignment.py)
    signed_weights = False
    # more than two classes: a weight vector per one-vs-rest task ("ovr"); the
    # methods that take ``multiclass`` set it as a parameter, whose "shared"
    # learns one for all of them (``_fit_jointly``: mkl/algorithms/wrapper.py)
    multiclass = "ovr"

    # the shared parameters' constraints; each subclass adds its own
    _parameter_constraints: dict = {
        "C": [Interval(Real, 0, np.inf, closed="neither"), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "svm_tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
        "task": [StrOptions({"classification"}), Regression, Novelty],
    }

    def _fit_binary(self, K: np.ndarray, y: np.ndarray, K_mean: np.ndarray) -> BinaryFit:
        raise NotImplementedError

    def _prepare(self, K: np.ndarray, K_mean: np.ndarray):
        """Label-independent work done once per fit and shared by the one-vs-rest
        tasks (available to ``_fit_binary`` as ``self._shared``)."""
        return None

    @property
    def _task(self):
        """The inner dual solved: the ``task`` parameter as a task object."""
        task = getattr(self, "task", "classification")
        if isinstance(task, str):
            return CLASSIFICATION
        if task.name not in self.tasks:
            raise InputError(
                f"{type(self).__name__} does not do {task.name} (its math is the classifier's)"
            )
        return task

    @staticmethod
    def _check_labels(y, n: int) -> np.ndarray:
        y = check_target_vector(
            y, n, "labels", "a classifier needs labels y (or a bank that carries y_train)"
        )
        check_label_types(y)
        if y.dtype.kind == "f" and not np.isfinite(y).all():
            raise InputError("y contains NaN or inf")
        if y.dtype.kind == "f" and not np.all(y == np.round(y)):
            # real targets would silently become one class per distinct value
            # (continuous y once fitted 80 one-vs-rest classifiers)
            raise InputError(
                f"y holds non-integer values ({np.unique(y).size} distinct): a classifier "
                "needs class labels; for real targets use task='regression'"
            )
        return y

    # ------------------------------------------------------------ fit
    def fit(self, K, y=None, sample_weight=None):
        """Learn kernel weights and the SVM on the combined kernel.

        K: (M, n, n) training kernels or a KernelBank; y: n labels, two or more
        classes (``task``: real targets for a regression, ignored for novelty).
        ``sample_weight``: n nonnegative weights s_i, the box of point i being
        C s_i as in scikit-learn's SVC (class weights: multiply them in, e.g.
        ``sklearn.utils.class_weight.compute_sample_weight``). Methods with
        ``takes_sample_weight``; classification and regression.
        """
        validate_params(self)
        task = self._task
        if isinstance(K, (KernelBank, FactorBank)) and y is None:
            y = K.y_train  # (a novelty task ignores y)
        K, n = self._validated_bank(K)
        if task.name != "classification":
            if task.name == "novelty" and sample_weight is not None:
                raise InputError("sample_weight is not supported for the novelty task yet")
            y, classes = task.targets(y, n), None
            tasks = [y]
        else:
            y = self._check_labels(y, n)
            classes = np.unique(y)
            if classes.size < 2:
                raise InputError(f"y has one class only ({classes[0]!r}); need at least two")
            if classes.size == 2:
                tasks = [np.where(y == classes[1], 1, -1)]
            else:  # one-vs-rest
                tasks = [np.where(y == c, 1, -1) for c in classes]
        self._sample_weight = self._checked_sample_weight(sample_weight, y, classes)
        try:
            self._fit_tasks(K, tasks)
        finally:
            del self._sample_weight
        if classes is not None:
            self.classes_ = classes
        return self

    def _checked_sample_weight(self, sample_weight, y, classes) -> np.ndarray | None:
        """The weights s (n,) as float64: finite, >= 0, positive on some point
        (of every class of ``classes``, if given); None when not given."""
        if sample_weight is None:
            return None
        if not self.takes_sample_weight:
            raise InputError(
                f"{type(self).__name__} does not take sample_weight (nor class weights) "
                f"yet; methods that do: {', '.join(algorithms_where(takes_sample_weight=True))}"
            )
        s = np.asarray(sample_weight)
        if s.shape != y.shape:
            raise InputError(
                f"sample_weight must have shape {y.shape} (one per point), got {s.shape}"
            )
        if s.dtype.kind not in "biuf":
            raise InputError(f"sample_weight must be numbers, got dtype {s.dtype}")
        s = s.astype(np.float64)
        if not np.isfinite(s).all():
            raise InputError("sample_weight contains NaN or inf")
        if (s < 0).any():
            raise InputError("sample_weight must be >= 0 (the box of point i is C s_i)")
        if not (s > 0).any():
            raise InputError("sample_weight is zero on every point: there is nothing to fit")
        for c in () if classes is None else classes:
            if not (s[y == c] > 0).any():
                label = c.item() if isinstance(c, np.generic) else c
                raise InputError(
                    f"sample_weight is zero on every point of class {label!r}: that class "
                    "takes no part in the fit"
                )
        if self.C is None:
            raise InputError("sample_weight needs a finite C (a hard margin has no box to weigh)")
        return s

    def _box(self, C, rows=None):
        """The C-SVM's box in this fit: ``C``, or with sample weights the
        per-point C s_i (of the training points ``rows``, for a fold)."""
        s = getattr(self, "_sample_weight", None)
        if s is None:
            return C
        return C * (s if rows is None else s[rows])

    def _validated_bank(self, K):
        """The training bank as the solvers take it: a FactorBank (if the method
        accepts one) or a checked (M, n, n) array; and n."""
        if isinstance(K, KernelBank) and K.factored:
            K = K.train
        if isinstance(K, FactorBank):
            if not self.accepts_factors:
                raise InputError(
                    f"{type(self).__name__} cannot use a FactorBank: it needs the kernel "
                    "matrices themselves (an (M, n, n) array or a KernelBank). Methods that "
                    f"take factor banks: {', '.join(algorithms_where(accepts_factors=True))}"
                )
            if K.n_train == 0:
                raise InputError(
                    "this FactorBank holds test factors only (FactorBank.of_test_factors): "
                    "fit needs the training factors"
                )
            return K, K.n_train
        K = as_kernel_array(K, "K")
        return K, K.shape[1]

    def _fit_tasks(self, K, tasks: list[np.ndarray]) -> None:
        """Fit one problem per target vector of ``tasks`` (labels in {-1, +1},
        real targets, or ones for novelty) on a validated bank, and set the
        fitted attributes other than ``classes_``."""
        factored = isinstance(K, FactorBank)
        n = K.n_train if factored else K.shape[1]
        # factor banks are checked when built (finite; PSD by construction)
        K_mean = None if factored else check_training_kernels(K, psd=self.requires_psd)
        self._shared = self._prepare(K, K_mean)
        shared_weights = self.multiclass == "shared" and len(tasks) > 1
        try:
            if shared_weights:
                fits = self._fit_jointly(K, tasks, K_mean)
            else:
                fits = [self._fit_binary(K, t, K_mean) for t in tasks]
        finally:
            del self._shared
        if factored:
            for f in fits:  # test scores need w = Z' beta only, not the training factors
                if f.factor_coef is None:
                    f.factor_coef = K.project(f.dual_coef)
            self.n_kernels_ = K.n_kernels
            self.factor_ranks_ = K.ranks.copy()
        else:
            self.n_kernels_ = K.shape[0]
            self.factor_ranks_ = None
        self.n_train_ = n
        self._set_fitted(fits, shared_weights)

    def _set_fitted(self, fits: list[BinaryFit], shared_weights: bool = False) -> None:
        self.fits_ = fits
        if shared_weights:
            self._set_jointly_fitted(fits)
            return
        binary = len(fits) == 1

        def pick(values, dtype=None):
            arr = np.asarray(values, dtype=dtype)
            return arr[0] if binary else arr

        weights = np.array([threshold_weights(f.weights, self.signed_weights) for f in fits])
        self.weights_ = pick(weights)
        self.dual_coef_ = pick([f.dual_coef for f in fits])
        self.intercept_ = pick([f.intercept for f in fits], float)
        self.objective_ = pick([f.objective for f in fits], float)
        self.gap_ = pick([f.gap for f in fits], float)
        self.n_iter_ = pick([f.n_iter for f in fits], int)
        self.n_selected_ = pick([(w != 0).sum() for w in weights], int)
        self.spectral_ratio_ = pick([f.spectral_ratio for f in fits], float)
        self.converged_ = bool(all(f.converged for f in fits))
        self.history_ = fits[0].history if binary else [f.history for f in fits]
        if binary:
            self.objective_ = float(self.objective_)
            self.intercept_ = float(self.intercept_)
            self.gap_ = float(self.gap_)
            self.n_iter_ = int(self.n_iter_)
            self.n_selected_ = int(self.n_selected_)
            self.spectral_ratio_ = float(self.spectral_ratio_)

    def _set_jointly_fitted(self, fits: list[BinaryFit]) -> None:
        """The attributes of a shared-weights fit (``multiclass="shared"``): one
        weight vector (M,) and one record (gap, iterations, history, spectral
        ratio) for all classes, ``objective_`` the sum of the classes' J_c at
        it, and a ``dual_coef_`` and ``intercept_`` per class."""
        joint = fits[0]  # every class's fit carries the joint weights and record
        self.weights_ = threshold_weights(joint.weights, self.signed_weights)
        self.dual_coef_ = np.array([f.dual_coef for f in fits])
        self.intercept_ = np.array([f.intercept for f in fits], dtype=float)
        self.objective_ = float(sum(f.objective for f in fits))
        self.gap_ = float(joint.gap)
        self.n_iter_ = int(joint.n_iter)
        self.n_selected_ = int((self.weights_ != 0).sum())
        self.spectral_ratio_ = float(joint.spectral_ratio)
        self.converged_ = bool(joint.converged)
        self.history_ = joint.history

    def _task_weights(self) -> np.ndarray:
        """The weights of each fitted task (n_tasks, M): a row per class for
        one-vs-rest, the one row of a shared-weights fit repeated."""
        return np.broadcast_to(np.atleast_2d(self.weights_), (len(self.fits_), self.n_kernels_))

    # ------------------------------------------------------------ predict
    def decision_function(self, K_test):
        """Decision values: (n_test,) for two classes, (n_test, n_classes) otherwise."""
        check_is_fitted(self, "fits_")
        factored = getattr(self, "factor_ranks_", None) is not None
        if isinstance(K_test, KernelBank):
            K_test = K_test.test_input
        if isinstance(K_test, FactorBank) or factored:
            return self._factor_decision(K_test)
        K_test = as_kernel_array(K_test, "K_test")
        M, n_test, n_train = K_test.shape
        if M != self.n_kernels_ or n_train != self.n_train_:
            raise InputError(
                f"K_test must have shape ({self.n_kernels_}, n_test, {self.n_train_}) "
                f"to match the training kernels, got {K_test.shape}"
            )
        if any(f.test_coef is not None for f in self.fits_):
            coefs = np.stack(  # (n_tasks, M, n_train)
                [np.broadcast_to(_test_coef(f), (M, n_train)) for f in self.fits_]
            ).astype(K_test.dtype)
            per_kernel = np.einsum("mij,tmj->mit", K_test, coefs)
        else:
            flat = K_test.reshape(M * n_test, n_train)
            coefs = np.array([f.dual_coef for f in self.fits_]).T.astype(K_test.dtype)
            per_kernel = (flat @ coefs).reshape(M, n_test, -1)  # (M, n_test, n_tasks)
        scores = np.einsum("tm,mit->it", self._task_weights(), per_kernel.astype(np.float64))
        scores += np.array([f.intercept for f in self.fits_])
        if not np.isfinite(scores).all():
            raise InputError(locate_bad_kernel(K_test, "K_test"))
        _warn_if_constant(scores)
        return scores[:, 0] if len(self.fits_) == 1 else scores

    def _factor_decision(self, bank):
        """Scores on a FactorBank's test factors: sum_m theta_m T_m Z_m' beta + b
        = T (s * w) + b with w = Z' beta kept from the fit."""
        if getattr(self, "factor_ranks_", None) is None:
            raise InputError(
                "this estimator was fitted on kernel matrices; predict needs the test "
                "block (M, n_test, n_train), not a FactorBank"
            )
        if not isinstance(bank, FactorBank):
            raise InputError(
                "this estimator was fitted on a FactorBank; predict needs a FactorBank "
                "with test factors"
            )
        if bank.test is None:
            raise InputError("the factor bank has no test factors")
        if not np.array_equal(bank.ranks, self.factor_ranks_):
            raise InputError(
                f"the test factors' ranks {bank.ranks.tolist()[:10]} do not match the "
                f"training factors' {self.factor_ranks_.tolist()[:10]}"
            )
        scores = np.stack(
            [
                bank.times(np.repeat(w, self.factor_ranks_) * f.factor_coef, block="test")
                for w, f in zip(self._task_weights(), self.fits_, strict=True)
            ],
            axis=1,
        )
        scores += np.array([f.intercept for f in self.fits_])
        _warn_if_constant(scores)
        return scores[:, 0] if len(self.fits_) == 1 else scores

    def predict(self, K_test):
        """Class labels; for ``task`` regression the predicted targets, for
        novelty +1 (inside the estimated support) or -1."""
        scores = self.decision_function(K_test)
        task = self._task.name
        if task == "regression":
            return scores
        if task == "novelty":
            return np.where(scores >= 0, 1, -1)
        return self.labels_from_scores(scores)

    def labels_from_scores(self, scores: np.ndarray) -> np.ndarray:
        """Class labels for decision values (sign for two classes, argmax otherwise)."""
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]


def _warn_if_constant(scores: np.ndarray) -> None:
    """Warn (:class:`mkl.exceptions.DegenerateKernelWarning`) when every one of
    two or more test rows gets the same decision values (within 1e-10 of
    their size): the prediction is one class, or one target, for every row.
    One comparison over the scores, which the caller has already formed."""
    if scores.shape[0] < 2:
        return
    spread = np.ptp(scores, axis=0)
    if np.all(spread <= 1e-10 * np.maximum(1.0, np.abs(scores).max(axis=0))):
        warn_at_caller(
            f"every one of the {scores.shape[0]} test rows gets the same decision value, "
            "so every row is predicted alike (one class, or one target): the test kernels "
            "are zero (or "
            "constant) against the training rows the model uses. Kernels that are "
            "numerically the identity (an identity kernel, Gaussian widths far too narrow "
            "for the features' scale) only memorise the training rows: use wider widths "
            "or other kernels (mkl.banks.checks.degenerate_kernels names such kernels)",
            DegenerateKernelWarning,
        )


def _test_coef(fit: BinaryFit) -> np.ndarray:
    return fit.dual_coef if fit.test_coef is None else fit.test_coef


def threshold_weights(w: np.ndarray, signed: bool = False) -> np.ndarray:
    """Weights below WEIGHT_THRESHOLD x max are reported as exactly zero (and
    any negative one, rounding of a nonnegative method). ``signed`` (a method
    whose weights may be negative: CKA): in magnitude, the sign kept."""
    w = np.asarray(w, dtype=np.float64).copy()
    size = np.abs(w) if signed else w
    top = size.max() if w.size else 0.0
    if top > 0:
        w[size < WEIGHT_THRESHOLD * top] = 0.0
    return w

"""scikit-learn estimators on raw features: the kernel bank is computed inside.

:class:`MultipleKernelClassifier` composes two things the library already has:
the kernel bank of a specification, computed on X by the front ends' shared
base (:mod:`mkl.estimators.feature_bank`, on :mod:`mkl.banks.from_features`:
dense blocks from :mod:`mkl.kernels`, or factors K_m = Z_m Z_m' from
:mod:`mkl.banks.factor_builders`) and a bank-level estimator of the registry
(:data:`mkl.ALGORITHMS`); :class:`MultipleKernelRegressor` the same bank and
:class:`mkl.estimators.task_estimators.MKLRegressor`,
:class:`MultipleKernelOutlierDetector` the same bank and
:class:`mkl.estimators.task_estimators.MKLNoveltyDetector`. It takes ``X`` of shape
(n_samples, n_features), so scikit-learn's tools that slice their input along
the first axis (``cross_val_score``, ``GridSearchCV``, ``Pipeline``) work on
it; the bank-level estimators take (M, n, n) banks, whose first axis is the
kernels. Each front end adds its task's parts: the classifier's labels,
class weights and Platt's probabilities (:mod:`mkl.estimators.calibration`),
the regressor's ``epsilon``, the outlier detector's ``nu`` and ``offset_``.
"""

from __future__ import annotations

import functools
import types
import warnings

import numpy as np
from sklearn.base import ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._validation import check_label_types, validate_params
from ..exceptions import DegenerateKernelWarning, InputError, warn_at_caller
from .feature_bank import _FeatureBankEstimator

# the algorithm parameters that are the estimator's own (searchable by
# GridSearchCV); None leaves the algorithm's default
_NAMED_ALGORITHM_PARAMS = ("p", "v", "lam", "theta")

# probability=True: Platt's sigmoid on decision values of this many folds of
# internal cross-validation (fewer when a class has fewer rows), as libsvm
PROBABILITY_FOLDS = 5


class _with_probability:
    """A method that exists only on an estimator with ``probability=True``,
    as ``SVC``'s ``predict_proba`` (``hasattr`` is False otherwise, which
    scikit-learn's tools read), the AttributeError saying what to set.
    (scikit-learn's ``available_if`` would raise its own "has no attribute"
    and keep the reason in ``__cause__``, which a traceback prints last.)"""

    def __init__(self, method):
        self.method = method
        functools.update_wrapper(self, method)

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        if not obj.probability:
            raise AttributeError(
                f"{type(obj).__name__}.{self.method.__name__} needs probability=True: "
                "construct the estimator with probability=True (Platt's sigmoid on "
                "cross-validated decision values: five more fits) and fit it again"
            )
        return types.MethodType(self.method, obj)


class MultipleKernelClassifier(ClassifierMixin, _FeatureBankEstimator):
    """Multiple kernel learning on raw features: computes the kernel bank of
    ``kernels`` on the training rows and fits the bank-level estimator
    ``algorithm`` on it. X may be sparse (scipy.sparse) when every kernel is
    linear: the bank is then exact factors (X itself, its columns, its views'
    columns), which stay sparse.

    Parameters
    ----------
    kernels : mapping, list, callable or None
        The bank specification, as an experiment file's ``kernels`` section
        (families with widths / degrees, ``features`` all and/or single,
        ``normalise``, ``dtype``, ``feature_limit``, ``varying_features_only``).
        None: :data:`~mkl.banks.from_features.DEFAULT_KERNELS` (11 kernels:
        Gaussian widths 2^-1..2^6 per feature, i.e. times sqrt(d) on all d
        features, and polynomial degrees 1-3 on all features, unit diagonal).
        A family may be any kernel of scikit-learn's
        ``sklearn.metrics.pairwise.PAIRWISE_KERNEL_FUNCTIONS`` by name with a
        grid of its parameters (``{"family": "laplacian", "gamma": [0.1, 1]}``:
        one kernel per value; :data:`mkl.kernels.specs.PAIRWISE_KERNELS`; the
        sigmoid and additive_chi2 kernels are not PSD, and the methods that
        need PSD kernels refuse them), or a callable ``k(X, Y)`` returning the
        (n_X, n_Y) array (``{"family": k, "name": ..., "normalise": ...}``, or
        ``k`` itself). A list of families, or one callable, is the bank of
        them. A callable sees the rows as given (strings, booleans, numbers:
        X of any dtype, 2-D, texts as one column), is computed as dense blocks
        (no factors), and is refused by its name when it returns another
        shape, NaN or inf, or an asymmetric training block. Pickling a fitted
        estimator pickles its callables by reference (module and name): a
        lambda or a function defined inside another cannot be pickled (pickle
        raises); define them at module level.
    algorithm : str
        A registry name (:data:`mkl.ALGORITHMS`): ``simplemkl`` (L1-MKL,
        Rakotomamonjy et al. 2008), ``level``, ``silp``, ``lp_analytic``
        (lp-norm MKL, Kloft et al. 2009), ``gmkl`` (elastic net, Yang et al.
        2011), ``smkl`` (Xu et al. 2010), ``easymkl``, ``memo``, ``uniform``,
        the alignment family (``align``, ``alignf``, ``cka``, ``fheuristic``,
        ``pwmk``), ``fixed`` (the weights given in ``algorithm_params``:
        ``{"weights": other.weights_}``)...
    C : float, None or "auto"
        The SVM's regularisation (None: hard margin, where the algorithm
        allows it). ``"auto"`` (the default): 1 in the unit of the bank's
        normalisation (:func:`mkl.kernels.specs.c_unit`), i.e. C = 1 on
        unit-diagonal kernels (the default ``kernels``) and C = n_samples on
        unit-trace kernels, whose entries are n times smaller; the value used
        is ``C_``.
    p, v, lam, theta : float or None
        The lp-norm's p (``lp_*``), the elastic net's v (``gmkl``), EasyMKL's
        lambda, MEMO's theta. None: the algorithm's default; setting one the
        algorithm does not take raises ``ValueError`` at fit.
    algorithm_params : mapping or None
        Any other parameters of the algorithm (e.g. ``{"tol": 1e-3}``).
    representation : str or mapping
        How the bank is held: ``"dense"`` ((M, n, n) matrices), ``"nystroem"`` or
        ``"rff"`` (factors of rank / dimension
        :data:`~mkl.banks.from_features.DEFAULT_FACTOR_RANK`), a mapping as in an
        experiment file (``{"kind": "nystroem", "rank": 200}``), or ``"auto"``:
        the ``kernels`` spec's own ``representation`` if it has one, else
        Nystroem factors when the dense bank would exceed
        :data:`~mkl.banks.from_features.DENSE_BANK_LIMIT_BYTES` and the
        algorithm takes factor banks, else dense.
    random_state : int, RandomState or None
        Seeds the Nystroem landmarks / random Fourier draws (unless the
        representation mapping has its own ``seed``), algorithms with a
        ``random_state`` of their own and the folds of ``probability``.
    views : list of tuples or None
        Kernels on groups of columns ("views" of the data, e.g. clinical and
        genomic features): ``(name, columns)`` or ``(name, columns, kernels)``
        per view, ``columns`` a list of indices, of column names (X a
        DataFrame) or a slice, ``kernels`` the view's bank specification
        (default: ``kernels``). The bank is the views' banks side by side;
        kernel names are ``name:kernel`` and ``view_weights_`` sums the weights
        per view. ``representation`` and ``dtype`` are the bank's (set in
        ``kernels``).
    class_weight : dict, "balanced" or None
        Weights of the classes, multiplying C on their rows as in ``SVC``
        (``"balanced"``: n / (n_classes * count of the class)); with
        ``fit(X, y, sample_weight)`` the two multiply. Algorithms that take
        weights: ``uniform``, ``linear``, ``single_best``, ``simplemkl``,
        ``silp``, ``level``, ``lp_*``, ``gmkl``, on dense and factor banks.
    probability : bool
        Fit Platt's sigmoid (:mod:`mkl.estimators.calibration`) on out-of-fold
        decision values of a 5-fold internal cross-validation, as
        ``SVC(probability=True)`` does, so that ``predict_proba`` is
        available; it costs five more fits. ``predict`` is unchanged (the
        sign of the decision values, not the most probable class). A class
        of fewer than 5 training rows gets as many folds as it has rows, with
        a warning naming it; one of a single row is refused.
    verbose : bool or int
        The algorithm's progress, one line per iteration through the
        ``mkl`` logger (the algorithm's own ``verbose``).
    multiclass : "ovr" or "shared"
        More than two classes: ``"ovr"`` (the default) learns a weight vector
        per one-vs-rest problem; ``"shared"`` one weight vector for all of
        them, the minimiser of the sum of their SVM objectives (convex, with
        a certified gap: :mod:`mkl.algorithms.wrapper`), for the methods of
        the wrapper framework (``simplemkl``, ``silp``, ``level``, ``lp_*``,
        ``gmkl``, ``spg``); another algorithm refuses it by name.

    Attributes
    ----------
    estimator_ : BaseMKL
        The fitted bank-level estimator (its ``history_`` and the rest).
    weights_ : ndarray (M,), or (n_classes, M) for one-vs-rest
        The kernel weights, in the order of ``kernel_names_``: one row per
        class for more than two classes, unless ``multiclass="shared"``.
    objective_, gap_, n_iter_, n_selected_, converged_, spectral_ratio_
        The fitted estimator's (:data:`~mkl.estimators.feature_bank.FIT_SUMMARY`):
        its objective, its relative duality or bound gap, iterations, kernels
        of nonzero weight, whether it met its tolerance, and tr K / ||K||_F of
        the learned kernel.
    normalisation_factors_ : ndarray (M,) or None
        Dense banks: each kernel's normalisation divisor fitted on the
        training rows (1 for the cosine and the centring).
    centring_means_ : ndarray (M, n_train) or None
        Dense banks with a ``center`` kernel: its training block's column
        means before centring (what a test block is centred with); None
        without one.
    views_ : dict
        With ``views``: each view's column indices, by name.
    view_weights_ : dict
        With ``views``: the sum of each view's kernel weights (an array per
        class for one-vs-rest), by name.
    probability_sigmoids_ : ndarray (1, 2) or (n_classes, 2)
        Platt's (A, B) per decision column, with ``probability=True``.
    kernel_specs_ : list of KernelSpec
    kernel_names_ : ndarray of str (dtype object, as ``feature_names_in_``)
        The kernels, e.g. ``gaussian(0.5)@all``; single-feature kernels are
        named by X's column names when X has them (``gaussian(1)@age``),
        else ``@x<index>``.
    representation_ : dict
        The representation used (``{"kind": "dense"}``, or the factors').
    factor_maps_ : list of FactorMaps (one per view; one without ``views``)
        With factors: the fitted maps (Nystroem landmarks and projections,
        random Fourier draws, normalisation divisors) that give test rows
        their factors at ``predict`` (:class:`mkl.banks.factor_builders.FactorMaps`).
    C_ : float or None
        The C of the fit (``C``, or what ``"auto"`` resolved to).
    classes_, n_features_in_, feature_names_in_
        As in scikit-learn.
    """

    _parameter_constraints: dict = {
        **_FeatureBankEstimator._parameter_constraints,
        "probability": ["boolean"],
    }

    def __init__(
        self,
        kernels=None,
        algorithm="simplemkl",
        C="auto",
        p=None,
        v=None,
        lam=None,
        theta=None,
        algorithm_params=None,
        representation="auto",
        random_state=None,
        views=None,
        class_weight=None,
        probability=False,
        verbose=False,
        multiclass="ovr",
    ):
        self.kernels = kernels
        self.algorithm = algorithm
        self.C = C
        self.p = p
        self.v = v
        self.lam = lam
        self.theta = theta
        self.algorithm_params = algorithm_params
        self.representation = representation
        self.random_state = random_state
        self.views = views
        self.class_weight = class_weight
        self.probability = probability
        self.verbose = verbose
        self.multiclass = multiclass

    def _inner_estimator(self):
        from .algorithm_params import algorithm_parameters
        from .factory import make_estimator

        # settings of the front end's own (verbose=True, multiclass) given again
        # in algorithm_params are refused
        reserved = ("random_state", "multiclass", *(("verbose",) if self.verbose else ()))
        params = algorithm_parameters(self, _NAMED_ALGORITHM_PARAMS, reserved=reserved)
        if self.multiclass not in ("ovr", "shared"):
            raise InputError(
                f"multiclass must be 'ovr' (a weight vector per class) or 'shared' (one "
                f"weight vector for all classes), got {self.multiclass!r}"
            )
        if self.multiclass == "shared":  # refused by name by an algorithm without it
            params["multiclass"] = "shared"
        estimator = make_estimator(self.algorithm, C=self.C, **params)
        own = estimator.get_params()
        if "random_state" in own:
            estimator.set_params(random_state=self._seed())
        if self.verbose and "verbose" in own:
            estimator.set_params(verbose=self.verbose)
        return estimator

    def fit(self, X, y, sample_weight=None):
        """Compute the bank of ``kernels`` on X (n_samples, n_features) and fit
        ``algorithm`` on it with labels y; ``sample_weight`` (n_samples,) and
        ``class_weight`` scale C per row, as in ``SVC``."""
        validate_params(self)
        X_given = X  # the folds of probability=True slice it as given (DataFrame names)
        X, y = self._validated_X(X, y)
        check_label_types(y)
        try:
            check_classification_targets(y)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        weights = self._row_weights(y, sample_weight)
        self._fit_on_bank(X, y, weights)
        self.classes_ = self.estimator_.classes_
        if self.probability:
            self._fit_sigmoids(X_given, y, sample_weight)
        return self

    def _row_weights(self, y, sample_weight):
        """sample_weight times the class weights of the rows (None: neither given)."""
        if self.class_weight is None:
            return sample_weight
        from sklearn.utils.class_weight import compute_sample_weight

        try:
            weights = compute_sample_weight(self.class_weight, y)
        except (ValueError, TypeError) as exc:
            raise InputError(f"class_weight: {exc}") from None
        if sample_weight is None:
            return weights
        sample_weight = np.asarray(sample_weight)
        if sample_weight.shape != weights.shape or sample_weight.dtype.kind not in "biuf":
            raise InputError(
                f"sample_weight must be {weights.shape[0]} numbers (one per row), "
                f"got shape {sample_weight.shape} and dtype {sample_weight.dtype}"
            )
        return weights * sample_weight

    def _fit_sigmoids(self, X, y, sample_weight=None):
        """Platt's sigmoid per decision column, on out-of-fold decision values
        of the same estimator (:mod:`mkl.estimators.calibration`)."""
        from sklearn.base import clone
        from sklearn.model_selection import StratifiedKFold, cross_val_predict

        from .calibration import platt_sigmoid

        classes, counts = np.unique(y, return_counts=True)
        smallest = int(np.argmin(counts))
        label, count = classes[smallest].item(), int(counts[smallest])
        folds = min(PROBABILITY_FOLDS, count)
        if folds < 2:
            raise InputError(
                f"probability=True needs at least 2 training rows of every class; class "
                f"{label!r} has {count}: Platt's sigmoid is fitted on cross-validated "
                "decision values, each class in at least two folds. Add rows of that "
                "class, drop it, or set probability=False"
            )
        if folds < PROBABILITY_FOLDS:
            warn_at_caller(
                f"probability=True: class {label!r} has only {count} training rows, fewer "
                f"than the {PROBABILITY_FOLDS} folds of the cross-validation Platt's sigmoid "
                f"is fitted on, so {folds} folds are used: each of their fits sees "
                f"{folds - 1}/{folds} of the rows (4/5 with 5 folds), and the sigmoid rests "
                f"on {count} decision values of that class. Add rows of class {label!r} "
                "(scikit-learn's CalibratedClassifierCV(cv=5), its replacement of "
                "SVC(probability=True) since 1.9, refuses such data)",
                UserWarning,
            )
        inner = clone(self).set_params(probability=False, verbose=False)
        cv = StratifiedKFold(folds, shuffle=True, random_state=self._seed())
        params = {} if sample_weight is None else {"sample_weight": np.asarray(sample_weight)}
        with warnings.catch_warnings():  # the fit on all rows has warned already
            warnings.simplefilter("ignore", DegenerateKernelWarning)
            scores = cross_val_predict(
                inner, X, y, cv=cv, method="decision_function", params=params
            )
        if scores.ndim == 1:
            sigmoids = [platt_sigmoid(scores, y == self.classes_[1])]
        else:
            sigmoids = [platt_sigmoid(scores[:, k], y == c) for k, c in enumerate(self.classes_)]
        self.probability_sigmoids_ = np.array(sigmoids)

    def decision_function(self, X):
        """Decision values: (n_samples,) for two classes, (n_samples, n_classes) otherwise."""
        return self._scores(X)

    def predict(self, X):
        """Class labels of the rows of X."""
        scores = self.decision_function(X)  # checks that the estimator is fitted
        return self.estimator_.labels_from_scores(scores)

    @_with_probability
    def predict_proba(self, X):
        """Class probabilities (n_samples, n_classes), columns in the order of
        ``classes_``: Platt's sigmoid of the decision values (``probability=True``)."""
        from .calibration import sigmoid_probabilities

        scores = self.decision_function(X)
        check_is_fitted(self, "probability_sigmoids_")
        return sigmoid_probabilities(scores, self.probability_sigmoids_)

    @_with_probability
    def predict_log_proba(self, X):
        """The logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class MultipleKernelRegressor(RegressorMixin, _FeatureBankEstimator):
    """Multiple kernel epsilon-SVR on raw features: computes the bank of
    ``kernels`` on the training rows and fits :class:`mkl.estimators.task_estimators.MKLRegressor`
    (``algorithm``'s weight update with the epsilon-SVR inner problem) on it.

    Parameters are those of :class:`MultipleKernelClassifier` (``kernels``,
    ``algorithm`` among :func:`mkl.algorithms.registry.algorithms_for_task`
    ``("regression")``, ``C`` (``"auto"`` by default, as there), ``p``, ``v``, ``algorithm_params``,
    ``representation``, ``random_state``, ``views``, ``verbose``) and ``epsilon``, the tube's
    half-width. A factored bank (``representation``) is solved by the SVR's
    dual coordinate descent with a regularised intercept
    (:func:`mkl.solvers.coordinate_descent.solve_factored_svr`). Fitted attributes:
    ``estimator_`` (the MKLRegressor), ``C_``, ``weights_``, the fit's summary
    (:data:`~mkl.estimators.feature_bank.FIT_SUMMARY`: ``objective_``, ``gap_``,
    ``n_iter_``, ``n_selected_``, ``converged_``, ``spectral_ratio_``),
    ``kernel_specs_``, ``kernel_names_``, ``n_features_in_``.
    """

    def __init__(
        self,
        kernels=None,
        algorithm="simplemkl",
        C="auto",
        epsilon=0.1,
        p=None,
        v=None,
        algorithm_params=None,
        representation="auto",
        random_state=None,
        views=None,
        verbose=False,
    ):
        self.kernels = kernels
        self.algorithm = algorithm
        self.C = C
        self.epsilon = epsilon
        self.p = p
        self.v = v
        self.algorithm_params = algorithm_params
        self.representation = representation
        self.random_state = random_state
        self.views = views
        self.verbose = verbose

    def _inner_estimator(self):
        from .task_estimators import MKLRegressor

        return MKLRegressor(
            algorithm=self.algorithm,
            C=self.C,
            epsilon=self.epsilon,
            p=self.p,
            v=self.v,
            algorithm_params=self._algorithm_params(),
        )

    def fit(self, X, y, sample_weight=None):
        """Compute the bank of ``kernels`` on X (n_samples, n_features) and fit
        the multiple kernel SVR on it with real targets y; ``sample_weight``
        (n_samples,) scales C per row, as in scikit-learn's SVR."""
        validate_params(self)
        X, y = self._validated_X(X, y, y_numeric=True)
        return self._fit_on_bank(X, y, sample_weight)

    def predict(self, X):
        """Predicted targets of the rows of X."""
        return self._scores(X)


class MultipleKernelOutlierDetector(OutlierMixin, _FeatureBankEstimator):
    """Multiple kernel novelty detection on raw features: computes the bank of
    ``kernels`` on the training rows (normal points, no labels) and fits
    :class:`mkl.estimators.task_estimators.MKLNoveltyDetector` on it, the
    one-class SVM (Schoelkopf, Platt, Shawe-Taylor, Smola & Williamson 2001)
    with the kernel weights of ``algorithm``:

        J(theta) = max_alpha -1/2 sum_m theta_m alpha'K_m alpha
        s.t. 0 <= alpha_i <= 1/(nu n), 1'alpha = 1,

    minimised over the method's weight set (the simplex for ``simplemkl``,
    ``level``, ``silp``; the lp ball; GMKL's elastic net), i.e. the weights
    that maximise the one-class dual value min_alpha 1/2 alpha'K(theta)alpha.
    As scikit-learn's ``OneClassSVM``: ``nu`` in (0, 1] bounds from above the
    fraction of training rows outside the estimated support and from below
    the fraction of support vectors (Schoelkopf et al. 2001, Proposition 4).

    ``score_samples(X)`` = sum_i alpha_i k_theta(x, x_i) (larger is more
    normal); ``decision_function(X)`` = score_samples(X) - ``offset_``, >= 0
    inside the estimated support (``offset_`` = rho; libsvm's decision values
    divided by nu n); ``predict(X)`` +1 (inlier) or -1 (outlier).

    Parameters are those of :class:`MultipleKernelClassifier` (``kernels``:
    built-in families, scikit-learn's pairwise kernels by name, callables;
    ``algorithm`` among :func:`mkl.algorithms.registry.algorithms_for_task`
    ``("novelty")``; ``p``, ``v``, ``algorithm_params``, ``representation``,
    ``random_state``, ``views``, ``verbose``), with ``nu`` in place of ``C``.
    Fitted attributes: ``estimator_`` (the MKLNoveltyDetector), ``offset_``,
    ``weights_`` (M,), the fit's summary
    (:data:`~mkl.estimators.feature_bank.FIT_SUMMARY`), ``kernel_specs_``,
    ``kernel_names_``, ``view_weights_`` (with ``views``), ``n_features_in_``.
    """

    def __init__(
        self,
        kernels=None,
        algorithm="simplemkl",
        nu=0.5,
        p=None,
        v=None,
        algorithm_params=None,
        representation="auto",
        random_state=None,
        views=None,
        verbose=False,
    ):
        self.kernels = kernels
        self.algorithm = algorithm
        self.nu = nu
        self.p = p
        self.v = v
        self.algorithm_params = algorithm_params
        self.representation = representation
        self.random_state = random_state
        self.views = views
        self.verbose = verbose

    def _inner_estimator(self):
        from .task_estimators import MKLNoveltyDetector

        return MKLNoveltyDetector(
            algorithm=self.algorithm,
            nu=self.nu,
            p=self.p,
            v=self.v,
            algorithm_params=self._algorithm_params(),
        )

    def fit(self, X, y=None):
        """Compute the bank of ``kernels`` on the rows of X (n_samples,
        n_features), normal points, and fit the multiple kernel one-class SVM
        on it; ``y`` is ignored."""
        X = self._validated_X(X)
        self._fit_on_bank(X, None)
        self.offset_ = self.estimator_.offset_
        return self

    def decision_function(self, X):
        """score_samples(X) - ``offset_``: >= 0 inside the estimated support."""
        return self._scores(X)

    def score_samples(self, X):
        """sum_i alpha_i k_theta(x, x_i) of the rows of X: larger is more normal."""
        return self.decision_function(X) + self.offset_

    def predict(self, X):
        """+1 for the rows of X inside the estimated support (inliers), -1 outside."""
        return np.where(self.decision_function(X) >= 0, 1, -1)

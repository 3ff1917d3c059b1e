"""scikit-learn estimators on raw features: the kernel bank is computed inside.

:class:`MultipleKernelClassifier` composes two things the library already has:
the kernel bank of a specification (:mod:`mkl.banks.from_features`: dense
blocks from :mod:`mkl.kernels`, or factors K_m = Z_m Z_m' from
:mod:`mkl.banks.factor_builders`) and a bank-level estimator of the registry
(:data:`mkl.ALGORITHMS`); :class:`MultipleKernelRegressor` the same bank and
:class:`mkl.estimators.task_estimators.MKLRegressor`,
:class:`MultipleKernelOutlierDetector` the same bank and
:class:`mkl.estimators.task_estimators.MKLNoveltyDetector`. It takes ``X`` of shape
(n_samples, n_features), so scikit-learn's tools that slice their input along
the first axis (``cross_val_score``, ``GridSearchCV``, ``Pipeline``) work on
it; the bank-level estimators take (M, n, n) banks, whose first axis is the
kernels.

The bank specification ``kernels`` is the language of an experiment file's
``kernels`` section (docs/design.md, "Experiment files"). Every normalisation
is fitted on the training rows; ``predict`` computes only the test block
against the stored training rows, in chunks of test rows
(:func:`mkl.banks.from_features.dense_test_blocks`), or, for factors, the test
rows' factors from the maps fitted with the training ones.
"""

from __future__ import annotations

import functools
import numbers
import types
import warnings
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import check_label_types, validate_params
from ..banks.checks import degenerate_factor_kernels, degenerate_kernels
from ..banks.from_features import (
    all_kernels_linear,
    callable_kernels,
    dense_test_blocks,
    expand_views,
    factor_test_bank,
    feature_bank_spec,
    resolve_representation,
    training_bank,
    view_parts,
)
from ..exceptions import DegenerateKernelWarning, InputError
from ..kernels.dense import compute_cross_block
from ..kernels.specs import CALLABLE, bank_dtype, c_unit, column_ranges

# features whose squares summed over a row reach this are refused: a Gaussian
# kernel's squared distances would overflow float64 (X * 1e200 once surfaced
# as "K[0] contains NaN or inf")
_LARGEST_SQUARED_NORM = 1e300


def _validated(estimator, X, y="no_validation", **kwargs):
    """scikit-learn's ``validate_data``, its refusals raised as :class:`InputError`
    (a ValueError, as scikit-learn's own), and features whose squared norms
    overflow refused by name."""
    try:
        out = validate_data(estimator, X, y=y, **kwargs)
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(_text_columns(X) or str(exc)) from None
    X_checked = out if isinstance(y, str) and y == "no_validation" else out[0]
    if X_checked.size and X_checked.dtype.kind in "iuf":  # (a callable's X: any dtype)
        extreme = max(float(X_checked.max()), -float(X_checked.min()))  # no |X| copy
        if extreme * extreme * X_checked.shape[1] >= _LARGEST_SQUARED_NORM:
            raise InputError(
                f"X has values up to {extreme:.3g}: squared distances between rows would "
                "overflow float64; rescale the features (e.g. standardise them)"
            )
    return out


def _text_columns(X) -> str | None:
    """The message for a DataFrame X whose columns are not all numbers (NumPy
    says "could not convert string to float" and names no column), or None."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(dtypes, "items"):
        return None
    bad = [f"{column!r} ({dtype})" for column, dtype in dtypes.items() if not _numeric(dtype)]
    if not bad:
        return None
    return (
        f"X's column(s) {', '.join(bad)} do not hold numbers: the kernels need numeric "
        "features. Encode text or categories as numbers (e.g. scikit-learn's OneHotEncoder "
        "in a ColumnTransformer, before this estimator in a Pipeline), convert numbers "
        "stored as text (pandas.to_numeric), drop the columns, or give a callable kernel "
        "k(X, Y) that reads them (kernels=[k, ...])"
    )


def _numeric(dtype) -> bool:
    """Whether a pandas or NumPy dtype holds numbers (or booleans)."""
    try:
        return np.issubdtype(np.dtype(dtype), np.number) or np.dtype(dtype) == bool
    except TypeError:  # a pandas extension dtype (category, string, nullable ints)
        return getattr(dtype, "kind", "O") in "biuf"


# the algorithm parameters that are the estimator's own (searchable by
# GridSearchCV); None leaves the algorithm's default
_NAMED_ALGORITHM_PARAMS = ("p", "v", "lam", "theta")

# the inner estimator's fitted summary, shown on the front end as well
FIT_SUMMARY = ("objective_", "gap_", "n_iter_", "n_selected_", "converged_", "spectral_ratio_")

# probability=True: Platt's sigmoid on decision values of this many folds of
# internal cross-validation (fewer when a class has fewer rows), as libsvm
PROBABILITY_FOLDS = 5

# the degenerate-kernel warning looks at the block of this many training rows
DEGENERACY_CHECK_ROWS = 256


def warn_degenerate_kernels(found: tuple[list[int], list[int]], names, X) -> None:
    """Warn (:class:`mkl.DegenerateKernelWarning`) about the kernels ``found``
    numerically the identity or constant on the training rows ((identity,
    constant) indices: :func:`mkl.banks.checks.degenerate_kernels` or
    :func:`~mkl.banks.checks.degenerate_factor_kernels`), and about X whose
    every feature is constant."""
    if X.dtype.kind == "b":
        X = X.view(np.uint8)
    numeric = X.dtype.kind in "iuf"  # (a callable kernel reads X of any dtype)
    if numeric and X.shape[0] > 1 and not column_ranges(X).any():
        warnings.warn(
            "every feature of X is constant over the training rows: every kernel is "
            "constant and the fit cannot tell the rows apart",
            DegenerateKernelWarning,
            stacklevel=4,
        )
        return
    identity, constant = found

    def listed(indices):
        shown = ", ".join(str(names[m]) for m in indices[:5])
        return shown + (f" and {len(indices) - 5} more" if len(indices) > 5 else "")

    if identity:
        warnings.warn(
            f"{len(identity)} kernel(s) are numerically the identity on the training rows "
            f"(off-diagonal entries below 1e-6 of the diagonal: they only memorise the "
            f"rows): {listed(identity)}; widen the Gaussian widths (squared distances "
            "between standardised rows grow with the number of features)",
            DegenerateKernelWarning,
            stacklevel=4,
        )
    if constant:
        warnings.warn(
            f"{len(constant)} kernel(s) are constant on the training rows (a constant "
            f"feature?): {listed(constant)}",
            DegenerateKernelWarning,
            stacklevel=4,
        )


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


class _FeatureBankEstimator(BaseEstimator):
    """What the estimators on raw features share: the bank of ``kernels``
    computed on the training rows, the test block at predict, the
    representation. Subclasses define ``__init__`` and ``_inner_estimator``."""

    # the parameters of a type scikit-learn's constraint language states, checked
    # in ``fit`` (:func:`mkl._validation.validate_params`, as the bank-level
    # estimators'); the others are checked where they are used
    _parameter_constraints: dict = {"verbose": ["verbose"]}

    # ------------------------------------------------------------ parameters
    def _seed(self) -> int:
        if isinstance(self.random_state, numbers.Integral) and not isinstance(
            self.random_state, bool
        ):
            return int(self.random_state)
        return int(check_random_state(self.random_state).randint(2**31 - 1))

    def _resolve_representation(
        self, spec: Mapping, specs, n: int, estimator, sparse: bool = False
    ) -> dict:
        """The bank's representation from ``representation``
        (:func:`mkl.banks.from_features.resolve_representation`) for the
        kernels ``specs``, refused when it is factors (as sparse X is held) and
        the algorithm needs the kernel matrices, or the bank has a callable
        kernel (computed as dense blocks only: ``"auto"`` is dense then)."""
        callables = [s for s in specs if s.family == CALLABLE]
        if callables and self.representation != "auto":
            rep = self.representation
            kind = rep.get("kind") if isinstance(rep, Mapping) else rep
            if kind != "dense":
                raise InputError(
                    f"kernel {callables[0].label()} is a callable: it is computed as dense "
                    f"blocks, not factors; use representation 'auto' or 'dense', not {rep!r}"
                )
        if sparse and not estimator.accepts_factors:
            raise InputError(
                f"sparse X is held as exact factors, which algorithm {self.algorithm!r} does "
                "not take (it needs the kernel matrices): pass dense X (X.toarray())"
            )
        rep = resolve_representation(
            self.representation,
            spec,
            len(specs),
            n,
            factors_allowed=estimator.accepts_factors and not callables,
            draw_seed=self._seed,
            sparse=sparse,
        )
        if rep["kind"] != "dense" and not estimator.accepts_factors:
            raise InputError(
                f"algorithm {self.algorithm!r} needs the kernel matrices themselves; "
                f"use representation='dense', not {rep['kind']!r}"
            )
        return rep

    # ------------------------------------------------------------ fit
    def _fit_on_bank(self, X, y, sample_weight=None):
        """Compute the bank of ``kernels`` (or of each of the ``views``) on X
        (validated) and fit the inner estimator on it with targets y (and
        per-sample weights, the box of row i being C s_i)."""
        weighted = {} if sample_weight is None else {"sample_weight": sample_weight}
        for stale in (*FIT_SUMMARY, "views_", "view_weights_", "probability_sigmoids_"):
            if hasattr(self, stale):  # a refit's attributes are the new fit's only
                delattr(self, stale)
        spec = feature_bank_spec(self.kernels)
        estimator = self._inner_estimator()
        feature_names = getattr(self, "feature_names_in_", None)
        parts, specs, names = expand_views(
            view_parts(self.views, spec, X.shape[1], feature_names), X, feature_names
        )
        if "C" in self.get_params():  # (a one-class SVM has nu instead)
            self.C_ = self._fitted_C(specs, X.shape[0])
            estimator.set_params(C=self.C_)
        rep = self._resolve_representation(spec, specs, X.shape[0], estimator, sp.issparse(X))
        dtype = bank_dtype(spec)
        bank, divisors, means, maps = training_bank(parts, X, rep, dtype, names)
        rows = min(X.shape[0], DEGENERACY_CHECK_ROWS)
        if rep["kind"] == "dense":
            found = degenerate_kernels(bank[:, :rows, :rows])
        else:
            found = degenerate_factor_kernels(bank, rows)
        warn_degenerate_kernels(found, names, X)
        estimator.fit(bank, y, **weighted)
        del bank
        self.normalisation_factors_ = divisors
        self.centring_means_ = means
        self.factor_maps_ = maps
        self.estimator_ = estimator
        self.representation_ = rep
        self.kernel_specs_ = specs
        self.kernel_names_ = names
        self.weights_ = estimator.weights_
        self._parts = [(cols, len(specs_v)) for _, cols, specs_v in parts]
        if self.views is not None:
            self.views_ = {view: cols for view, cols, _ in parts}
            weights = np.atleast_2d(self.weights_)
            sums, start = {}, 0
            for view, _, specs_v in parts:
                total = weights[:, start : start + len(specs_v)].sum(axis=1)
                sums[view] = float(total[0]) if np.ndim(self.weights_) == 1 else total
                start += len(specs_v)
            self.view_weights_ = sums
        for name in FIT_SUMMARY:
            if hasattr(estimator, name):
                setattr(self, name, getattr(estimator, name))
        # the dense test block needs the training rows; factors need only their maps
        self.X_fit_ = X if rep["kind"] == "dense" else None
        self._bank_dtype = dtype
        return self

    def _fitted_C(self, specs, n: int):
        """The C of the fit: ``C`` as given, or for ``"auto"`` the unit of C on
        these kernels (:func:`mkl.kernels.specs.c_unit`: n for a bank of
        unit-trace kernels, else 1), the C = 1 of an SVC on one unit-diagonal
        kernel."""
        if isinstance(self.C, str):
            if self.C != "auto":
                raise InputError(
                    f"C must be a number > 0, None (hard margin) or 'auto', got {self.C!r}"
                )
            return c_unit(specs, n)
        return self.C

    # ------------------------------------------------------------ predict
    def _scores(self, X):
        """The inner estimator's decision values on the rows of X."""
        check_is_fitted(self)
        X = self._validated_X(X, reset=False)
        if sp.issparse(X) and self.representation_["kind"] != "exact":
            X = X.toarray()  # linear kernels fitted on dense X (_validated_X)
        if self.representation_["kind"] != "dense":
            # the maps kept from fit give the test rows their factors
            test = factor_test_bank(self._parts, self.factor_maps_, X)
            return self.estimator_.decision_function(test)
        blocks = self._dense_test_blocks(X)
        scores = [self.estimator_.decision_function(block) for block in blocks]
        return np.concatenate(scores, axis=0)

    def _dense_test_blocks(self, X):
        """The test blocks of X against the training rows, each kernel normalised
        and centred as in the fit (:func:`dense_test_blocks`)."""
        return dense_test_blocks(
            self.kernel_specs_,
            self._parts,
            self.X_fit_,
            X,
            self.normalisation_factors_,
            self._bank_dtype,
            self.centring_means_,
        )

    # ------------------------------------------------------------ the learned kernel
    def combined_kernel(self, X, Y=None):
        """The learned kernel sum_m theta_m k_m between the rows of X and the
        training rows (``Y`` None), or the rows of ``Y``: each base kernel
        normalised as in the fit (its training divisors, the rows' own
        self-similarities for the cosine, the training mean for ``center``:
        :func:`mkl.kernels.dense.compute_cross_block`), weighted by
        ``weights_``. Shape (n_X, n_train or n_Y), or (n_classes, ...) with a
        weight vector per class (one-vs-rest). For reuse in another
        kernel method: ``SVC(kernel="precomputed").fit(clf.combined_kernel(X),
        y)``; with ``Y`` = X the learned Gram matrix of new rows. Factors
        (``representation_`` not dense): Y is required (the training rows are
        not kept), T_X diag(theta) T_Y' from the fitted maps."""
        check_is_fitted(self)
        X = self._dense_rows(X)
        weights = np.atleast_2d(self.weights_)
        if Y is not None:
            Y = self._dense_rows(Y)
        if self.representation_["kind"] != "dense":
            if Y is None:
                raise InputError(
                    "combined_kernel(X) against the training rows needs a dense bank: a "
                    "factor bank keeps its maps, not the training rows; pass Y (e.g. the "
                    "training rows) for combined_kernel(X, Y)"
                )
            TX = factor_test_bank(self._parts, self.factor_maps_, X)
            TY = factor_test_bank(self._parts, self.factor_maps_, Y)
            out = np.stack(
                [_weighted_gram(TX.test, TY.test, TX.column_weights(w)) for w in weights]
            )
        elif Y is None:
            blocks = self._dense_test_blocks(X)
            out = np.concatenate(
                [np.tensordot(weights, b.astype(np.float64), axes=1) for b in blocks], axis=1
            )
        else:
            out = np.zeros((len(weights), X.shape[0], Y.shape[0]))
            start = 0
            for cols, n_kernels in self._parts:
                stop = start + n_kernels
                means = self.centring_means_
                block = compute_cross_block(
                    self.kernel_specs_[start:stop],
                    self.X_fit_[:, cols],
                    X[:, cols],
                    Y[:, cols],
                    self.normalisation_factors_[start:stop],
                    None if means is None else means[start:stop],
                )
                out += np.tensordot(weights[:, start:stop], block, axes=1)
                start = stop
        return out[0] if np.ndim(self.weights_) == 1 else out

    def _dense_rows(self, X):
        """Rows validated as at predict (sparse X made dense where the bank was
        fitted on dense X)."""
        X = self._validated_X(X, reset=False)
        if sp.issparse(X) and self.representation_["kind"] != "exact":
            X = X.toarray()
        return X

    # ------------------------------------------------------------ sparse X
    def _validated_X(self, X, y="no_validation", **kwargs):
        """X (and y) validated; sparse X accepted (as CSR) for a bank of linear
        kernels only, which it keeps sparse in exact factors."""
        sparse = sp.issparse(X)
        if sparse and not all_kernels_linear(self.kernels, self.views):
            raise InputError(
                "sparse X: only a bank of linear kernels keeps it sparse (exact factors: "
                "X itself, one kernel per column, or per view); this bank has other "
                "kernels: give dense X (X.toarray()) or linear kernels"
            )
        rep = self.representation
        kind = rep.get("kind") if isinstance(rep, Mapping) else rep
        if sparse and kind not in ("auto", "exact"):
            raise InputError(
                f"sparse X is held as exact factors: use representation 'auto' or 'exact', "
                f"not {self.representation!r}"
            )
        # a callable kernel reads the rows as they are (texts, booleans); the
        # bank's other kernels convert them to numbers (check_kernel_rows)
        dtype = None if callable_kernels(self.kernels, self.views) else np.float64
        return _validated(
            self, X, y, dtype=dtype, accept_sparse="csr" if sparse else False, **kwargs
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Gaussian and polynomial kernels are computed on dense features; a bank
        # of linear kernels is exact factors of X, which stay sparse
        tags.input_tags.sparse = all_kernels_linear(self.kernels, self.views)
        tags.input_tags.string = bool(callable_kernels(self.kernels, self.views))
        return tags

    def _algorithm_params(self) -> dict | None:
        """``algorithm_params`` with ``verbose`` added where the algorithm
        reports progress (the task estimators' algorithms, which take their
        parameters as a mapping), or None."""
        from ..algorithms.registry import algorithm_info

        params = dict(self.algorithm_params or {})
        if self.verbose:
            if "verbose" in params:
                raise InputError(
                    "set ['verbose'] with the estimator's own parameters, not algorithm_params"
                )
            # as the classifier: passed to the algorithms that report progress
            if "verbose" in algorithm_info(self.algorithm).params:
                params["verbose"] = self.verbose
        return params or None


def _weighted_gram(A, B, column_weights: np.ndarray) -> np.ndarray:
    """A diag(column_weights) B' as a dense array (A, B dense or sparse factors)."""
    if sp.issparse(A):
        product = A.multiply(column_weights[None, :]).tocsr() @ B.T
    else:
        product = (A * column_weights) @ B.T
    return product.toarray() if sp.issparse(product) else np.asarray(product)


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
        The fitted estimator's (:data:`FIT_SUMMARY`): its objective, its
        relative duality or bound gap, iterations, kernels of nonzero weight,
        whether it met its tolerance, and tr K / ||K||_F of the learned kernel.
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
            warnings.warn(
                f"probability=True: class {label!r} has only {count} training rows, fewer "
                f"than the {PROBABILITY_FOLDS} folds of the cross-validation Platt's sigmoid "
                f"is fitted on, so {folds} folds are used: each of their fits sees "
                f"{folds - 1}/{folds} of the rows (4/5 with 5 folds), and the sigmoid rests "
                f"on {count} decision values of that class. Add rows of class {label!r} "
                "(scikit-learn's CalibratedClassifierCV(cv=5), its replacement of "
                "SVC(probability=True) since 1.9, refuses such data)",
                UserWarning,
                stacklevel=3,
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
    (:data:`FIT_SUMMARY`: ``objective_``, ``gap_``, ``n_iter_``, ``n_selected_``,
    ``converged_``, ``spectral_ratio_``), ``kernel_specs_``, ``kernel_names_``,
    ``n_features_in_``.
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
    ``weights_`` (M,), the fit's summary (:data:`FIT_SUMMARY`), ``kernel_specs_``,
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

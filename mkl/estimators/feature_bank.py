"""The kernel bank on raw features that the front ends on X share
(:mod:`mkl.estimators.feature_estimators`): :class:`_FeatureBankEstimator`
validates X, computes the bank of a specification on the training rows (the
views, the representation chosen, dense or factors: :mod:`mkl.banks.from_features`),
fits a subclass's bank-level estimator on it, and gives test rows their
block or factors at predict, and the learned kernel (``combined_kernel``).

The bank specification ``kernels`` is the language of an experiment file's
``kernels`` section (docs/design.md, "Experiment files"). Every normalisation
is fitted on the training rows; ``predict`` computes only the test block
against the stored training rows, in chunks of test rows
(:func:`mkl.banks.from_features.dense_test_blocks`), or, for factors, the test
rows' factors from the maps fitted with the training ones.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

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
from ..exceptions import DegenerateKernelWarning, InputError, warn_at_caller
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


# the inner estimator's fitted summary, shown on the front end as well
FIT_SUMMARY = ("objective_", "gap_", "n_iter_", "n_selected_", "converged_", "spectral_ratio_")

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
        warn_at_caller(
            "every feature of X is constant over the training rows: every kernel is "
            "constant and the fit cannot tell the rows apart",
            DegenerateKernelWarning,
        )
        return
    identity, constant = found

    def listed(indices):
        shown = ", ".join(str(names[m]) for m in indices[:5])
        return shown + (f" and {len(indices) - 5} more" if len(indices) > 5 else "")

    if identity:
        warn_at_caller(
            f"{len(identity)} kernel(s) are numerically the identity on the training rows "
            f"(off-diagonal entries below 1e-6 of the diagonal: they only memorise the "
            f"rows): {listed(identity)}; widen the Gaussian widths (squared distances "
            "between standardised rows grow with the number of features)",
            DegenerateKernelWarning,
        )
    if constant:
        warn_at_caller(
            f"{len(constant)} kernel(s) are constant on the training rows (a constant "
            f"feature?): {listed(constant)}",
            DegenerateKernelWarning,
        )


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

"""Factor constructors: banks of kernels K_m = Z_m Z_m' without n x n matrices
(:class:`~mkl.banks.factor_bank.FactorBank`). Also importable from :mod:`mkl.kernels`.

* :func:`nystroem_bank` -- the Nystroem approximation (Williams & Seeger 2001) of
  any kernel of :mod:`mkl.kernels`: with landmarks L (a seeded sample of the
  training points, the same for every kernel of the bank),
  Z = k(X, L) U Lambda^{-1/2} for the eigendecomposition k(L, L) = U Lambda U'
  (eigenvalues below ``1e-10`` of the largest dropped, so r_m <= rank);
  K~ = Z Z' = k(X, L) k(L, L)^+ k(L, X).
* :func:`random_fourier_bank` -- random Fourier features (Rahimi & Recht 2007)
  for Gaussian kernels: Z = sqrt(2/D) cos(X W / width + b), W ~ N(0, I),
  b ~ U[0, 2 pi), one draw shared by the bank's widths; E[Z Z'] = K.
* :func:`rank_one_bank` -- exact rank-one kernels x_j x_j', one per feature
  column (sparse input stays sparse): Xu et al. 2010's one kernel per term.
* :func:`linear_group_bank` -- exact linear kernels on groups of features.
* :func:`exact_factor_bank` -- exact factors of a bank spec's linear kernels
  (all features, or one feature each); :func:`compute_factor_bank` builds the
  factors of a bank spec in an experiment's ``representation`` (the workflow),
  :func:`compute_factor_maps` the same training factors and the fitted maps
  (:class:`FactorMaps`) that give test rows their factors alone (the front ends).

Normalisations act on the factors exactly as on the kernel Z Z' they represent
(:func:`normalise_factors`; the same definitions as ``mkl.kernels``): unit trace
and unit variance divide Z by the square root of the training block's divisor;
the cosine normalisation (``unit_diagonal``) divides each row by its norm, the
square root of its diagonal entry, for training and test rows alike; the
centring (``center``) subtracts the training rows' mean factor row, training
and test rows alike ((Z - 1 mu')(Z - 1 mu')' = H Z Z' H: the centred kernel).
Sparse factors are not centred (the subtraction would make them dense).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from ..exceptions import InputError
from ..kernels.functions import check_features, check_same_features, kernel_function
from ..kernels.specs import ALL_FEATURES, NORMALISATIONS, KernelSpec, check_feature
from .factor_bank import FactorBank

# Nystroem: eigenvalues of k(L, L) below this fraction of the largest are dropped
NYSTROEM_RCOND = 1e-10


def normalise_factors(Z, T, how: str):
    """Normalise the kernel Z Z' (training) and its test block T Z' as
    ``mkl.kernels`` normalises dense blocks; returns (Z, T, divisor) with
    divisor the scalar the training block was divided by (1 for the cosine)."""
    if how not in NORMALISATIONS:
        raise InputError(f"unknown normalisation {how!r}; known: {NORMALISATIONS}")
    if how == "none":
        return Z, T, 1.0
    if how == "unit_diagonal":
        return _unit_rows(Z), normalise_test_factors(T, how, 1.0), 1.0
    if how == "center":
        mean = factor_mean(Z)
        return Z - mean, normalise_test_factors(T, how, 1.0, mean), 1.0
    n = Z.shape[0]
    sq = float(Z.multiply(Z).sum()) if sp.issparse(Z) else float(np.einsum("ij,ij->", Z, Z))
    if how == "unit_trace":
        f = sq
    else:  # unit_variance: 1/n tr K - 1/n^2 1'K1, with 1'K1 = ||Z'1||^2
        col = np.asarray(Z.sum(axis=0), dtype=np.float64).ravel()
        mean_diag = sq / n
        f = mean_diag - float(col @ col) / n**2
        if f <= 1e-12 * abs(mean_diag):
            raise InputError(
                "cannot normalise to unit_variance: the training block's implied "
                f"variance is {f:.3g}, zero up to rounding (a constant kernel)"
            )
    if not np.isfinite(f) or f <= 0:
        raise InputError(f"cannot normalise to {how}: the training block's factor is {f}")
    return Z / np.sqrt(f), normalise_test_factors(T, how, f), f


def normalise_test_factors(T, how: str, divisor: float, mean=None):
    """Test factors T normalised as :func:`normalise_factors` normalised them
    beside their training factors, whose ``divisor`` it returned: the cosine
    per row, the centring by the training factors' ``mean`` row
    (:func:`factor_mean`), the others by the training block's divisor."""
    if T is None or how == "none":
        return T
    if how == "unit_diagonal":
        return _unit_rows(T)
    if how == "center":
        if sp.issparse(T):
            raise InputError(_SPARSE_CENTRING)
        return T - mean
    return T / np.sqrt(divisor)


_SPARSE_CENTRING = (
    "cannot center sparse factors: subtracting the mean row would make them dense; "
    "give dense X (X.toarray()) or another normalisation"
)


def factor_mean(Z) -> np.ndarray:
    """The mean row of training factors Z (dense only: :data:`_SPARSE_CENTRING`),
    what centring subtracts from training and test factors alike."""
    if sp.issparse(Z):
        raise InputError(_SPARSE_CENTRING)
    return Z.mean(axis=0)


def _unit_rows(Z):
    """Rows divided by their norms (rows of norm 0 stay 0): diag(Z Z') becomes 1."""
    if sp.issparse(Z):
        norms = np.sqrt(np.asarray(Z.multiply(Z).sum(axis=1), dtype=np.float64).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(sp.diags(1.0 / norms) @ Z, dtype=Z.dtype)
    norms = np.sqrt(np.einsum("ij,ij->i", Z, Z, dtype=np.float64))
    norms[norms == 0] = 1.0
    return (Z / norms[:, None]).astype(Z.dtype, copy=False)


def _spec_bank(specs, train, test, y_train, y_test) -> FactorBank:
    """The FactorBank of per-spec factors, named by the specs' labels."""
    names = [s.label() for s in specs]
    return FactorBank(train, test, names=names, y_train=y_train, y_test=y_test)


def _select(X, feature: int):
    return X if feature == ALL_FEATURES else X[:, [feature]]


class FactorMaps:
    """The fitted maps x -> z_m(x) of a factor bank's kernels, so that test
    rows get their factors from the maps alone (a front end's ``predict``:
    O(n_test r M), not the training factors again).

    ``kind`` nystroem: z_m(x) = k_m(x, L) P_m with the landmarks L and the
    projections P_m = U Lambda^{-1/2} (:func:`nystroem_bank`); rff:
    z_m(x) = sqrt(2/D) cos(x W / width_m + b) (:func:`random_fourier_bank`);
    exact: the feature columns. Then each kernel's normalisation with the
    training block's divisor (:func:`normalise_test_factors`)."""

    def __init__(self, kind, specs, n_features, dtype, basis=None, phases=None):
        self.kind = kind
        self.specs = list(specs)
        self.n_features = int(n_features)  # of the training rows: test rows must match
        self.dtype = np.dtype(dtype)
        self.basis = basis  # Nystroem: the landmarks (rank, d); rff: W (d, D)
        self.phases = phases  # rff: b (D,)
        self.projections: list = []  # Nystroem: P_m per kernel
        self.divisors: list[float] = []  # the training blocks' normalisation divisors
        self.means: list = []  # centred kernels: the training factors' mean row (else None)

    def raw(self, m: int, X: np.ndarray) -> np.ndarray:
        """z_m(x) before normalisation, for the rows of X."""
        spec = self.specs[m]
        if self.kind == "nystroem":
            return kernel_function(spec, X, self.basis) @ self.projections[m]
        if self.kind == "rff":
            rows = slice(None) if spec.feature == ALL_FEATURES else [spec.feature]
            scale = np.sqrt(2.0 / self.basis.shape[1])
            return scale * np.cos(
                _select(X, spec.feature) @ (self.basis[rows] / spec.param) + self.phases
            )
        return _select(X, spec.feature)

    def fit_kernel(self, m: int, X_train: np.ndarray) -> np.ndarray:
        """Kernel m's normalised training factor, its divisor kept."""
        raw = self.raw(m, X_train)
        how = self.specs[m].normalise
        self.means.append(factor_mean(raw) if how == "center" else None)
        Z, _, divisor = normalise_factors(raw, None, how)
        self.divisors.append(divisor)
        return Z.astype(self.dtype)

    def transform(self, X) -> list[np.ndarray]:
        """The test factors (n_test, r_m) of the rows of X, one per kernel
        (sparse X stays sparse for exact factors)."""
        X = (
            check_factor_features(X, "X_test")
            if self.kind == "exact"
            else check_features(X, "X_test")
        )
        if X.shape[1] != self.n_features:
            raise InputError(f"X_test has {X.shape[1]} features but X_train has {self.n_features}")
        return [
            normalise_test_factors(
                self.raw(m, X), spec.normalise, self.divisors[m], self.means[m]
            ).astype(self.dtype)
            for m, spec in enumerate(self.specs)
        ]

    def ranks(self) -> np.ndarray:
        """r_m of each kernel's factor (the columns :meth:`transform` gives)."""
        if self.kind == "nystroem":
            return np.array([P.shape[1] for P in self.projections], dtype=np.int64)
        if self.kind == "rff":
            return np.full(len(self.specs), self.basis.shape[1], dtype=np.int64)
        return np.array(
            [self.n_features if s.feature == ALL_FEATURES else 1 for s in self.specs],
            dtype=np.int64,
        )

    def write(self, group, X, name: str = "Z", rows_per_block: int = 1 << 16):
        """The factors [z_1(x), ..., z_M(x)] of X's rows side by side, written
        to the dataset ``name`` of ``group`` (an open, writable h5py File or
        Group) ``rows_per_block`` rows at a time, so that neither X nor the
        factors are in memory at once: X may itself be an h5py.Dataset or a
        memory map. Returns the dataset, for
        ``FactorBank.from_matrix(dataset, maps.ranks())`` (a bank read from
        the file by row blocks). Dense X only."""
        if sp.issparse(X) or getattr(X, "ndim", None) != 2:
            raise InputError("FactorMaps.write takes a dense 2-D X (rows, features)")
        n = X.shape[0]
        Z = group.create_dataset(name, shape=(n, int(self.ranks().sum())), dtype=self.dtype)
        for a in range(0, n, rows_per_block):
            b = min(a + rows_per_block, n)
            Z[a:b] = np.hstack(self.transform(np.asarray(X[a:b])))
        return Z


def _bank_from_maps(maps: FactorMaps, train, X_test, y_train, y_test) -> FactorBank:
    """The FactorBank of the training factors and, when X_test is given, the
    test factors the maps give it."""
    test = None if X_test is None else maps.transform(X_test)
    return _spec_bank(maps.specs, train, test, y_train, y_test)


def nystroem_maps(
    specs: Sequence[KernelSpec], X_train, rank: int = 200, random_state=0, dtype=np.float64
) -> tuple[FactorMaps, list[np.ndarray]]:
    """The Nystroem maps of ``specs`` and the training factors (:func:`nystroem_bank`)."""
    X_train = check_features(X_train, "X_train")
    n = X_train.shape[0]
    if not (isinstance(rank, (int, np.integer)) and 1 <= rank <= n):
        raise InputError(
            f"rank must be an integer in [1, {n}] (the number of training points "
            f"that can serve as landmarks), got {rank!r}"
        )
    landmarks = X_train[np.random.default_rng(random_state).choice(n, rank, replace=False)]
    maps = FactorMaps("nystroem", specs, X_train.shape[1], dtype, basis=landmarks)
    train = []
    for m, spec in enumerate(specs):
        if spec.family == "identity":
            raise InputError("the identity kernel has no low-rank approximation (Nystroem)")
        K_LL = kernel_function(spec, landmarks, landmarks, same=True)
        lam, U = np.linalg.eigh((K_LL + K_LL.T) / 2)
        keep = lam > NYSTROEM_RCOND * max(lam[-1], 0.0)
        if not keep.any():
            raise InputError(f"{spec.label()}: the landmarks' kernel matrix is zero")
        maps.projections.append(U[:, keep] / np.sqrt(lam[keep]))
        train.append(maps.fit_kernel(m, X_train))
    return maps, train


def nystroem_bank(
    specs: Sequence[KernelSpec],
    X_train,
    X_test=None,
    rank: int = 200,
    random_state: int | None = 0,
    dtype=np.float64,
    y_train=None,
    y_test=None,
) -> FactorBank:
    """A FactorBank of the Nystroem approximations of ``specs`` with ``rank``
    landmarks drawn (seeded by ``random_state``) from the training rows, shared
    by all kernels. ``rank`` must be at most n_train; each factor has at most
    ``rank`` columns (fewer where k(L, L) is numerically singular)."""
    maps, train = nystroem_maps(specs, X_train, rank, random_state, dtype)
    return _bank_from_maps(maps, train, X_test, y_train, y_test)


def random_fourier_maps(
    specs: Sequence[KernelSpec], X_train, n_components: int = 200, random_state=0, dtype=np.float64
) -> tuple[FactorMaps, list[np.ndarray]]:
    """The random Fourier maps of ``specs`` and the training factors
    (:func:`random_fourier_bank`)."""
    X_train = check_features(X_train, "X_train")
    if not (isinstance(n_components, (int, np.integer)) and n_components >= 1):
        raise InputError(f"n_components must be a positive integer, got {n_components!r}")
    rng = np.random.default_rng(random_state)
    W = rng.normal(size=(X_train.shape[1], n_components))
    b = rng.uniform(0.0, 2.0 * np.pi, size=n_components)
    maps = FactorMaps("rff", specs, X_train.shape[1], dtype, basis=W, phases=b)
    train = []
    for m, spec in enumerate(specs):
        if spec.family != "gaussian":
            raise InputError(
                f"random Fourier features approximate Gaussian kernels only, got {spec.label()}"
            )
        check_feature(spec, X_train.shape[1])
        train.append(maps.fit_kernel(m, X_train))
    return maps, train


def random_fourier_bank(
    specs: Sequence[KernelSpec],
    X_train,
    X_test=None,
    n_components: int = 200,
    random_state: int | None = 0,
    dtype=np.float64,
    y_train=None,
    y_test=None,
) -> FactorBank:
    """A FactorBank of random Fourier features for Gaussian ``specs``
    (k(x, z) = exp(-||x - z||^2 / (2 width^2))), ``n_components`` features each,
    one seeded draw of W and b shared by the bank."""
    maps, train = random_fourier_maps(specs, X_train, n_components, random_state, dtype)
    return _bank_from_maps(maps, train, X_test, y_train, y_test)


def rank_one_bank(
    X_train, X_test=None, normalise: str = "none", y_train=None, y_test=None
) -> FactorBank:
    """One exact rank-one kernel x_j x_j' per feature column j (the linear kernel
    on feature j); sparse input (e.g. a document-term matrix) stays sparse."""
    Z, T = _features_pair(X_train, X_test)
    names = [f"linear@x{j}" for j in range(Z.shape[1])]
    if normalise != "none":  # per kernel: columns are kernels here
        Z, T = _normalise_columns(Z, T, normalise)
    return FactorBank.from_matrix(Z, 1, test=T, names=names, y_train=y_train, y_test=y_test)


def linear_group_bank(
    X_train,
    groups: Sequence[Sequence[int]],
    X_test=None,
    normalise: str = "none",
    y_train=None,
    y_test=None,
) -> FactorBank:
    """One exact linear kernel X_g X_g' per group g of feature columns."""
    Z, T = _features_pair(X_train, X_test)
    d = Z.shape[1]
    train, test = [], []
    for g, cols in enumerate(groups):
        cols = np.asarray(cols, dtype=np.int64)
        if cols.ndim != 1 or cols.size == 0 or cols.min() < 0 or cols.max() >= d:
            raise InputError(f"group {g} must be a non-empty list of feature indices in [0, {d})")
        Zg, Tg, _ = normalise_factors(Z[:, cols], None if T is None else T[:, cols], normalise)
        train.append(Zg)
        test.append(Tg)
    return FactorBank(
        train,
        None if T is None else test,
        names=[f"linear@group{g}" for g in range(len(groups))],
        y_train=y_train,
        y_test=y_test,
    )


def _refuse_non_linear(specs: Sequence[KernelSpec]) -> None:
    """Exact factors exist for linear kernels only (any other kernel's rank is n)."""
    bad = sorted({s.family for s in specs if s.family != "linear"})
    if bad:
        raise InputError(
            f"exact factors exist for linear kernels only, the bank has {bad}: "
            "use the nystroem or rff representation for them"
        )


def exact_factor_bank(
    specs: Sequence[KernelSpec], X_train, X_test=None, dtype=np.float64, y_train=None, y_test=None
) -> FactorBank:
    """Exact factors of the linear kernels ``specs``: Z = X for a kernel on all
    features, the column x_j for the kernel on feature j (rank one), each
    normalised as its spec says. Other families have no exact low-rank factor
    (their rank is n): use ``nystroem_bank`` or ``random_fourier_bank``."""
    Z, T = _features_pair(X_train, X_test)
    _refuse_non_linear(specs)
    singles = [s.feature != ALL_FEATURES for s in specs]
    if all(singles) and len({s.normalise for s in specs}) == 1:
        # one rank-one kernel per feature: the columns, normalised in one step
        cols = [s.feature for s in specs]
        Zc, Tc = Z[:, cols], None if T is None else T[:, cols]
        if specs[0].normalise != "none":
            Zc, Tc = _normalise_columns(Zc, Tc, specs[0].normalise)
        return FactorBank.from_matrix(
            Zc.astype(dtype, copy=False),
            1,
            test=None if Tc is None else Tc.astype(dtype, copy=False),
            names=[s.label() for s in specs],
            y_train=y_train,
            y_test=y_test,
        )
    train, test = [], []
    for spec in specs:
        check_feature(spec, Z.shape[1])
        cols = slice(None) if spec.feature == ALL_FEATURES else [spec.feature]
        Zm, Tm, _ = normalise_factors(Z[:, cols], None if T is None else T[:, cols], spec.normalise)
        train.append(Zm.astype(dtype, copy=False))
        test.append(None if Tm is None else Tm.astype(dtype, copy=False))
    return _spec_bank(specs, train, None if T is None else test, y_train, y_test)


def compute_factor_bank(
    specs: Sequence[KernelSpec],
    X_train,
    X_test,
    representation: dict,
    dtype=np.float64,
    y_train=None,
    y_test=None,
) -> FactorBank:
    """The factor bank of ``specs`` in an experiment's ``representation``:
    ``{kind: nystroem, rank: r, seed: s}``, ``{kind: rff, dimension: D, seed: s}``
    or ``{kind: exact}`` (the workflow's kernels stage; ``dense`` is
    ``mkl.kernels.dense.compute_bank``)."""
    kind = representation.get("kind")
    common = dict(dtype=dtype, y_train=y_train, y_test=y_test)
    if kind == "nystroem":
        return nystroem_bank(
            specs,
            X_train,
            X_test,
            rank=int(representation["rank"]),
            random_state=representation.get("seed", 0),
            **common,
        )
    if kind == "rff":
        return random_fourier_bank(
            specs,
            X_train,
            X_test,
            n_components=int(representation["dimension"]),
            random_state=representation.get("seed", 0),
            **common,
        )
    if kind == "exact":
        return exact_factor_bank(specs, X_train, X_test, **common)
    raise InputError(f"unknown factor representation {kind!r}; known: nystroem, rff, exact")


def compute_factor_maps(
    specs: Sequence[KernelSpec], X_train, representation: dict, dtype=np.float64
) -> tuple[FactorMaps, FactorBank]:
    """The maps of ``specs`` in a ``representation`` (as
    :func:`compute_factor_bank`'s) and the FactorBank of the training factors:
    what a front end keeps to predict from test rows alone."""
    kind = representation.get("kind")
    seed = representation.get("seed", 0)
    if kind == "nystroem":
        maps, train = nystroem_maps(specs, X_train, int(representation["rank"]), seed, dtype)
    elif kind == "rff":
        maps, train = random_fourier_maps(
            specs, X_train, int(representation["dimension"]), seed, dtype
        )
    elif kind == "exact":
        X_train = check_factor_features(X_train, "X_train")
        _refuse_non_linear(specs)
        maps = FactorMaps("exact", specs, X_train.shape[1], dtype)
        for spec in specs:
            check_feature(spec, X_train.shape[1])
        train = [maps.fit_kernel(m, X_train) for m in range(len(specs))]
    else:
        raise InputError(f"unknown factor representation {kind!r}; known: nystroem, rff, exact")
    return maps, _spec_bank(specs, train, None, None, None)


def check_factor_features(X, name: str):
    """Features for exact factors: dense (checked as any features) or sparse
    (CSR, float, finite), which stays sparse."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        if not np.isfinite(X.data).all():
            raise InputError(f"{name} contains NaN or inf")
        return X
    return check_features(X, name)


def _features_pair(X_train, X_test):
    Z = check_factor_features(X_train, "X_train")
    T = None if X_test is None else check_factor_features(X_test, "X_test")
    if T is not None:
        check_same_features(Z, T)
    return Z, T


def _normalise_columns(Z, T, how: str):
    """Normalise each rank-one kernel z_j z_j' (a column) as ``normalise_factors``
    would, in one vectorised step."""
    if how not in NORMALISATIONS:
        raise InputError(f"unknown normalisation {how!r}; known: {NORMALISATIONS}")
    n = Z.shape[0]
    if how == "unit_diagonal":  # cosine of a rank-one kernel: sign(x_i) sign(x_j)
        Zs, Ts = (None if A is None else _sign(A) for A in (Z, T))
        return Zs, Ts
    if how == "center":  # each column its own mean: a rank-one kernel's centring
        mean = factor_mean(Z)
        return Z - mean, normalise_test_factors(T, how, 1.0, mean)
    sq = np.asarray(Z.multiply(Z).sum(axis=0) if sp.issparse(Z) else (Z * Z).sum(0)).ravel()
    if how == "unit_trace":
        f = sq
    else:
        col = np.asarray(Z.sum(axis=0)).ravel()
        f = sq / n - col**2 / n**2
    bad = np.flatnonzero(~(f > 1e-12 * np.maximum(sq / n, 1e-300)))
    if bad.size:
        raise InputError(f"cannot normalise to {how}: feature {int(bad[0])} gives the divisor 0")
    scale = 1.0 / np.sqrt(f)
    if sp.issparse(Z):
        D = sp.diags(scale.astype(Z.dtype))
        return sp.csr_matrix(Z @ D), (None if T is None else sp.csr_matrix(T @ D))
    return Z * scale, (None if T is None else T * scale)


def _sign(A):
    if sp.issparse(A):
        A = A.copy()
        A.data = np.sign(A.data)
        return A
    return np.sign(A)

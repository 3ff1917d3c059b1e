"""Fixed kernels from (possibly indefinite) similarity matrices: the baselines
that Kundu, Tankasali, Bhattacharyya & Ben-Tal (NIPS 2010, Section 4 and
Table 3) compare their learned kernels against (mkl.algorithms.indefinite).

The input bank holds m similarity matrices S_1..S_m (training blocks, symmetric,
possibly indefinite; their eigendecompositions come from
:func:`mkl.kernels.spectra.spectra`, stored once per bank). Each method builds
one PSD kernel from them by a fixed rule, nothing learned but the SVM on it:

* :class:`EigenTransformSVM` (``denoise``, ``flip``, ``shift``): the spectrum
  transforms of Wu, Chang & Zhang (2005) / Chen et al. (2009),
  K = 1/m sum_i V_i diag(mu(lambda_i)) V_i' with mu = max(lambda, 0), |lambda|
  or lambda - min(lambda_min, 0) (mkl/kernels/spectra.py);
* :class:`SimilarityFeaturesSVM` (``similarity_features``, Table 3's "Linear
  SVM"): a linear SVM with the similarities to the training points as
  features, K = 1/m sum_i S_i S_i'.

Test similarities: denoise and flip map them through the training
eigenvectors (Chen et al. 2009), shift uses them as they are
(mkl/kernels/spectra.py); the similarity features are the test similarities
themselves.
"""

from __future__ import annotations

import numpy as np

from ..banks.algebra import spectral_ratio
from ..kernels.spectra import TRANSFORMS, from_spectrum, spectra, test_map, transform_spectrum
from ..solvers.libsvm import solve_svm_dual
from .base import BaseMKL, BinaryFit
from .iterations import single_solve


def _fit_from_svm(method: str, weights, sol, K_learned, **extra) -> BinaryFit:
    """A method that solves one SVM on a kernel it built (no gap: NaN)."""
    log = single_solve(method, sol.objective, sol.converged)
    log.finish()
    return BinaryFit(
        weights=np.asarray(weights, dtype=np.float64),
        dual_coef=sol.dual_coef,
        intercept=sol.bias,
        objective=float(sol.objective),
        spectral_ratio=spectral_ratio(K_learned),
        **log.fit_fields(),
        **extra,
    )


class EigenTransformSVM(BaseMKL):
    """SVM on the transformed spectrum of each similarity matrix, averaged:
    K = 1/m sum_i V_i diag(mu(lambda_i)) V_i' with ``transform`` one of
    ``denoise`` (clip), ``flip`` (absolute value), ``shift`` (Wu et al. 2005;
    Kundu et al. 2010, Section 4). Test similarities: see mkl/kernels/spectra.py."""

    learns_kernel = True
    requires_psd = False

    transform = "denoise"

    def __init__(self, C=1.0, tol=1e-3):
        self.C = C
        self.tol = tol

    def _prepare(self, K, K_mean):
        sp = spectra(K)
        M, n, _ = K.shape
        K_psd = np.zeros((n, n))
        # shift: K = S - delta I, so test similarities are used as they are (no map)
        maps = None if self.transform == "shift" else np.empty((M, n, n))
        for m in range(M):
            mu = transform_spectrum(sp.values[m], self.transform)
            K_psd += from_spectrum(sp.vectors[m], mu) / M
            if maps is not None:
                maps[m] = test_map(sp.vectors[m], sp.values[m], mu)
        return (K_psd + K_psd.T) / 2, maps

    def _fit_binary(self, K, y, K_mean):
        K_psd, maps = self._shared
        M = K.shape[0]
        sol = solve_svm_dual(K_psd, y, self.C, self.tol)
        # (M, n): P_i applied to the coefficients; None: every kernel uses dual_coef
        test_coef = None if maps is None else maps @ sol.dual_coef
        return _fit_from_svm(
            type(self).__name__, np.full(M, 1.0 / M), sol, K_psd, test_coef=test_coef
        )


class Denoise(EigenTransformSVM):
    __doc__ = EigenTransformSVM.__doc__
    transform = "denoise"


class Flip(EigenTransformSVM):
    __doc__ = EigenTransformSVM.__doc__
    transform = "flip"


class Shift(EigenTransformSVM):
    __doc__ = EigenTransformSVM.__doc__
    transform = "shift"


assert {Denoise.transform, Flip.transform, Shift.transform} == set(TRANSFORMS)


class SimilarityFeaturesSVM(BaseMKL):
    """Linear SVM with the similarities to the training points as features
    (Kundu et al. 2010, Table 3: "Linear SVM"): K = 1/m sum_i S_i S_i', and a
    test point's kernel row is 1/m sum_i s_i S_i'."""

    learns_kernel = True
    requires_psd = False

    def __init__(self, C=1.0, tol=1e-3):
        self.C = C
        self.tol = tol

    def _prepare(self, K, K_mean):
        M = K.shape[0]
        S = K.astype(np.float64, copy=False)
        K_lin = np.einsum("mij,mkj->ik", S, S) / M
        return (K_lin + K_lin.T) / 2

    def _fit_binary(self, K, y, K_mean):
        K_lin = self._shared
        M = K.shape[0]
        sol = solve_svm_dual(K_lin, y, self.C, self.tol)
        test_coef = np.einsum("mij,j->mi", K.astype(np.float64, copy=False), sol.dual_coef)
        return _fit_from_svm(
            "SimilarityFeaturesSVM", np.full(M, 1.0 / M), sol, K_lin, test_coef=test_coef
        )

"""The alignment family and the heuristics of MKLpy: kernel weights set by a
closed form or one small QP on the kernels and the labels, then one SVM on
the combination (:class:`mkl.algorithms.baselines.CombinationSVM`). They are
the cheap baselines MKL users compare against; MKLpy 0.6 offers all five.

With H = I - 11'/n, K^c = H K H (:func:`mkl.kernels.functions.center`), the
centred Frobenius products and the labels' products (Cortes, Mohri &
Rostamizadeh, JMLR 2012, Section 2; :func:`mkl.banks.algebra.centred_products`)

    F_kl = <K_k^c, K_l^c>_F,        a_k = <K_k^c, yy'>_F = (Hy)'K_k(Hy),

and the centred alignment of a kernel with the labels

    rho(K, yy') = <K^c, yy'>_F / (||K^c||_F ||(yy')^c||_F),  ||(yy')^c||_F = ||Hy||^2:

* ``align`` (:class:`AlignMKL`): Cortes et al.'s independent alignment-based
  weights, theta_k proportional to rho(K_k, yy') = a_k / (sqrt(F_kk) ||Hy||^2),
  on the simplex;
* ``alignf`` (:class:`AlignFMKL`): Cortes et al.'s alignment maximisation,
  max over theta >= 0 of rho(sum_k theta_k K_k, yy'), which is the QP

      v* = argmin_{v >= 0}  v'F v - 2 v'a,      theta = v* / 1'v*

  (rho is invariant to the scale of theta, so the paper's ||theta||_2 = 1
  and the simplex give the same kernel up to scale; the simplex is the
  library's convention, that of ``uniform``);
* ``cka`` (:class:`CKA`): MKLpy's ``CKA``, the same maximisation without
  theta >= 0, in closed form theta = F^+ a / ||F^+ a||_2 (MKLpy cites Cortes,
  Mohri & Rostamizadeh, "Two-stage learning kernel algorithms", ICML 2010).
  Its weights may be negative and its combination indefinite, as MKLpy's: the
  SVM is solved on it as it is (``alignf`` is the version with PSD kernels);
* ``fheuristic`` (:class:`FHeuristic`): MKLpy's ``FHeuristic`` (Qiu & Lane,
  IEEE/ACM TCBB 2009), theta_k proportional to the uncentred alignment
  A(K_k, yy') = y'K_k y / (||K_k||_F n), on the simplex;
* ``pwmk`` (:class:`PWMK`): MKLpy's ``PWMK`` (Tanabe, Ho, Nguyen & Kawasaki,
  IEEE RIVF 2008), theta_k proportional to acc_k - delta min_l acc_l, acc_k
  the ``cv``-fold cross-validated accuracy of the SVM on K_k alone
  (:func:`mkl.algorithms.baselines.cross_validated_losses`, shared with
  ``single_best``), on the simplex.

Each fit's history holds the weights' inputs: ``alignment`` (the centred
alignment of the combination with yy', align / alignf / cka), the kernels'
``kernel_alignment`` (fheuristic) or ``cv_accuracy`` (pwmk).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from ..banks.algebra import centred_products
from ..exceptions import (
    InputError,
    NegativeWeightsWarning,
    SmallCombinationWarning,
    warn_at_caller,
)
from ..solvers.box_qp import box_qp
from .base import WEIGHT_THRESHOLD, BaseMKL
from .baselines import CombinationSVM, cross_validated_losses

# alignf's QP: the projected gradient of the scaled problem (F / max F_kk) at
# which the box QP stops, and its iterations
ALIGNF_TOL = 1e-10
ALIGNF_MAX_ITER = 500
# a combination whose centred part is below this fraction of the uniform
# combination's makes the SVM's C act that much weaker: warned about
SMALL_CENTRED_SCALE = 1e-2


def _on_simplex(scores: np.ndarray, method: str, what: str) -> np.ndarray:
    """Nonnegative scores divided by their sum; all zero refused by name."""
    total = float(scores.sum())
    if not total > 0:
        raise InputError(
            f"{method}: every kernel's {what} is 0 on these labels, so no weights can "
            "be set (constant kernels, or kernels blind to the labels)"
        )
    return scores / total


class _CentredAlignmentMKL(CombinationSVM):
    """align, alignf and cka: the weights from the centred products F (of the
    bank, computed once per fit and shared by the one-vs-rest tasks) and a
    (of each task's labels)."""

    tasks = ("classification",)

    _parameter_constraints: dict = {
        "C": BaseMKL._parameter_constraints["C"],
        "tol": BaseMKL._parameter_constraints["tol"],
    }

    def __init__(self, C=1.0, tol=1e-3):
        self.C = C
        self.tol = tol

    def _prepare(self, K, K_mean):
        F, _ = centred_products(K)
        return F

    def _alignment_weights(self, F, a) -> tuple[np.ndarray, dict, bool]:
        raise NotImplementedError

    def _combination_weights(self, problem, y):
        F = self._shared
        yc = y - y.mean()
        a = problem.raw_forms(yc)  # (Hy)'K_k(Hy) = <K_k^c, yy'>_F
        theta, columns, converged = self._alignment_weights(F, a)
        combined = float(theta @ F @ theta)
        label_norm = float(yc @ yc)
        alignment = float(theta @ a) / np.sqrt(combined) / label_norm if combined > 0 else 0.0
        scale = _centred_scale(F, theta, combined)
        return theta, {"alignment": alignment, "centred_scale": scale, **columns}, converged


def _centred_scale(F: np.ndarray, theta: np.ndarray, combined: float) -> float:
    """||K_theta^c||_F / ||K_uniform^c||_F, from the centred products. The
    alignment is blind to each kernel's scale, so its weights may sit on
    kernels nearly constant on these rows (a wide Gaussian, whose centred part
    is tiny): the SVM, to which a constant adds nothing (its bias absorbs it),
    then sees a kernel 1 / scale times smaller than the uniform combination,
    and C acts that much weaker. Below :data:`SMALL_CENTRED_SCALE` a
    :class:`~mkl.exceptions.SmallCombinationWarning` says so."""
    M = F.shape[0]
    uniform = float(F.sum()) / (M * M)
    scale = float(np.sqrt(max(combined, 0.0) / uniform)) if uniform > 0 else 1.0
    if scale < SMALL_CENTRED_SCALE:
        warn_at_caller(
            f"the learned combination's centred part is {scale:.1e} of the uniform "
            f"combination's (its weight sits on kernels nearly constant on these rows): "
            f"the SVM sees a kernel about {1 / scale:.0f} times smaller, so C acts that much "
            f"weaker; cross-validate C over a grid reaching about {1 / scale:.0f} times higher",
            SmallCombinationWarning,
        )
    return scale


class AlignMKL(_CentredAlignmentMKL):
    """Each kernel weighted by its centred alignment with the labels,
    theta_k proportional to rho(K_k, yy') (Cortes, Mohri & Rostamizadeh, JMLR
    2012, the independent alignment-based algorithm; module docstring), then
    the SVM on the combination.

    Parameters
    ----------
    C : float or None, the SVM's soft-margin parameter (None: hard margin).
    tol : float, libsvm's stopping tolerance.
    """

    def _alignment_weights(self, F, a):
        norms = np.sqrt(np.maximum(np.diag(F), 0.0))
        scores = np.divide(a, norms, out=np.zeros_like(a), where=norms > 0)
        return _on_simplex(np.maximum(scores, 0.0), "align", "centred alignment"), {}, True


class AlignFMKL(_CentredAlignmentMKL):
    """The nonnegative weights of maximal centred alignment of the combination
    with the labels (Cortes, Mohri & Rostamizadeh, JMLR 2012, the alignment
    maximisation algorithm): v* = argmin_{v >= 0} v'F v - 2 v'a, theta =
    v* / 1'v* (module docstring), then the SVM on the combination.

    The QP (M variables) is solved on F and a divided by max_k F_kk by
    gradient projection with Newton steps on the face
    (:func:`mkl.solvers.box_qp.box_qp`) until the projected gradient is at
    most :data:`ALIGNF_TOL` of the largest |a_k| / max F_kk; the fit is not
    converged where it is not. ``history_`` adds ``qp_iterations``.

    Parameters
    ----------
    C : float or None, the SVM's soft-margin parameter (None: hard margin).
    tol : float, libsvm's stopping tolerance.
    """

    def _alignment_weights(self, F, a):
        scale = float(np.max(np.diag(F)))
        if not scale > 0:  # every kernel constant once centred
            return _on_simplex(np.zeros_like(a), "alignf", "centred alignment"), {}, True
        H, p = 2.0 * F / scale, -2.0 * a / scale
        start = np.maximum(a, 0.0) / scale
        tol = ALIGNF_TOL * max(float(np.abs(p).max()), np.finfo(np.float64).tiny)
        v, iterations, converged = box_qp(H, p, 0.0, np.inf, start, tol, ALIGNF_MAX_ITER)
        theta = _on_simplex(np.maximum(v, 0.0), "alignf", "centred alignment")
        return theta, {"qp_iterations": int(iterations)}, bool(converged)


class CKA(_CentredAlignmentMKL):
    """MKLpy's CKA: the weights of maximal centred alignment of the
    combination with the labels over all weight vectors (no theta >= 0),
    theta = F^+ a / ||F^+ a||_2 (F^+ a the least-squares solution of
    F v = a of least norm: a lies in F's range), then the SVM on the
    combination. Weights may be negative and the combination indefinite (as
    MKLpy's); ``alignf`` is the nonnegative version.

    Parameters
    ----------
    C : float or None, the SVM's soft-margin parameter (None: hard margin).
    tol : float, libsvm's stopping tolerance.
    """

    signed_weights = True

    def _alignment_weights(self, F, a):
        v = np.linalg.lstsq(F, a, rcond=None)[0]
        norm = float(np.linalg.norm(v))
        if not norm > 0:
            raise InputError(
                "cka: every kernel's centred alignment is 0 on these labels, so no "
                "weights can be set (constant kernels, or kernels blind to the labels)"
            )
        theta = v / norm
        negative = np.flatnonzero(theta < -WEIGHT_THRESHOLD * np.abs(theta).max())  # as reported
        if negative.size:
            warn_at_caller(
                f"cka weights kernels {negative.tolist()} negatively (nearly collinear "
                "kernels): the combination may be indefinite, where the SVM stops at a "
                "stationary point rather than an optimum (as MKLpy's CKA); alignf gives "
                "the best nonnegative combination",
                NegativeWeightsWarning,
            )
        return theta, {}, True


class FHeuristic(CombinationSVM):
    """MKLpy's FHeuristic (Qiu & Lane, IEEE/ACM TCBB 2009): theta_k
    proportional to K_k's (uncentred) alignment with the labels,
    A(K_k, yy') = y'K_k y / (||K_k||_F n), on the simplex, then the SVM on
    the combination.

    Parameters
    ----------
    C : float or None, the SVM's soft-margin parameter (None: hard margin).
    tol : float, libsvm's stopping tolerance.
    """

    tasks = ("classification",)

    _parameter_constraints: dict = _CentredAlignmentMKL._parameter_constraints

    def __init__(self, C=1.0, tol=1e-3):
        self.C = C
        self.tol = tol

    def _prepare(self, K, K_mean):
        # ||K_k||_F of every kernel: one pass, shared by the one-vs-rest tasks
        flat = K.reshape(K.shape[0], -1)
        return np.sqrt(np.einsum("mi,mi->m", flat, flat, dtype=np.float64))

    def _combination_weights(self, problem, y):
        norms = self._shared
        forms = problem.raw_forms(y.astype(np.float64))  # y'K_k y = <K_k, yy'>_F
        alignment = np.divide(forms, norms * len(y), out=np.zeros_like(forms), where=norms > 0)
        theta = _on_simplex(np.maximum(alignment, 0.0), "fheuristic", "alignment")
        return theta, {"kernel_alignment": [float(v) for v in alignment]}, True


class PWMK(CombinationSVM):
    """MKLpy's PWMK (Tanabe, Ho, Nguyen & Kawasaki, IEEE RIVF 2008): theta_k
    proportional to acc_k - delta min_l acc_l, acc_k the ``cv``-fold
    cross-validated accuracy of the SVM at ``C`` on K_k alone (stratified
    folds shuffled by ``random_state``, as ``single_best``'s), on the
    simplex, then the SVM on the combination.

    Parameters
    ----------
    C : float or None, the SVM's soft-margin parameter (None: hard margin),
        in the cross-validation and the final SVM.
    delta : float in [0, 1], the share of the worst accuracy taken off every
        kernel's (0: weights proportional to the accuracies; MKLpy's default).
    cv : int, the folds.
    random_state : int, the folds' shuffle.
    tol : float, libsvm's stopping tolerance.
    """

    tasks = ("classification",)
    accepts_factors = True

    _parameter_constraints: dict = {
        **_CentredAlignmentMKL._parameter_constraints,
        "delta": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(self, C=1.0, delta=0.0, cv=3, random_state=0, tol=1e-3):
        self.C = C
        self.delta = delta
        self.cv = cv
        self.random_state = random_state
        self.tol = tol

    def _combination_weights(self, problem, y):
        loss, total, converged = cross_validated_losses(self, problem, y, [self.C])
        accuracy = (total - loss[0]) / total
        scores = accuracy - self.delta * float(accuracy.min())
        theta = _on_simplex(np.maximum(scores, 0.0), "pwmk", "accuracy less delta x the worst")
        return theta, {"cv_accuracy": [float(v) for v in accuracy]}, converged

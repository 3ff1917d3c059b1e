"""One iteration record for every solver loop.

Each iterative method (the wrapper methods, SMKL, MEMO, IndSVM, the entropic
mirror descent of ESKL/EMKL/REKL) keeps only its own step; the bookkeeping
around it is this class: the history rows with a common schema, the best
iterate, the stopping status, the inner solves that did not converge, the
non-convergence warning and the progress lines of ``verbose``. Methods that
solve one problem once (the baselines, EasyMKL) use it too, so that
``history_`` has the same columns everywhere.

A history row holds, always:

    iteration       1, 2, ...
    objective       the method's objective at this iterate (its objective_)
    best_objective  the best objective so far (min, or max for MEMO)
    gap             relative duality or bound gap; NaN where the method has none
    weights_change  max |theta_k - theta_{k-1}|; NaN at the first iterate or
                    where the method has no weights per iterate
    relative_weights_change
                    weights_change / max |theta_{k-1}|: the move relative to
                    the largest weight the step started from (NaN likewise)
    svm_solves      inner SVM / margin / MKL solves so far
    passes          passes over the kernel bank so far (rows read by an
                    interleaved engine count as fractions of a pass)
    seconds         since the fit started

and whatever the method adds (MEMO's margin and step, IndSVM's lower bound, ...).

``converged`` is True only when the loop met its stopping rule *and* every
inner solve it relied on converged (``inner``).
"""

from __future__ import annotations

import logging
import time
from collections import Counter

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..exceptions import warn_at_caller

COLUMNS = (
    "iteration",
    "objective",
    "best_objective",
    "gap",
    "weights_change",
    "relative_weights_change",
    "svm_solves",
    "passes",
    "seconds",
)

logger = logging.getLogger("mkl")


class _FallbackHandler(logging.StreamHandler):
    """Prints the ``mkl`` logger's lines while the root logger has no handler;
    once the application configures logging (``logging.basicConfig`` after a
    verbose fit), the lines reach it by propagation only, not twice."""

    def emit(self, record):
        if not logging.getLogger().handlers:
            super().emit(record)


def _verbose_logger() -> logging.Logger:
    """The ``mkl`` logger, made to show INFO lines when nothing else would:
    a user who asks for ``verbose=1`` sees progress without configuring logging."""
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    if not any(isinstance(h, _FallbackHandler) for h in logger.handlers):
        handler = _FallbackHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
    return logger


class IterationLog:
    """Bookkeeping of one solver loop (module docstring).

    Usage, in a method's loop::

        log = IterationLog("SimpleMKL", tol, max_iter, verbose=verbose)
        for it in range(1, max_iter + 1):
            best = log.consider(J, point)              # best tracking
            gap = ...                                  # may use the best
            log.record(J, gap=gap, weights=theta, svm_solves=s, passes=p)
            if gap <= tol:
                log.stop("gap", converged=True); break
            ...
        log.finish()                                   # warns if not converged
        BinaryFit(..., **log.fit_fields())
    """

    def __init__(
        self, method: str, tol: float, max_iter: int, *, maximise: bool = False, verbose: int = 0
    ):
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.maximise = maximise
        self.verbose = int(verbose or 0)
        self.rows: list[dict] = []
        self.best = None  # the best iterate's payload (whatever the method keeps)
        self.best_objective = np.nan
        self.stop_reason: str | None = None
        self.stopped_converged = False
        self.inner_failures: Counter[str] = Counter()
        self._weights = None
        self._t0 = time.perf_counter()
        self._log = _verbose_logger() if self.verbose else None

    # ------------------------------------------------------------ per iterate
    def _better(self, objective: float) -> bool:
        if self.best is None or np.isnan(self.best_objective):
            return True
        return objective > self.best_objective if self.maximise else objective < self.best_objective

    def consider(self, objective: float, payload):
        """Offer an iterate; keep it if it is the best so far. Returns the best payload."""
        if self._better(objective):
            self.best, self.best_objective = payload, float(objective)
        return self.best

    def record(
        self,
        objective: float,
        *,
        gap: float = np.nan,
        weights=None,
        svm_solves: int = 0,
        passes: int = 0,
        **extra,
    ) -> dict:
        """Append the history row of the current iterate (after ``consider``)."""
        change = relative = np.nan
        if weights is not None:
            weights = np.array(weights, dtype=np.float64)
            if self._weights is not None and self._weights.shape == weights.shape:
                change = float(np.max(np.abs(weights - self._weights)))
                relative = relative_change(change, self._weights)
            self._weights = weights
        row = {
            "iteration": len(self.rows) + 1,
            "objective": float(objective),
            "best_objective": self.best_objective,
            "gap": float(gap),
            "weights_change": change,
            "relative_weights_change": relative,
            "svm_solves": int(svm_solves),
            "passes": float(passes),
            "seconds": time.perf_counter() - self._t0,
            **extra,
        }
        self.rows.append(row)
        if self._log is not None:
            self._log.info(
                "%s iter %4d  objective %.8g  gap %.3g  weights change %.3g  %.2fs",
                self.method,
                row["iteration"],
                row["objective"],
                row["gap"],
                row["weights_change"],
                row["seconds"],
            )
        return row

    def inner(self, converged: bool, what: str) -> None:
        """Note an inner solve (an SVM, a margin problem, an inner MKL) and
        whether it converged; one that did not makes the fit not converged."""
        if not converged:
            self.inner_failures[what] += 1

    def stop(self, reason: str, converged: bool) -> None:
        """The loop ends: ``reason`` says why (e.g. "gap", "improvement",
        "line search found no ascent step", "max_iter")."""
        self.stop_reason = reason
        self.stopped_converged = bool(converged)

    # ------------------------------------------------------------ at the end
    @property
    def converged(self) -> bool:
        return self.stopped_converged and not self.inner_failures

    @property
    def gap(self) -> float:
        return self.rows[-1]["gap"] if self.rows else np.nan

    def finish(self) -> None:
        """Warn (``ConvergenceWarning``) when the fit did not converge, saying
        why, at the user's line (:func:`mkl.exceptions.warn_at_caller`)."""
        if self.stop_reason is None:
            self.stop("max_iter", converged=False)
        if self.converged:
            return
        reasons = []
        if not self.stopped_converged:
            if self.stop_reason == "max_iter":
                reasons.append(f"stopped at max_iter={self.max_iter}")
            else:
                reasons.append(f"stopped: {self.stop_reason}")
            if not np.isnan(self.gap):
                reasons.append(f"relative gap {self.gap:.3g} > tol={self.tol}")
        for what, count in self.inner_failures.items():
            reasons.append(f"{count} {what} solve(s) did not converge")
        warn_at_caller(f"{self.method}: " + "; ".join(reasons), ConvergenceWarning)

    def fit_fields(self) -> dict:
        """``n_iter``, ``converged``, ``gap`` and ``history`` for a ``BinaryFit``."""
        return {
            "n_iter": len(self.rows),
            "converged": self.converged,
            "gap": self.gap,
            "history": self.rows,
        }


def relative_change(change: float, previous: np.ndarray) -> float:
    """``change`` (a max |theta_k - theta_{k-1}|) over max |theta_{k-1}|: 0 when
    nothing moved, inf when weights all zero moved."""
    top = float(np.max(np.abs(previous))) if previous.size else 0.0
    if top > 0:
        return change / top
    return 0.0 if change == 0 else np.inf


def single_solve(
    method: str,
    objective: float,
    converged: bool,
    *,
    gap: float = np.nan,
    what: str = "SVM",
    svm_solves: int = 1,
    passes: int = 1,
    **extra,
) -> IterationLog:
    """The record of a method that solves one problem once (a baseline, EasyMKL):
    one history row, converged when its solve did."""
    log = IterationLog(method, tol=np.nan, max_iter=1)
    log.consider(objective, None)
    log.record(objective, gap=gap, svm_solves=svm_solves, passes=passes, **extra)
    log.inner(converged, what)
    log.stop("solved", converged=True)
    return log

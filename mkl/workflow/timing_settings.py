"""The settings of a timing figure's points (:mod:`mkl.workflow.timing`): the
training size n, the number of kernels and the representation, dense or
factors of a rank (a bank spec's own ``representation`` is read by
:func:`mkl.kernels.representation.bank_representation`). Apart from
:mod:`mkl.workflow.timing`, which imports scikit-learn and the solvers: every
start of Snakemake reads these settings (the experiment checks, the timing
jobs' memory estimates) and imports neither.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..exceptions import InputError
from ..kernels.representation import bank_representation


def timing_point_settings(figure: Mapping, value) -> tuple[int, int, dict]:
    """(n, number of kernels, representation) of one point of a timing figure:
    ``vary`` n or kernels sets that number to ``value`` in the figure's
    ``representation`` (dense, or factors with their rank / dimension);
    ``vary: rank`` sets the factors' rank (Nystroem) or dimension (random
    Fourier features) to ``value``, or takes the dense bank for ``value``
    "dense" (the reference the approximations are read against)."""
    vary = figure["vary"]
    rep = figure.get("representation", "dense")
    rep = {"kind": rep} if isinstance(rep, str) else dict(rep)
    n, kernels = int(figure["n"]), int(figure["kernels"])
    if value == "dense":
        if vary != "rank":
            raise InputError("a timing point 'dense' exists only in a figure with vary: rank")
        return n, kernels, {"kind": "dense"}
    value = int(value)
    if vary == "n":
        n = value
    elif vary == "kernels":
        kernels = value
    elif vary == "rank":
        size = {"nystroem": "rank", "rff": "dimension"}.get(rep["kind"])
        if size is None:
            raise InputError(
                f"vary: rank needs a nystroem or rff representation, not {rep['kind']!r}"
            )
        rep[size] = value
    else:
        raise InputError(f"unknown timing axis {vary!r}; known: n, kernels, rank")
    rep = bank_representation({"representation": rep})
    if rep["kind"] == "exact":
        raise InputError("a timing figure's Gaussian kernels have no exact factors")
    return n, kernels, rep

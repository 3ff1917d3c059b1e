"""How an experiment's kernel bank is stored: its spec's ``representation``
(dense blocks, or factors K_m = Z_m Z_m' built by ``mkl.kernel_factors``).

Its own module so that the stages reading it (kernels, resources, the
experiment check) do not make the table stage depend on ``mkl.kernels``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..exceptions import InputError

REPRESENTATIONS = ("dense", "nystroem", "rff", "exact")


def bank_representation(spec: Mapping) -> dict:
    """How a bank spec's kernels are stored: ``{"kind": "dense"}`` (the (M, n, n)
    blocks, the default) or factors K_m = Z_m Z_m' (``mkl.kernel_factors``):
    ``{"kind": "nystroem", "rank": r, "seed": s}``,
    ``{"kind": "rff", "dimension": D, "seed": s}`` or ``{"kind": "exact"}``
    (linear kernels). A bare string names a kind without parameters."""
    rep = spec.get("representation", "dense")
    rep = {"kind": rep} if isinstance(rep, str) else dict(rep)
    kind = rep.get("kind")
    if kind not in REPRESENTATIONS:
        raise InputError(f"unknown kernel representation {kind!r}; known: {REPRESENTATIONS}")
    need = {"nystroem": "rank", "rff": "dimension"}.get(kind)
    if need is not None:
        value = rep.get(need)
        if not (isinstance(value, int) and value >= 1):
            raise InputError(
                f"representation {kind} needs a positive integer {need}, got {value!r}"
            )
        rep.setdefault("seed", 0)
    if "similarity" in spec and kind != "dense":
        raise InputError("a similarity bank is stored dense (its matrices are given, not features)")
    return rep


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

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

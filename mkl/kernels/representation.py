"""How a bank spec's kernels are stored: its ``representation`` (dense blocks,
or factors K_m = Z_m Z_m' built by :mod:`mkl.banks.factor_builders`).

Shared by the workflow's kernel stage and :class:`mkl.MultipleKernelClassifier`
(which reads the same spec language); it imports nothing beyond the
exceptions, so that the workflow stages reading it do not depend on
:mod:`mkl.kernels`.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..exceptions import InputError

REPRESENTATIONS = ("dense", "nystroem", "rff", "exact")


def bank_representation(spec: Mapping) -> dict:
    """How a bank spec's kernels are stored: ``{"kind": "dense"}`` (the (M, n, n)
    blocks, the default) or factors K_m = Z_m Z_m' (``mkl.banks.factor_builders``):
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
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            raise InputError(
                f"representation {kind} needs a positive integer {need}, got {value!r}"
            )
        rep.setdefault("seed", 0)
    if "similarity" in spec and kind != "dense":
        raise InputError("a similarity bank is stored dense (its matrices are given, not features)")
    return rep

"""The options of ``gthinker count`` and :func:`gthinker.apps.count.count`, each declared
once."""

from __future__ import annotations

from dataclasses import dataclass

from gthinker.extending import AppOptions, boolean, mode_field, option_field, positive_int

from ..matching.gpu_modes import gpu_memory_field
from ..matching.labeled import semantics_field
from .motifs import SIZES

__all__ = ["CountOptions"]


def _size(name, value) -> int:
    """A motif size: one of :data:`gthinker.apps.count.motifs.SIZES`."""
    value = positive_int(name, value)
    if value not in SIZES:
        raise ValueError(f"{name} must be one of {', '.join(map(str, SIZES))}; got {value}")
    return value


_size.choices = SIZES


@dataclass(frozen=True)
class CountOptions(AppOptions):
    """Every option of pattern counting (besides the shared ones)."""

    mode: str = mode_field(("cpu", "gpu", "hybrid"), "gpu if a CUDA GPU is usable and the "
                                                     "graph is not small, else cpu")
    size: int | None = option_field(
        None, "with PATTERN motifs: the motif size", _size)
    semantics: str = semantics_field()
    induced: bool = option_field(
        True, "with PATTERN motifs: count distinct subgraphs, not induced ones", boolean,
        flag="--non-induced")
    gpu_memory: int | None = gpu_memory_field()

    scheduler = ("threads", "time_budget", "gpus")

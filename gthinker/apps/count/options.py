"""The options of ``gthinker count`` and :func:`gthinker.apps.count.count`, each declared
once."""

from __future__ import annotations

from dataclasses import dataclass

from gthinker.extending import (
    AppOptions,
    boolean,
    mode_field,
    option_field,
    positive_int,
)

from ..matching.gpu_modes import gpu_memory_field
from ..matching.shared_options import ignore_labels_field, semantics_field
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
    induced: bool | None = option_field(
        None, "--induced: count induced subgraphs (the pattern's non-edges are non-edges "
        "in the graph too); --non-induced: distinct subgraphs, not necessarily induced",
        boolean, flag=("--induced", "--non-induced"),
        default_text="induced for motifs, non-induced for one pattern")
    per_vertex: bool = option_field(
        False, "with PATTERN triangle: also count the triangles at every vertex, printed one "
        "line a vertex (its id or name, its count) after the total (CPU, one process)",
        boolean)
    ignore_labels: bool = ignore_labels_field()
    gpu_memory: int | None = gpu_memory_field()

    scheduler = ("threads", "time_budget", "gpus")


"""The options of ``gthinker count`` and :func:`gthinker.apps.count.count`, each declared
once."""

from __future__ import annotations

from dataclasses import dataclass

from gthinker.options import AppOptions, boolean, mode_field, option_field, positive_int

__all__ = ["CountOptions"]


@dataclass(frozen=True)
class CountOptions(AppOptions):
    """Every option of pattern counting (besides the shared ones)."""

    mode: str = mode_field(("cpu", "gpu", "hybrid"), "gpu if a CUDA GPU is usable and the "
                                                     "graph is not small, else cpu")
    size: int | None = option_field(
        None, "with PATTERN motifs: the motif size, 3, 4 or 5", positive_int, metavar="K")
    induced: bool = option_field(
        True, "with PATTERN motifs: count distinct subgraphs, not induced ones", boolean,
        flag="--non-induced")

    scheduler = ("threads", "time_budget", "gpus")

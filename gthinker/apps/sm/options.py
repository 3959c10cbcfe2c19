"""The options of ``gthinker sm`` and :func:`gthinker.apps.sm.count`, each declared once."""

from __future__ import annotations

from dataclasses import dataclass

from gthinker.extending import (
    AppOptions,
    boolean,
    choice,
    mode_field,
    option_field,
    output_path,
    positive_int,
)

from ..matching.gpu_modes import DFS_MAX_QUERY, GPU_MODES, gpu_memory_field
from ..matching.shared_options import ISOMORPHISM, ignore_labels_field, semantics_field

__all__ = ["SMOptions"]


@dataclass(frozen=True)
class SMOptions(AppOptions):
    """Every option of subgraph matching (besides the shared ones)."""

    mode: str = mode_field(("cpu", "gpu", "hybrid"), "gpu if a CUDA GPU is usable, else cpu, "
                                                     "and cpu with --limit or --output")
    unique: bool = option_field(
        False, "count distinct subgraphs (symmetry breaking) instead of embeddings", boolean)
    gpu_mode: str = option_field(
        "auto", "GPU engine: dfs (T-DFS's depth-first search, a warp per task, queries of up "
        f"to {DFS_MAX_QUERY} vertices), or the level-by-level engine in one of its record "
        "layouts, prefix (a warp extends a partial match with all its candidates) or expand "
        "(one record per candidate), which alone takes the GPU worker options; auto: dfs "
        "where it takes the query, else prefix or expand by the first level's fanouts",
        choice(*GPU_MODES))
    gpu_memory: int | None = gpu_memory_field()
    limit: int | None = option_field(
        None, "stop after N matches (CPU)", positive_int, metavar="N")
    semantics: str = semantics_field()
    induced: bool = option_field(
        False, "induced matching: the query's non-edges must be non-edges in the data graph "
        "too (counted from the non-induced counts of the query's supergraphs)", boolean)
    ignore_labels: bool = ignore_labels_field()
    output: str | None = option_field(
        None, "write every match to FILE, one per line: the data vertices (original ids) "
        "matched to query vertices 0, 1, ... ('-': standard output; CPU)", output_path,
        flag=("--output", "-o"), metavar="FILE")

    gpu = True

    def check(self) -> None:
        if self.semantics != ISOMORPHISM and self.unique:
            raise ValueError("unique (--unique) counts distinct subgraphs under isomorphism "
                             f"only, not {self.semantics}")
        if self.mode in ("gpu", "hybrid") and (self.limit is not None
                                               or self.output is not None):
            raise ValueError("limit and output (--limit, --output) run on the CPU only; use "
                             "mode='cpu' (--mode cpu)")
        if self.induced and self.semantics != ISOMORPHISM:
            raise ValueError("induced (--induced) matching is under isomorphism only, not "
                             f"{self.semantics}")
        if self.induced and (self.limit is not None or self.output is not None):
            raise ValueError("induced (--induced) counts; it does not list matches (limit, "
                             "output)")

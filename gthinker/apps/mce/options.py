"""The options of ``gthinker mce`` and :func:`gthinker.apps.mce.run`, each declared once."""

from __future__ import annotations

from dataclasses import dataclass

from gthinker.extending import (
    AppOptions,
    choice,
    mode_field,
    option_field,
    output_path,
    path,
    positive_int,
)

__all__ = ["BITSET_MAX_DEGREE", "GPU_ENGINES", "HYBRID_CPU_CHUNK", "HYBRID_GPU_CHUNK",
           "MCEOptions"]

#: Auto mode's GPU engine is "bitsets" up to this degree. Measured (docs/benchmarks.md):
#: bitsets 3.7x faster than levels on facebook_combined (max degree 1,045) and on par on
#: email-Enron (1,383); on a skewed R-MAT graph (max degree 15,768) the bitsets engine
#: did not finish in 150 s where levels takes 7 s. The cause is fixed (wide subtrees
#: hand out their first level); measured since (H100, 2026-11-24): bitsets 0.91-1.04 s vs
#: levels 1.39 s on R-MAT 20, 0.61-0.64 s vs 0.45 s on R-MAT 22 (skew a=0.5): no clear winner.
BITSET_MAX_DEGREE = 1536
#: The GPU searches: a warp per subtree over a bitset graph, or level by level.
GPU_ENGINES = ("auto", "bitsets", "levels")
#: In hybrid mode the CPU workers take this many vertices at a time, the hardest ones,
#: from the back of the degeneracy order, so that none holds a batch of hubs at the end
#: while the GPU waits (measured in docs/benchmarks.md).
HYBRID_CPU_CHUNK = 1
#: In hybrid mode with the bitsets engine the GPU takes chunks of ``(share, least)``: the
#: vertices over ``share``, at least ``least`` (its warps fill with a chunk's subtrees).
HYBRID_GPU_CHUNK = (16, 1024)


def _share(name, value) -> float:
    """A share from 0 to 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a share from 0 to 1, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class MCEOptions(AppOptions):
    """Every option of maximal clique enumeration (besides the shared ones)."""

    mode: str = mode_field(("cpu", "gpu", "hybrid"), "hybrid if a CUDA GPU is usable, else "
                                                     "cpu (and cpu with --output)")
    gpu_engine: str = option_field(
        "auto", "GPU search: bitsets (a warp per subtree over a bitset graph) or levels (level "
        "by level on the GPU worker, with host buffer H; the GPU worker options are its); "
        f"auto: bitsets unless a vertex has more than {BITSET_MAX_DEGREE:,} neighbours",
        choice(*GPU_ENGINES))
    min_size: int = option_field(
        1, "count (and list) only the maximal cliques of at least K vertices", positive_int,
        metavar="K")
    output: str | None = option_field(
        None, "write every maximal clique to FILE, one per line, original vertex ids ('-': "
        "standard output; CPU)", output_path, flag=("--output", "-o"), metavar="FILE")
    trace: str | None = option_field(
        None, "write a timeline of CPU and GPU busy time, S, H and steals (needs matplotlib)",
        path, metavar="FILE.png")
    gpu_node_budget: int | None = option_field(
        None, "bitsets engine: nodes a warp searches in one subtree before it hands the rest "
        "out as records", positive_int, flag=False, default_text="the engine's")
    gpu_cpu_share: float | None = option_field(
        None, "bitsets engine, hybrid mode: the share of the handed-out records offered to "
        "idle CPU workers", _share, flag=False,
        default_text="the engine's")

    scheduler = ("threads", "time_budget", "early_split", "cpu_chunk", "cpu_task_batch",
                 "spill_limit", "progress_interval")
    gpu = True
    notes = {"cpu_chunk": f"{HYBRID_CPU_CHUNK} in hybrid mode, where CPU workers take the "
                          "hardest vertices from the back",
             "gpu_chunk": f"with --gpu-engine bitsets in hybrid mode, a {HYBRID_GPU_CHUNK[0]}th "
                          f"of the vertices, at least {HYBRID_GPU_CHUNK[1]}"}
    renamed = {"chunk": "cpu_chunk (initial vertices per CPU assignment)"}

    def check(self) -> None:
        if self.output is not None and self.mode in ("gpu", "hybrid"):
            raise ValueError("listing cliques (output=, --output) runs on the CPU only; use "
                             "mode='cpu' (--mode cpu)")
        if self.trace is not None:
            from gthinker.runtime.trace import require_matplotlib

            require_matplotlib()

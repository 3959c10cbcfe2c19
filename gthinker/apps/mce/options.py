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

__all__ = ["GPU_ENGINES", "HYBRID_CPU_CHUNK", "HYBRID_GPU_CHUNK", "MCEOptions", "SCRATCH_BYTES",
           "SCRATCH_FREE_SHARE"]

#: Bytes of device memory for the bitsets engine's warp scratch (bitset rows, stacks, id
#: lists), at most :data:`SCRATCH_FREE_SHARE` of what the device has free once the graph is
#: there; subtrees too big for it are made smaller on the host, never refused.
SCRATCH_BYTES = 3 << 30
SCRATCH_FREE_SHARE = 1 / 2
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
        "auto: bitsets, whatever the degrees",
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
    gpu_scratch_bytes: int | None = option_field(
        None, "bitsets engine: bytes of GPU memory for the warps' scratch (bitset rows, "
        f"stacks, id lists), at most {SCRATCH_FREE_SHARE:.0%} of the device's free memory; "
        "subtrees too big for it are made smaller on the host, never refused", positive_int,
        metavar="BYTES", default_text=f"{SCRATCH_BYTES:,}")

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

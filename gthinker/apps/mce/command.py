"""``gthinker mce``: maximal cliques as the command line and the cluster see them."""

from __future__ import annotations

import gthinker
from gthinker.extending import App, Request, max_compile, squared

from .options import GPU_ENGINES, MCEOptions

EPILOG = """\
examples:
  gthinker generate rmat --scale 16 -o g.txt && gthinker mce g.txt
  gthinker mce email-Enron.txt.gz --threads 8 --json
  gthinker mce g.txt --output cliques.txt   # one clique per line, original ids
  gthinker mce g.txt --mode gpu             # on the GPU

Runs Bron-Kerbosch with Tomita pivoting on every core; tasks that run longer than
--time-budget are decomposed into subtasks that idle workers pick up. On a GPU
each subtree is searched by one warp over its induced graph as bitsets (or level
by level, --gpu-engine levels); hybrid mode runs both, with stealing each way.
A CUDA GPU and numba-cuda are needed for gpu and hybrid (without them the
command stops at once and says why; auto then runs on the CPU).
"""


def later_degrees(graph):
    """Neighbours of each vertex that come later in degeneracy order (the out-degree of
    the oriented graph), in the graph's own vertex order."""
    import numpy as np

    order, _ = graph.degeneracy_order()
    n = graph.num_vertices
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    src = np.repeat(np.arange(n, dtype=np.int32), np.diff(graph.indptr))
    later = rank[graph.indices] > rank[src]
    return np.bincount(src[later], minlength=n)


class MCERequest(Request):
    """Maximal cliques: roots are the degeneracy-ordered graph's vertices (the app
    renumbers the graph the same way on every node, so records move as they are)."""

    movable = True

    def call(self, graph, **keywords):
        from . import app

        return app.run(graph, **keywords)

    def local(self, graph):
        if graph.num_vertices == 0:
            return self.run(graph, threads=1)
        return None

    def weights(self, graph):
        order, _ = graph.degeneracy_order()
        return squared(later_degrees(graph)[order])

    def part(self, res):
        return {"histogram": res.histogram, "mode_reason": res.mode_reason,
                **self.common(res, res.threads)}

    def merge(self, parts, seconds, threads, stats):
        from .app import MCEResult

        hist: dict[int, int] = {}
        for p in parts:
            for size, n in p["histogram"].items():
                hist[size] = hist.get(size, 0) + n
        hist = dict(sorted(hist.items()))
        first = parts[0]
        return MCEResult(count=sum(hist.values()), max_size=max(hist, default=0),
                         histogram=hist, seconds=seconds, mode=first["mode"], threads=threads,
                         stats=stats, compile_seconds=max_compile(parts),
                         mode_reason=first["mode_reason"])


def describe(result, label=None) -> list[str]:
    lines = [f"maximal cliques: {result.count:,}", f"largest clique:  {result.max_size}",
             "size histogram:  " + ", ".join(f"{k}:{v}" for k, v in result.histogram.items())]
    return lines + [_time_line(result), *_big_line(result.stats), *_memory_line(result.stats)]


def _memory_line(stats) -> list[str]:
    size = gthinker.memory.describe
    if "host_peak_bytes" not in stats:  # a cluster's merged result
        return []
    line = f"memory:          host peak {size(stats['host_peak_bytes'])}"
    gpu = stats.get("gpu", {})
    if "gpu_peak_bytes" in stats:
        line += f", GPU peak {size(stats['gpu_peak_bytes'])}"
        if "scratch_bytes" in gpu:
            line += f" (warp scratch {size(gpu['scratch_bytes'])})"
    return [line]


def _big_line(stats) -> list[str]:
    """What the bitset engine did with the subtrees too big for a warp, if any."""
    gpu = stats.get("gpu", {})
    if not gpu.get("big_subtrees"):
        return []
    return [f"big subtrees:    {gpu['big_subtrees']:,} too big for a warp: {gpu['to_cpu']:,} to "
            f"the CPU workers, {gpu['compacted']:,} with X made small on the host "
            f"({gpu['x_before']:,} -> {gpu['x_after']:,} vertices), {gpu['wide']:,} on wider "
            f"warps, {gpu['split']:,} split into branches"]


def _time_line(result) -> str:
    from gthinker.text import threads

    stats = result.stats
    if "cluster" in stats or result.mode == "cpu":
        decomposed = stats.get("tasks_decomposed")
        return (f"time:            {result.seconds:.3f}s on {threads(result.threads)}"
                f" ({result.mode})" + (f", {decomposed:,} tasks decomposed, S peak "
                                       f"{stats['spill_peak_bytes']:,} bytes"
                                       if decomposed is not None else ""))
    s = stats["gpu"]
    gpus = len(stats.get("gpus", ())) or 1
    where = "the GPU" if gpus == 1 else f"{gpus} GPUs"
    where = where if result.mode == "gpu" else f"{threads(result.threads)} + {where}"
    if stats.get("gpu_engine") == "bitsets":
        return (f"time:            {result.seconds:.3f}s on {where} ({s['device']}),"
                f" {s['launches']:,} kernel launches, {s['spilled']:,} subtrees handed"
                f" out, {s['pushed']:,} of them to the CPU workers")
    line = (f"time:            {result.seconds:.3f}s on {where} ({s['device']}),"
            f" {s['levels']:,} levels, {s['launches']:,} kernel launches,"
            f" buffer peak {s['peak_vertices']:,} of {s['buffer_vertices']:,}"
            f" vertices, H peak {s['host_stack_peak_records']:,} subgraphs")
    if result.mode == "hybrid":
        line += (f"\nstealing:        CPU->GPU {s['tasks_from_cpu']:,} tasks, GPU->CPU "
                 f"{s['tasks_to_cpu']:,} tasks + {s['vertices_given_back']:,} vertices")
    return line


#: The bitset engine's scratch in the warm-up's second GPU run: so small that subtrees of
#: the warm-up graph are too big for a warp, so that the host's compaction and the wider
#: warps' launch compile there too (a hub graph's first gpu-mode run compiled them for
#: 10 s inside its job: docs/benchmarks.md, the seed's Table I).
WARMUP_SCRATCH_BYTES = 400


def warmup(graph, gpu: bool):
    from . import app

    steps = [("mce (cpu)", lambda: app.run(graph, mode="cpu", threads=1))]
    if gpu:
        steps += [(f"mce {engine} (gpu)",
                   lambda engine=engine: app.run(graph, mode="gpu", gpu_engine=engine))
                  for engine in GPU_ENGINES[1:]]
        steps.append(("mce bitsets, subtrees too big for a warp (gpu)",
                      lambda: app.run(graph, mode="gpu", gpu_engine="bitsets",
                                      gpu_scratch_bytes=WARMUP_SCRATCH_BYTES)))
    return steps


APP = App(
    name="mce",
    summary="enumerate maximal cliques",
    description="Count (and optionally list) the maximal cliques of a graph.",
    epilog=EPILOG,
    options=MCEOptions,
    request=MCERequest,
    describe=describe,
    progress="cliques",
    warmup=warmup,
)

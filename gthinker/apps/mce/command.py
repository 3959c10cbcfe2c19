"""``gthinker mce``: maximal cliques as the command line and the cluster see them."""

from __future__ import annotations

import argparse

from gthinker.registry import App
from gthinker.runtime.request import Request, max_compile, squared

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

    def __init__(self, min_size=1, gpu_engine="auto", chunk=None, trace=None, **kw):
        super().__init__(**kw)
        self.min_size, self.gpu_engine, self.trace = min_size, gpu_engine, trace
        self.chunk = chunk if chunk is not None else self.options.pop("cpu_chunk", None)

    def run(self, graph, *, threads=None, output=None, stop=None, progress=None, **inputs):
        from . import app

        return app.run(graph, mode=self.mode, threads=threads, time_budget=self.time_budget,
                       chunk=self.chunk, output=output if inputs else output or self.output,
                       min_size=self.min_size, gpu_engine=self.gpu_engine, trace=self.trace,
                       progress=progress, stop=stop, **inputs, **self.options)

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


def request(*, containing=None, **keywords) -> MCERequest:
    if containing:
        raise ValueError("containing= is not supported on a cluster; run it in one process")
    return MCERequest(**_split(keywords))


def _split(keywords):
    """MCERequest's own keywords, the common ones, and the rest as ``options``."""
    own = {k: keywords.pop(k) for k in ("min_size", "gpu_engine", "chunk", "trace")
           if k in keywords}
    common = {k: keywords.pop(k) for k in ("mode", "time_budget", "output") if k in keywords}
    return {**own, **common, "options": keywords}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gpu-engine", choices=["auto", "bitsets", "levels"], default="auto",
                   help="GPU search: bitsets (a warp per subtree over a bitset graph) or levels "
                        "(level by level on the GPU worker, with host buffer H; the GPU "
                        "worker's options (--eta-per-warp, --gpu-buffer, stealing) are for "
                        "it and pick it); auto: bitsets unless those are given (default: "
                        "auto)")
    p.add_argument("--min-size", type=int, default=1, metavar="K",
                   help="count (and list) only the maximal cliques of at least K vertices "
                        "(default: 1)")
    p.add_argument("--trace", default=None, metavar="FILE.png",
                   help="write a timeline of CPU and GPU busy time, S, H and steals "
                        "(needs matplotlib)")


def from_args(args) -> dict:
    if args.output is not None and args.mode in ("gpu", "hybrid"):
        raise ValueError("--output (listing cliques) runs on the CPU only; use --mode cpu")
    if args.trace:
        from gthinker.runtime.trace import require_matplotlib

        require_matplotlib()
    if args.min_size < 1:
        raise ValueError(f"--min-size must be at least 1, got {args.min_size}")
    return {"gpu_engine": args.gpu_engine, "trace": args.trace, "min_size": args.min_size}


def describe(result, label=None) -> list[str]:
    lines = [f"maximal cliques: {result.count:,}", f"largest clique:  {result.max_size}",
             "size histogram:  " + ", ".join(f"{k}:{v}" for k, v in result.histogram.items())]
    return lines + [_time_line(result), *_big_line(result.stats), *_memory_line(result.stats)]


def _memory_line(stats) -> list[str]:
    from gthinker.memory import describe as size

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


def warmup(graph, gpu: bool):
    from . import app

    steps = [("mce (cpu)", lambda: app.run(graph, mode="cpu", threads=1))]
    if gpu:
        steps += [(f"mce {engine} (gpu)",
                   lambda engine=engine: app.run(graph, mode="gpu", gpu_engine=engine))
                  for engine in ("bitsets", "levels")]
    return steps


APP = App(
    name="mce",
    summary="enumerate maximal cliques",
    description="Count (and optionally list) the maximal cliques of a graph.",
    epilog=EPILOG,
    request=request,
    from_args=from_args,
    describe=describe,
    add_arguments=add_arguments,
    options=("threads", "time_budget", "early_split", "cpu_chunk", "cpu_task_batch",
             "spill_limit", "progress_interval"),
    option_notes={"cpu_chunk": "1 in hybrid mode, where CPU workers take the hardest "
                               "vertices from the back",
                  "gpu_chunk": "a 16th of the vertices in hybrid mode, at least 1024"},
    gpu_options=True,
    lists_results=True,
    progress="cliques",
    warmup=warmup,
)

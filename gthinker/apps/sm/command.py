"""``gthinker sm``: subgraph matching as the command line and the cluster see it."""

from __future__ import annotations

import argparse
import os

from gthinker.extending import DATA_AND_QUERY, App, Request, max_compile, positive_int_arg, squared

from .gpu_modes import GPU_MODES

EPILOG = """\
examples:
  gthinker sm email-Enron.txt.gz triangle --unique      # 727,044 triangles
  gthinker sm hprd.graph query_dense_16_1.graph
  gthinker sm hprd.graph queries/hprd/ --json           # one JSON line per query file
  gthinker sm yeast.graph q.graph --limit 1000 -o m.txt # list the first 1000 matches

QUERY is a query graph file (.graph or an edge list), a directory of them, or a
pattern: triangle, 4-cycle, diamond, tailed-triangle, house, k-clique, k-path,
k-star (k vertices). Counts embeddings (injective, label-preserving maps that
keep every query edge); --unique counts distinct subgraphs instead
(embeddings / |Aut(query)|). With a CUDA GPU, auto runs on the GPU alone
(G-ThinkerCG's advice for subgraph matching; docs/benchmarks.md has the
numbers); --limit and --output run on the CPU workers.
"""




def as_query(query):
    """A query as it travels to the nodes: a pattern name as it is, a file as its graph
    (the path may not exist on the nodes)."""
    if isinstance(query, str) and not os.path.exists(query):
        return query
    from ..matching.patterns import as_query as load

    return load(query)


class SMRequest(Request):
    """Embeddings (or distinct subgraphs) of a query: roots are the data vertices
    that the first query vertex of the matching order is matched to."""

    movable = True

    def __init__(self, query, unique=False, gpu_mode="auto", limit=None, **kw):
        super().__init__(**kw)
        self.query, self.unique, self.gpu_mode, self.limit = (as_query(query), unique,
                                                              gpu_mode, limit)

    def run(self, graph, *, threads=None, output=None, stop=None, progress=None, **inputs):
        from . import app

        return app.count(graph, self.query, unique=self.unique, mode=self.mode,
                         threads=threads, time_budget=self.time_budget, gpu_mode=self.gpu_mode,
                         limit=None if inputs else self.limit,
                         output=output if inputs else output or self.output,
                         progress=progress, stop=stop, **inputs, **self.options)

    def local(self, graph):
        if graph.num_vertices == 0:
            return self.run(graph, threads=1)
        return None

    def weights(self, graph):
        if self.limit is not None:
            raise ValueError("limit= (--limit) is not supported on a cluster; run it in one "
                             "process")
        return squared(graph.degrees())

    def part(self, res):
        return {"count": res.count, "automorphisms": res.automorphisms, "order": res.order,
                "candidates": res.candidates, "gpu_mode": res.gpu_mode,
                "mode_reason": res.mode_reason, **self.common(res, res.threads)}

    def merge(self, parts, seconds, threads, stats):
        from .app import SMResult

        first = parts[0]
        return SMResult(count=sum(p["count"] for p in parts), unique=self.unique,
                        automorphisms=first["automorphisms"], seconds=seconds,
                        mode=first["mode"], threads=threads, order=first["order"],
                        candidates=first["candidates"], gpu_mode=first["gpu_mode"],
                        stats=stats, compile_seconds=max_compile(parts),
                        mode_reason=first["mode_reason"])


def request(query, **keywords) -> SMRequest:
    own = {k: keywords.pop(k) for k in ("unique", "gpu_mode", "limit") if k in keywords}
    common = {k: keywords.pop(k) for k in ("mode", "time_budget", "output") if k in keywords}
    return SMRequest(query, **own, **common, options=keywords)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--unique", action="store_true",
                   help="count distinct subgraphs (symmetry breaking) instead of embeddings")
    p.add_argument("--gpu-mode", choices=GPU_MODES, default="auto",
                   help="GPU engine: dfs (T-DFS's depth-first search, a warp per task, "
                        "queries of up to 32 vertices), or the level-by-level engine in one of "
                        "its record layouts, prefix (a warp extends a partial match with all "
                        "its candidates) or expand (one record per candidate); auto: dfs "
                        "where it takes the query, else prefix or expand by the first "
                        "level's fanouts (default: auto)")
    p.add_argument("--limit", type=positive_int_arg, default=None, metavar="N",
                   help="stop after N matches (CPU)")


def from_args(args) -> dict:
    if args.mode in ("gpu", "hybrid") and (args.limit is not None or args.output is not None):
        raise ValueError("--limit and --output run on the CPU only; use --mode cpu")
    return {"unique": args.unique, "gpu_mode": args.gpu_mode, "limit": args.limit}


def describe(res, label=None) -> list[str]:
    what = "distinct subgraphs" if res.unique else "embeddings"
    where = res.mode + (f", {res.gpu_mode} engine" if res.gpu_mode else "")
    return [f"{label}: {res.count:,} {what}"
            + (" (stopped at --limit)" if res.stopped == "limit" else "")
            + f" in {res.seconds:.3f}s ({where}; |Aut| = {res.automorphisms}, "
            f"order {res.order}, candidates {res.candidates})"]


def warmup(graph, gpu: bool):
    from . import app

    steps = [("sm (cpu)", lambda: app.count(graph, "triangle", mode="cpu", threads=1))]
    if gpu:
        steps += [(f"sm {engine} (gpu)", lambda engine=engine: app.count(
            graph, "triangle", mode="gpu", gpu_mode=engine)) for engine in GPU_MODES[1:]]
    return steps


APP = App(
    name="sm",
    summary="count subgraph matches of a query graph",
    description="Count the embeddings of a query graph in a data graph.",
    epilog=EPILOG,
    inputs=DATA_AND_QUERY,
    request=request,
    from_args=from_args,
    describe=describe,
    add_arguments=add_arguments,
    mode_help="gpu if a CUDA GPU is usable, else cpu, and cpu with --limit or --output",
    gpu_options=True,
    lists_results=True,
    progress="matches",
    warmup=warmup,
)

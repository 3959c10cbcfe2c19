"""``gthinker sm``: subgraph matching as the command line and the cluster see it."""

from __future__ import annotations

from gthinker.extending import DATA_AND_QUERY, App, Request, max_compile, squared

from ..matching.gpu_modes import GPU_MODES
from ..matching.patterns import matched, portable_query
from .options import SMOptions

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
(embeddings / |Aut(query)|); --induced counts induced ones (the query's non-edges
are non-edges in the data too). Labels: matched when both graphs have them;
an unlabeled query ignores the data graph's (said in the output), and
--ignore-labels drops both (docs/formats.md, "Labels"). With a CUDA GPU, auto runs on the GPU alone
(G-ThinkerCG's advice for subgraph matching; docs/benchmarks.md has the
numbers); --limit and --output run on the CPU workers.
"""


class SMRequest(Request):
    """Embeddings (or distinct subgraphs) of a query: roots are the data vertices
    that the first query vertex of the matching order is matched to."""

    movable = True

    def __init__(self, query, **keywords):
        super().__init__(portable_query(query), **keywords)

    def call(self, graph, query, **keywords):
        from . import app

        return app.count(graph, query, **keywords)

    def local(self, graph):
        if graph.num_vertices == 0:
            return self.run(graph, threads=1)
        return None

    def weights(self, graph):
        if self.options.limit is not None:
            raise ValueError("limit= (--limit) is not supported on a cluster; run it in one "
                             "process")
        return squared(graph.degrees())

    def part(self, res):
        return {"count": res.count, "labels": res.labels, "automorphisms": res.automorphisms,
                "order": res.order,
                "candidates": res.candidates, "gpu_mode": res.gpu_mode,
                "mode_reason": res.mode_reason, **self.common(res, res.threads)}

    def merge(self, parts, seconds, threads, stats):
        from .app import SMResult

        first = parts[0]
        return SMResult(count=sum(p["count"] for p in parts), unique=self.options.unique,
                        automorphisms=first["automorphisms"], seconds=seconds,
                        mode=first["mode"], threads=threads, order=first["order"],
                        candidates=first["candidates"], gpu_mode=first["gpu_mode"],
                        stats=stats, compile_seconds=max_compile(parts),
                        mode_reason=first["mode_reason"], induced=self.options.induced,
                        labels=first["labels"])


def describe(res, label=None) -> list[str]:
    what = "distinct subgraphs" if res.unique else "embeddings"
    what += f" ({matched(res.induced, res.labels)})"
    where = res.mode + (f", {res.gpu_mode} engine" if res.gpu_mode else "")
    return [f"{label}: {res.count:,} {what}"
            + (" (stopped at --limit)" if res.stopped == "limit" else "")
            + f" in {res.seconds:.3f}s ({where}; |Aut| = {res.automorphisms}, "
            f"order {res.order}, candidates {res.candidates})"]


def warmup(graph, gpu: bool):
    from . import app

    # A triangle goes to the clique engine, a 6-path to the matching search.
    steps = [("sm (cpu)", lambda: [app.count(graph, q, mode="cpu", threads=1)
                                   for q in ("triangle", "6-path")])]
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
    options=SMOptions,
    request=SMRequest,
    describe=describe,
    progress="matches",
    warmup=warmup,
)

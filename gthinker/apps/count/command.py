"""``gthinker count``: pattern counting as the command line and the cluster see it."""

from __future__ import annotations

import numpy as np

from gthinker.extending import GRAPH_AND_PATTERN, App, Request, max_compile, squared

from ..matching.patterns import matched, portable_query
from .options import CountOptions

EPILOG = """\
examples:
  gthinker count email-Enron.txt.gz triangle            # 727,044 triangles
  gthinker count g.txt 5-clique --json
  gthinker count g.txt cliques                         # k-cliques for every k
  gthinker count g.txt house --mode cpu
  gthinker count g.txt motifs --size 4                 # every connected 4-vertex motif

PATTERN is triangle, k-clique, cliques (every k at once), motifs (every connected
pattern of --size 3, 4 or 5 vertices at once), 4-cycle, diamond, tailed-triangle,
house, any connected 5-vertex shape by name (bull, gem, 5-cycle, ...: see
docs/matching.md), k-path, k-star (k vertices), or a pattern file (an edge list or
.graph). Counts distinct subgraphs (not necessarily induced); motifs are counted
induced (as igraph and ESCAPE do) unless --non-induced. A clique, however it is
given, is counted on the graph oriented by degeneracy order, each clique once, the
last level by intersection sizes; "cliques" walks Pivoter's clique tree and is
exact however large the counts. 4-cycle, tailed-triangle, house and most 5-vertex
shapes are counted by formulas from per-edge triangle and 4-cycle counts, or from each
vertex's neighbourhood graph (CPU; docs/matching.md). Other patterns run the
subgraph-matching search with symmetry breaking, the last levels counted from
intersection sizes. With a CUDA GPU, auto counts cliques on the GPU; motifs run
on the CPU unless --mode gpu or hybrid asks for it (then their cliques and searched
shapes run there, the formulas on the CPU).
"""


class CountRequest(Request):
    """Pattern counts: roots are the vertices a subgraph is counted from (its first
    vertex in degeneracy order; for other patterns, the data vertex of the first query
    vertex in the matching order)."""

    def __init__(self, pattern="triangle", **keywords):
        super().__init__(portable_query(pattern), **keywords)
        from . import app

        app.check_pattern(pattern, self.options)  # before a graph loads
        self.name = app.pattern_name(pattern)
        # k-cliques on the CPU run as range records of first vertices (and prefix
        # cliques once those split): records that any node can run.
        self.k = app.clique_size(self.inputs[0])
        self.movable = self.mode == "cpu" and self.k is not None and self.k >= 3

    def call(self, graph, pattern, **keywords):
        import dataclasses

        from . import app

        return dataclasses.replace(app.count(graph, pattern, **keywords), pattern=self.name)

    def local(self, graph):
        """Run whole here: an empty graph, a clique of fewer than 3 vertices, per-vertex
        counts (an array a vertex: not merged from ranges) and induced counts (several
        counts summed)."""
        if self.options.per_vertex or self.options.induced:
            return self.run(graph)
        if graph.num_vertices == 0 or (self.k is not None and self.k < 3):
            return self.run(graph, threads=1)
        return None

    def weights(self, graph):
        """Later-degree squared, off the oriented graph that every range counts on
        (kept with the graph, it goes to the nodes with it)."""
        from . import app

        return squared(np.diff(app.oriented(graph).indptr))

    def run_range(self, graph, lo, hi, threads, output, stop):
        return self.part(self.run(graph, threads=threads, stop=stop, vertices=range(lo, hi)))

    def run_records(self, graph, data, starts, threads, output, stop):
        """k-clique records (another node's) on the oriented graph, as the app runs
        its own; the part of a range's form (the merge reads the method and the
        mode's reason off the first range)."""
        from gthinker.extending import run

        from . import app

        options = {"cpu_task_batch": 1, **self.rest}
        res = run(app.CliqueCount, app.oriented(graph), mode="cpu", threads=threads,
                  params=[self.k], stop=stop, vertices=np.empty(0, np.int32),
                  records=(data, starts), **options)
        return {"count": res.counters["cliques"], "counts": None, "method": None,
                "prepare_seconds": 0.0, "mode_reason": None, **self.common(res, res.threads)}

    def run_roots(self, graph, roots, threads, output, stop):
        raise NotImplementedError("count requests move tasks between nodes, not roots")

    def part(self, res):
        return {"count": res.count, "counts": res.counts, "method": res.method,
                "induced": res.induced, "labels": res.labels,
                "prepare_seconds": res.prepare_seconds, "mode_reason": res.mode_reason,
                **self.common(res, res.threads)}

    def merge(self, parts, seconds, threads, stats):
        from .app import CountResult

        counts = None
        if parts[0]["counts"] is not None:
            counts = {}
            for p in parts:
                for k, n in p["counts"].items():
                    counts[k] = counts.get(k, 0) + n
            counts = dict(sorted(counts.items()))
        first = parts[0]
        return CountResult(
            self.name, sum(p["count"] for p in parts), seconds, first["mode"], threads,
            first["method"], counts=counts,
            prepare_seconds=max(p["prepare_seconds"] for p in parts),
            compile_seconds=max_compile(parts),
            mode_reason=first["mode_reason"], stats=stats,
            induced=any(p.get("induced", False) for p in parts),
            labels=next((p["labels"] for p in parts if p.get("labels")), ""))


def describe(res, label=None) -> list[str]:
    from gthinker.text import threads

    how = f" ({matched(res.induced, res.labels)})"
    if res.pattern == "motifs":
        lines = [f"{name}: {n:,}{how}" for name, n in res.counts.items()]
    elif res.counts is not None:
        lines = [f"{k}-cliques: {n:,}" for k, n in res.counts.items()]
        lines[-1:] = [lines[-1] + how] if lines else []
    else:
        lines = [f"{res.pattern}: {res.count:,}{how}"]
    where = threads(res.threads) if res.mode == "cpu" else res.mode
    lines.append(f"time: {res.seconds:.3f}s counting ({where}, {res.method}), "
                 f"{res.prepare_seconds:.3f}s preparing")
    if res.per_vertex is not None and res.vertex_ids is not None:
        lines.append("per vertex (vertex, triangles at it):")
        lines += [f"{v} {n}" for v, n in zip(np.asarray(res.vertex_ids).tolist(),
                                             res.per_vertex.tolist(), strict=True)]
    return lines


def warmup(graph, gpu: bool):
    from . import app

    steps = [("count (cpu)", lambda: [app.count(graph, p, mode="cpu", threads=1)
                                      for p in ("triangle", "cliques")])]
    if gpu:
        steps.append(("count (gpu)", lambda: app.count(graph, "triangle", mode="gpu")))
    return steps


APP = App(
    name="count",
    summary="count triangles, k-cliques, cliques of every size or a small pattern",
    description="Count the distinct subgraphs of a graph isomorphic to a pattern.",
    epilog=EPILOG,
    inputs=GRAPH_AND_PATTERN,
    options=CountOptions,
    request=CountRequest,
    describe=describe,
    progress="count",
    warmup=warmup,
)

"""``gthinker fsm``: frequent subgraph mining as the command line and the cluster see it."""

from __future__ import annotations

from gthinker.extending import App, Request

from .options import FSMOptions

EPILOG = """\
examples:
  gthinker fsm inputs/citeseer/graph --max-edges 3 --support 300
  gthinker fsm hprd.graph --max-edges 4 --support 1000 --json
  gthinker fsm cora.graph --max-edges 2 --support 100 -o patterns.txt

GRAPH is any graph gthinker reads, its vertex labels the patterns' labels (a
.graph file, the binary format, or G2Miner's binary labeled format: the
graph.meta.txt of a folder such as inputs/citeseer/, or the folder itself);
edge labels count where the graph has them. A pattern is frequent when each of
its vertices is mapped to at least S distinct data vertices by embeddings
(domain, MNI support). Patterns of 1 to K edges are listed, each once (minimum
DFS code), with their support; --json adds every pattern's edges and labels.
"""


class FSMRequest(Request):
    """Frequent subgraph mining: one process (the levels depend on each other)."""

    def call(self, graph, **keywords):
        from . import app

        return app.mine(graph, **keywords)

    def local(self, graph):
        return self.run(graph)


def describe(res, label=None) -> list[str]:
    by = ", ".join(f"{c:,} of {k} edge{'s' if k > 1 else ''}"
                   for k, c in enumerate(res.by_level(), 1))
    lines = [f"frequent patterns: {res.count:,} ({by}) with support >= {res.support:,}, "
             f"up to {res.max_edges} edges, in {res.seconds:.3f}s ({res.mode}, "
             f"{res.searches:,} searches)"
             + ("" if res.exact_support else "; supports of 2 edges or more are lower bounds "
                "(--no-exact-support)")]
    return lines + [f"  {line}" for line in res.lines()[:20]] + (
        [f"  ... {res.count - 20:,} more (--output FILE lists them all)"]
        if res.count > 20 else [])


def progress(p) -> str:
    return (f"  level {p['level']}: {p['frequent']:,} frequent of {p['candidates']:,} "
            f"candidates")


def warmup(graph, gpu: bool):
    from . import app

    steps = [("fsm (cpu)", lambda: app.mine(graph, 2, 1, mode="cpu", threads=1))]
    if gpu:
        steps.append(("fsm (gpu)", lambda: app.mine(graph, 2, 1, mode="gpu")))
    return steps


APP = App(
    name="fsm",
    summary="mine frequent labeled subgraphs (k-FSM, domain support)",
    description="List every connected labeled pattern of up to K edges whose domain (MNI) "
                "support is at least S.",
    epilog=EPILOG,
    options=FSMOptions,
    request=FSMRequest,
    describe=describe,
    progress=progress,
    warmup=warmup,
)

"""``gthinker stats GRAPH``: a graph's measured shape (vertices, edges, degrees,
degeneracy, triangles, clustering), with gthinker's own kernels: the degeneracy from
the graph's prepared order, the triangles at every vertex from the counting app (its
request from the registry, as its command makes it: ``gthinker count GRAPH triangle``
with per-vertex counts, on all cores; the engine imports no app).

:func:`graph_stats` gives them from Python; ``gthinker generate ... --stats`` prints
them for the graph it made.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["GraphStats", "graph_stats", "add_parser", "main"]


@dataclass
class GraphStats:
    """A graph's measured shape.

    ``average_clustering`` is the mean over all vertices of the local clustering
    coefficient (triangles at the vertex over its pairs of neighbours; 0 below degree
    2, as networkx's ``average_clustering``); ``transitivity`` is three times the
    triangles over the wedges (networkx's ``transitivity``). The triangle figures
    are None when not counted."""

    vertices: int
    edges: int
    isolated: int
    max_degree: int
    mean_degree: float
    degeneracy: int
    triangles: int | None
    average_clustering: float | None
    transitivity: float | None
    seconds: float

    def lines(self) -> list[str]:
        """The stats as ``name: value`` lines."""
        out = [f"vertices: {self.vertices:,} ({self.isolated:,} isolated)",
               f"edges: {self.edges:,}",
               f"max degree: {self.max_degree:,} (mean {self.mean_degree:.2f})",
               f"degeneracy: {self.degeneracy:,}"]
        if self.triangles is not None:
            out += [f"triangles: {self.triangles:,}",
                    f"average clustering: {self.average_clustering:.4f}",
                    f"transitivity: {self.transitivity:.4f}"]
        return out + [f"measured in {self.seconds:.2f}s"]

    def to_dict(self) -> dict:
        return asdict(self)


def graph_stats(graph, triangles: bool = True, threads: int | None = None,
                progress=None) -> GraphStats:
    """The :class:`GraphStats` of ``graph`` (anything :func:`gthinker.as_graph` takes);
    ``triangles=False`` skips the triangle count (and clustering), the costly part.
    ``progress(text)`` gets a line before each step.

    >>> import networkx as nx
    >>> s = graph_stats(nx.karate_club_graph(), threads=1)
    >>> s.triangles, round(s.average_clustering, 4), s.degeneracy
    (45, 0.5706, 4)
    """
    import gthinker

    say = progress or (lambda text: None)
    t0 = time.perf_counter()
    graph = gthinker.as_graph(graph)
    deg = graph.degrees()
    n, m = graph.num_vertices, graph.num_edges
    say(f"degeneracy order of {n:,} vertices, {m:,} edges")
    degeneracy = graph.degeneracy
    tri = avg = trans = None
    if triangles:
        from gthinker import registry  # the count app, found as the command line finds it

        say("triangles at every vertex")
        request = registry.get("count").request("triangle", per_vertex=True, mode="cpu")
        per = request.run(graph, threads=threads).per_vertex if m else np.zeros(n, np.int64)
        wedges = deg * (deg - 1) // 2
        local = np.divide(per, wedges, out=np.zeros(n), where=wedges > 0)
        tri = int(per.sum()) // 3
        avg = float(local.mean()) if n else 0.0
        trans = float(per.sum() / wedges.sum()) if wedges.sum() else 0.0
    return GraphStats(n, m, int(np.count_nonzero(deg == 0)), graph.max_degree,
                      2 * m / n if n else 0.0, degeneracy, tri, avg, trans,
                      time.perf_counter() - t0)


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Adds the ``stats`` command to ``subparsers``."""
    p = subparsers.add_parser(
        "stats", help="print a graph's vertices, edges, degrees, degeneracy, triangles and "
                      "clustering",
        description="Measure a graph: vertices (and how many are isolated), edges, the "
                    "largest and mean degree, the degeneracy, triangles, the average "
                    "clustering coefficient and the transitivity, on all cores.")
    p.add_argument("graph", help="graph file (any format gthinker reads)")
    p.add_argument("--no-triangles", dest="triangles", action="store_false",
                   help="skip the triangle count and the clustering (the costly part)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="threads of the triangle count (default: every core)")
    p.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    return p


def main(args) -> int:
    """Runs ``gthinker stats``; 0 on success (bad input raises what the command line
    turns into a message and exit 2)."""
    from gthinker import Graph, options

    threads = options.check("threads", args.threads)
    t0 = time.perf_counter()

    def progress(text):
        if not args.quiet:
            print(f"[{time.perf_counter() - t0:7.1f}s] {text}", file=sys.stderr, flush=True)

    progress(f"reading {args.graph}")
    graph = Graph.read(args.graph)
    print_stats(graph_stats(graph, args.triangles, threads, progress), args.json, sys.stdout)
    return 0


def print_stats(stats: GraphStats, as_json: bool, out) -> None:
    """Writes ``stats`` to ``out`` as lines or one JSON object."""
    if as_json:
        print(json.dumps(stats.to_dict()), file=out)
    else:
        for line in stats.lines():
            print(line, file=out)

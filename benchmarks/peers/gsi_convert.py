"""gthinker's graphs and queries to GSI's ``.g`` format, and back (benchmarks/peers/gsi.sh).

    python benchmarks/peers/gsi_convert.py graph GRAPH OUT.g [--vertex-labels K]
    python benchmarks/peers/gsi_convert.py query QUERY OUT.g
    python benchmarks/peers/gsi_convert.py selftest WORKDIR GSI_DATA_DIR

The format (GSI's data/readme; io/IO.cpp reads it): ``t # 0``, ``N M MAX_VERTEX_LABEL
MAX_EDGE_LABEL``, ``v ID LABEL`` for ids 0..N-1 in order, ``e FROM TO LABEL`` (directed),
``t # -1``; labels start at 1. gthinker's labels (vertex, and edge labels where the graph
has them: ``Graph.edge_labels``) are written plus one; an unlabeled graph gets label 1
everywhere. Every entry of the CSR is one ``e`` line: an undirected graph's edge is written
both ways (GSI then counts the embeddings of the undirected query, itself written both
ways), a directed graph's (``Graph.directed``) once, as stored. ``--vertex-labels K`` gives
an unlabeled graph K vertex labels, ``v mod K`` after a fixed shuffle (seed 1), as
:func:`vertex_labels` does for the benchmark's gthinker side.

QUERY is a pattern name of ``gthinker sm`` (``triangle``, ``4-cycle``, ...) or a query file.

selftest: writes cases with known answers for ``gsi.sh selftest``: each line ``DATA.g
QUERIES.g COUNTS`` (COUNTS: one per query in the file, comma-separated), counted by
networkx's DiGraphMatcher (monomorphisms, vertex and edge labels matched): GSI's own
samples (data.g with query.g, star.g, triangle.g, wedge.g), and a small random undirected
graph with 3 vertex labels and 2 edge labels (written both ways) with three queries cut
from it.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

__all__ = ["read_g", "vertex_labels", "write_g"]


def vertex_labels(n: int, k: int, seed: int = 1) -> np.ndarray:
    """K vertex labels for n vertices (0..k-1): ``v mod k`` after a fixed shuffle."""
    perm = np.random.default_rng(seed).permutation(n)
    return (perm % k).astype(np.int32)


def write_g(path, n: int, src, dst, vlabels=None, elabels=None) -> int:
    """Writes one graph: vertices 0..n-1 labeled ``vlabels + 1`` (or 1), directed edges
    ``src -> dst`` labeled ``elabels + 1`` (or 1); returns the edges written."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    vl = np.ones(n, np.int64) if vlabels is None else np.asarray(vlabels, np.int64) + 1
    el = np.ones(src.size, np.int64) if elabels is None else np.asarray(elabels, np.int64) + 1
    with open(path, "w") as f:
        f.write("t # 0\n")
        f.write(f"{n} {src.size} {int(vl.max(initial=1))} {int(el.max(initial=1))}\n")
        for lo in range(0, n, 1 << 20):
            ids = np.arange(lo, min(n, lo + (1 << 20)))
            f.write("".join(f"v {v} {lab}\n" for v, lab in zip(ids.tolist(),
                                                               vl[ids].tolist(), strict=True)))
        for lo in range(0, src.size, 1 << 20):
            s = slice(lo, lo + (1 << 20))
            f.write("".join(f"e {a} {b} {c}\n" for a, b, c in zip(
                src[s].tolist(), dst[s].tolist(), el[s].tolist(), strict=True)))
        f.write("t # -1\n")
    return int(src.size)


def write_graph(graph, path, k: int = 0) -> int:
    """A gthinker graph as GSI's ``.g`` (see the module docstring)."""
    rows = np.repeat(np.arange(graph.num_vertices, dtype=np.int64), np.diff(graph.indptr))
    labels = graph.labels
    if labels is None and k:
        labels = vertex_labels(graph.num_vertices, k)
    return write_g(path, graph.num_vertices, rows, graph.indices, labels,
                   getattr(graph, "edge_labels", None))


def read_g(path) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """The graphs of a ``.g`` file: ``(n, vertex labels, edges)``, edges an (m, 3) array
    of ``FROM TO LABEL`` (labels as written, from 1)."""
    graphs, labels, edges = [], None, None
    for line in Path(path).read_text().splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "t":
            if labels is not None:
                graphs.append((len(labels), np.array(labels, np.int64),
                               np.array(edges, np.int64).reshape(-1, 3)))
            labels, edges = ([], []) if parts[-1] != "-1" else (None, None)
        elif parts[0] == "v":
            labels.append(int(parts[2]))
        elif parts[0] == "e":
            edges.append([int(x) for x in parts[1:4]])
    return graphs


def _digraph(n, labels, edges):
    import networkx as nx

    G = nx.DiGraph()
    G.add_nodes_from((v, {"label": int(lab)}) for v, lab in enumerate(labels))
    G.add_edges_from((int(a), int(b), {"label": int(c)}) for a, b, c in edges)
    return G


def monomorphisms(data, query) -> int:
    """networkx's count of label-keeping injective maps of ``query``'s edges into
    ``data``'s (both from :func:`read_g`)."""
    from networkx.algorithms import isomorphism as iso

    gm = iso.DiGraphMatcher(_digraph(*data), _digraph(*query),
                            node_match=iso.categorical_node_match("label", None),
                            edge_match=iso.categorical_edge_match("label", None))
    return sum(1 for _ in gm.subgraph_monomorphisms_iter())


def _both_ways(n, vlabels, edges):
    """An undirected edge list ``(u, v, label)`` as directed entries both ways."""
    e = np.asarray(edges, np.int64).reshape(-1, 3)
    src = np.concatenate([e[:, 0], e[:, 1]])
    dst = np.concatenate([e[:, 1], e[:, 0]])
    return n, src, dst, vlabels, np.concatenate([e[:, 2], e[:, 2]])


def selftest(work: Path, sample: Path) -> None:
    """Writes the cases (see the module docstring) and prints their lines."""
    import networkx as nx

    work.mkdir(parents=True, exist_ok=True)
    data = read_g(sample / "data.g")[0]
    for q in ("query.g", "star.g", "triangle.g", "wedge.g"):
        want = [monomorphisms(data, query) for query in read_g(sample / q)]
        print(sample / "data.g", sample / q, ",".join(map(str, want)))
    rng = random.Random(3)
    G = nx.gnp_random_graph(24, 0.22, seed=3)
    vl = [rng.randrange(3) for _ in G]
    edges = [(a, b, rng.randrange(2)) for a, b in G.edges()]
    write_g(work / "small.g", *_both_ways(24, vl, edges))
    small = read_g(work / "small.g")[0]
    queries = work / "small_queries.g"
    text, want = [], []
    for size in (3, 4, 4):
        seen = [rng.randrange(24)]
        while len(seen) < size:
            nb = [w for v in seen for w in G[v] if w not in seen]
            if not nb:
                seen = [rng.randrange(24)]
                continue
            seen.append(rng.choice(nb))
        idx = {v: i for i, v in enumerate(seen)}
        qe = [(idx[a], idx[b], c) for a, b, c in edges if a in idx and b in idx]
        one = work / f"q{len(text)}.g"
        write_g(one, *_both_ways(size, [vl[v] for v in seen], qe))
        text.append(one.read_text().replace("t # -1\n", ""))
        want.append(monomorphisms(small, read_g(one)[0]))
    queries.write_text("".join(text) + "t # -1\n")
    print(work / "small.g", queries, ",".join(map(str, want)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    g = sub.add_parser("graph", help="a graph gthinker reads, as GSI's .g")
    g.add_argument("graph")
    g.add_argument("out")
    g.add_argument("--vertex-labels", type=int, default=0, metavar="K")
    q = sub.add_parser("query", help="a pattern name or query file, as GSI's .g")
    q.add_argument("query")
    q.add_argument("out")
    s = sub.add_parser("selftest", help="cases with networkx's counts, for gsi.sh selftest")
    s.add_argument("work", type=Path)
    s.add_argument("sample", type=Path)
    args = ap.parse_args(argv)
    if args.what == "selftest":
        selftest(args.work, args.sample)
        return 0
    import gthinker
    from gthinker.apps import sm

    if args.what == "graph":
        graph = gthinker.Graph.read(args.graph)
        m = write_graph(graph, args.out, args.vertex_labels)
    else:
        graph = sm.as_query(args.query)
        m = write_graph(graph, args.out)
    print(f"gsi_convert: {args.out}: {graph.num_vertices} vertices, {m} directed edges",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

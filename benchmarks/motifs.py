"""Motif counts: gthinker beside igraph's ``motifs_randesu`` (induced, sizes 3 and 4),
counts compared, in one process; size 5 (igraph has none for undirected graphs) per
pattern, with the engine each one took.

    python benchmarks/motifs.py facebook_combined.txt.gz --sizes 3,4,5 --threads 2

Times are the best of ``--repeat`` warm runs (loading and compiling left out); a
count that differs from igraph's is reported and makes the exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import gthinker
from gthinker.apps import count


def _best(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _igraph(graph, size, repeat):
    import igraph
    import numpy as np

    rows = np.repeat(np.arange(graph.num_vertices), np.diff(graph.indptr))
    keep = rows < graph.indices
    edges = np.stack([rows[keep], graph.indices[keep]], axis=1).tolist()
    g = igraph.Graph(edges=edges, n=graph.num_vertices)
    secs, counts = _best(lambda: g.motifs_randesu(size=size), repeat)
    return secs, sorted(int(c) for c in counts if c == c)  # nan: the disconnected classes


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph")
    ap.add_argument("--sizes", default="3,4")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    graph = gthinker.Graph.read(args.graph)
    bad = 0
    for size in map(int, args.sizes.split(",")):
        count.count(graph, "motifs", size=size, mode="cpu", threads=args.threads)  # compile
        secs, res = _best(lambda s=size: count.count(graph, "motifs", size=s, mode="cpu",
                                                     threads=args.threads), args.repeat)
        row = {"size": size, "gthinker_seconds": round(secs, 4), "counts": res.counts,
               "seconds_per_pattern": {k: round(v, 4) for k, v in res.stats["seconds"].items()},
               "methods": res.stats["methods"]}
        if size <= 4:
            isecs, theirs = _igraph(graph, size, args.repeat)
            row.update(igraph_seconds=round(isecs, 4),
                       igraph_agrees=sorted(res.counts.values()) == theirs)
            bad += not row["igraph_agrees"]
        print(json.dumps(row), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

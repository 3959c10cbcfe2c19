"""The DFS matching engine on a real GPU against networkx, in several launch shapes, to
tell a race between warps from a fault inside one (a development check; the tests in
tests/test_sm_dfs.py are the contract).

    python benchmarks/dfs_check.py [--variants default,one-warp,one-warp-block]
"""

from __future__ import annotations

import argparse
import itertools
import sys

import networkx as nx
import numpy as np
from networkx.algorithms import isomorphism

import gthinker
from gthinker.apps.matching.dfs_gpu import DFSEngine
from gthinker.apps.matching.planner import plan
from gthinker.apps.matching.search import SubgraphMatching

PATTERNS = {
    "triangle": [(0, 1), (0, 2), (1, 2)],
    "3-path": [(0, 1), (1, 2)],
    "diamond": [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3)],
    "4-clique": list(itertools.combinations(range(4), 2)),
    "wheel W4": [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 4), (2, 3), (3, 4)],
    "5-clique": list(itertools.combinations(range(5), 2)),
}
VARIANTS = {
    "default": {},
    "block32": {"block_threads": 32},
    "one-warp": {"list_bytes": 1},  # one active warp: nothing runs beside it
    "budget-huge": {"budget": 1 << 40},
    "norestrict": {},  # the plan without symmetry breaking: embeddings counted as such
    "records2": {},  # every directed edge handed over as a CPU record [2, v, u]
    "records1": {},  # every vertex as a record [1, v]
    "records2n": {},  # records [2, v, u] under the plan without symmetry breaking
}


def embeddings(G, edges):
    q = nx.Graph(edges)
    return sum(1 for _ in isomorphism.GraphMatcher(G, q).subgraph_monomorphisms_iter())


def _run(g, G, q, variant):
    """Embeddings counted by the engine in ``variant``, and its stats."""
    p = plan(g, q, unique=variant not in ("norestrict", "records2n"))
    keywords = {}
    if variant in ("records2", "records2n"):
        keywords = {"vertices": [], "records": [np.array([2, v, u], np.int32)
                                                for v in G for u in G[v]]}
    elif variant == "records1":
        keywords = {"vertices": [], "records": [np.array([1, v], np.int32) for v in G]}
    engine = DFSEngine.configured(**VARIANTS[variant])
    try:
        res = gthinker.run(SubgraphMatching, g, mode="gpu", params=p.params, gpu=engine,
                           **keywords)
    except ValueError:  # records longer than the plan's enumerated prefix
        return None, {}
    aut = 1 if variant in ("norestrict", "records2n") else p.automorphisms
    return res.counters["matches"] * aut, res.stats.get("gpu", {})


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--sizes", default="8,12,16,30")
    a = ap.parse_args(argv)
    bad = 0
    for n in map(int, a.sizes.split(",")):
        G = nx.gnp_random_graph(n, 0.6 if n < 10 else 0.3, seed=n)
        g = gthinker.as_graph(G)
        for name, edges in PATTERNS.items():
            q = gthinker.Graph.from_edges(np.array(edges, np.int64))
            want = embeddings(G, edges)
            row = [f"n={n} {name:9s} want {want:8d}"]
            for v in a.variants.split(","):
                got, st = _run(g, G, q, v)
                bad += got is not None and got != want
                row.append(f"{v}: {got}{'' if got in (want, None) else ' WRONG'} "
                           f"(l{st.get('launches')} w{st.get('warps')})")
            print(" | ".join(row), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

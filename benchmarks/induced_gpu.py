"""Induced matching on the GPU: the counts of ``--induced`` in modes gpu and hybrid against
the CPU's and networkx's (a small graph), then the time of each mode on a larger one.

    python benchmarks/induced_gpu.py [--scale 14] [--threads 16] [--modes cpu,gpu,hybrid]

Induced counts are sums of non-induced counts of the query's supergraphs
(``gthinker/apps/matching/induced.py``), each by the engine the dispatch picks in the mode
asked: on a GPU the clique engine and the matchers run them. Prints one line per query and
mode: the count, the seconds (compiling excluded) and whether it equals the CPU's (and
networkx's on the small graph). Exits 1 on any disagreement.
"""

from __future__ import annotations

import argparse
import sys


def main() -> int:
    import networkx as nx
    from networkx.algorithms import isomorphism

    import gthinker
    from gthinker.apps import count, sm
    from gthinker.graphs.generate import rmat

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=14, help="R-MAT scale of the timed graph")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--modes", default="cpu,gpu,hybrid", help="modes, cpu first")
    args = ap.parse_args()
    modes = args.modes.split(",")
    queries = {"4-path": nx.path_graph(4), "4-cycle": nx.cycle_graph(4),
               "tailed-triangle": nx.Graph([(0, 1), (1, 2), (2, 0), (2, 3)]),
               "5-cycle": nx.cycle_graph(5)}
    small = nx.gnp_random_graph(40, 0.25, seed=1)
    bad = 0
    for name, Q in queries.items():
        want = sum(1 for _ in isomorphism.GraphMatcher(small, Q).subgraph_isomorphisms_iter())
        for mode in modes:
            got = sm.count(small, Q, induced=True, mode=mode, threads=args.threads).count
            ok = got == want
            bad += not ok
            print(f"small {name:16s} {mode:6s} sm --induced {got:>10,} networkx {want:,} "
                  f"{'ok' if ok else 'DIFFERS'}", flush=True)
    g = rmat(args.scale, 8, seed=3)
    gthinker.Graph.KEEP_FORMS = False
    for name, Q in queries.items():
        ref = None
        for mode in modes:
            count.count(g, Q, induced=True, mode=mode, threads=args.threads)  # compile, warm
            res = count.count(g, Q, induced=True, mode=mode, threads=args.threads)
            ref = res.count if ref is None else ref
            ok = res.count == ref
            bad += not ok
            print(f"rmat{args.scale} {name:16s} {mode:6s} count --induced {res.count:>16,} "
                  f"{res.seconds:8.3f}s ({res.method}) {'ok' if ok else 'DIFFERS from cpu'}",
                  flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Seconds of the 5-vertex formulas' preparation (count/neighbourhoods.py: the graph
renumbered by degree, every edge's triangle count and list) on one graph, in this fresh
process, compiling left out.

    python -P benchmarks/neighbourhoods_prepare.py GRAPH [THREADS]
"""

import sys
import time

import networkx as nx

import gthinker
from gthinker.apps.matching import neighbourhoods


def main(path: str, threads: int | None) -> None:
    small = gthinker.Graph.from_networkx(nx.barabasi_albert_graph(200, 5, seed=1))
    neighbourhoods.neighbourhoods(small, threads)  # compiled, or loaded from the cache
    graph = gthinker.Graph.read(path)
    t0 = time.perf_counter()
    prepared = neighbourhoods.neighbourhoods(graph, threads)
    print(f"threads={threads or gthinker.default_threads()} prepare "
          f"{time.perf_counter() - t0:.3f} s, {prepared.tidx.size:,} triangle-list entries")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else None)

"""The degeneracy order of a graph (`gthinker._core.degeneracy_order`, the C++ kernel
alone) on each thread count: wall and CPU seconds, best of RUNS, and whether every
thread count gives the same arrays (it must).

    PYTHONPATH=TREE python benchmarks/degeneracy_threads.py GRAPH THREADS [RUNS]

GRAPH: any graph file (a binary one maps at once); THREADS: comma-separated, e.g.
1,2,4,8,16. Run it with another TREE for a before/after (a tree before the parallel
order, e.g. afe55a6, peels with Batagelj-Zaversnik on one thread whatever THREADS says)."""
import sys
import time

import numpy as np

from gthinker import Graph, _core

graph = Graph.read(sys.argv[1])
indptr, indices = np.array(graph.indptr), np.array(graph.indices)  # in memory, not mapped
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
first = None
for threads in map(int, sys.argv[2].split(",")):
    best = (float("inf"), 0.0)
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        order, core = _core.degeneracy_order(indptr, indices, threads)
        best = min(best, (time.perf_counter() - w, time.process_time() - c))
    first = first or (order, core)
    same = np.array_equal(order, first[0]) and np.array_equal(core, first[1])
    print(f"threads {threads:3d}  wall {best[0]:7.3f} s  cpu {best[1]:7.3f} s  "
          f"degeneracy {int(core.max(initial=0))}  same arrays: {same}", flush=True)

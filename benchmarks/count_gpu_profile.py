"""Where a warm GPU count's time goes (reset, launch, wait, read back), and
cProfile of the Python side: ``python benchmarks/count_gpu_profile.py GRAPH [k]``."""

import cProfile
import pstats
import sys
import time

from numba import cuda

import gthinker
from gthinker.apps import count, count_gpu


def main():
    graph = gthinker.Graph.read(sys.argv[1])
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    dag = count.oriented(graph)
    for _ in range(3):
        count_gpu.count(dag, k)
    dev = count_gpu.Device.of(dag, k)
    steps = {"reset": [], "launch": [], "wait": [], "read": []}
    for _ in range(20):
        t0 = time.perf_counter()
        dev.reset()
        t1 = time.perf_counter()
        dev.edges([(0, dag.num_vertices)])
        t2 = time.perf_counter()
        cuda.synchronize()
        t3 = time.perf_counter()
        dev.total()
        t4 = time.perf_counter()
        for key, a, b in (("reset", t0, t1), ("launch", t1, t2), ("wait", t2, t3),
                          ("read", t3, t4)):
            steps[key].append((b - a) * 1e3)
    print({key: f"{min(v):.3f} ms" for key, v in steps.items()})
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(50):
        count.count(graph, f"{k}-clique", mode="gpu")
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()

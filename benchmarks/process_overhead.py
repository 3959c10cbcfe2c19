"""Whole-process wall time minus the job's own seconds, for `gthinker count GRAPH triangle`
(issue 33: from a binary file, a process should cost at most 1 s more than its job).

    python benchmarks/process_overhead.py TREE GRAPH RUNS

TREE: the gthinker checkout to run (put on PYTHONPATH); GRAPH: a graph file (text or
binary); the first run is not counted (it warms the page and compile caches)."""
import json
import os
import statistics
import subprocess
import sys
import time

tree, graph, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
env = {**os.environ, "PYTHONPATH": tree}
rows = []
for _ in range(runs + 1):
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "gthinker", "count", graph, "triangle",
                        "--mode", "cpu", "--threads", "2", "--json", "-q"],
                       capture_output=True, text=True, env=env, cwd="/tmp")
    wall = time.perf_counter() - t0
    d = json.loads(r.stdout.strip().splitlines()[-1])
    rows.append((wall, d["seconds"], d["prepare_seconds"], wall - d["seconds"]))
rows = rows[1:]  # the first run warms the page cache and the compile cache
for wall, job, prepare, over in rows:
    print(f"wall {wall:.2f} job {job:.2f} prepare {prepare:.2f} overhead {over:.2f}")
over = statistics.median(r[3] for r in rows)
print(f"median overhead {over:.2f} s, median job {statistics.median(r[1] for r in rows):.2f} s")

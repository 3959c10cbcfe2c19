"""Thread scaling of the CPU MCE search: one graph, several thread counts, warm
(a first run compiles or loads the code), wall and CPU seconds of each run.

    python benchmarks/mce_threads.py GRAPH --threads 1,8,16 --repeat 2 --out mce_threads.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time

import gthinker
from gthinker.apps import mce


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph")
    ap.add_argument("--threads", default="1,8,16", help="comma-separated thread counts")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--budget", type=float, default=None,
                    help="time_budget (seconds); default: gthinker's")
    ap.add_argument("--mode", default="cpu")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    g = gthinker.Graph.read(a.graph)
    opts = {"mode": a.mode} if a.budget is None else {"mode": a.mode, "time_budget": a.budget}
    mce.run(g, threads=2, **opts)  # compile / load
    rows = []
    for t in (int(x) for x in a.threads.split(",")):
        for _ in range(a.repeat):
            c0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
            w0 = time.perf_counter()
            samples = []

            def sample(snap, samples=samples, t=t):
                samples.append((snap["elapsed"], t - snap.get("idle_cpu_workers", 0)))

            r = mce.run(g, threads=t, progress=sample, progress_interval=0.05, **opts)
            wall = time.perf_counter() - w0
            cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime - c0
            busy = [b for _, b in samples]
            full = [e for e, b in samples if b == t]  # the last sample with every worker busy
            row = {"threads": t, "mean_busy_workers": sum(busy) / max(1, len(busy)),
                   "all_busy_until": full[-1] if full else 0.0, "count": r.count,
                   "seconds": r.seconds, "wall": wall, "cpu": cpu,
                   "stats": {k: v for k, v in r.stats.items() if not isinstance(v, (dict, list))}}
            rows.append(row)
            print(json.dumps(row), flush=True)
    meta = {"host": platform.node(), "cpus": os.cpu_count(), "graph": a.graph, "options": opts}
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

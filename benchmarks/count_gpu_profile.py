"""Where a warm GPU clique count's time goes, gthinker alone (no peer, no whole
processes): for each graph and k, ``count_gpu.count`` warm (min / median of
``--repeat``), split into the launch call (Python) and the wait for the mapped
result, for the default grid and for grids capped at ``--blocks`` blocks, and
for k >= 4 by each of ``--methods``: ``auto`` (the default choice), ``edge`` (a
warp per edge) and ``vertex`` (a block per vertex).

    python benchmarks/count_gpu_profile.py --graph fb=facebook_combined.txt.gz \\
        --k 3,4,5 --blocks 0,1056 --methods auto,edge,vertex --repeat 10 \\
        --out results/count_gpu_profile.json

(``--blocks 0``: the default cap, ``BLOCKS_PER_SM`` blocks per SM.)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import gthinker
from gthinker.apps import count
from gthinker.apps.matching import cliques_gpu as count_gpu


def _timed(dev, n, repeat):
    """``repeat`` counts on ``dev``: (count, total ms, launch-call ms, wait ms) lists."""
    counts, total, launch, wait = [], [], [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        with dev.lock:
            dev.edges([(0, n)], take=True)
            t1 = time.perf_counter()
            counts.append(dev.take())
        t2 = time.perf_counter()
        total.append((t2 - t0) * 1e3)
        launch.append((t1 - t0) * 1e3)
        wait.append((t2 - t1) * 1e3)
    return counts, total, launch, wait


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", action="append", required=True, metavar="NAME=PATH")
    ap.add_argument("--k", default="3,4,5")
    ap.add_argument("--blocks", default="0")
    ap.add_argument("--methods", default="auto")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    rows = []
    for spec in a.graph:
        name, path = spec.split("=", 1)
        graph = gthinker.Graph.read(path)
        dag = count.oriented(graph)
        degree = int(max(dag.indptr[1:] - dag.indptr[:-1]))
        for k in map(int, a.k.split(",")):
            ref, _ = count_gpu.count(dag, k)  # compiles (or loads) the kernels
            kept = count_gpu.CliqueDevice.of(dag, k)
            variants = [(b, m) for b in map(int, a.blocks.split(","))
                        for m in (a.methods.split(",") if k > 3 else ["auto"])]
            for blocks, method in variants:
                dev = kept if (blocks, method) == (0, "auto") else count_gpu.CliqueDevice(
                    dag, k, blocks=blocks or None, arrays=kept.arrays,
                    local={"auto": None, "edge": False, "vertex": True}[method])
                counts, total, launch, wait = _timed(dev, dag.num_vertices, a.repeat)
                row = {"graph": name, "k": k, "blocks_cap": blocks or dev.max_blocks,
                       "method": "vertex" if dev.local else "edge",
                       "vertices": dag.num_vertices, "dag_edges": int(dag.indptr[-1]),
                       "max_out_degree": degree, "count": ref,
                       "counts_equal": all(c == ref for c in counts),
                       "ms_min": min(total), "ms_median": statistics.median(total),
                       "launch_ms_min": min(launch), "wait_ms_min": min(wait),
                       "device": dev.description}
                rows.append(row)
                print(f"{name} k={k} {row['method']} blocks<={row['blocks_cap']}: {ref:,} "
                      f"{row['ms_min']:.3f} / {row['ms_median']:.3f} ms (launch call "
                      f"{row['launch_ms_min']:.3f}, wait {row['wait_ms_min']:.3f})"
                      + ("" if row["counts_equal"] else " COUNTS DIFFER"), flush=True)
                del dev
        if a.out:
            Path(a.out).parent.mkdir(parents=True, exist_ok=True)
            Path(a.out).write_text(json.dumps({"argv": sys.argv, "rows": rows}, indent=1))
    return 0 if all(r["counts_equal"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

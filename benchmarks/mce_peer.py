"""Maximal cliques: gthinker in every mode beside MCE-GPU, in one process per graph.

    python benchmarks/mce_peer.py --graph fb=.data/snap/facebook_combined.txt.gz \\
        --modes gpu,hybrid,cpu,gpu-levels --threads 16 --repeat 3 --mcegpu "-p l2 -i px -w wl" \\
        --out mce_peer

For each graph: loads it once; runs gthinker once per mode to compile (not timed), then
``--repeat`` times (warm: the job's seconds, compile excluded) and checks that the count and
the size histogram equal the first mode's. ``gpu-levels`` is the level-by-level GPU engine
(``gpu_engine="levels"``). Then MCE-GPU (benchmarks/peers/mce_gpu.sh, built beforehand) once
per scheme: its "count time" (counting kernels; its degeneracy order excluded) and its count.
Writes OUT.json and prints a table. ``--trace`` writes the hybrid run's trace plot.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import time
from pathlib import Path

import gthinker
from gthinker.apps import mce

ROOT = Path(__file__).resolve().parents[1]


def run_mode(graph, mode, threads, repeat, trace, budget=None):
    """``mode``: cpu, gpu, hybrid, gpu-levels, or MODE+{json options} (a variant)."""
    mode, _, extra = mode.partition("+")
    engine = "levels" if mode == "gpu-levels" else "bitsets"
    real = mode.split("-")[0]
    kw = dict(mode=real, threads=threads, gpu_engine=engine)
    kw.update(json.loads(extra or "{}"))
    if budget and engine == "bitsets" and real != "cpu":
        kw["gpu_node_budget"] = budget
    first = mce.run(graph, **kw)  # compiles (or loads the compile cache)
    runs = []
    for i in range(repeat):
        if trace and real == "hybrid" and i == repeat - 1:
            kw["trace"] = trace
        runs.append(mce.run(graph, **kw))
    times = [r.seconds for r in runs]
    last = runs[-1]
    return {
        "mode": mode + ("+" + extra if extra else ""), "count": last.count,
        "max_size": last.max_size,
        "histogram": {str(k): v for k, v in last.histogram.items()},
        "seconds": times, "median": statistics.median(times), "min": min(times),
        "first_run_seconds": first.seconds, "compile_seconds": first.compile_seconds,
        "stats": {k: v for k, v in last.stats.items() if k in ("gpu", "tasks_decomposed",
                                                             "spill_peak_bytes", "steals")},
    }


def run_mcegpu(path, schemes):
    out = []
    for scheme in schemes:
        t0 = time.perf_counter()
        p = subprocess.run(["bash", str(ROOT / "benchmarks/peers/mce_gpu.sh"), "run", str(path),
                            *scheme.split()], capture_output=True, text=True, timeout=600)
        text = p.stdout + p.stderr
        count = re.search(r"Found ([\d,]+) maximal cliques", text)
        secs = re.search(r"count time ([0-9.eE+-]+) s", text)
        found = int(count.group(1).replace(",", "")) if count else None
        out.append({"scheme": scheme, "count": found,
                    "count_seconds": float(secs.group(1)) if secs else None,
                    "wall_seconds": round(time.perf_counter() - t0, 3),
                    "tail": text[-600:] if not (count and secs) else ""})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", action="append", required=True, help="NAME=PATH")
    ap.add_argument("--modes", default="gpu;hybrid;cpu;gpu-levels",
                    help="';'-separated; MODE+JSON runs a variant, e.g. 'hybrid+{\"threads\": 15}'")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mcegpu", action="append", default=[],
                    help="MCE-GPU scheme flags, e.g. '-p l2 -i px -w wl' (repeatable)")
    ap.add_argument("--budget", type=int, default=None, help="gpu_node_budget (bitsets engine)")
    ap.add_argument("--trace", action="store_true", help="trace plot of the last hybrid run")
    ap.add_argument("--out", default="mce_peer")
    args = ap.parse_args(argv)
    results = []
    for spec in args.graph:
        name, path = spec.split("=", 1)
        t0 = time.perf_counter()
        graph = gthinker.as_graph(path)
        row = {"graph": name, "path": path, "vertices": graph.num_vertices,
               "edges": graph.num_edges, "degeneracy": graph.degeneracy,
               "load_seconds": round(time.perf_counter() - t0, 3), "modes": [], "mcegpu": []}
        for mode in filter(None, args.modes.split(";")):
            trace = f"{args.out}_{name}_trace.png" if args.trace else None
            r = run_mode(graph, mode, args.threads, args.repeat, trace, args.budget)
            first = row["modes"][0] if row["modes"] else r
            r["same_as_first_mode"] = (r["count"], r["histogram"]) == (first["count"],
                                                                      first["histogram"])
            row["modes"].append(r)
            print(f"{name:8s} {mode:11s} count {r['count']:>13,}  median {r['median']:8.3f} s  "
                  f"min {r['min']:8.3f} s  same {r['same_as_first_mode']}  "
                  f"{json.dumps(r['stats'].get('gpu', {}), default=str)[:160]}", flush=True)
        row["mcegpu"] = run_mcegpu(path, args.mcegpu)
        for m in row["mcegpu"]:
            print(f"{name:8s} MCE-GPU {m['scheme']:14s} count {m['count']}  count time "
                  f"{m['count_seconds']} s  wall {m['wall_seconds']} s {m['tail']}", flush=True)
        results.append(row)
        Path(f"{args.out}.json").write_text(json.dumps(results, indent=1, default=str))
    print(f"wrote {args.out}.json")


if __name__ == "__main__":
    main()

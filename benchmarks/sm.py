"""Subgraph matching: the labeled query sets (hprd, yeast, human) and unlabeled
patterns, gthinker in each mode beside igraph's VF2.

    python benchmarks/sm.py --data .data --threads 16 --modes cpu,gpu,hybrid \
        --datasets hprd,yeast,human --sizes 16 --cap 10 --peer-jobs 8 \
        --patterns triangle,diamond,4-cycle,5-clique,house --snap email-Enron.txt.gz \
        --rmat 20:8:0.5 --out benchmarks/results/sm.json

Per query: gthinker's wall time (planning + job; kernels compiled once first,
on a small graph) in every mode asked for, and in gpu mode both record
layouts (prefix and expand) besides the one ``gpu_mode="auto"`` picks; igraph
``count_subisomorphisms_vf2`` (single-threaded, non-induced embeddings, the
same semantics) in a subprocess, ``--peer-jobs`` at a time and never while
gthinker runs. Every run is capped at ``--cap`` seconds and reported as
"timeout", not dropped (hybrid and the second GPU layout are skipped, and
say so, where cpu and gpu both timed out). Counts must agree wherever two
runs finished.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import rmat_file
from hybrid import capped

import gthinker
from gthinker.apps import sm

PEER = r"""
import sys, time, igraph as ig, gthinker
def load(p):
    g = gthinker.Graph.read(p)
    h = ig.Graph(n=g.num_vertices, edges=g.edge_array().tolist())
    return h, (None if g.labels is None else [int(x) for x in g.labels])
d, dl = load(sys.argv[1]); q, ql = load(sys.argv[2])
t = time.perf_counter()
n = d.count_subisomorphisms_vf2(q, color1=dl, color2=ql)
print(n, time.perf_counter() - t)
"""


def peer(data_path, query_path, cap):
    try:
        p = subprocess.run([sys.executable, "-c", PEER, str(data_path), str(query_path)],
                           capture_output=True, text=True, timeout=cap + 5)  # + loading
    except subprocess.TimeoutExpired:
        return {"seconds": None, "note": f"timeout ({cap:g} s)"}
    if p.returncode != 0:
        return {"seconds": None, "note": "failed: " + p.stderr.strip().splitlines()[-1]}
    n, s = p.stdout.split()
    if float(s) > cap:
        return {"seconds": None, "note": f"timeout ({cap:g} s)", "count": int(n)}
    return {"seconds": float(s), "count": int(n)}


def ours(data, query, mode, threads, cap, gpu_mode="auto"):
    t = time.perf_counter()
    r, note = capped(cap, lambda: sm.count(data, query, mode=mode, threads=threads,
                                           gpu_mode=gpu_mode))
    wall = time.perf_counter() - t
    if r is None:
        return {"seconds": None, "note": f"timeout ({cap:g} s)"}
    out = {"seconds": wall, "job_seconds": r.seconds, "count": r.count}
    if r.gpu_mode:
        out["gpu_mode"] = r.gpu_mode
        out["gpu_setup_seconds"] = r.stats["gpu"]["setup_seconds"]
    return out


def warm_up(modes, threads):
    """Compiles the CPU task and both GPU layouts (outside any timing)."""
    g = gthinker.Graph.from_edges([(0, 1), (1, 2), (0, 2), (2, 3)])
    for mode in modes:
        for gm in (("prefix", "expand") if mode != "cpu" else ("auto",)):
            sm.count(g, "tailed-triangle", mode=mode, threads=threads, gpu_mode=gm)


def run_case(data, query, query_path, name, args, peer_result=None):
    row = {"query": name}
    if query_path is not None:
        q = gthinker.Graph.read(query_path)
        row["query_vertices"], row["query_edges"] = q.num_vertices, q.num_edges
        query = q
    for mode in args.modes:
        if mode == "hybrid" and not any(row[m].get("seconds") for m in ("cpu", "gpu")
                                        if m in row):
            row[mode] = {"seconds": None, "note": "skipped: cpu and gpu timed out"}
            continue
        row[mode] = ours(data, query, mode, args.threads, args.cap)
        if mode == "gpu" and not args.no_alt and (
                row["gpu"].get("seconds") or row.get("cpu", {}).get("seconds")):
            picked = row[mode].get("gpu_mode")
            for gm in ("prefix", "expand"):
                if gm != picked:
                    row[f"gpu_{gm}"] = ours(data, query, "gpu", args.threads, args.cap, gm)
    if peer_result is not None:
        row["igraph_vf2"] = peer_result
    counts = {k: v["count"] for k, v in row.items()
              if isinstance(v, dict) and v.get("count") is not None and v.get("seconds")}
    row["agree"] = len(set(counts.values())) <= 1
    if not row["agree"]:
        print(f"  COUNTS DIFFER on {name}: {counts}", flush=True)
    return row


def fmt(r):
    if r is None:
        return "-"
    return f"{r['seconds']:.3f}" if r.get("seconds") is not None else "timeout"


def line(row, args):
    runs = [k for k in [*args.modes, "gpu_prefix", "gpu_expand", "igraph_vf2"] if k in row]
    count = next((row[k]["count"] for k in runs if row[k].get("count") is not None), None)
    setup = row.get("gpu", {}).get("gpu_setup_seconds")
    return ("  ".join(f"{k}={fmt(row[k])}" for k in runs) + f"  count={count}"
            + (f"  (gpu setup {setup:.3f} s)" if setup is not None else ""))


def labeled(args, results, save):
    root = Path(args.data) / "labeled"
    for ds in args.datasets:
        data_path = root / f"{ds}.graph"
        data = gthinker.Graph.read(data_path)
        qs = sorted(p for p in (root / "queries" / ds).glob(args.queries)
                    if any(f"_{s}_" in p.name for s in args.sizes))
        if args.max_queries:
            qs = qs[: args.max_queries]
        print(f"{ds}: {data.num_vertices} vertices, {data.num_edges} edges, {len(qs)} queries",
              flush=True)
        peers = {}
        if args.peer != "none":
            t = time.perf_counter()
            with ThreadPoolExecutor(args.peer_jobs) as pool:
                futs = {qp.name: pool.submit(peer, data_path, qp, args.cap) for qp in qs}
                peers = {k: f.result() for k, f in futs.items()}
            print(f"  igraph VF2: {time.perf_counter() - t:.1f} s wall for {len(qs)} queries "
                  f"({args.peer_jobs} at a time)", flush=True)
        rows = results["labeled"][ds] = []
        for qp in qs:
            row = run_case(data, None, qp, qp.name, args, peers.get(qp.name))
            rows.append(row)
            print(f"  {qp.name}  {line(row, args)}", flush=True)
            save()


def unlabeled(args, results, save):
    graphs = [(Path(args.data) / "snap" / s if (Path(args.data) / "snap" / s).exists()
               else Path(args.data) / s, s) for s in args.snap]
    for spec in args.rmat:
        scale, ef, a = spec.split(":")
        b = c = round((1 - float(a)) / 3, 4)
        path, name, _ = rmat_file(Path(args.data) / "generated", int(scale), int(ef), float(a),
                                  b, c)
        graphs.append((path, name))
    for path, name in graphs:
        data = gthinker.Graph.read(path)
        print(f"{name}: {data.num_vertices} vertices, {data.num_edges} edges", flush=True)
        rows = []
        for pat in args.patterns:
            row = run_case(data, pat, None, pat, args,
                           peer(path, _pattern_file(pat, args), args.cap)
                           if args.peer != "none" and args.peer_unlabeled else None)
            rows.append(row)
            print(f"  {pat}  {line(row, args)}", flush=True)
        results["unlabeled"][name] = rows
        save()


def _pattern_file(pat, args):
    path = Path(args.data) / "generated" / f"pattern_{pat}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    sm.pattern(pat).write(path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="../shared/data", help="folder with labeled/ and snap/")
    ap.add_argument("--datasets", default="hprd,yeast,human")
    ap.add_argument("--sizes", default="16", help="query sizes, e.g. 16,24,32 (human: 12,16,20)")
    ap.add_argument("--queries", default="*.graph", help="query file pattern (glob)")
    ap.add_argument("--max-queries", type=int, default=0, help="per dataset (0: all)")
    ap.add_argument("--modes", default="cpu", help="of cpu,gpu,hybrid")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--cap", type=float, default=10.0, help="seconds per run (default 10)")
    ap.add_argument("--no-alt", action="store_true",
                    help="in gpu mode, run only the layout auto picks")
    ap.add_argument("--peer", choices=("vf2", "none"), default="vf2")
    ap.add_argument("--peer-jobs", type=int, default=1)
    ap.add_argument("--peer-unlabeled", action="store_true",
                    help="also run VF2 on the unlabeled patterns")
    ap.add_argument("--patterns", default="", help="e.g. triangle,diamond,4-cycle,5-clique,house")
    ap.add_argument("--snap", default="", help="unlabeled graphs for the patterns")
    ap.add_argument("--rmat", default="", help="scale:edge_factor:a, comma-separated")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    for name in ("datasets", "sizes", "modes", "patterns", "snap", "rmat"):
        setattr(args, name, [x for x in getattr(args, name).split(",") if x])
    if args.threads is None:
        args.threads = gthinker.default_threads()
    results = {"machine": {"host": platform.node(), "cpus": gthinker.default_threads(),
                           "device": gthinker.gpu.device_status()[1]},
               "command": " ".join(sys.argv), "cap_seconds": args.cap, "threads": args.threads,
               "labeled": {}, "unlabeled": {}}

    def save():
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(results, indent=1))

    print(results["machine"], flush=True)
    t = time.perf_counter()
    warm_up(args.modes, args.threads)
    print(f"warm-up (compiles): {time.perf_counter() - t:.1f} s", flush=True)
    if args.datasets:
        labeled(args, results, save)
    if args.patterns:
        unlabeled(args, results, save)
    save()


if __name__ == "__main__":
    main()

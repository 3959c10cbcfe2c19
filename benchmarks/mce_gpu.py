"""MCE on the GPU (``--mode gpu``) beside the CPU pool and igraph, one run each.

    python benchmarks/mce_gpu.py --data .data --rmat 22:8 --threads 16 \
        --small-buffer 33554432 --out benchmarks/results/mce_gpu.json

For each graph: the GPU worker alone, gthinker on ``--threads`` CPU cores, and
igraph (in a child process, stopped at ``--igraph-limit`` seconds). Counts must
agree (the script exits 1 if not). R-MAT graphs are made by ``gthinker generate
rmat`` (skewed: a=0.5, b=c=0.2 by default, seeded). ``--small-buffer`` reruns the
largest graph with the device buffer capped at that many bytes, which forces
host subgraph buffering, and checks that the count is unchanged.
GPU kernels are compiled once on a small graph first; that time is reported apart.
Times are the job's (``gthinker.run``): loading the file and the degeneracy order
are not in them, nor (GPU) the graph upload and buffer allocation (``setup_seconds``).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import networkx as nx
from common import rmat_file
from mce_cpu import run_igraph

import gthinker
from gthinker.apps import mce
from gthinker.cli.main import _progress_printer


def gpu_figures(stats: dict) -> dict:
    s = stats["gpu"]
    keys = ("device", "eta", "buffer_bytes", "buffer_vertices", "buffer_records", "peak_vertices",
            "peak_records", "levels", "max_depth", "launches", "to_host", "retries", "deferred",
            "host_stack_peak_records", "host_stack_peak_bytes", "host_stack_pops",
            "kernel_seconds", "setup_seconds")
    return {k: s[k] for k in keys}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=".data", help="folder with email-Enron.txt.gz")
    ap.add_argument("--rmat", default="22:8", help="R-MAT scale:edge-factor list, comma separated")
    ap.add_argument("--abc", default="0.5,0.2,0.2",
                    help="R-MAT quadrant probabilities a,b,c (default 0.5,0.2,0.2: max degree "
                         "about 24,000 at scale 22; the generator's 0.57,0.19,0.19 makes a "
                         "core of degeneracy 592 that no tool enumerates in minutes)")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--igraph-limit", type=float, default=300)
    ap.add_argument("--small-buffer", type=int, default=32 << 20, metavar="BYTES")
    ap.add_argument("--workdir", default="/tmp/gthinker-bench")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    print("device:", gthinker.gpu.require_device(), flush=True)
    t = time.perf_counter()
    warm = mce.run(nx.gnp_random_graph(60, 0.2, seed=1), mode="gpu")
    compile_seconds = time.perf_counter() - t
    assert warm.count == sum(1 for _ in nx.find_cliques(nx.gnp_random_graph(60, 0.2, seed=1)))
    print(f"kernels compiled and checked in {compile_seconds:.2f}s", flush=True)

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    graphs = []
    enron = Path(args.data) / "email-Enron.txt.gz"
    if enron.exists():
        graphs.append(("email-Enron", enron, None))
    for spec in filter(None, args.rmat.split(",")):
        scale, ef = spec.split(":")
        path, name, cmd = rmat_file(work, scale, ef, *args.abc.split(","))
        graphs.append((name, path, cmd))

    rows = []
    ok = True
    for name, path, made_by in graphs:
        g = gthinker.Graph.read(path)
        print(f"\n{name}: {g.num_vertices:,} vertices, {g.num_edges:,} edges, "
              f"max degree {g.max_degree:,}", flush=True)
        rg = mce.run(g, mode="gpu", progress=_progress_printer("cliques"),
                     progress_interval=10.0)
        print(f"  gpu: {rg.count:,} cliques in {rg.seconds:.3f}s  {gpu_figures(rg.stats)}",
              flush=True)
        rc = mce.run(g, threads=args.threads)
        print(f"  cpu {args.threads}t: {rc.count:,} cliques in {rc.seconds:.3f}s", flush=True)
        ig_seconds, ig_note = run_igraph(g, args.igraph_limit)
        print(f"  igraph: {ig_seconds if ig_seconds is not None else ig_note}", flush=True)
        same = rg.count == rc.count and rg.histogram == rc.histogram
        ok &= same
        rows.append({
            "graph": name, "made_by": made_by, "vertices": g.num_vertices, "edges": g.num_edges,
            "max_degree": int(g.max_degree), "cliques": rc.count, "max_clique": rc.max_size,
            "counts_equal": same, "gpu_seconds": rg.seconds, "cpu_seconds": rc.seconds,
            "cpu_threads": args.threads, "igraph_seconds": ig_seconds, "igraph_note": ig_note,
            "gpu": gpu_figures(rg.stats),
        })

    small = None
    if args.small_buffer and graphs:
        name, path, _ = graphs[-1]
        g = gthinker.Graph.read(path)
        rs = mce.run(g, mode="gpu", gpu_engine="levels", buffer_bytes=args.small_buffer)
        same = rs.count == rows[-1]["cliques"]
        ok &= same
        small = {"graph": name, "buffer_cap_bytes": args.small_buffer, "cliques": rs.count,
                 "counts_equal": same, "seconds": rs.seconds, "gpu": gpu_figures(rs.stats)}
        print(f"\nsmall buffer ({args.small_buffer:,} bytes) on {name}: {rs.count:,} cliques in "
              f"{rs.seconds:.3f}s  {small['gpu']}", flush=True)

    print(f"\n| graph | cliques | gpu | cpu {args.threads}t | igraph | gpu levels | launches "
          "| buffer peak / cap (vertices) | H peak |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = r["gpu"]
        ig = f"{r['igraph_seconds']:.3f} s" if r["igraph_seconds"] else r["igraph_note"]
        print(f"| {r['graph']} | {r['cliques']:,} | {r['gpu_seconds']:.3f} s | "
              f"{r['cpu_seconds']:.3f} s | {ig} | {s['levels']:,} | {s['launches']:,} | "
              f"{s['peak_vertices']:,} / {s['buffer_vertices']:,} | "
              f"{s['host_stack_peak_records']:,} records |")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({
            "machine": platform.node(), "cpu_count": gthinker.default_threads(),
            "python": platform.python_version(), "compile_seconds": compile_seconds,
            "date": time.strftime("%Y-%m-%d"), "rows": rows, "small_buffer": small,
        }, indent=2))
    print("counts equal everywhere" if ok else "COUNTS DIFFER", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

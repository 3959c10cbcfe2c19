"""MCE in every mode: CPU-only (all cores), GPU-only, hybrid, beside igraph; the
gains of G-ThinkerCG's Table I (H2G = GPU-only / hybrid, H2C = CPU-only /
hybrid), then the hybrid's sensitivity to eta, the GPU chunk, the CPU chunk and tau_c.

    python benchmarks/hybrid.py --data .data --threads 16 \
        --rmat 22:8:0.5,21:8:0.45,20:16:0.5 --sweep-graph 2 --out benchmarks/results/hybrid.json

Each run is one process-local call of ``gthinker.apps.mce.run`` (kernels compiled
once first, on a small graph); a run past ``--limit`` seconds is stopped (SIGALRM
-> the job's Ctrl-C path) and reported as such. Counts must agree across modes.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import signal
import sys
import time
from pathlib import Path

import networkx as nx
from common import rmat_file
from mce_cpu import run_igraph

import gthinker
from gthinker.apps import mce


def _alarm(signum, frame):
    raise KeyboardInterrupt


def capped(limit, fn):
    """(result, None) or (None, 'stopped after N s')."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return fn(), None
    except KeyboardInterrupt:
        return None, f"stopped after {limit:g} s"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def one(g, mode, threads, limit, **kw):
    r, note = capped(limit, lambda: mce.run(g, mode=mode, threads=threads, **kw))
    if r is None:
        return {"mode": mode, "seconds": None, "note": note}
    out = {"mode": mode, "seconds": r.seconds, "count": r.count, "histogram": r.histogram}
    if "gpu" in r.stats:
        s = r.stats["gpu"]
        out["gpu"] = {k: s[k] for k in (
            "assignments", "initial_vertices", "busy_seconds", "levels", "launches",
            "tasks_from_cpu", "steals_from_cpu", "tasks_to_cpu", "steals_to_cpu",
            "vertices_given_back", "level_tasks_to_cpu", "starved_polls",
            "longest_step_seconds", "host_stack_peak_records",
            "peak_vertices")}
    if mode != "gpu":
        out["cpu"] = {k: r.stats[k] for k in ("tasks_decomposed", "spill_peak_bytes")
                      if k in r.stats}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=".data")
    ap.add_argument("--snap", default="email-Enron.txt.gz,facebook_combined.txt.gz")
    ap.add_argument("--rmat", default="22:8:0.5,21:8:0.45,20:16:0.5",
                    help="scale:edge-factor:a list (b = c = (1 - a) / 2.5)")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--limit", type=float, default=120)
    ap.add_argument("--igraph-limit", type=float, default=60)
    ap.add_argument("--sweep-graph", default="",
                    help="indices (in the order run, comma-separated) of the graphs for the "
                         "sensitivity sweep")
    ap.add_argument("--table", default=True, action=argparse.BooleanOptionalAction,
                    help="the per-graph table (--no-table: only the sweep)")
    ap.add_argument("--modes", default="cpu,gpu,hybrid",
                    help="modes to run per graph (default: all three)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per mode and graph; the median is reported (all in the JSON)")
    ap.add_argument("--trace-dir", default=None,
                    help="also run the hybrid once more per graph with --trace, PNG here "
                         "(not the timed run)")
    ap.add_argument("--workdir", default="/tmp/gthinker-bench")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    print("device:", gthinker.gpu.require_device(), flush=True)
    warm = nx.gnp_random_graph(60, 0.2, seed=1)
    t = time.perf_counter()
    want = sum(1 for _ in nx.find_cliques(warm))
    # GPU-only first: in hybrid the CPUs may finish a small graph before the GPU
    # launches anything, and the kernels would then compile inside a timed run.
    assert mce.run(warm, mode="gpu").count == want
    assert mce.run(warm, mode="hybrid", threads=2).count == want
    print(f"compiled in {time.perf_counter() - t:.1f}s", flush=True)

    graphs = [(name.split(".")[0], Path(args.data) / name, None)
              for name in args.snap.split(",") if name]
    for spec in filter(None, args.rmat.split(",")):
        scale, ef, a = spec.split(":")
        b = f"{(1 - float(a)) / 2.5:.4g}"
        path, name, cmd = rmat_file(args.workdir, scale, ef, a, b, b)
        graphs.append((name, path, cmd))

    rows, ok, sweep = [], True, []

    def save():
        """Written after every graph and sweep point, so a run stopped by a
        time limit keeps what it measured."""
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps({
                "machine": platform.node(), "cpu_count": gthinker.default_threads(),
                "date": time.strftime("%Y-%m-%d"), "threads": args.threads,
                "repeat": args.repeat, "rows": rows, "sweep": sweep}, indent=2))

    loaded = []
    for name, path, made_by in graphs:
        if not path.exists():
            print(f"{name}: {path} missing, skipped", flush=True)
            continue
        g = gthinker.Graph.read(path)
        loaded.append((name, g))
        print(f"\n{name}: {g.num_vertices:,} vertices, {g.num_edges:,} edges, "
              f"max degree {g.max_degree:,}", flush=True)
        if not args.table:
            continue
        runs = {}
        for mode in args.modes.split(","):
            reps = [one(g, mode, args.threads, args.limit) for _ in range(args.repeat)]
            done = sorted((r for r in reps if r["seconds"] is not None),
                          key=lambda r: r["seconds"])
            r = runs[mode] = done[(len(done) - 1) // 2] if done else reps[0]
            r["all_seconds"] = [x["seconds"] for x in reps]
            if args.repeat > 1:
                print(f"  {mode:6s} runs: {r['all_seconds']}", flush=True)
            print(f"  {mode:6s}: {r.get('count', '-'):>14} cliques  "
                  f"{r['seconds'] if r['seconds'] is not None else r['note']}"
                  f"  {r.get('gpu', '')}", flush=True)
        if args.trace_dir:
            png = Path(args.trace_dir) / ("trace_" + re.sub(r"[^\w.-]+", "_", name) + ".png")
            png.parent.mkdir(parents=True, exist_ok=True)
            r = one(g, "hybrid", args.threads, args.limit, trace=str(png))
            print(f"  traced hybrid: {r['seconds']} -> {png}", flush=True)
        ig, ig_note = run_igraph(g, args.igraph_limit)
        counts = {r["count"] for r in runs.values() if r["seconds"] is not None}
        hists = [json.dumps(r["histogram"], sort_keys=True) for r in runs.values()
                 if r["seconds"] is not None]
        same = len(counts) <= 1 and len(set(hists)) <= 1
        ok &= same
        sec = {m: r["seconds"] for m, r in runs.items()}
        best = min((s for m, s in sec.items() if m != "hybrid" and s), default=None)
        row = {"graph": name, "made_by": made_by, "vertices": g.num_vertices,
               "edges": g.num_edges, "max_degree": int(g.max_degree),
               "cliques": next(iter(counts)) if counts else None, "counts_equal": same,
               "runs": runs, "igraph_seconds": ig, "igraph_note": ig_note}
        if sec.get("hybrid"):
            row["gain_h2g"] = sec["gpu"] / sec["hybrid"] if sec.get("gpu") else None
            row["gain_h2c"] = sec["cpu"] / sec["hybrid"] if sec.get("cpu") else None
            row["gain_vs_best"] = best / sec["hybrid"] if best else None
        rows.append(row)
        save()

    for index in (int(x) for x in args.sweep_graph.split(",") if x):
        if index >= len(loaded):
            continue
        name, g = loaded[index]
        print(f"\nsensitivity (hybrid) on {name}", flush=True)
        for param, values in (("eta_per_warp", (100, 1000, 4000)),
                              ("gpu_chunk", (50_000, 500_000, 2_000_000)),
                              ("cpu_chunk", (1, 8, 50)),
                              ("tau_c", (0, args.threads // 2, args.threads - 1)),
                              ("level_steal", (False,)), ("give_back", (False,))):
            for v in values:
                if param in ("gpu_chunk", "cpu_chunk"):
                    r = one(g, "hybrid", args.threads, args.limit, **{param: v})
                else:  # the GPU worker's options: the levels engine's
                    r = one(g, "hybrid", args.threads, args.limit, gpu_engine="levels",
                            **{param: v})
                ref = next((x["count"] for x in sweep if x["graph"] == name and x["count"]),
                           None)
                ok &= ref is None or r.get("count") in (None, ref)
                sweep.append({"graph": name, "param": param, "value": v,
                              "seconds": r["seconds"], "note": r.get("note"),
                              "count": r.get("count"), "gpu": r.get("gpu")})
                save()
                print(f"    {param}={v}: "
                      f"{r['seconds'] if r['seconds'] is not None else r['note']}", flush=True)

    def f(x):
        return f"{x:.3f} s" if x else "-"

    print(f"\n| graph | cliques | CPU {args.threads}t | GPU | hybrid | igraph | H2G | H2C "
          "| hybrid vs best |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = {m: r["runs"].get(m, {}).get("seconds") for m in ("cpu", "gpu", "hybrid")}
        ig = f(r["igraph_seconds"]) if r["igraph_seconds"] else r["igraph_note"]
        g2 = r.get("gain_h2g")
        c2 = r.get("gain_h2c")
        vb = r.get("gain_vs_best")
        print(f"| {r['graph']} | {r['cliques']:,} | {f(s['cpu'])} | {f(s['gpu'])} | "
              f"{f(s['hybrid'])} | {ig} | {g2 and f'{g2:.2f}'} | {c2 and f'{c2:.2f}'} | "
              f"{vb and f'{vb:.2f}x'} |")
    save()
    print("counts equal everywhere" if ok else "COUNTS DIFFER", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

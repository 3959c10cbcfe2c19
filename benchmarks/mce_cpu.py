"""MCE on the CPU: gthinker at 1, 2, ..., all threads beside igraph and networkx, one run each.

    python benchmarks/mce_cpu.py --data ../shared/data/snap --threads 1,2,16 \
        --rmat 16:8 --facebook-seconds 300 --out benchmarks/results/mce_cpu.json

Prints a markdown table; with --out also writes every number as JSON. igraph lists cliques
into /dev/null (its file= mode) so that it is timed without building Python lists.
facebook_combined is too heavy to finish: gthinker runs it under a wall-clock cap
(a subprocess stopped by timeout) and the last progress line says how far it got.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gthinker
from gthinker.apps import mce
from gthinker.graphs.generate import rmat


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def run_igraph(graph, limit):
    try:
        import igraph
    except ImportError:
        return None, None
    ig = igraph.Graph(n=graph.num_vertices, edges=graph.edge_array().tolist())
    # In a child process so that a run past the limit can be stopped.
    code = (
        "import igraph,sys,time\n"
        "g=igraph.Graph.Read_Pickle(sys.argv[1]);t=time.perf_counter()\n"
        "g.maximal_cliques(file='/dev/null');print(time.perf_counter()-t)\n"
    )
    with tempfile.NamedTemporaryFile(suffix=".pkl", delete=False) as f:
        ig.write_pickle(f.name)
    try:
        r = subprocess.run([sys.executable, "-c", code, f.name], capture_output=True,
                           text=True, timeout=limit)
        return float(r.stdout.strip()), None
    except subprocess.TimeoutExpired:
        return None, f"stopped after {limit}s"
    finally:
        os.unlink(f.name)


def run_networkx(graph, limit):
    import networkx as nx

    G = graph.to_networkx()
    start = time.perf_counter()
    count = 0
    for _ in nx.find_cliques(G):
        count += 1
        if count % 10000 == 0 and time.perf_counter() - start > limit:
            return None, count, f"stopped after {limit}s"
    return time.perf_counter() - start, count, None


def bench_graph(name, graph, threads, args, rows):
    print(f"## {name}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges", flush=True)
    row = {"graph": name, "vertices": graph.num_vertices, "edges": graph.num_edges}
    mce.run(graph, threads=1)  # compile outside the timings
    counts = set()
    for t in threads:
        res = mce.run(graph, threads=t)
        counts.add(res.count)
        row[f"gthinker_{t}"] = res.seconds
        row[f"decomposed_{t}"] = res.stats["tasks_decomposed"]
        print(f"gthinker {t:3d} threads: {res.seconds:9.3f}s  count={res.count:,}", flush=True)
    for budget in args.budgets:
        res = mce.run(graph, threads=threads[-1], time_budget=budget)
        counts.add(res.count)
        row[f"budget_{budget}"] = res.seconds
        busy = [w["busy_seconds"] for w in res.stats["workers"]]
        print(f"gthinker {threads[-1]:3d} threads, time budget {budget}s: {res.seconds:9.3f}s "
              f"decomposed={res.stats['tasks_decomposed']:,} busy min/max "
              f"{min(busy):.2f}/{max(busy):.2f}s", flush=True)
    assert len(counts) == 1, f"counts differ across thread counts: {counts}"
    row["count"] = counts.pop()
    row["max_size"] = res.max_size
    row["igraph"], row["igraph_note"] = None, "skipped"
    if args.skip_baselines:
        rows.append(row)
        return
    row["igraph"], row["igraph_note"] = run_igraph(graph, args.igraph_limit)
    print(f"igraph   1 thread : {row['igraph']}s {row['igraph_note'] or ''}", flush=True)
    if not args.no_networkx:
        row["networkx"], nx_count, row["networkx_note"] = run_networkx(graph, args.networkx_limit)
        if row["networkx"] is not None:
            assert nx_count == row["count"], (nx_count, row["count"])
        print(f"networkx 1 thread : {row['networkx']}s {row['networkx_note'] or ''}", flush=True)
    rows.append(row)


def facebook_capped(path, threads, seconds):
    cmd = ["timeout", "-s", "INT", str(seconds), sys.executable, "-m", "gthinker", "mce",
           str(path), "--threads", str(threads)]
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - start
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("[")]
    done = r.returncode == 0
    return {"graph": "facebook_combined", "threads": threads, "finished": done,
            "wall_seconds": wall, "last_progress": lines[-1] if lines else None,
            "stdout": r.stdout.strip()}


def markdown(rows, threads):
    cols = [f"gthinker {t}t" for t in threads]
    out = ["| graph | vertices | edges | maximal cliques | " + " | ".join(cols)
           + " | igraph | networkx | speedup 1->" + str(threads[-1]) + " |",
           "|" + "---|" * (len(cols) + 7)]
    for r in rows:
        def fmt(x):
            return "-" if x is None else f"{x:.3f}"
        speed = r[f"gthinker_{threads[0]}"] / r[f"gthinker_{threads[-1]}"]
        out.append(f"| {r['graph']} | {r['vertices']:,} | {r['edges']:,} | {r['count']:,} | "
                   + " | ".join(fmt(r[f"gthinker_{t}"]) for t in threads)
                   + f" | {fmt(r['igraph'])} | {fmt(r.get('networkx'))} | {speed:.1f}x |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared/data/snap"))
    ap.add_argument("--threads", default=f"1,2,{gthinker.default_threads()}")
    ap.add_argument("--rmat", action="append", default=[], metavar="SCALE:EDGE_FACTOR",
                    help="also run on a generated R-MAT graph (seed 1), e.g. 16:8")
    ap.add_argument("--facebook-seconds", type=int, default=0,
                    help="run facebook_combined on all threads for at most this long")
    ap.add_argument("--budgets", default="", help="also run all threads at these time budgets")
    ap.add_argument("--skip-baselines", action="store_true", help="no igraph / networkx runs")
    ap.add_argument("--igraph-limit", type=int, default=600)
    ap.add_argument("--networkx-limit", type=int, default=120)
    ap.add_argument("--no-networkx", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    threads = [int(x) for x in args.threads.split(",")]
    args.budgets = [float(x) for x in args.budgets.split(",") if x]
    rows = []
    enron = Path(args.data) / "email-Enron.txt.gz"
    if enron.exists():
        g, secs = timed(lambda: gthinker.Graph.read(enron))
        print(f"email-Enron loaded in {secs:.3f}s")
        bench_graph("email-Enron", g, threads, args, rows)
    for spec in args.rmat:
        scale, ef = (int(x) for x in spec.split(":"))
        g = rmat(scale, edge_factor=ef, seed=1)
        bench_graph(f"rmat-{scale}-{ef}", g, threads, args, rows)
    fb = None
    if args.facebook_seconds:
        fb = facebook_capped(Path(args.data) / "facebook_combined.txt.gz", threads[-1],
                             args.facebook_seconds)
        print("facebook_combined:", json.dumps(fb, indent=1))
    table = markdown(rows, threads)
    print(table)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({
            "date": time.strftime("%Y-%m-%d"), "machine": platform.node(),
            "cpus": os.cpu_count(), "python": platform.python_version(),
            "command": " ".join(sys.argv), "rows": rows, "facebook": fb, "table": table,
        }, indent=1))


if __name__ == "__main__":
    main()

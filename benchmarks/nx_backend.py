"""NetworkX's ``find_cliques`` with and without the gthinker backend, on one graph,
in the same run.

    python benchmarks/nx_backend.py /path/to/email-Enron.txt.gz --runs 5 \
        --out nx_backend_enron_2core

Needs an installed gthinker (``pip install .``): NetworkX must find the backend
through its entry points, as a user's would.

- **Warm** (one child process): the graph is read once with networkx; then each
  run lists every maximal clique with plain NetworkX (``nx.find_cliques(G)``) and
  with the backend (``nx.find_cliques(G, backend="gthinker")``), in turn, so that
  drift of the machine's speed hits both alike. Before each backend run the
  graph's conversion cache is cleared: the time includes converting the graph.
  Both lists are checked to hold the same cliques. The compile cache is filled by
  a first, untimed backend run. Also timed: counting the cliques as they stream
  (no list kept), and the time until the first clique.
- **Whole process**: a child process that imports networkx, reads the graph,
  lists the cliques and exits, timed from outside; plain and backend in turn.
  Reading the graph (networkx's ``read_edgelist``) is part of both; the child
  reports its phases, so the read is also given apart.

Min and median over ``--runs`` are reported (the machine is shared: quote the
median). Results: RESULTS_DIR/NAME.json and NAME.md (default benchmarks/results/).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"

# The child's code: read the graph, then find the cliques ``runs`` times with each
# backend in turn, each way (``listed``: list(...); ``streamed``: counted as they
# come; ``first``: until the first clique, then the generator is closed); print one
# JSON line.
CHILD = r"""
import gc, json, sys, time
t0 = time.perf_counter()
import networkx as nx
if "gthinker" not in nx.utils.backends.backends:
    sys.exit("NetworkX does not find the gthinker backend: pip install .")
path, which, runs, check = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), sys.argv[4] == "1"
ways = sys.argv[5].split(",")
t1 = time.perf_counter()
G = nx.read_edgelist(path, nodetype=int)
t2 = time.perf_counter()
nx.config.warnings_to_ignore.add("cache")

def cliques(backend):
    G.__networkx_cache__.clear()  # conversion inside the time
    return nx.find_cliques(G, backend=None if backend == "networkx" else backend)

def listed(backend):
    start = time.perf_counter()
    found = list(cliques(backend))
    return time.perf_counter() - start, len(found)

def streamed(backend):
    start = time.perf_counter()
    found = sum(1 for _ in cliques(backend))
    return time.perf_counter() - start, found

def first(backend):
    start = time.perf_counter()
    it = cliques(backend)
    next(it)
    seconds = time.perf_counter() - start
    it.close()
    return seconds, None

out = {"import_seconds": t1 - t0, "read_seconds": t2 - t1, "nodes": len(G),
       "edges": G.number_of_edges(), **{way: {w: [] for w in which} for way in ways}}
if check:  # same cliques; this run also fills gthinker's compile cache where it is empty
    sets = [{frozenset(c) for c in cliques(w)} for w in which]
    out["same_cliques"] = all(s == sets[0] for s in sets)
    del sets
    gc.collect()
for _ in range(runs):
    for w in which:
        for way in ways:
            seconds, found = {"listed": listed, "streamed": streamed, "first": first}[way](w)
            out[way][w].append(seconds)
            if found is not None:
                out["cliques"] = found
out["process_seconds"] = time.perf_counter() - t0
print(json.dumps(out))
"""


def child(path, which, runs, check, ways):
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), which, str(runs),
                           "1" if check else "0", ways], capture_output=True, text=True,
                          check=False)
    wall = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"child failed:\n{done.stdout}\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1]), wall


def summary(values):
    return {"min": min(values), "median": statistics.median(values), "runs": values}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", help="SNAP edge list (.txt or .txt.gz)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default="nx_backend")
    ap.add_argument("--results-dir", default=str(RESULTS))
    args = ap.parse_args(argv)

    warm, _ = child(args.graph, "networkx,gthinker", args.runs, True, "listed,streamed,first")
    if not warm["same_cliques"]:
        sys.exit("the backend's cliques differ from NetworkX's")
    whole = {"networkx": [], "gthinker": []}
    phases = {"networkx": [], "gthinker": []}
    for _ in range(args.runs):
        for which in whole:
            inner, wall = child(args.graph, which, 1, False, "listed")
            whole[which].append(wall)
            phases[which].append({"import_networkx_seconds": inner["import_seconds"],
                                  "read_seconds": inner["read_seconds"],
                                  "find_cliques_seconds": inner["listed"][which][0]})
    result = {
        "graph": str(args.graph), "nodes": warm["nodes"], "edges": warm["edges"],
        "cliques": warm["cliques"], "same_cliques": warm["same_cliques"],
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "machine": f"{platform.node()}: {os.cpu_count()} CPUs, {platform.machine()}",
        "python": platform.python_version(), "date": datetime.datetime.now().isoformat(),
        "warm_listed": {w: summary(v) for w, v in warm["listed"].items()},
        "warm_streamed": {w: summary(v) for w, v in warm["streamed"].items()},
        "warm_first_clique": {w: summary(v) for w, v in warm["first"].items()},
        "whole_process": {w: summary(v) for w, v in whole.items()},
        "whole_process_phases": phases,
    }
    out = Path(args.results_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.out}.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / f"{args.out}.md").write_text(report(result))
    print(report(result))


def report(r) -> str:
    def row(what, key):
        a, b = r[key]["networkx"], r[key]["gthinker"]
        return (f"| {what} | {a['min']:.2f} / {a['median']:.2f} | {b['min']:.2f} / "
                f"{b['median']:.2f} | {a['median'] / b['median']:.1f}x |")

    phases = r["whole_process_phases"]["gthinker"]
    read = statistics.median(p["read_seconds"] for p in phases)
    return "\n".join([
        f"# nx.find_cliques on {Path(r['graph']).name}: {r['nodes']:,} nodes, "
        f"{r['edges']:,} edges, {r['cliques']:,} maximal cliques "
        f"(same cliques: {r['same_cliques']})",
        "",
        f"`{r['command']}` on {r['machine']}, Python {r['python']}, {r['date'][:10]}",
        "",
        "| seconds (min / median) | NetworkX | backend=\"gthinker\" | speedup (medians) |",
        "|---|---|---|---|",
        row("warm, `list(find_cliques(G))`, conversion included", "warm_listed"),
        row("warm, cliques counted as they stream", "warm_streamed"),
        row("warm, until the first clique (conversion included)", "warm_first_clique"),
        row("whole process: import, read the graph, list, exit", "whole_process"),
        "",
        f"Reading the graph with networkx (in both whole-process figures): {read:.2f} s "
        "(median).",
        "",
    ])


if __name__ == "__main__":
    main()

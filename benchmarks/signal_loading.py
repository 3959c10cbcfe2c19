"""Signals while a large graph loads: a whole ``gthinker`` process, interrupted at many
moments of reading a text graph, must end with 130 (SIGINT) or 143 (SIGTERM) (or 0 if
it had finished), never a crash and never a traceback (issue 35).

    python benchmarks/signal_loading.py --scale 20 --moments 20 --out results.json

Generates R-MAT SCALE (edge factor 16: a ~200 MB edge list at scale 20) unless --graph
is given, times the load of one uninterrupted ``gthinker COMMAND GRAPH ...`` run (default
``count GRAPH triangle``: the load is every command's, and counting is short), then for each
signal sends it at MOMENTS evenly spread moments from 0.3 s to the end of the load
(imports included) and records the exit status and whether stderr held a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import gthinker
import gthinker.graphs.generate

COMMANDS = {"count": ["count", "{graph}", "triangle", "-q"], "mce": ["mce", "{graph}", "-q"]}


def _run(command, graph, sig=None, delay=0.0):
    """(exit status, seconds, stderr) of one ``gthinker COMMAND GRAPH`` process."""
    args = [a.format(graph=graph) for a in COMMANDS[command]]
    proc = subprocess.Popen([sys.executable, "-m", "gthinker", *args],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, cwd=tempfile.gettempdir(),
                            start_new_session=True)
    t0 = time.perf_counter()
    if sig is not None:
        time.sleep(delay)
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=600)
    return proc.returncode, time.perf_counter() - t0, err


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", help="an edge list to load (default: generated)")
    ap.add_argument("--scale", type=int, default=20)
    ap.add_argument("--moments", type=int, default=20)
    ap.add_argument("--command", choices=sorted(COMMANDS), default="count")
    ap.add_argument("--out", help="JSON file for every run")
    args = ap.parse_args(argv)
    graph = args.graph
    if graph is None:
        graph = os.path.join(tempfile.mkdtemp(prefix="gt-signals-"), f"rmat{args.scale}.txt")
        gthinker.graphs.generate.rmat(args.scale, 16, seed=1).write(graph)
    size = os.path.getsize(graph)
    _run(args.command, graph)  # the compile cache filled, the file in the page cache
    _, whole, _ = _run(args.command, graph)
    _, imports, _ = _run(args.command, os.devnull)  # an empty graph: imports and start
    t0 = time.perf_counter()
    gthinker.Graph.read(graph)
    load = time.perf_counter() - t0
    start, end = 0.3, imports + load  # from the imports to the end of the load
    rows = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        for k in range(args.moments):
            delay = start + (end - start) * k / max(1, args.moments - 1)
            status, seconds, err = _run(args.command, graph, sig, delay)
            rows.append({"signal": sig.name, "delay": round(delay, 3), "exit": status,
                         "seconds": round(seconds, 3), "traceback": "Traceback" in err,
                         "stderr_tail": err.strip().splitlines()[-1:] if err.strip() else []})
            print(f"{sig.name} at {delay:5.2f} s: exit {status}"
                  f"{' TRACEBACK' if 'Traceback' in err else ''}", flush=True)
    ok = [r for r in rows if r["exit"] in (0, 128 + signal.Signals[r["signal"]].value)
          and not r["traceback"]]
    summary = {"command": args.command, "graph": str(graph), "bytes": size,
               "uninterrupted_seconds": round(whole, 3),
               "load_seconds": load, "runs": len(rows), "clean": len(ok),
               "interrupted": sum(r["exit"] != 0 for r in rows),
               "crashes": [r for r in rows if r["exit"] < 0 or r not in ok]}
    print(json.dumps({k: v for k, v in summary.items() if k != "crashes"}))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"summary": summary, "runs": rows, "cores": os.cpu_count()}, fh, indent=1)
    return 0 if len(ok) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())

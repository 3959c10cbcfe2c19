"""Subgraph matching beside T-DFS: the seven patterns of its shipped data/pattern/1-7.g.

For every graph and pattern: T-DFS (benchmarks/peers/tdfs.sh, built beforehand) on the same
graph (gthinker's own parse, written out and converted with T-DFS's graph_converter), its
kernel time and its count of embeddings; then ``gthinker.apps.sm.count`` of the same pattern
(embeddings) in each mode, in this process: one run that may compile, then ``--repeat`` warm
runs (the job's ``seconds``, compile excluded; min and median). Counts are compared, and a
mismatch makes the exit status 1. A run is stopped after ``--run-limit`` seconds (gthinker: a
StopToken, the row says so; T-DFS: killed), and once ``--budget`` seconds have passed the rest
is skipped, so that one call on the GPU machine ends in time.

    python benchmarks/sm_tdfs.py --data .data --tdfs /tmp/tdfs --rmat 20:16 \\
        --modes gpu,cpu --threads 16 --repeat 3 --out results/sm_tdfs

``--data`` holds snap/email-Enron.txt.gz and snap/facebook_combined.txt.gz (as
../shared/data); ``--rmat S:EF`` adds ``gthinker generate rmat --scale S --edge-factor EF
--seed 1`` (made in ``--work``).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

import gthinker
from gthinker.apps import sm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import rmat_file  # noqa: E402

HERE = Path(__file__).resolve().parent
TDFS = HERE / "peers" / "tdfs.sh"
#: The shapes of T-DFS's patterns 1-7 (checked against their edges by :func:`_query`).
NAMES = {1: "diamond", 2: "4-clique", 3: "4-clique+2", 4: "diamond+tips", 5: "wheel W4",
         6: "5-clique-e", 7: "5-clique"}
SNAP = {"email-Enron": "snap/email-Enron.txt.gz", "facebook": "snap/facebook_combined.txt.gz"}


def _query(path: Path) -> gthinker.Graph:
    """A T-DFS pattern file (``v ID LABEL`` / ``e U V LABEL``) as an unlabeled query."""
    edges = [tuple(map(int, line.split()[1:3])) for line in path.read_text().splitlines()
             if line.startswith("e ")]
    return gthinker.Graph.from_edges(np.array(edges, np.int64))


def _tdfs(graph_dir: Path, pattern: Path, limit: float) -> dict:
    cmd = ["bash", str(TDFS), "run", str(graph_dir), str(pattern)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=limit).stdout
    except subprocess.TimeoutExpired:
        return {"error": f"killed after {limit:.0f} s"}
    found = re.search(r"^[^\t\n]+\t([0-9.]+)\t(\d+)$", out, re.M)
    wall = re.search(r"^tdfs_wall_seconds = ([0-9.]+)$", out, re.M)
    if not found:
        return {"error": out[-600:]}
    return {"kernel": float(found.group(1)) / 1e3, "count": int(found.group(2)),
            "wall": float(wall.group(1)) if wall else None}


def _counted(graph, query, mode, threads, limit):
    """One sm.count, stopped after ``limit`` seconds."""
    token = gthinker.StopToken()
    timer = threading.Timer(limit, token.set)
    timer.start()
    try:
        return sm.count(graph, query, mode=mode, threads=threads, stop=token)
    finally:
        timer.cancel()


def _gthinker(graph, query, mode, threads, repeat, limit):
    first = _counted(graph, query, mode, threads, limit)
    row = {"count": first.count, "first_seconds": first.seconds,
           "first_compile": first.compile_seconds, "mode": first.mode,
           "method": getattr(first, "method", "subgraph matching"), "gpu_mode": first.gpu_mode,
           "mode_reason": first.mode_reason}
    if first.stopped:
        return {**row, "stopped": first.stopped, "count": None}
    runs = [_counted(graph, query, mode, threads, limit) for _ in range(repeat)]
    if any(r.stopped for r in runs):
        return {**row, "stopped": "stop", "count": None}
    assert all(r.count == first.count for r in runs), "counts differ between runs"
    secs = sorted(r.seconds for r in runs)
    gpu = [r.stats["gpu"] for r in runs if "gpu" in r.stats]
    return {**row, "warm_min": secs[0], "warm_median": statistics.median(secs),
            "gpu": gpu[-1] if gpu else None}


def _graphs(a):
    for spec in filter(None, a.graphs.split(",")):  # --graphs "": the R-MAT graphs alone
        name, _, path = spec.partition("=")
        yield name, Path(path) if path else Path(a.data) / SNAP[name]
    for spec in a.rmat or []:
        scale, ef = (int(x) for x in spec.split(":"))
        path, _, _ = rmat_file(a.work, scale, ef, 0.57, 0.19, 0.19)
        yield f"R-MAT {scale}", path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=".data")
    ap.add_argument("--graphs", default="email-Enron,facebook",
                    help="email-Enron, facebook (from --data) or NAME=PATH, comma-separated")
    ap.add_argument("--rmat", action="append", metavar="SCALE:EF")
    ap.add_argument("--labeled", action="append", default=[], metavar="NAME=GRAPH:QUERY",
                    help="a labeled query (paths under --data), gthinker alone (T-DFS takes "
                         "7 query vertices at most)")
    ap.add_argument("--tdfs", default="/tmp/tdfs", help="T-DFS's build (tdfs.sh build)")
    ap.add_argument("--work", default="/tmp/sm_tdfs", help="converted graphs go here")
    ap.add_argument("--patterns", default="1,2,3,4,5,6,7")
    ap.add_argument("--modes", default="gpu,cpu")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--run-limit", type=float, default=60.0, help="seconds a run may take")
    ap.add_argument("--budget", type=float, default=480.0, help="seconds for everything")
    ap.add_argument("--out", default=None, help="write OUT.json and OUT.md")
    a = ap.parse_args(argv)
    t_start = time.perf_counter()
    rows, bad = [], 0
    for name, path in _graphs(a):
        graph = gthinker.Graph.read(path)
        gdir = Path(a.work) / re.sub(r"\W+", "_", name)
        if not (gdir / "snap.txt.meta.txt").exists():
            gdir.mkdir(parents=True, exist_ok=True)
            graph.write(gdir / "edges.txt")
            subprocess.run(["bash", str(TDFS), "convert", str(gdir / "edges.txt"), str(gdir)],
                           check=True, capture_output=True, env={"TDFS_DIR": a.tdfs,
                                                                 "PATH": _path()})
        for n in (int(x) for x in a.patterns.split(",")):
            pfile = Path(a.tdfs) / "src" / "data" / "pattern" / f"{n}.g"
            query = _query(pfile)
            left = a.budget - (time.perf_counter() - t_start)
            row = {"graph": name, "vertices": graph.num_vertices, "edges": graph.num_edges,
                   "max_degree": int(graph.max_degree), "pattern": n, "shape": NAMES[n],
                   "query_edges": query.edge_array().tolist()}
            if left < 5:
                rows.append({**row, "skipped": "budget"})
                continue
            row["tdfs"] = _tdfs(gdir, pfile, min(a.run_limit, left))
            for mode in a.modes.split(","):
                left = a.budget - (time.perf_counter() - t_start)
                if left < 5:
                    row[mode] = {"skipped": "budget"}
                    continue
                row[mode] = _gthinker(graph, query, mode, a.threads, a.repeat,
                                      min(a.run_limit, left))
                want = row["tdfs"].get("count")
                if row[mode].get("count") is not None and want is not None:
                    row[mode]["equal"] = row[mode]["count"] == want
                    bad += not row[mode]["equal"]
            rows.append(row)
            print(_line(row, a.modes.split(",")), flush=True)
            _write(a, rows)
    for spec in a.labeled:
        name, _, paths = spec.partition("=")
        gpath, qpath = (Path(a.data) / x for x in paths.split(":"))
        graph, query = gthinker.Graph.read(gpath), gthinker.Graph.read(qpath)
        row = {"graph": name, "vertices": graph.num_vertices, "edges": graph.num_edges,
               "max_degree": int(graph.max_degree), "pattern": qpath.name, "shape": "labeled",
               "tdfs": {"error": "not run: T-DFS takes at most 7 query vertices"}}
        counts = set()
        for mode in a.modes.split(","):
            row[mode] = _gthinker(graph, query, mode, a.threads, max(a.repeat, 5), a.run_limit)
            counts.add(row[mode]["count"])
        bad += len(counts) > 1
        rows.append(row)
        print(_line(row, a.modes.split(",")), flush=True)
    _write(a, rows)
    if bad:
        print(f"COUNT MISMATCH in {bad} comparisons", file=sys.stderr)
    return 1 if bad else 0


def _path():
    import os

    return os.environ.get("PATH", "/usr/bin:/bin")


def _ms(x):
    return "-" if x is None else f"{x * 1e3:.2f} ms" if x < 1 else f"{x:.2f} s"


def _cell(r):
    if not r or "skipped" in r:
        return "skipped"
    if r.get("stopped"):
        return f"stopped ({r['mode']})"
    return f"{_ms(r['warm_min'])} / {_ms(r['warm_median'])}"


def _line(row, modes):
    t = row["tdfs"]
    peer = (f"T-DFS {_ms(t['kernel'])} {t['count']:,}" if "kernel" in t
            else f"T-DFS {t.get('error', '')[:80]!r}")
    mine = "; ".join(f"{m} {_cell(row.get(m))} {row.get(m, {}).get('count')}" for m in modes)
    return f"{row['graph']} P{row['pattern']} {row['shape']}: {peer} | {mine}"


def _write(a, rows):
    if not a.out:
        return
    meta = {"host": platform.node(), "python": sys.version.split()[0], "threads": a.threads,
            "argv": sys.argv, "gthinker": gthinker.__version__,
            "device": gthinker.gpu.device_status()[1]}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(f"{a.out}.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1,
                                                default=str))
    modes = a.modes.split(",")
    out = ["| graph | pattern | embeddings | T-DFS kernel | "
           + " | ".join(f"gthinker {m} warm min / median" for m in modes) + " | counts equal |",
           "|" + " --- |" * (5 + len(modes))]
    for r in rows:
        if "skipped" in r:
            out.append(f"| {r['graph']} | {r['pattern']} {r['shape']} | skipped (budget) |"
                       + " |" * (2 + len(modes)))
            continue
        t = r["tdfs"]
        count = t.get("count") or next((r[m]["count"] for m in modes
                                        if r.get(m, {}).get("count") is not None), None)
        equal = all(r[m].get("equal", True) for m in modes if m in r)
        out.append(f"| {r['graph']} | {r['pattern']} {r['shape']} | "
                   + (f"{count:,}" if count is not None else "-") + " | "
                   + (_ms(t["kernel"]) if "kernel" in t else t.get("error", "")[:40]) + " | "
                   + " | ".join(_cell(r.get(m)) for m in modes)
                   + f" | {'yes' if equal else 'NO'} |")
    Path(f"{a.out}.md").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    sys.exit(main())

"""Subgraph matching beside GSI (benchmarks/peers/gsi.sh), and the GPU search in parts.

Three tables, written as JSON and markdown to ``--out``.{json,md}:

- **GSI's samples**: its data/data.g (a directed 3-cycle) with each of its sample queries:
  GSI's count beside networkx's (DiGraphMatcher, labels matched); gthinker's column says
  "directed" until gthinker reads directed graphs (``gthinker.Graph`` with ``directed``).
- **R-MAT**: ``gthinker generate rmat --scale S`` (``--rmat S:EF``), unlabeled, with K vertex
  labels (``--vertex-labels K``; gsi_convert.vertex_labels, the same on both sides) and,
  where ``gthinker generate rmat`` has ``--edge-labels``, with 4 edge labels: GSI's sample
  shapes made undirected (wedge = 3-path, triangle) and the T-DFS shapes diamond and
  4-clique, each converted to GSI's .g (gsi_convert.py; undirected: both ways, so GSI counts
  embeddings), GSI's count and its ``match used`` time beside ``sm.count(mode="gpu")``
  (embeddings; one run that may compile, then ``--repeat`` warm runs, the job's seconds).
  Query vertex labels on labeled graphs: query vertex i gets label ``i mod K``.
- **In parts** (``--parts S:EF``, repeatable): on R-MAT S, the triangles (``count``, the
  clique engine, one hop) and the 4-cycles (``sm``, the depth-first engine, two hops)
  without a cap and with ``gpu_memory`` half the graph's bytes (the graph twice the cap):
  the counts (they must be equal) and the time ratio. ``--capped S:EF`` (repeatable): the
  triangles with the cap only (R-MAT 24: the graph larger than a cap of half of it, and
  the whole run's parts).

A count that differs makes the exit status 1. Runs are stopped after ``--run-limit``
seconds (gthinker: a StopToken; GSI: killed); after ``--budget`` seconds the rest is
skipped.

    python benchmarks/sm_gsi.py --gsi /tmp/gsi --rmat 20:16 --vertex-labels 4 \\
        --parts 22:16 --capped 24:16 --out results/sm_gsi
"""

from __future__ import annotations

import argparse
import json
import os
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
from gthinker.apps import count, sm
from gthinker.apps.matching.partitions import graph_bytes

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "peers"))
from gsi_convert import monomorphisms, read_g, vertex_labels, write_g, write_graph  # noqa: E402

GSI = HERE / "peers" / "gsi.sh"
SAMPLES = ("query.g", "star.g", "triangle.g", "wedge.g")
SHAPES = ("3-path", "triangle", "diamond", "4-clique")
EDGE_LABELS = 4


def _rmat(work: Path, scale: int, ef: int):
    """``gthinker generate rmat`` (seed 1, the generator's default skew) to a binary graph,
    once: ``(path, name, command)``."""
    path = work / f"rmat_s{scale}_ef{ef}.csr"
    cmd = ["gthinker", "generate", "rmat", "--scale", str(scale), "--edge-factor", str(ef),
           "--seed", "1", "-o", str(path)]
    if not path.exists():
        subprocess.run(cmd, check=True)
    return path, f"R-MAT {scale} ef{ef}", " ".join(cmd)


def _gsi(gsi_dir, data, queries, limit):
    try:
        out = subprocess.run(["bash", str(GSI), "run", str(data), str(queries)], text=True,
                             capture_output=True, timeout=limit,
                             env={**os.environ, "GSI_DIR": str(gsi_dir)})
    except subprocess.TimeoutExpired:
        return {"error": f"killed after {limit:.0f} s"}
    counts = [int(c) for c in re.findall(r"^gsi_count \d+ (\d+)$", out.stdout, re.M)]
    ms = re.search(r"^gsi_match_ms = (\d+)$", out.stdout, re.M)
    wall = re.search(r"^gsi_wall_seconds = ([0-9.]+)$", out.stdout, re.M)
    if out.returncode or not counts:
        return {"error": " ".join((out.stdout + out.stderr).split())[-300:]}
    return {"counts": counts, "match_seconds": int(ms.group(1)) / 1e3 if ms else None,
            "wall": float(wall.group(1)) if wall else None}


def _stopped_after(limit, fn, **kw):
    token = gthinker.StopToken()
    timer = threading.Timer(limit, token.set)
    timer.start()
    try:
        return fn(stop=token, **kw)
    finally:
        timer.cancel()


def _timed(fn, repeat, limit, **kw):
    """A first run, then ``repeat`` warm ones: the count, the warm seconds and the
    figures of the last."""
    try:
        first = _stopped_after(limit, fn, **kw)
    except gthinker.GraphTooLargeError as e:  # a part's neighbourhood above the cap
        return {"error": str(e)}
    if getattr(first, "stopped", None):
        return {"stopped": True}
    runs = [_stopped_after(limit, fn, **kw) for _ in range(repeat)]
    secs = sorted(r.seconds for r in runs) or [first.seconds]
    return {"count": first.count, "warm_min": secs[0], "warm_median": statistics.median(secs),
            "first_seconds": first.seconds, "mode": first.mode,
            "reason": first.mode_reason, "parts": len(runs[-1].stats.get("parts", []))
            if runs else len(first.stats.get("parts", []))}


def _samples(a, work):
    d = Path(a.gsi) / "src" / "data"
    rows = []
    data = read_g(d / "data.g")[0]
    for q in SAMPLES:
        want = [monomorphisms(data, query) for query in read_g(d / q)]
        got = _gsi(a.gsi, d / "data.g", d / q, a.run_limit)
        rows.append({"query": q, "networkx": want, "gsi": got,
                     "gthinker": "not run: directed (the script has no directed reader yet)"})
    return rows


def _edge_labels_flag() -> bool:
    out = subprocess.run(["gthinker", "generate", "rmat", "--help"], text=True,
                         capture_output=True)
    return "--edge-labels" in out.stdout


def _query(name, k, edge_labeled):
    """The query: vertex i labeled ``i mod k`` (k > 0), every edge labeled 0 on an
    edge-labeled graph (None where gthinker.Graph takes no edge labels yet)."""
    q = sm.as_query(name)
    labels = np.arange(q.num_vertices) % k if k else None
    extra = {"edge_labels": np.zeros(q.indices.size, np.int32)} if edge_labeled else {}
    try:
        return gthinker.Graph(q.indptr, q.indices, labels=labels, **extra)
    except TypeError:
        return None


def _rmat_rows(a, work, spec, deadline):
    scale, ef = (int(x) for x in spec.split(":"))
    path, name, cmd = _rmat(work, scale, ef)
    variants = [("unlabeled", 0, None)]
    if a.vertex_labels:
        variants.append((f"{a.vertex_labels} vertex labels", a.vertex_labels, None))
    if _edge_labels_flag():
        lab = work / f"rmat{scale}_el{EDGE_LABELS}.csr"
        if not lab.exists():
            subprocess.run(["gthinker", "generate", "rmat", "--scale", str(scale),
                            "--edge-factor", str(ef), "--seed", "1", "--edge-labels",
                            str(EDGE_LABELS), "-o", str(lab)], check=True)
        variants.append((f"{EDGE_LABELS} edge labels", 0, lab))
    rows = []
    for label, k, other in variants:
        graph = gthinker.Graph.read(other or path)
        if k:
            graph = gthinker.Graph(graph.indptr, graph.indices, ids=graph.ids,
                                   labels=vertex_labels(graph.num_vertices, k))
        gfile = work / f"rmat{scale}_{label.replace(' ', '_')}.g"
        if not gfile.exists():
            write_graph(graph, gfile)
        for shape in SHAPES:
            if time.time() > deadline:
                rows.append({"graph": name, "labels": label, "query": shape,
                             "skipped": "budget"})
                continue
            q = _query(shape, k, other is not None)
            if q is None:
                rows.append({"graph": name, "labels": label, "query": shape,
                             "skipped": "gthinker.Graph takes no edge_labels"})
                continue
            qfile = work / f"q_{shape}_{k}_{other is not None}.g"
            rowsq = np.repeat(np.arange(q.num_vertices), np.diff(q.indptr))
            write_g(qfile, q.num_vertices, rowsq, q.indices, q.labels,
                    getattr(q, "edge_labels", None))
            g = _gsi(a.gsi, gfile, qfile, a.run_limit)
            ours = _timed(lambda stop, graph=graph, q=q: sm.count(
                graph, q, mode="gpu", stop=stop), a.repeat, a.run_limit)
            row = {"graph": name, "command": cmd, "labels": label, "query": shape,
                   "gsi": g, "gthinker": ours}
            gc = g.get("counts", [None])[0]
            row["same"] = None if gc is None or "count" not in ours else gc == ours["count"]
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def _parts_rows(a, work, deadline):
    rows = []
    specs = [(s, False) for s in a.parts] + [(s, True) for s in a.capped]
    for spec, capped_only in [(s, c) for s, c in specs if s]:
        scale, ef = (int(x) for x in spec.split(":"))
        path, name, _ = _rmat(work, scale, ef)
        graph = gthinker.Graph.read(path)
        cap = graph_bytes(graph) // 2
        jobs = [("triangle", lambda stop, graph=graph, **kw: count.count(
            graph, "triangle", mode="gpu", stop=stop, **kw))]
        if not capped_only:
            jobs.append(("4-cycle", lambda stop, graph=graph, **kw: sm.count(
                graph, "4-cycle", mode="gpu", gpu_mode="dfs", stop=stop, **kw)))
        for shape, fn in jobs:
            if time.time() > deadline:
                rows.append({"graph": name, "query": shape, "skipped": "budget"})
                continue
            row = {"graph": name, "query": shape, "graph_bytes": graph_bytes(graph),
                   "gpu_memory": cap}
            if not capped_only:
                row["uncapped"] = _timed(fn, a.repeat, a.run_limit)
            row["capped"] = _timed(fn, a.repeat, a.run_limit, gpu_memory=cap)
            u, c = row.get("uncapped", {}), row["capped"]
            if "count" in u and "count" in c:
                row["same"] = u["count"] == c["count"]
                row["ratio"] = c["warm_min"] / max(u["warm_min"], 1e-9)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def _md(result) -> str:
    out = ["# gthinker beside GSI", "", f"{result['machine']}", "", "## GSI's samples", "",
           "| query | networkx | GSI | GSI s | gthinker |", "| --- | --- | --- | --- | --- |"]
    for r in result["samples"]:
        g = r["gsi"]
        out.append(f"| {r['query']} | {r['networkx']} | {g.get('counts', g.get('error'))} | "
                   f"{g.get('match_seconds')} | {r['gthinker']} |")
    out += ["", "## R-MAT", "", "| graph | labels | query | GSI count | GSI match s | "
            "gthinker count | gthinker warm s | same |", "| --- | --- | --- | --- | --- | --- "
            "| --- | --- |"]
    for r in result["rmat"]:
        if "skipped" in r:
            out.append(f"| {r['graph']} | {r['labels']} | {r['query']} | skipped: "
                       f"{r['skipped']} | | | | |")
            continue
        g, o = r["gsi"], r["gthinker"]
        out.append(f"| {r['graph']} | {r['labels']} | {r['query']} | "
                   f"{g.get('counts', [g.get('error', '')])[0]} | {g.get('match_seconds')} | "
                   f"{o.get('count', 'stopped')} | {o.get('warm_min')} | {r.get('same')} |")
    out += ["", "## In parts (gpu_memory = half the graph's bytes)", "",
            "| graph | query | count uncapped | s | count capped | s | parts | ratio |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in result["parts"]:
        if "skipped" in r:
            out.append(f"| {r['graph']} | {r['query']} | skipped | | | | | |")
            continue
        u, c = r.get("uncapped", {}), r["capped"]
        out.append(f"| {r['graph']} | {r['query']} | {u.get('count', '-')} | "
                   f"{u.get('warm_min', '-')} | {c.get('count', c.get('error', 'stopped'))} | "
                   f"{c.get('warm_min')} | {c.get('parts')} | {r.get('ratio', '-')} |")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gsi", required=True, help="GSI's build dir (gsi.sh build's GSI_DIR)")
    ap.add_argument("--work", default="/tmp/sm_gsi", help="generated graphs and .g files")
    ap.add_argument("--rmat", action="append", default=[], metavar="S:EF")
    ap.add_argument("--vertex-labels", type=int, default=4, metavar="K")
    ap.add_argument("--parts", action="append", default=[], metavar="S:EF")
    ap.add_argument("--capped", action="append", default=[], metavar="S:EF")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--run-limit", type=float, default=120)
    ap.add_argument("--budget", type=float, default=480)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    deadline = time.time() + a.budget
    result = {"machine": f"{platform.node()}, {gthinker.gpu.device_status()[1]}",
              "samples": _samples(a, work), "rmat": [], "parts": []}
    for spec in filter(None, a.rmat):  # (an empty one: none)
        result["rmat"] += _rmat_rows(a, work, spec, deadline)
    result["parts"] = _parts_rows(a, work, deadline)
    Path(a.out + ".json").write_text(json.dumps(result, indent=1, default=str))
    Path(a.out + ".md").write_text(_md(result))
    print(_md(result))
    bad = [r for r in result["rmat"] + result["parts"] if r.get("same") is False]
    bad += [r for r in result["samples"] if r["gsi"].get("counts") != r["networkx"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Frequent subgraph mining: `gthinker fsm` (cpu, gpu, hybrid) beside G2Miner's FSM (its
OpenMP and GPU binaries, benchmarks/peers/g2miner_fsm.sh), on the same files; the number of
frequent patterns of each run is checked against the others. Run on the GPU machine by
benchmarks/device_fsm.sh (which builds G2Miner and says what to carry).

Graphs (env GRAPHS, space-separated; default "citeseer cora hprd yeast human rmat22"):
- citeseer, cora: G2Miner's own sample inputs as they are ($G2M_SRC/inputs/NAME/graph);
- hprd, yeast, human: .data/labeled/NAME.graph, written in G2Miner's format by gthinker's
  writer. G2Miner's vertex labels are one byte and it asserts fewer than 255 classes, so a
  graph with more (HPRD: 307) has its labels ranked by frequency and those from rank 253 on
  merged into one (both tools mine that same file; the table says so);
- rmat22: `gthinker generate rmat --scale 22` (edge factor 16, seed 1) with 16 vertex
  labels drawn uniformly (numpy seed 1), K = 3 only.

Each run is a process under a time limit (env LIMIT seconds, default 600); G2Miner's OpenMP
binary with OMP_NUM_THREADS=16, gthinker cpu with --threads 16. Times: the mining as each
tool reports it (G2Miner's last "runtime [...]" line; gthinker's "seconds", compiling and
loading excluded) and the whole process. Output: one JSON line per run in
$OUT/fsm_runs_TAG.jsonl and a table in $OUT/fsm_table_TAG.txt (env TAG).

gthinker runs with --no-exact-support (a pattern stops once every domain reaches S, as
G2Miner's does; EXACT=1: exact supports).

Env: KS (default "2 3 4"), SUPPORTS_<graph> (e.g. SUPPORTS_cora="100 300 500"), MODES
(default "g2m-omp g2m-gpu cpu gpu"; also "hybrid"), G2M_DIR, G2M_SRC, DATA (default .data).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(os.environ.get("ROOT", Path(__file__).resolve().parents[1]))
OUT = Path(os.environ.get("OUT", ROOT / "benchmarks/results/device"))
G2M_SRC = Path(os.environ.get("G2M_SRC", ROOT / ".peers/GraphMiner-fsm"))
G2M_DIR = Path(os.environ.get("G2M_DIR", "/tmp/g2miner-fsm"))
DATA = Path(os.environ.get("DATA", ROOT / ".data"))
WORK = Path(os.environ.get("FSM_WORK", "/tmp/fsm_inputs"))
LIMIT = float(os.environ.get("LIMIT", "600"))
TAG = os.environ.get("TAG", "h100")
THREADS = 16
#: G2Miner's vertex labels: one byte, and it asserts fewer than 255 classes.
G2M_MAX_LABELS = 254
SUPPORTS = {"citeseer": "100 300 500", "cora": "100 300 500", "hprd": "100 300 1000",
            "yeast": "100 300 500", "human": "500 1000 2000", "rmat22": "100000 300000"}
RMAT_LABELS = 16


def _fold_labels(labels):
    """Labels ranked by frequency, those from rank G2M_MAX_LABELS - 1 on merged."""
    values, counts = np.unique(labels, return_counts=True)
    if values.size <= G2M_MAX_LABELS:
        return labels, ""
    rank = np.empty_like(values)
    rank[np.argsort(-counts, kind="stable")] = np.arange(values.size)
    rank = np.minimum(rank, G2M_MAX_LABELS - 1)
    return rank[np.searchsorted(values, labels)].astype(np.int32), (
        f"{values.size} labels folded to {G2M_MAX_LABELS}")


def prepare(name):
    """(prefix, note) of graph ``name`` in G2Miner's format."""
    import gthinker
    from gthinker.graphs.formats import g2miner

    if name in ("citeseer", "cora"):
        return G2M_SRC / "inputs" / name / "graph", "G2Miner's input"
    prefix = WORK / name / "graph"
    note_file = WORK / name / "NOTE"
    if (WORK / name / "graph.meta.txt").is_file():
        return prefix, note_file.read_text()
    prefix.parent.mkdir(parents=True, exist_ok=True)
    if name == "rmat22":
        from gthinker.graphs.generate import rmat

        g = rmat(22, 16, seed=1)
        labels = np.random.default_rng(1).integers(0, RMAT_LABELS, g.num_vertices)
        g = gthinker.Graph(g.indptr, g.indices, labels=labels.astype(np.int32))
        note = f"R-MAT scale 22, edge factor 16, seed 1, {RMAT_LABELS} uniform labels"
    else:
        g = gthinker.Graph.read(DATA / "labeled" / f"{name}.graph")
        labels, note = _fold_labels(np.asarray(g.labels))
        g = gthinker.Graph(g.indptr, g.indices, labels=labels)
    g2miner.write(g, prefix)
    note_file.write_text(note)
    return prefix, note


def _run(cmd, env=None):
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=LIMIT,
                           env={**os.environ, **(env or {})})
        out, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as exc:
        out, rc = (exc.stdout or b"").decode(errors="replace") if isinstance(
            exc.stdout, bytes) else (exc.stdout or ""), "timeout"
    return out, rc, time.perf_counter() - t0


def g2miner(kind, prefix, k, s):
    out, rc, wall = _run(["bash", str(ROOT / "benchmarks/peers/g2miner_fsm.sh"), kind,
                          str(prefix), str(k), str(s)], {"OMP_NUM_THREADS": str(THREADS),
                                                         "G2M_DIR": str(G2M_DIR)})
    count = re.findall(r"^Number of frequent patterns: (\d+)$", out, re.M)
    times = re.findall(r"^runtime \[[^\]]*\] = ([0-9.eE+-]+) sec$", out, re.M)
    return {"count": int(count[-1]) if count else None,
            "seconds": float(times[-1]) if times else None, "wall": wall, "rc": rc,
            "tail": None if count else out[-600:]}


def gthinker_fsm(mode, prefix, k, s):
    cmd = [sys.executable, "-m", "gthinker", "fsm", str(prefix), "--max-edges", str(k),
           "--support", str(s), "--mode", mode, "--no-edge-labels", "--json", "-q"]
    if os.environ.get("EXACT", "0") != "1":  # G2Miner counts patterns, not exact supports
        cmd.append("--no-exact-support")
    if mode in ("cpu", "hybrid"):
        cmd += ["--threads", str(THREADS)]
    out, rc, wall = _run(cmd)
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if rc != 0 or not lines:
        return {"count": None, "seconds": None, "wall": wall, "rc": rc, "tail": out[-600:]}
    d = json.loads(lines[-1])
    return {"count": d["frequent"], "seconds": d["seconds"], "wall": wall, "rc": rc,
            "by_edges": d["by_edges"], "compile_seconds": d["compile_seconds"]}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    graphs = os.environ.get("GRAPHS", "citeseer cora hprd yeast human rmat22").split()
    modes = os.environ.get("MODES", "g2m-omp g2m-gpu cpu gpu").split()
    runs_path = OUT / f"fsm_runs_{TAG}.jsonl"
    rows = []
    for name in graphs:
        labeled = DATA / "labeled" / f"{name}.graph"
        if name in ("hprd", "yeast", "human") and not labeled.is_file():
            print(f"fsm_peer: {name}: no {DATA}/labeled/{name}.graph, skipped", flush=True)
            continue
        prefix, note = prepare(name)
        ks = ["3"] if name == "rmat22" else os.environ.get("KS", "2 3 4").split()
        supports = os.environ.get(f"SUPPORTS_{name}", SUPPORTS[name]).split()
        for k in ks:
            for s in supports:
                res = {}
                for mode in modes:
                    if mode.startswith("g2m-"):
                        res[mode] = g2miner(mode[4:], prefix, k, s)
                    else:
                        res[mode] = gthinker_fsm(mode, prefix, k, s)
                    rec = {"graph": name, "note": note, "k": int(k), "support": int(s),
                           "tool": mode, **res[mode]}
                    with open(runs_path, "a") as f:
                        f.write(json.dumps(rec) + "\n")
                counts = {m: r["count"] for m, r in res.items() if r["count"] is not None}
                agree = "yes" if len(set(counts.values())) == 1 and len(counts) == len(res) else (
                    "DIFFER" if len(set(counts.values())) > 1 else "incomplete")
                rows.append((name, k, s, res, agree))
                print(_row(name, k, s, res, agree, modes), flush=True)
    table = [_header(modes)] + [_row(*r, modes) for r in rows]
    (OUT / f"fsm_table_{TAG}.txt").write_text("\n".join(table) + "\n")
    print("\n".join(table))


def _header(modes):
    return "graph    K support " + " ".join(f"{m + ' count/mine s/wall s':>30}" for m in modes) \
        + "  agree"


def _cell(r):
    if r["count"] is None:
        return f"{'failed (' + str(r['rc']) + ')':>30}"
    sec = "-" if r["seconds"] is None else f"{r['seconds']:.3f}"
    return f"{r['count']:>10} {sec:>9} {r['wall']:>9.2f}"


def _row(name, k, s, res, agree, modes):
    return f"{name:8} {k} {s:>7} " + " ".join(f"{_cell(res[m]):>30}" for m in modes) \
        + f"  {agree}"


if __name__ == "__main__":
    main()

"""MCE on graphs with hub vertices: ``gthinker mce`` in cpu, gpu and hybrid modes, one
process each, with time, count, host and GPU peak memory, and what the bitset GPU
engine did with the subtrees too big for a warp (to the CPU workers, X made small on the
host, wider warps, split into branches).

    python benchmarks/mce_hubs.py --rmat 22:16:0.5,24:16:0.5 --hubs 2:0.4 --threads 16 \\
        --limit 600 --out benchmarks/results/mce_hubs_h100.json
    python benchmarks/mce_hubs.py --graph some.csr --modes cpu,gpu,hybrid,levels

Graphs: ``--graph FILE`` (any format ``gthinker mce`` reads), ``--rmat
SCALE:EDGE_FACTOR:A`` (``gthinker generate rmat``, b = c = (1 - A) / 2.5, written as a
prepared binary graph under ``--workdir``), ``--preset NAME:SCALE`` (``gthinker generate
preset``, where this gthinker has it) and, for each generated R-MAT graph, ``--hubs
K:SHARE``: the same graph plus K hub vertices, each adjacent to a random SHARE of the
vertices and to the other hubs (the seed's graphs have hubs of up to 42% of the
vertices: trackers, 11.6M of 27.7M).

Modes: ``cpu``, ``gpu``, ``hybrid`` (bitset engine) and ``levels`` (gpu mode, level-by-level
engine). Each run is ``gthinker mce GRAPH --mode M --json --quiet`` in its own process;
past ``--limit`` seconds it gets SIGINT (gthinker then prints what it found, marked
stopped) and the row says so. Kernels and CPU code are compiled first on a small graph, so
no row pays for compiling. Counts of the runs that finished must agree (exit 1 if not).
"""

from __future__ import annotations

import argparse
import json
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import gthinker
from gthinker.apps.mce.bitsets_gpu import BIG_FIGURES
from gthinker.memory import describe as size

MODES = {"cpu": ["--mode", "cpu"], "gpu": ["--mode", "gpu"], "hybrid": ["--mode", "hybrid"],
         "levels": ["--mode", "gpu", "--gpu-engine", "levels"]}
#: The bitset engine's figures for subtrees too big for a warp, its host time and scratch.
BIG = (*BIG_FIGURES, "host_seconds", "scratch_bytes", "warp_scratch_bytes")


def gthinker_cli(*args):
    return [sys.executable, "-m", "gthinker", *map(str, args)]


def rmat(workdir: Path, spec: str) -> tuple[str, Path]:
    scale, ef, a = spec.split(":")
    bc = round((1 - float(a)) / 2.5, 4)
    path = workdir / f"rmat_s{scale}_ef{ef}_a{a}.csr"
    if not path.exists():
        subprocess.run(gthinker_cli("generate", "rmat", "--scale", scale, "--edge-factor", ef,
                                    "--a", a, "--b", bc, "--c", bc, "--seed", 1, "-o", path),
                       check=True)
    return f"R-MAT s{scale} ef{ef} a={a}", path


def preset(workdir: Path, spec: str) -> tuple[str, Path]:
    name, scale = spec.split(":")
    path = workdir / f"preset_{name}_{scale}.csr"
    if not path.exists():
        subprocess.run(gthinker_cli("generate", "preset", name, "--scale", scale, "-o", path),
                       check=True)
    return f"preset {name} x{scale}", path


def with_hubs(workdir: Path, name: str, path: Path, spec: str) -> tuple[str, Path]:
    """``path`` plus K hubs, each adjacent to a random SHARE of the vertices (seeded)."""
    k, share = int(spec.split(":")[0]), float(spec.split(":")[1])
    out = workdir / f"{path.stem}_hubs{k}x{share}.csr"
    if not out.exists():
        g = gthinker.Graph.read(path)
        n = g.num_vertices
        src = np.repeat(np.arange(n, dtype=np.int32), np.diff(g.indptr))
        once = src < g.indices  # each edge once
        parts = [np.stack([src[once], g.indices[once]], axis=1)]
        rng = np.random.default_rng(7)
        for h in range(n, n + k):
            nb = rng.choice(n, int(share * n), replace=False).astype(np.int32)
            parts.append(np.stack([np.full(nb.size, h, np.int32), nb], axis=1))
            parts.append(np.array([[h, j] for j in range(n, h)], np.int32).reshape(-1, 2))
        gthinker.Graph.from_edges(np.concatenate(parts), num_vertices=n + k).save(
            out, prepare=["degeneracy", "oriented"])
    return f"{name} + {k} hubs of {share:.0%}", out


def facts(path: Path) -> dict:
    g = gthinker.Graph.read(path)
    return {"vertices": g.num_vertices, "edges": g.num_edges, "max_degree": int(g.max_degree),
            "degeneracy": int(g.degeneracy)}


def run_one(path: Path, mode: str, threads: int, limit: float) -> dict:
    cmd = gthinker_cli("mce", path, *MODES[mode], "--json", "--quiet")
    if mode != "gpu" and mode != "levels":
        cmd += ["--threads", str(threads)]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    note = None
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        note = f"stopped after {limit:g} s"
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    wall = time.perf_counter() - t
    row = {"mode": mode, "command": " ".join(map(str, cmd)), "wall_seconds": round(wall, 3),
           "returncode": proc.returncode, "note": note}
    try:
        res = json.loads(out.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        row["note"] = (note or "failed") + ": " + (err.strip().splitlines() or ["?"])[-1]
        return row
    stats = res["stats"]
    gpu = stats.get("gpu", {})
    row.update(seconds=res["seconds"], count=res["count"], max_size=res["max_size"],
               stopped=res.get("stopped"), host_peak_bytes=stats.get("host_peak_bytes"),
               gpu_peak_bytes=stats.get("gpu_peak_bytes"),
               tasks_decomposed=stats.get("tasks_decomposed"),
               gpu={k: gpu[k] for k in ("launches", "spilled", "pushed", "kernel_seconds", *BIG)
                    if k in gpu})
    return row


def table(rows: list[dict]) -> str:
    head = (f"{'mode':7} {'seconds':>9} {'count':>15} {'host peak':>10} {'GPU peak':>10} "
            f"{'big':>7} {'to CPU':>7} {'X before -> after':>22} {'wide':>6} {'split':>6}  note")
    lines = [head]
    for r in rows:
        g = r.get("gpu", {})
        xs = f"{g['x_before']:,} -> {g['x_after']:,}" if "x_before" in g else ""
        secs = f"{r['seconds']:.3f}" if r.get("seconds") is not None else "-"
        lines.append(
            f"{r['mode']:7} {secs:>9} {r.get('count', 0):>15,} "
            f"{size(r['host_peak_bytes']) if r.get('host_peak_bytes') else '-':>10} "
            f"{size(r['gpu_peak_bytes']) if r.get('gpu_peak_bytes') else '-':>10} "
            f"{g.get('big_subtrees', ''):>7} {g.get('to_cpu', ''):>7} {xs:>22} "
            f"{g.get('wide', ''):>6} {g.get('split', ''):>6}  {r.get('note') or ''}")
    return "\n".join(lines)


def warm_up(workdir: Path, modes) -> None:
    """Compiles every engine the runs use, on a small hub graph, in this cache."""
    small = workdir / "warmup_hubs.txt"
    if not small.exists():
        rng = np.random.default_rng(1)
        edges = [(0, int(u)) for u in range(1, 60)]
        edges += [tuple(map(int, rng.choice(60, 2, replace=False))) for _ in range(240)]
        small.write_text("\n".join(f"{a} {b}" for a, b in edges) + "\n")
    for mode in modes:
        subprocess.run(gthinker_cli("mce", small, *MODES[mode], "--quiet"), check=True,
                       stdout=subprocess.DEVNULL)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", action="append", default=[], help="a graph file (repeatable)")
    ap.add_argument("--rmat", default="", help="SCALE:EDGE_FACTOR:A list, comma separated")
    ap.add_argument("--preset", default="", help="NAME:SCALE list (gthinker generate preset)")
    ap.add_argument("--hubs", default="", help="K:SHARE: also each R-MAT graph with K hubs")
    ap.add_argument("--modes", default="cpu,gpu,hybrid", help=f"of {', '.join(MODES)}")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--limit", type=float, default=600, help="seconds per run")
    ap.add_argument("--workdir", default="/tmp/gthinker-bench")
    ap.add_argument("--out", default=None, help="write the rows as JSON here")
    args = ap.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        ap.error(f"unknown mode {unknown[0]!r}; modes are {', '.join(MODES)}")
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)

    graphs = [(Path(p).name, Path(p)) for p in args.graph]
    for spec in filter(None, args.rmat.split(",")):
        name, path = rmat(work, spec)
        graphs.append((name, path))
        if args.hubs:
            graphs.append(with_hubs(work, name, path, args.hubs))
    graphs += [preset(work, spec) for spec in filter(None, args.preset.split(","))]
    if not graphs:
        ap.error("no graph: give --graph, --rmat or --preset")

    t = time.perf_counter()
    warm_up(work, modes)
    print(f"compiled (warm-up) in {time.perf_counter() - t:.1f}s", flush=True)
    report = {"machine": platform.node(), "python": platform.python_version(),
              "threads": args.threads, "limit": args.limit, "graphs": []}
    ok = True
    for name, path in graphs:
        f = facts(path)
        print(f"\n{name} ({path}): {f['vertices']:,} vertices, {f['edges']:,} edges, "
              f"max degree {f['max_degree']:,}, degeneracy {f['degeneracy']}", flush=True)
        rows = []
        for mode in modes:
            rows.append(run_one(path, mode, args.threads, args.limit))
            print(table(rows[-1:]).splitlines()[-1] if rows[:-1] else table(rows), flush=True)
        done = {r["count"] for r in rows if r.get("count") is not None and not r.get("stopped")
                and not r.get("note")}
        if len(done) > 1:
            ok = False
            print(f"COUNTS DIFFER: {sorted(done)}", flush=True)
        report["graphs"].append({"name": name, "path": str(path), **f, "rows": rows})
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
        print(f"\nwrote {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

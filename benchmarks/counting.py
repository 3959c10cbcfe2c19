"""Pattern counting: gthinker (warm, in one process, and whole processes) beside G2Miner.

For every graph and pattern: ``gthinker.apps.count.count`` in each mode, run
``--repeat`` times in this process after one run that may compile (warm time:
the counting, without loading, orienting or compiling; ``prepare`` is the
orientation); one whole ``gthinker count ... --json -q`` process (load +
orient + count + start-up, compile cache warm); the process's CPU time of each warm
run (``cpu_seconds_min``: with ``--threads 1``, the per-thread cost, which a busy host
disturbs less than the wall time); and, with ``--g2miner DIR``,
G2Miner's binaries (benchmarks/peers/g2miner.sh) on the same graph in the same
call: its kernel time ("runtime [...] = ...") and whole-process time. Counts
are compared; a mismatch is reported and makes the exit status 1.

    python benchmarks/counting.py --graph fb=facebook_combined.txt.gz \\
        --patterns triangle,4-clique,5-clique --modes gpu,cpu --threads 16 \\
        --g2miner /tmp/g2miner --out results/counting
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import gthinker
from gthinker.apps import count

HERE = Path(__file__).resolve().parent
G2M = HERE / "peers" / "g2miner.sh"


def _gthinker_warm(graph, pattern, mode, threads, repeat):
    first = count.count(graph, pattern, mode=mode, threads=threads)
    runs, cpu = [], []
    for _ in range(repeat):
        c0 = time.process_time()  # every thread of this process: per-thread cost on a busy host
        runs.append(count.count(graph, pattern, mode=mode, threads=threads))
        cpu.append(time.process_time() - c0)
    secs = sorted(r.seconds for r in runs)
    assert all(r.count == first.count for r in runs), "counts differ between runs"
    kernel = [r.stats["gpu"]["kernel_seconds"] for r in runs if "gpu" in r.stats]
    return {"count": first.count, "counts": first.counts, "warm_min": secs[0],
            "cpu_seconds_min": min(cpu), "cpu_seconds_median": statistics.median(cpu),
            "gpu_kernel_min": min(kernel) if kernel else None,
            "warm_median": statistics.median(secs), "prepare": runs[0].prepare_seconds,
            "first_run_compile": first.compile_seconds, "mode": runs[0].mode,
            "method": runs[0].method}


def _gthinker_process(path, pattern, mode, threads):
    cmd = ["gthinker", "count", str(path), pattern, "--mode", mode, "--json", "-q"]
    if threads and mode != "gpu":
        cmd += ["--threads", str(threads)]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - t0, json.loads(out.splitlines()[-1])["count"], " ".join(cmd)


def _g2miner(prefix, pattern):
    k = count.clique_size(pattern)
    if k is None or k > 8:
        return None
    args = ["tc", str(prefix)] if k == 3 else ["clique", str(prefix), str(k)]
    out = subprocess.run(["bash", str(G2M), *args], capture_output=True, text=True).stdout
    kernel = re.search(r"^runtime \[[^\]]*\] = ([0-9.eE+-]+) sec$", out, re.M)
    found = re.search(r"^(?:total_num_triangles|num_\d+-cliques) = (\d+)$", out, re.M)
    wall = re.search(r"^g2miner_wall_seconds = ([0-9.]+)$", out, re.M)
    if not (kernel and found):
        return {"error": out[-500:]}
    return {"kernel": float(kernel.group(1)), "count": int(found.group(1)),
            "wall": float(wall.group(1)) if wall else None,
            "command": "g2miner.sh " + " ".join(args)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", action="append", required=True, metavar="NAME=PATH")
    ap.add_argument("--patterns", default="triangle,4-clique,5-clique")
    ap.add_argument("--modes", default="cpu")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--g2miner", default=None, metavar="DIR",
                    help="convert each graph for G2Miner into DIR and run it beside gthinker")
    ap.add_argument("--no-process", action="store_true", help="skip the whole-process runs")
    ap.add_argument("--out", default=None, help="write OUT.json and OUT.md")
    a = ap.parse_args(argv)
    rows = []
    bad = 0
    for spec in a.graph:
        name, path = spec.split("=", 1)
        t0 = time.perf_counter()
        graph = gthinker.Graph.read(path)
        load = time.perf_counter() - t0
        prefix = None
        if a.g2miner:
            prefix = Path(a.g2miner) / "graphs" / name / "graph"
            prefix.parent.mkdir(parents=True, exist_ok=True)
            if not Path(f"{prefix}.meta.txt").exists():
                subprocess.run(["bash", str(G2M), "convert", path, str(prefix)], check=True,
                               capture_output=True)
        for pattern in a.patterns.split(","):
            peer = _g2miner(prefix, pattern) if prefix else None
            for mode in a.modes.split(","):
                row = {"graph": name, "vertices": graph.num_vertices, "edges": graph.num_edges,
                       "load": load, "pattern": pattern, "requested_mode": mode,
                       **_gthinker_warm(graph, pattern, mode, a.threads, a.repeat)}
                if not a.no_process:
                    row["process"], pc, row["process_command"] = _gthinker_process(
                        path, pattern, mode, a.threads)
                    bad += pc != row["count"]
                if peer:
                    row["g2miner"] = peer
                    bad += peer.get("count") != row["count"]
                rows.append(row)
                print(_line(row), flush=True)
                _write(a, rows)  # after every row: a run cut short keeps what it measured
    if bad:
        print(f"COUNT MISMATCH in {bad} comparisons", file=sys.stderr)
    return 1 if bad else 0


def _write(a, rows):
    if not a.out:
        return
    meta = {"host": platform.node(), "python": sys.version.split()[0], "threads": a.threads,
            "argv": sys.argv, "gthinker": gthinker.__version__}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(f"{a.out}.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1,
                                                default=str))
    Path(f"{a.out}.md").write_text(_table(rows))


def _line(r):
    peer = r.get("g2miner") or {}
    return (f"{r['graph']} {r['pattern']} {r['mode']}: {r['count']:,} warm {r['warm_min']*1e3:.2f}"
            f" / {r['warm_median']*1e3:.2f} ms (CPU time {r['cpu_seconds_min']:.3f} s)"
            + (f" (kernels {r['gpu_kernel_min']*1e3:.3f} ms)" if r.get("gpu_kernel_min") else "")
            + f", prepare {r['prepare']*1e3:.1f} ms"
            + (f", process {r['process']:.2f} s" if "process" in r else "")
            + (f" | g2miner {peer.get('kernel', float('nan'))*1e3:.3f} ms kernel, "
               f"{peer.get('count')}" if peer else ""))


def _table(rows):
    out = ["| graph | pattern | count | mode | gthinker warm min / median | of it GPU kernels | "
           "prepare | whole process | G2Miner kernel | G2Miner process |", "|" + " --- |" * 10]
    for r in rows:
        p = r.get("g2miner") or {}
        out.append(
            f"| {r['graph']} | {r['pattern']} | {r['count']:,} | {r['mode']} | "
            f"{r['warm_min']*1e3:.2f} / {r['warm_median']*1e3:.2f} ms | "
            + (f"{r['gpu_kernel_min']*1e3:.3f} ms | " if r.get("gpu_kernel_min") else "- | ")
            + f"{r['prepare']*1e3:.1f} ms | "
            + (f"{r['process']:.2f} s" if "process" in r else "-") + " | "
            + (f"{p['kernel']*1e3:.3f} ms | {p['wall']:.2f} s |" if "kernel" in p else "- | - |"))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())

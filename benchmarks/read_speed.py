"""Reading a text graph, phase by phase, on N threads: how fast `Graph.read` turns an
edge list into rows, and which step holds it back (issue 39: >= 1 GB/s on the GPU
machine's 16 cores).

    python benchmarks/read_speed.py GRAPH.txt [--threads 1,2,16] [--repeat 3]
                                    [--block-mib 32] [--json OUT.json]

Phases (each timed apart, in this process, the file in the page cache after a first
read that is not counted):
  bytes   the file's bytes read into the reader's buffer, block by block, as the reader
          reads them (pread on all threads), nothing parsed: the floor of `scan`
  scan    read and parse: the records (int32 pairs) of every line
  remap   ids renumbered 0..n-1 (left as they are when they already are)
  build   the CSR rows: upper rows, then the symmetric rows over the pairs' memory
  total   the three, as `Graph.read` runs them (checked against one Graph.read call)

Threads: the process is pinned to the first N cores (os.sched_setaffinity), which is
what the graph kernels take as their thread count. MB/s is the file's size over the
phase's seconds; "per thread" divides it by N; "per cpu-s" divides the size by the CPU
seconds the phase took on all threads (the per-core rate, less sensitive to a busy
machine than the wall time). Results: a table on stdout, and with --json the runs
(wall and CPU seconds of each phase) as JSON.

Example (GPU machine, R-MAT 24, 4.0 GB of text):
    gthinker generate rmat --scale 24 --edge-factor 16 -o /tmp/r24.txt
    python benchmarks/read_speed.py /tmp/r24.txt --threads 1,2,4,8,16
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time
from pathlib import Path


class Clock:
    """Wall and CPU seconds (all threads of this process) since it was made."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), self.cpu_now()

    @staticmethod
    def cpu_now() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    def read(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, self.cpu_now() - self.cpu


def phases(path: Path) -> dict:
    """Seconds of each phase of one read of ``path`` on this process's cores."""
    from gthinker import Graph
    from gthinker.graphs import csr
    from gthinker.graphs.formats import text

    out = {}
    c = Clock()
    with text.open_input(path) as fh:
        for _ in text.blocks(path, fh, threads=csr.threads()):
            pass
    out["bytes"], out["bytes_cpu"] = c.read()
    c = Clock()
    rec = text.scan(path, 2, {0: 2}, isolated=True, narrow=True)
    out["scan"], out["scan_cpu"] = c.read()
    c = Clock()
    ids = csr.remap_ids(rec.vals, rec.isolated, rec.top)
    out["remap"], out["remap_cpu"] = c.read()
    c = Clock()
    g = Graph.from_owned_pairs(rec.vals, ids.size, ids=ids)
    out["build"], out["build_cpu"] = c.read()
    for k in ("", "_cpu"):
        out["total" + k] = out["scan" + k] + out["remap" + k] + out["build" + k]
    out["edges"] = g.num_edges
    del rec, g
    t0 = time.perf_counter()
    Graph.read(path)
    out["graph_read"] = time.perf_counter() - t0
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path, help="a SNAP edge list (plain text)")
    ap.add_argument("--threads", default=None,
                    help="comma-separated thread counts (default: 1, 2 and every core)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per thread count (default 3)")
    ap.add_argument("--block-mib", type=int, default=None,
                    help="the reader's block size in MiB (default: the reader's own)")
    ap.add_argument("--json", type=Path, default=None, help="write the runs here")
    args = ap.parse_args()

    from gthinker.graphs.formats import text

    if args.block_mib:
        text.BLOCK_BYTES = args.block_mib << 20
    cores = sorted(os.sched_getaffinity(0))
    counts = ([int(x) for x in args.threads.split(",")] if args.threads
              else sorted({1, 2, len(cores)}))
    size = args.graph.stat().st_size
    print(f"{args.graph}: {size / 1e9:.2f} GB; {len(cores)} cores; block "
          f"{text.BLOCK_BYTES >> 20} MiB; best of {args.repeat} (median in brackets)")
    phases(args.graph)  # the page cache
    names = ["bytes", "scan", "remap", "build", "total", "graph_read"]
    print(f"{'threads':>7} " + " ".join(f"{n:>17}" for n in names)
          + "   total MB/s  per thread  scan MB/s per cpu-s  total MB/s per cpu-s")
    runs = []
    for n in counts:
        if n > len(cores):
            print(f"{n:>7} skipped: only {len(cores)} cores")
            continue
        os.sched_setaffinity(0, cores[:n])
        got = [phases(args.graph) for _ in range(args.repeat)]
        runs.append({"threads": n, "bytes": size, "runs": got})
        best = {k: min(r[k] for r in got) for k in names}
        med = {k: statistics.median(r[k] for r in got) for k in names}
        mbs = size / best["total"] / 1e6
        per_cpu = [size / min(r[k] for r in got) / 1e6 for k in ("scan_cpu", "total_cpu")]
        print(f"{n:>7} " + " ".join(f"{best[k]:7.3f}s ({med[k]:6.3f})" for k in names)
              + f"   {mbs:9.0f}  {mbs / n:9.0f}  {per_cpu[0]:19.0f}  {per_cpu[1]:20.0f}",
              flush=True)
    os.sched_setaffinity(0, cores)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()

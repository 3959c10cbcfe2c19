"""Variants of the GPU clique-counting kernels timed in one process, beside G2Miner.

For each graph and k: the reference count (gthinker's CPU count on all cores; with
``--no-cpu-reference`` the first GPU count, for graphs whose CPU count takes long), then every
variant: for k = 3 the triangle kernels of ``gthinker/apps/matching/triangles_gpu.py``
(``VARIANTS``: how lanes walk the lists, sampling, unsigned loads, launch bounds, edge
order, grid, degeneracy or degree orientation), for k = 4 the by-vertex kernels of
``gthinker/apps/matching/local_gpu.py`` (``LOCAL_VARIANTS``) and the by-edge kernel, for k >= 5
the kernel gthinker uses. Each variant: one launch that compiles and counts, then
``--repeat`` launches timed with CUDA events around the launch (the kernel) and by the
host clock from the launch call to the count read (what G2Miner's "runtime" times: its
launch and a synchronisation), min / median, every count checked against the reference;
registers a thread and blocks an SM (occupancy) are printed where the driver tells them.
With ``--g2miner DIR`` (G2Miner built by ``bash benchmarks/peers/g2miner.sh build`` with
``G2M_DIR=DIR``), its kernel on the same CSR, written in its binary format. With ``--job``,
also ``count.count(graph, pattern, mode="gpu")`` twice in this process, before the
variants (the first call makes the device copy): the job's seconds, and of them the
setup (device copy, edge sources, buffers) and the kernel.

    python benchmarks/count_gpu_variants.py --graph fb=facebook_combined.txt.gz \\
        --rmat 20:16 --rmat 22:8 --k 3 --repeat 10 --g2miner /tmp/g2miner \\
        --out results/count_gpu_variants

(``--rmat S:EF``: ``gthinker.graphs.generate.rmat(S, EF, seed=1)`` in this process, the
graph of ``gthinker generate rmat --scale S --edge-factor EF --seed 1``.) Exit status 1 if
any count differs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import gthinker
import gthinker.graphs.generate
from gthinker.apps import count
from gthinker.apps.matching import cliques_gpu
from gthinker.apps.matching.local_gpu import LOCAL_VARIANTS
from gthinker.apps.matching.triangles_gpu import VARIANTS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "peers"))
import g2miner_convert  # noqa: E402

G2M = HERE / "peers" / "g2miner.sh"


def _graph(spec):
    """``(name, graph, load seconds)`` of ``NAME=PATH`` or of ``rmatS:EF``."""
    t0 = time.perf_counter()
    if spec.startswith("rmat") and "=" not in spec:
        scale, ef = (int(x) for x in spec[4:].split(":"))
        g = gthinker.graphs.generate.rmat(scale, ef, seed=1)
        return f"rmat{scale}", g, time.perf_counter() - t0
    name, path = spec.split("=", 1)
    return name, gthinker.Graph.read(path), time.perf_counter() - t0


def _occupancy(kernel):
    """``(registers a thread, blocks an SM)`` of a compiled kernel, or Nones."""
    try:
        from numba import cuda

        (ov,) = kernel.overloads.values()
        fn = ov._codelibrary.get_cufunc()
        blocks = cuda.current_context().get_active_blocks_per_multiprocessor(
            fn, cliques_gpu.THREADS, 0)
        return int(ov.regs_per_thread), int(blocks)
    except Exception:  # noqa: BLE001 - a driver or Numba without these: not printed
        return None, None


def _timed(dev, n, repeat):
    """A first launch (compiles), then ``repeat`` launches timed by CUDA events (the
    kernel) and by the host clock (launch call to count read, as G2Miner times its
    kernel): ``(counts, kernel ms list, host ms list)``."""
    from numba import cuda

    counts, ms, host = [], [], []
    for i in range(repeat + 1):
        start, end = cuda.event(), cuda.event()
        with dev.lock:
            t0 = time.perf_counter()
            start.record()
            dev.edges([(0, n)], take=True)
            end.record()
            counts.append(dev.take())
            t1 = time.perf_counter()
        end.synchronize()
        if i:
            ms.append(start.elapsed_time(end))
            host.append((t1 - t0) * 1e3)
    return counts, ms, host


def _variants(k):
    """``(name, orientation, CliqueDevice keywords)`` of every variant for k."""
    if k == 3:
        return [(n, v.orientation, {"variant": v}) for n, v in VARIANTS.items()]
    if k == 4:
        return ([(f"vertex-{n}", "degeneracy", {"variant": v, "local": True})
                 for n, v in LOCAL_VARIANTS.items()]
                + [("edge", "degeneracy", {"local": False})])
    return [("default", "degeneracy", {})]


def _g2miner(graph, name, k, workdir):
    """G2Miner's kernel seconds and count on ``graph`` (its files written once)."""
    prefix = Path(workdir) / "graphs" / name / "graph"
    if not Path(f"{prefix}.meta.txt").exists():
        g2miner_convert.write(str(prefix), graph.indptr, graph.indices)
    args = ["tc", str(prefix)] if k == 3 else ["clique", str(prefix), str(k)]
    out = subprocess.run(["bash", str(G2M), *args], capture_output=True, text=True,
                         env={**os.environ, "G2M_DIR": str(workdir)}).stdout
    kernel = re.search(r"^runtime \[[^\]]*\] = ([0-9.eE+-]+) sec$", out, re.M)
    found = re.search(r"^(?:total_num_triangles|num_\d+-cliques) = (\d+)$", out, re.M)
    if not (kernel and found):
        return {"error": out[-400:]}
    return {"kernel_ms": float(kernel.group(1)) * 1e3, "count": int(found.group(1))}


def _job(graph, k, ref):
    """``count.count`` twice in this process: the seconds of each, and the reference
    count (the first call's when ``ref`` is None)."""
    pattern = "triangle" if k == 3 else f"{k}-clique"
    out = []
    for _ in range(2):
        res = count.count(graph, pattern, mode="gpu")
        ref = res.count if ref is None else ref
        gpu = res.stats.get("gpu", {})
        out.append({"seconds": res.seconds, "prepare_seconds": res.prepare_seconds,
                    "setup_seconds": gpu.get("setup_seconds"),
                    "kernel_seconds": gpu.get("kernel_seconds"), "count_ok": res.count == ref})
    return out, ref


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--rmat", action="append", default=[], metavar="S:EF")
    ap.add_argument("--k", default="3")
    ap.add_argument("--only", default=None, help="comma-separated variant names")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--g2miner", default=None, metavar="DIR")
    ap.add_argument("--job", action="store_true")
    ap.add_argument("--no-cpu-reference", action="store_true",
                    help="check every count against the first GPU count instead of the CPU's")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    only = set(a.only.split(",")) if a.only else None
    rows, bad = [], 0
    for spec in a.graph + [f"rmat{r}" for r in a.rmat]:
        name, graph, load = _graph(spec)
        dags = {"degeneracy": count.oriented(graph)}
        for k in map(int, a.k.split(",")):
            pattern = "triangle" if k == 3 else f"{k}-clique"
            ref = None if a.no_cpu_reference else count.count(graph, pattern, mode="cpu").count
            print(f"{name} (n {graph.num_vertices:,}, m {graph.num_edges:,}, loaded in "
                  f"{load:.2f} s) k={k}: {ref if ref is None else f'{ref:,}'}", flush=True)
            if a.job:  # first, so that its first call makes the device copy
                jobs, ref = _job(graph, k, ref)
                for i, j in enumerate(jobs):
                    bad += not j["count_ok"]
                    rows.append({"graph": name, "k": k, "variant": f"job{i + 1}", **j})
                    print(f"  count.count call {i + 1}: {j}", flush=True)
            if a.g2miner:
                peer = _g2miner(graph, name, k, a.g2miner)
                bad += peer.get("count") != ref
                rows.append({"graph": name, "k": k, "variant": "G2Miner", **peer})
                print(f"  G2Miner: {peer}", flush=True)
            for vname, orientation, kw in _variants(k):
                if only and vname not in only:
                    continue
                if orientation not in dags:
                    dags[orientation] = graph.degree_oriented()
                dag = dags[orientation]
                dev = cliques_gpu.CliqueDevice(dag, k, **kw)
                counts, ms, host = _timed(dev, dag.num_vertices, a.repeat)
                ref = counts[0] if ref is None else ref
                ok = all(c == ref for c in counts)
                bad += not ok
                regs, occ = _occupancy(dev.kernel())
                row = {"graph": name, "k": k, "variant": vname, "orientation": orientation,
                       "count_ok": ok, "ms_min": min(ms), "ms_median": statistics.median(ms),
                       "host_ms_min": min(host), "host_ms_median": statistics.median(host),
                       "registers": regs, "blocks_per_sm": occ, "blocks": dev.blocks,
                       "max_out_degree": dev.d, "device": dev.description}
                rows.append(row)
                print(f"  {vname:18s} kernel {row['ms_min']:9.3f} / {row['ms_median']:9.3f} ms,"
                      f" host {row['host_ms_min']:9.3f} / {row['host_ms_median']:9.3f} ms "
                      f"(regs {regs}, blocks/SM {occ}, buffer blocks {dev.blocks})"
                      + ("" if ok else "  COUNT DIFFERS"), flush=True)
                del dev
        if a.out:
            Path(a.out).parent.mkdir(parents=True, exist_ok=True)
            Path(f"{a.out}.json").write_text(json.dumps({"argv": sys.argv, "rows": rows},
                                                        indent=1, default=str))
    if bad:
        print(f"COUNT MISMATCH in {bad} rows", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

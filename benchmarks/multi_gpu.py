"""One GPU against N in one process: facebook_combined MCE and an R-MAT 4-clique count.

For each job and mode, runs ``--gpus 1`` and ``--gpus N`` alternately in this process,
after one run of each that may compile and allocate (not counted): the warm times
(``seconds``: the job, without loading, preparing or compiling), the speed-up of the
medians, the counts of both (they must be equal: a mismatch makes the exit status 1)
and each device's busy seconds per run (``busy_seconds`` of the levels engine, else
``kernel_seconds``: launch to synchronisation). Needs N visible GPUs.

    python benchmarks/multi_gpu.py --facebook facebook_combined.txt.gz \\
        --rmat /tmp/rmat20.txt --gpus all --repeat 3 --out results/multi_gpu_h200x2.json

On the device machine: ``bash benchmarks/device_multi_gpu.sh`` (its header says how).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time

import gthinker
from gthinker.apps import count, mce


def _busy(stats) -> list[float]:
    """Each device's busy seconds in one run."""
    return [round(s.get("busy_seconds", s.get("kernel_seconds", 0.0)), 6)
            for s in stats.get("gpus", [])]


def _job(name, graph, run):
    """``run(gpus)`` -> (count, seconds, stats) as a function of the GPU setting."""
    return {"name": name, "graph": graph, "run": run}


def _jobs(args):
    jobs = []
    if args.facebook:
        fb = gthinker.Graph.read(args.facebook)
        for mode in args.modes:
            def mce_run(gpus, mode=mode):
                r = mce.run(fb, mode=mode, gpus=gpus, threads=args.threads)
                return (r.count, r.histogram), r.seconds, r.stats
            jobs.append(_job(f"facebook MCE, {mode}", args.facebook, mce_run))
    if args.rmat:
        rm = gthinker.Graph.read(args.rmat)
        for mode in args.modes:
            def count_run(gpus, mode=mode):
                r = count.count(rm, args.pattern, mode=mode, gpus=gpus, threads=args.threads)
                return r.count, r.seconds, r.stats
            jobs.append(_job(f"R-MAT {args.pattern} count, {mode}", args.rmat, count_run))
    return jobs


def _measure(job, settings, repeat):
    """Warm-up runs, then ``repeat`` alternating rounds over ``settings``."""
    out = {str(g): {"seconds": [], "busy_per_device": [], "counts": []} for g in settings}
    for g in settings:  # may compile, allocate buffers, upload the graph
        job["run"](g)
    for _ in range(repeat):
        for g in settings:
            found, seconds, stats = job["run"](g)
            row = out[str(g)]
            row["seconds"].append(round(seconds, 6))
            row["busy_per_device"].append(_busy(stats))
            row["counts"].append(found)
            row["device"] = stats.get("gpu", {}).get("device")
    for row in out.values():
        row["median"] = statistics.median(row["seconds"])
        row["min"] = min(row["seconds"])
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--facebook", help="facebook_combined.txt.gz (MCE)")
    p.add_argument("--rmat", help="an R-MAT edge list (gthinker generate rmat --scale 20 "
                                  "--edge-factor 16 --seed 1 -o rmat20.txt)")
    p.add_argument("--pattern", default="4-clique", help="counting pattern (default: 4-clique)")
    p.add_argument("--gpus", default="all", help="N to compare with 1 (default: all visible)")
    p.add_argument("--modes", default="gpu", help="comma-separated: gpu, hybrid (default: gpu)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads in hybrid mode")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", help="JSON file")
    args = p.parse_args(argv)
    args.modes = args.modes.split(",")
    n = gthinker.gpu.visible_devices() if args.gpus == "all" else int(args.gpus)
    devices = gthinker.gpu.resolve_devices(n)  # fails at once when N are not there
    report = {"machine": platform.node(), "device": gthinker.gpu.require_device(),
              "gpus": n, "date": time.strftime("%Y-%m-%d %H:%M"), "jobs": []}
    settings = [1, n] if n > 1 else [1]
    ok = True
    for job in _jobs(args):
        runs = _measure(job, settings, args.repeat)
        counts = {c for row in runs.values() for c in map(json.dumps, row["counts"])}
        row = {"job": job["name"], "graph": job["graph"], "devices": devices,
               "counts_equal": len(counts) == 1, "runs": runs}
        if n > 1:
            row["speedup"] = round(runs["1"]["median"] / runs[str(n)]["median"], 3)
        ok &= row["counts_equal"]
        report["jobs"].append(row)
        print(f"{job['name']}: " + ", ".join(
            f"--gpus {g}: {runs[str(g)]['median']:.3f} s (busy per GPU "
            f"{runs[str(g)]['busy_per_device'][-1]})" for g in settings)
            + (f", speed-up {row['speedup']}x" if n > 1 else "")
            + ("" if row["counts_equal"] else "  COUNTS DIFFER"), flush=True)
    text = json.dumps(report, indent=1, default=str)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

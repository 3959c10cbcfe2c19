"""1, 2 and 4 GPUs in one process: facebook_combined MCE, an R-MAT clique count,
subgraph matching (the T-DFS patterns) on facebook and gSWORD's sampling of a query.

For each job, runs every GPU count of ``--gpus`` (those the machine lacks are skipped;
``default``: no ``gpus``, as many GPUs as the job's estimated work fills) alternately in
this process, after one run of each that may compile and allocate (not counted): the warm
times (``seconds``: the job, without loading, preparing or compiling; ``whole``: the call,
wall clock), the speed-up of the medians over one GPU, the counts (they must be equal: a
mismatch makes the exit status 1; the JSON is written after each job) and each device's
busy seconds per run (``busy_seconds`` of the levels engine, else ``kernel_seconds``:
launch to synchronisation). A table at the end, then the profile of each job's last run per
setting: each GPU's wall, busy, launch (the launch calls), sync (waiting for kernels),
copy, host and thread CPU seconds, where its engine keeps them (MCE's bitset engine keeps
them all; wall minus thread CPU minus sync is time its thread waited for the GIL or the
others). ``default`` rows say how many GPUs the default took and whether it is within 10%
of one GPU's time (the rule of issue 41).

    python benchmarks/multi_gpu.py --facebook facebook_combined.txt.gz \\
        --rmat /tmp/rmat22.txt --pattern 5-clique --gpus 1,2,4 --repeat 3 \\
        --gsword hprd.graph,query_dense_16_1.graph --out results/multi_gpu_h200x4.json

gSWORD's "count" is its estimate (Alley, no trawling, a fixed seed: the same on any
number of GPUs, to the bit), its time the samplers' (``sampling_seconds``: CUDA events
from the first kernel to the last).

On the device machine: ``bash benchmarks/device_multi_gpu.sh`` (its header says how).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import gthinker
from gthinker.apps import count, mce, sm

sys.path.insert(0, str(Path(__file__).resolve().parent))


#: The settings of ``--gpus`` besides counts: no ``gpus`` (the default).
DEFAULT = "default"
#: The default may be this much slower than one GPU (issue 41).
DEFAULT_SLACK = 1.10


def _profile(stats) -> list[dict]:
    """Each device's figures of PROFILE_FIGURES in one run."""
    from gthinker.gpu.devices import PROFILE_FIGURES

    return [{"device_id": s.get("device_id"),
             **{k: round(s[k], 6) if isinstance(s[k], float) else s[k]
                for k in PROFILE_FIGURES if k in s}} for s in stats.get("gpus", [])]


def _busy(stats) -> list[float]:
    """Each device's busy seconds in one run."""
    return [round(s.get("busy_seconds", s.get("kernel_seconds", 0.0)), 6)
            for s in stats.get("gpus", [])]


def _job(name, graph, run):
    """``run(gpus)`` -> (count, seconds, stats) as a function of the GPU setting."""
    return {"name": name, "graph": graph, "run": run}


def _sm_query(name):
    """A pattern name of gthinker's, or a T-DFS ``.g`` file (benchmarks/sm_tdfs.py)."""
    if not name.endswith(".g"):
        return name
    from sm_tdfs import _query

    return _query(Path(name))


def _sm_jobs(args, fb):
    jobs = []
    for name in args.sm_patterns:
        query = _sm_query(name)

        def sm_run(gpus, query=query):
            r = sm.count(fb, query, mode="gpu", gpus=gpus)
            return r.count, r.seconds, r.stats
        jobs.append(_job(f"facebook sm {Path(name).name}, gpu", args.facebook, sm_run))
    return jobs


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
        for mode in args.count_modes:
            def count_run(gpus, mode=mode):
                r = count.count(rm, args.pattern, mode=mode, gpus=gpus, threads=args.threads)
                return r.count, r.seconds, r.stats
            jobs.append(_job(f"R-MAT {args.pattern} count, {mode}", args.rmat, count_run))
    if args.facebook and args.sm_patterns:
        jobs += _sm_jobs(args, fb)
    if args.gsword:
        from gthinker.apps import gsword

        data_file, query_file = args.gsword.split(",")
        data = gthinker.Graph.read(data_file)

        def gsword_run(gpus):
            r = gsword.estimate(data, query_file, "alley", samples=args.gsword_samples,
                                mode="gpu", trawl=False, seed=1, gpus=gpus)
            return r.estimate, r.sampling_seconds, r.stats
        jobs.append(_job(f"gSWORD {Path(query_file).name}, {args.gsword_samples:,} samples",
                         data_file, gsword_run))
        jobs[-1]["samples"] = args.gsword_samples
    if args.facebook:  # last: what the node budget does to several GPUs (exploratory)
        for budget in args.mce_budgets:
            def budget_run(gpus, budget=budget):
                r = mce.run(fb, mode="gpu", gpus=gpus, gpu_node_budget=budget)
                return (r.count, r.histogram), r.seconds, r.stats
            jobs.append(_job(f"facebook MCE, gpu, node budget {budget}", args.facebook,
                             budget_run))
    return jobs


def _measure(job, settings, repeat):
    """Warm-up runs, then ``repeat`` alternating rounds over ``settings``."""
    out = {str(g): {"seconds": [], "whole": [], "busy_per_device": [], "counts": [],
                    "gpus_used": []} for g in settings}

    def gpus(g):
        return None if g == DEFAULT else g

    for g in settings:  # may compile, allocate buffers, upload the graph
        job["run"](gpus(g))
    for _ in range(repeat):
        for g in settings:
            t0 = time.perf_counter()
            found, seconds, stats = job["run"](gpus(g))
            row = out[str(g)]
            row["whole"].append(round(time.perf_counter() - t0, 6))
            row["seconds"].append(round(seconds, 6))
            row["busy_per_device"].append(_busy(stats))
            row["gpus_used"].append(len(stats.get("gpus", [])))
            row["profile"] = _profile(stats)  # the last run's
            row["counts"].append(found)
            row["device"] = stats.get("gpu", {}).get("device")
    for row in out.values():
        row["median"] = statistics.median(row["seconds"])
        row["whole_median"] = statistics.median(row["whole"])
        row["min"] = min(row["seconds"])
        if "samples" in job and row["median"]:
            row["samples_per_second"] = round(job["samples"] / row["median"])
    return out


def _table(report) -> str:
    """The runs as a Markdown table: job, GPUs, job and whole seconds (medians), busy
    seconds per GPU (last run), speed-up of the job over one GPU."""
    lines = ["| job | GPUs | job s | whole s | busy s per GPU | speed-up | samples/s | counts |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in report["jobs"]:
        one = row["runs"].get("1", {}).get("median")
        for g, run in row["runs"].items():
            speed = f"{one / run['median']:.2f}x" if one and run["median"] else "-"
            busy = " / ".join(f"{b:.3f}" for b in run["busy_per_device"][-1])
            if g == DEFAULT:
                within = one is None or run["median"] <= DEFAULT_SLACK * one
                g = (f"default ({'/'.join(map(str, sorted(set(run['gpus_used']))))} GPU(s); "
                     f"{'within 10% of 1' if within else 'SLOWER than 1 GPU by > 10%'})")
            rate = f"{run['samples_per_second']:,}" if "samples_per_second" in run else "-"
            lines.append(f"| {row['job']} | {g} | {run['median']:.3f} | "
                         f"{run['whole_median']:.3f} | {busy} | {speed} | {rate} | "
                         f"{'equal' if row['counts_equal'] else 'DIFFER'} |")
    return "\n".join(lines)


def _profile_table(report) -> str:
    """Each job's last run per setting, each GPU's figures (see the module docs)."""
    from gthinker.gpu.devices import PROFILE_FIGURES

    shown = [k for k in PROFILE_FIGURES if any(
        k in d for row in report["jobs"] for run in row["runs"].values()
        for d in run.get("profile", []))]
    lines = ["| job | GPUs | GPU | " + " | ".join(k.replace("_seconds", " s") for k in shown)
             + " |", "| --- | --- | --- |" + " --- |" * len(shown)]
    for row in report["jobs"]:
        for g, run in row["runs"].items():
            for d in run.get("profile", []):
                cells = [f"{d[k]:.3f}" if isinstance(d.get(k), float) else str(d.get(k, "-"))
                         for k in shown]
                lines.append(f"| {row['job']} | {g} | {d['device_id']} | "
                             + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--facebook", help="facebook_combined.txt.gz (MCE)")
    p.add_argument("--rmat", help="an R-MAT edge list (gthinker generate rmat --scale 20 "
                                  "--edge-factor 16 --seed 1 -o rmat20.txt)")
    p.add_argument("--pattern", default="4-clique", help="counting pattern (default: 4-clique)")
    p.add_argument("--gpus", default="1,2,4",
                   help="GPU counts, comma-separated; those not visible are skipped "
                        f"(default: 1,2,4; all: 1 and every visible; {DEFAULT}: no gpus, "
                        "as many as the job's work fills)")
    p.add_argument("--modes", default="gpu", help="MCE modes, comma-separated: gpu, hybrid")
    p.add_argument("--mce-budgets", default="",
                   help="MCE gpu-mode node budgets (gpu_node_budget) to run besides the "
                        "default, comma-separated (default: none)")
    p.add_argument("--count-modes", default="gpu", help="counting modes (default: gpu)")
    p.add_argument("--sm-patterns", default="",
                   help="patterns matched on facebook in gpu mode: gthinker names or T-DFS "
                        ".g files, comma-separated (default: none)")
    p.add_argument("--gsword", default="", metavar="DATA,QUERY",
                   help="a data graph and a query gSWORD samples (Alley, gpu mode)")
    p.add_argument("--gsword-samples", type=int, default=10**8,
                   help="gSWORD's samples (default: 10^8)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads in hybrid mode")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", help="JSON file")
    args = p.parse_args(argv)
    args.modes = args.modes.split(",")
    args.count_modes = args.count_modes.split(",")
    args.mce_budgets = [int(b) for b in args.mce_budgets.split(",") if b]
    args.sm_patterns = [p for p in args.sm_patterns.split(",") if p]
    have = gthinker.gpu.visible_devices()
    names = args.gpus.split(",")
    asked = [1, have] if args.gpus == "all" else [int(g) for g in names if g != DEFAULT]
    settings: list = sorted({g for g in asked if 1 <= g <= have})
    skipped = sorted(set(asked) - set(settings))
    if skipped:
        print(f"skipped: {skipped} GPUs ({have} visible)", flush=True)
    n = settings[-1] if settings else 1
    if DEFAULT in names:
        settings.append(DEFAULT)
    devices = gthinker.gpu.resolve_devices(n)
    report = {"machine": platform.node(), "device": gthinker.gpu.require_device(),
              "gpus": settings, "date": time.strftime("%Y-%m-%d %H:%M"), "jobs": []}
    ok = True
    for job in _jobs(args):
        runs = _measure(job, settings, args.repeat)
        counts = {c for row in runs.values() for c in map(json.dumps, row["counts"])}
        row = {"job": job["name"], "graph": job["graph"], "devices": devices,
               "counts_equal": len(counts) == 1, "runs": runs}
        if len(runs) > 1 and "1" in runs:
            row["speedup"] = {g: round(runs["1"]["median"] / runs[g]["median"], 3)
                              for g in runs}
        ok &= row["counts_equal"]
        report["jobs"].append(row)
        print(f"{job['name']}: " + ", ".join(
            f"--gpus {g}: {runs[str(g)]['median']:.3f} s (busy per GPU "
            f"{runs[str(g)]['busy_per_device'][-1]})" for g in settings)
            + (f", speed-up {row['speedup']}" if "speedup" in row else "")
            + ("" if row["counts_equal"] else "  COUNTS DIFFER"), flush=True)
        if args.out:  # after each job: a run cut short keeps what it measured
            with open(args.out, "w") as f:
                f.write(json.dumps(report, indent=1, default=str) + "\n")
    print(_table(report), flush=True)
    print(_profile_table(report), flush=True)
    text = json.dumps(report, indent=1, default=str)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

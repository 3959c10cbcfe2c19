"""Ctrl-C stops a GPU MCE run at once (the bitset kernels poll the job's stop flag).

    python benchmarks/mce_stop.py --graph .data/snap/facebook_combined.txt.gz \\
        --modes gpu,hybrid --repeat 3 --delay 1 --limit 0.5 --out mce_stop.json

For each mode, first one whole ``gthinker mce GRAPH --mode MODE --json`` run (it also fills
the compile cache), then REPEAT runs sent SIGINT DELAY seconds after their first progress
line (the run is in its kernels by then). Each stopped run must exit 130 within LIMIT
seconds of the signal, without a traceback, its JSON result marked partial
(``"partial": true``, ``"stopped": "interrupted"``), with fewer maximal cliques than the
whole run and no more of any size. A mode ``api-MODE`` runs ``mce.run(GRAPH, mode=MODE)``
in a Python program instead (Ctrl-C raises KeyboardInterrupt there, which it turns into exit
130; in hybrid mode the master aborts the job and the GPU engine's wait sets the flag): it
must exit 130 within LIMIT seconds too. One line a run; the last line says PASS or FAIL
(exit status 0 or 1). Before the kernels polled the flag, Ctrl-C waited for the launch: the
rest of the whole run.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time

#: What a progress line of ``gthinker mce`` holds (the run has started its search).
PROGRESS_MARK = "tasks done="
#: The program of the ``api-`` modes: mce.run with progress lines like the command's,
#: its result as the command's JSON; Ctrl-C (KeyboardInterrupt) ends it with 130.
API_RUN = f"""
import json, sys
from gthinker.apps import mce
graph, mode, gpus = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    r = mce.run(graph, mode=mode, gpus=gpus or None, progress_interval=0.2,
                progress=lambda snap: print({PROGRESS_MARK!r}, file=sys.stderr, flush=True))
except KeyboardInterrupt:
    sys.exit(130)
print(json.dumps(r.to_dict()))
"""


def _cli(graph, mode, gpus, *extra):
    if mode.startswith("api-"):
        return [sys.executable, "-c", API_RUN, str(graph), mode[4:], str(gpus)]
    args = [sys.executable, "-m", "gthinker", "mce", str(graph), "--mode", mode, "--json", *extra]
    return args + (["--gpus", str(gpus)] if gpus else [])


def _whole(graph, mode, gpus) -> dict:
    done = subprocess.run(_cli(graph, mode, gpus, "-q"), capture_output=True, text=True,
                          cwd=tempfile.gettempdir(), check=False)
    if done.returncode != 0:
        sys.exit(f"the whole {mode} run failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def _stopped(graph, mode, gpus, delay) -> tuple[int, dict | None, str, float, float]:
    """One run sent SIGINT ``delay`` s after its first progress line: (exit status, its JSON
    result or None, stderr, seconds from the signal to the exit, seconds from the start to
    the signal)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(_cli(graph, mode, gpus, "--progress-interval", "0.2"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tempfile.gettempdir())
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if PROGRESS_MARK in line:
            break
    time.sleep(delay)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    took = time.monotonic() - sent
    lines = out.splitlines()
    result = json.loads(lines[-1]) if lines else None
    return proc.returncode, result, "".join(seen) + err, took, sent - t0


def _problems(code, result, err, took, whole, limit, api) -> list[str]:
    """What is wrong with a stopped run (nothing: it passed). ``api``: a Python program,
    which prints no result when stopped."""
    wrong = []
    if code != 130:
        wrong.append(f"exit {code}, not 130")
    if took > limit:
        wrong.append(f"exited {took:.2f} s after SIGINT (limit {limit} s)")
    if "Traceback" in err:
        wrong.append("a traceback on stderr")
    if api:  # stopped: KeyboardInterrupt, no result printed
        return wrong + ([] if result is None else ["a result printed: the run was not stopped"])
    if result is None:
        return [*wrong, "no JSON result"]
    if not (result.get("partial") and result.get("stopped") == "interrupted"):
        wrong.append(f"not marked partial (stopped={result.get('stopped')!r})")
    if result["count"] >= whole["count"]:
        wrong.append(f"{result['count']:,} cliques, the whole run's count: the signal came "
                     "after the search (a longer graph or a shorter --delay)")
    over = {s: c for s, c in result["histogram"].items() if c > whole["histogram"].get(s, 0)}
    if over:
        wrong.append(f"more cliques of some sizes than the whole run: {over}")
    return wrong


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", required=True, help="the graph file")
    ap.add_argument("--modes", default="gpu,hybrid", help="comma-separated (default gpu,hybrid)")
    ap.add_argument("--gpus", type=int, default=0, help="--gpus of the runs (0: the default)")
    ap.add_argument("--repeat", type=int, default=3, help="stopped runs per mode (default 3)")
    ap.add_argument("--delay", type=float, default=1.0,
                    help="seconds from the first progress line to SIGINT (default 1)")
    ap.add_argument("--limit", type=float, default=0.5,
                    help="seconds from SIGINT to the exit that pass (default 0.5)")
    ap.add_argument("--out", help="JSON file for every run's figures")
    args = ap.parse_args(argv)
    runs, failed = [], 0
    for mode in args.modes.split(","):
        whole = _whole(args.graph, mode, args.gpus)
        print(f"{mode}: whole run {whole['count']:,} maximal cliques in {whole['seconds']:.2f} s",
              flush=True)
        for r in range(args.repeat):
            code, result, err, took, at = _stopped(args.graph, mode, args.gpus, args.delay)
            wrong = _problems(code, result, err, took, whole, args.limit, mode.startswith("api-"))
            failed += bool(wrong)
            count = result["count"] if result else None
            found = ("no result printed" if count is None
                     else f"{count:,} of {whole['count']:,} cliques")
            print(f"{mode} run {r + 1}: SIGINT {at:.2f} s after the start, exit {code} "
                  f"{took:.3f} s after it, {found}: {'; '.join(wrong) or 'ok'}", flush=True)
            runs.append({"mode": mode, "run": r + 1, "exit": code, "exit_seconds": took,
                         "signal_at": at, "count": count, "whole_count": whole["count"],
                         "whole_seconds": whole["seconds"], "problems": wrong,
                         "stderr_tail": err[-1500:]})
    if args.out:
        with open(args.out, "w") as f:
            json.dump(runs, f, indent=1)
    print("FAIL" if failed else "PASS", f"({len(runs) - failed} of {len(runs)} runs ok)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

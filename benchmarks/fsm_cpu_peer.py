"""`gthinker fsm` on the CPU beside G2Miner's OpenMP FSM binary (fsm_omp_base), side by side
on small labeled graphs, the same thread count on both sides: the mining time (G2Miner's last
"runtime [...]" line; gthinker's ``seconds`` in a warm process, i.e. after a first call that
loads the compiled code) and the whole process (each tool started afresh, graph read
included), as the minimum, median and maximum of RUNS runs, and the pattern counts.

    G2M_BIN=/tmp/g2m/bin/fsm_omp_base DATA=../shared/data python benchmarks/fsm_cpu_peer.py

G2M_BIN: G2Miner's fsm_omp_base, built as benchmarks/peers/g2miner_fsm.sh builds it (its
src/fsm/Makefile, target fsm_omp_base alone needs only g++: `make -C SRC/src/fsm BIN=DIR/
fsm_omp_base` after the script's use_vlabel sed on src/fsm/main.cc); unset or missing: only
gthinker runs. The graphs are written in G2Miner's format as benchmarks/fsm_peer.py writes
them (HPRD's labels folded to 254). Both mine vertex labels only (--no-edge-labels) with
G2Miner's early stop (--no-exact-support). G2Miner's counts beyond two edges are not a
reference (docs/fsm.md): the "agree" column says whether the two counts are equal.

Env: THREADS (default 2), RUNS (default 5), CASES (default "citeseer:2:100 citeseer:3:100
cora:2:100 cora:3:500 hprd:2:100 hprd:3:100 hprd:3:1000 yeast:2:100 yeast:3:100"; GRAPH:K:S),
DATA, G2M_SRC (as in fsm_peer.py), TIMEOUT seconds per process (default 120).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fsm_peer import ROOT, prepare  # noqa: E402

THREADS = int(os.environ.get("THREADS", "2"))
RUNS = int(os.environ.get("RUNS", "5"))
TIMEOUT = float(os.environ.get("TIMEOUT", "120"))
CASES = os.environ.get("CASES", "citeseer:2:100 citeseer:3:100 cora:2:100 cora:3:500 "
                       "hprd:2:100 hprd:3:100 hprd:3:1000 yeast:2:100 yeast:3:100").split()
G2M_BIN = os.environ.get("G2M_BIN", "")


def _timed(cmd, env=None):
    """(output, wall seconds) of one process."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT,
                       env={**os.environ, **(env or {})}, cwd=ROOT)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({p.returncode}): {(p.stdout + p.stderr)[-400:]}")
    return p.stdout + p.stderr, wall


def g2miner(prefix, k, s):
    """(count, mining seconds per run, process seconds per run); count "failed" where the
    binary failed (it crashes on some graphs at K = 3, docs/fsm.md)."""
    mine, wall, count = [], [], None
    for _ in range(RUNS + 1):  # the first, a warm-up of the file cache, is not kept
        try:
            out, w = _timed([G2M_BIN, str(prefix), str(k), str(s)],
                            {"OMP_NUM_THREADS": str(THREADS)})
        except RuntimeError:
            return "failed", [float("nan")], [float("nan")]
        count = int(re.findall(r"^Number of frequent patterns: (\d+)$", out, re.M)[-1])
        mine.append(float(re.findall(r"^runtime \[[^\]]*\] = ([0-9.eE+-]+) sec$", out,
                                     re.M)[-1]))
        wall.append(w)
    return count, mine[1:], wall[1:]


def gthinker_warm(prefix, k, s):
    """(count, mining seconds per run) in this process, after one call that loads the code."""
    import gthinker
    from gthinker.apps import fsm

    g = gthinker.Graph.read(prefix)
    keywords = {"mode": "cpu", "threads": THREADS, "exact_support": False,
                "edge_labels": False}
    res = fsm.mine(g, k, s, **keywords)
    times = []
    for _ in range(RUNS):
        res = fsm.mine(g, k, s, **keywords)
        times.append(res.seconds)
    return res.count, times


def gthinker_process(prefix, k, s):
    cmd = [sys.executable, "-m", "gthinker", "fsm", str(prefix), "--max-edges", str(k),
           "--support", str(s), "--mode", "cpu", "--threads", str(THREADS),
           "--no-edge-labels", "--no-exact-support", "-q"]
    return [_timed(cmd)[1] for _ in range(RUNS + 1)][1:]


def _ms(xs):
    return f"{min(xs) * 1e3:.1f}/{statistics.median(xs) * 1e3:.1f}/{max(xs) * 1e3:.1f}"


def main():
    peer = bool(G2M_BIN) and Path(G2M_BIN).is_file()
    print(f"{THREADS} threads each side, {RUNS} runs; times in ms as min/median/max"
          + ("" if peer else "; no G2M_BIN: gthinker only"), flush=True)
    head = (f"{'graph':8} K {'S':>5} {'count g2m/ours':>15} {'g2m mining':>18} "
            f"{'ours mining (warm)':>20} {'g2m process':>18} {'ours process':>20}  agree")
    print(head, flush=True)
    rows = [head]
    for case in CASES:
        name, k, s = case.split(":")
        k, s = int(k), int(s)
        prefix, _note = prepare(name)
        ours, warm = gthinker_warm(prefix, k, s)
        proc = gthinker_process(prefix, k, s)
        if peer:
            theirs, mine, wall = g2miner(prefix, k, s)
        else:
            theirs, mine, wall = None, [float("nan")], [float("nan")]
        row = (f"{name:8} {k} {s:>5} {str(theirs) + '/' + str(ours):>15} {_ms(mine):>18} "
               f"{_ms(warm):>20} {_ms(wall):>18} {_ms(proc):>20}  "
               f"{'-' if theirs in (None, 'failed') else ('yes' if theirs == ours else 'no')}")
        print(row, flush=True)
        rows.append(row)
    return rows


if __name__ == "__main__":
    main()

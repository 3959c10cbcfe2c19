"""The seed paper's Tables I (maximal cliques) and II (subgraph matching) for gthinker and
its peers, each run in its own process, on graphs shaped like the seed's.

    python benchmarks/seed_tables.py --table mce --peers /tmp/peers --out OUT \\
        --presets soc-pokec,socfb-B-anon --scale 0.1
    python benchmarks/seed_tables.py --dry-run --peers .peers/build --out /tmp/seed_dry

Graphs: ``--presets A,B --scale F --seed S`` makes ``gthinker generate preset NAME --scale F
--seed S``; ``--graph NAME=SPEC`` adds any other (SPEC: the words after ``gthinker generate``,
e.g. ``rmat --scale 20 --edge-factor 16 --a 0.5``, or ``file PATH`` for a graph file). Each
is generated once into ``--work``, its isolated vertices dropped and its prepared forms stored
(``benchmarks/peers/convert.py compact``), then converted to each peer's input format
(``convert.py``, checked by re-reading unless ``--no-check``). A folder whose spec is the same
is reused (a second call on a warm machine).

Table I (``--table mce``), per graph: ``gthinker mce`` in each of ``--mce-modes`` (cpu with
``--threads``), MCE-GPU in each of ``--mcegpu-schemes`` (the seed's L1+IP and L1+IPX, and
its best on facebook), G-ThinkerCG's ``app_mc`` in each of ``--gcg-modes``.
Table II (``--table sm``), per graph and T-DFS pattern (``--patterns``, 1-7): ``gthinker
sm`` in gpu mode, and in the other ``--sm-modes`` where its gpu run took under ``--cheap``
seconds; T-DFS; G-ThinkerCG's ``app_gmatch`` with the same shape (its modes
``--gcg-sm-modes``); G2Miner where the pattern is a clique.

Each row: the tool's own time (gthinker: the job's seconds, compile excluded; MCE-GPU: its
"count time"; G-ThinkerCG: "Total time", its master's run; T-DFS: its kernel; G2Miner: its
"runtime"), the whole process's wall time, the count (embeddings in Table II: G-ThinkerCG's
and G2Miner's distinct counts times |Aut|), the peak host memory of the process tree
(``os.wait4``), the GPU's peak memory use above idle (``nvidia-smi`` polled every 100 ms,
when there is one), and the row's times over gthinker's best in the same group. Counts that
differ from the group's reference (gthinker's first, else the first peer's) are marked
MISMATCH and make the exit status 1. A run past ``--run-limit`` seconds is killed
("timeout"), a peer's already past ``--peer-ratio`` times gthinker's best whole process
in its group (at least ``--peer-floor`` seconds: a peer that far behind is behind
whatever it would have taken, and the budget goes to the other rows); once ``--budget``
seconds have passed, the remaining runs are skipped. Before the timed runs, one child
process compiles (or loads from the compile cache) every gthinker
case on a small graph: its time is reported apart ("warm-up").

Writes OUT/seed_tables{TAG}.json (meta, graphs, rows), OUT/seed_tables{TAG}.jsonl (one row
a line, written as the rows come) and OUT/seed_tables{TAG}.md (the tables).
``--dry-run`` runs the whole flow here on tiny R-MAT graphs: everything that needs a GPU is
skipped (and listed), the CPU runs, the conversions and their checks, and G-ThinkerCG's
CPU-only mode (which runs without a GPU) do run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PEERS = HERE / "peers"
sys.path.insert(0, str(PEERS))
import patterns  # noqa: E402

#: The seed's Table I / II graphs, as ``gthinker generate preset`` names them.
SEED_PRESETS = ("soc-pokec", "soc-livejournal", "socfb-B-anon", "edit-shwiki",
                "edit-enwiktionary", "wikipedia_link_sr", "trackers")
#: MCE-GPU schemes: the seed's two (L1+IP, L1+IPX) and its best on facebook here.
MCEGPU_SCHEMES = "L1+IP=-p l1 -i p -w wl;L1+IPX=-p l1 -i px -w wl;L2+IPX=-p l2 -i px -w wl"
#: The graphs of ``--dry-run`` (tiny, skewed: hubs and cliques as the seed's).
DRY_GRAPHS = ("r9=rmat --scale 9 --edge-factor 8 --a 0.5 --seed 1",
              "r10=rmat --scale 10 --edge-factor 6 --a 0.6 --seed 2")
#: What a gthinker row keeps of its job's stats: its own peaks (the process's host peak
#: beside the GPU engine's allocations at its peak; MCE's bitsets engine reports both).
GTHINKER_STATS = ("host_peak_bytes", "gpu_peak_bytes", "gpu_engine")
#: Per bundle folder, the environment variable its script reads.
PEER_DIRS = {"mcegpu": "MCEGPU_DIR", "tdfs": "TDFS_DIR", "gthinkercg": "GCG_DIR",
             "g2miner": "G2M_DIR"}
#: Which formats each table needs (convert.py FORMAT), beside gthinker's own .csr.
TABLE_FORMATS = {"mce": ("gthinkercg", "mcegpu"), "sm": ("gthinkercg", "tdfs", "g2miner")}
#: Bytes each format takes for n vertices and m directed entries, and the free disk a
#: conversion wants beyond that (a share, for the other files and the page cache).
FORMAT_BYTES = {"gthinkercg": lambda n, m: 32 + 8 * (n + 1) + 4 * m,
                "mcegpu": lambda n, m: 24 * m,
                "tdfs": lambda n, m: 8 * (n + 1) + 4 * m,
                "g2miner": lambda n, m: 8 * (n + 1) + 4 * m}
DISK_MARGIN = 1.2
#: Seconds a killed run's process group gets between SIGTERM and SIGKILL.
KILL_GRACE = 3.0
#: Bytes of a child's output kept for parsing, and characters of it written to the log (so
#: that a chatty peer cannot push the log past what comes back from the GPU machine).
OUTPUT_KEPT = 1 << 20
LOG_KEPT = 16 << 10
#: A gthinker row that still compiled this many seconds says so (the warm-up missed a case).
COMPILE_NOTE = 0.5
#: A line saying why a tool failed (its last one is the row's message, else its last line).
FAILURE_TEXT = re.compile(r"Assertion|error|Error|Segmentation|Aborted|terminate")
OOM_TEXT = re.compile(r"out of memory|cudaErrorMemoryAllocation|bad_alloc|MemoryError", re.I)


# -- one child process, measured -------------------------------------------------------------


class GpuPoll:
    """Peak ``memory.used`` of GPU 0 (MiB) while it runs: ``nvidia-smi -lms 100``."""

    def __init__(self):
        self.peak = self.idle = None
        self._proc = None
        if shutil.which("nvidia-smi") is None:
            return
        q = ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "0"]
        try:
            self.idle = int(subprocess.run(q, capture_output=True, text=True,
                                           timeout=10).stdout.split()[0])
        except (OSError, ValueError, IndexError, subprocess.SubprocessError):
            return
        self.peak = self.idle
        self._proc = subprocess.Popen(q + ["-lms", "100"], stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        for line in self._proc.stdout:
            if line.strip().isdigit():
                self.peak = max(self.peak, int(line))

    def stop(self):
        """MiB above idle at the peak, or None without nvidia-smi."""
        if self._proc is None:
            return None
        self._proc.terminate()
        self._proc.wait()
        self._thread.join(timeout=5)
        return self.peak - self.idle


def run_child(cmd, limit, env=None, log=None, gpu=False, cwd=None):
    """Runs ``cmd`` in its own process group, killed after ``limit`` seconds. Returns
    ``{rc, wall, killed, peak_rss, gpu_mib, out}``: ``peak_rss`` (bytes) is the largest
    resident set in the process tree (``os.wait4``'s rusage, children included), ``out``
    the end of its stdout and stderr together (:data:`OUTPUT_KEPT` bytes: every tool prints
    its result last), also appended to ``log`` (its last :data:`LOG_KEPT` characters)."""
    cmd = [os.fspath(c) if isinstance(c, os.PathLike) else str(c) for c in cmd]
    with tempfile.TemporaryFile() as sink:
        poll = GpuPoll() if gpu else None
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                start_new_session=True)
        killed = threading.Event()

        def kill():
            killed.set()
            _signal_group(proc.pid, signal.SIGTERM)
            time.sleep(KILL_GRACE)
            _signal_group(proc.pid, signal.SIGKILL)

        timer = threading.Timer(limit, kill)
        timer.daemon = True
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:  # Ctrl-C: the child's whole group goes too, at once
            _signal_group(proc.pid, signal.SIGKILL)
            os.wait4(proc.pid, 0)
            raise
        finally:
            timer.cancel()
            gpu_mib = poll.stop() if poll else None
        proc.returncode = rc = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        _signal_group(proc.pid, signal.SIGKILL)  # anything it left behind
        size = sink.seek(0, os.SEEK_END)
        sink.seek(max(0, size - OUTPUT_KEPT))
        out = sink.read().decode(errors="replace")
    if log is not None:
        shown = out if len(out) <= LOG_KEPT else (
            f"[{size - LOG_KEPT:,} bytes of output left out]\n" + out[-LOG_KEPT:])
        log.write(f"$ {shlex.join(cmd)}\n{shown}\n[rc {rc}, {wall:.2f} s]\n")
        log.flush()
    return {"rc": rc, "wall": wall, "killed": killed.is_set(),
            "peak_rss": usage.ru_maxrss * 1024, "gpu_mib": gpu_mib, "out": out}


def _signal_group(pid, sig):
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# -- what each tool prints --------------------------------------------------------------------


def _num(pattern, text, conv=float, group=1):
    found = re.findall(pattern, text, re.M)
    if not found:
        return None
    last = found[-1]
    return conv(last[group - 1] if isinstance(last, tuple) else last)


def parse_gthinker(out):
    """The JSON line of ``gthinker ... --json``: (count, seconds, extra)."""
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            extra = {k: r.get(k) for k in ("mode", "compile_seconds", "stopped", "gpu_mode",
                                           "method", "peak_memory_bytes")}
            extra["load_seconds"] = (r.get("graph") or {}).get("load_seconds")
            stats = r.get("stats") or {}
            extra.update({k: stats[k] for k in GTHINKER_STATS if k in stats})
            if stats.get("gpu_engine") == "bitsets":  # its subtrees too big for a warp
                extra["gpu_stats"] = stats.get("gpu")
            return r.get("count"), r.get("seconds"), extra
    return None, None, {}


def _count(text):
    """An integer as a tool prints it, with or without thousands separators."""
    return int(text.replace(",", ""))


def parse_mcegpu(out):
    return (_num(r"Found ([\d,]+) maximal cliques in total", out, _count),
            _num(r"count time ([0-9.eE+-]+) s", out), {})


def parse_gthinkercg(out):
    return (_num(r"^Total count: (\d+)", out, int), _num(r"^Total time \(s\): ([0-9.eE+-]+)", out),
            {"spilled_tasks": _num(r"^Total spilled tasks: (\d+)", out, int)})


def parse_tdfs(out):
    ms = _num(r"^[^\t\n]+\t([0-9.]+)\t(\d+)$", out, float, 1)
    return (_num(r"^[^\t\n]+\t([0-9.]+)\t(\d+)$", out, int, 2), None if ms is None else ms / 1e3,
            {})


def parse_g2miner(out):
    count = _num(r"^num_\d+-cliques = (\d+)$", out, int)
    if count is None:
        count = _num(r"^total_num_triangles = (\d+)$", out, int)
    return count, _num(r"^runtime \[[^\]]*\] = ([0-9.eE+-]+) sec$", out), {}


def status_of(res, count, limit, stopped=None):
    """'ok', 'timeout N s', 'OOM', 'killed ...' or 'error: ...' for a finished child."""
    if res["killed"] or stopped:
        return f"timeout {limit:.3g} s"
    if res["rc"] != 0 or count is None:
        if OOM_TEXT.search(res["out"]):
            return "OOM"
        if res["rc"] == -signal.SIGKILL:
            return "killed (SIGKILL: the host's OOM killer?)"
        lines = [ln.strip() for ln in res["out"].splitlines() if ln.strip()]
        failed = [ln for ln in lines if FAILURE_TEXT.search(ln)]
        last = (failed or lines or ["no output"])[-1][:160]
        return f"error: rc {res['rc']}: {last}" if res["rc"] else f"error: no count: {last}"
    return "ok"


# -- rows, groups, tables --------------------------------------------------------------------


@dataclass
class Row:
    table: str
    graph: str
    tool: str
    variant: str
    pattern: int | None = None
    status: str = "ok"
    count: int | None = None
    count_kind: str = ""
    comparable: int | None = None  # maximal cliques, or embeddings
    tool_seconds: float | None = None
    time_kind: str = ""
    wall_seconds: float | None = None
    peak_rss_bytes: int | None = None
    gpu_peak_mib: int | None = None
    extra: dict = field(default_factory=dict)
    cmd: str = ""
    agrees: bool | None = None
    vs_best: tuple | None = None  # (tool time / gthinker's best, wall / gthinker's best)

    def group(self):
        return (self.table, self.graph, self.pattern)


def judge(rows):
    """Sets each row's ``agrees`` (against its group's reference count) and ``vs_best``
    (its times over the best gthinker times of its group); returns the mismatching rows."""
    groups = {}
    for r in rows:
        groups.setdefault(r.group(), []).append(r)
    bad = []
    for members in groups.values():
        done = [r for r in members if r.status == "ok" and r.comparable is not None]
        mine = [r for r in done if r.tool == "gthinker"]
        ref = (mine or done or [None])[0]
        best_t = min((r.tool_seconds for r in mine if r.tool_seconds is not None), default=None)
        best_w = min((r.wall_seconds for r in mine if r.wall_seconds is not None), default=None)
        for r in done:
            r.agrees = r.comparable == ref.comparable
            if not r.agrees:
                bad.append(r)
            r.vs_best = (_ratio(r.tool_seconds, best_t), _ratio(r.wall_seconds, best_w))
    return bad


def _ratio(a, b):
    return None if a is None or not b else a / b


def _secs(x):
    return "-" if x is None else f"{x:.3g}" if x < 10 else f"{x:.1f}"


def _cell_count(r, ref):
    if r.status != "ok":
        return r.status.replace("|", "/")
    s = f"{r.comparable:,}"
    if r.count != r.comparable:
        s += f" ({r.count:,} {r.count_kind})"
    if r.agrees is False:
        s += f" **MISMATCH** (ref {ref:,})" if ref is not None else " **MISMATCH**"
    return s


def _graph_line(g):
    """One graph's row: its size, then what making it and converting it took."""
    head = f"| {g['name']} | `{g['spec']}` |"
    if "vertices" not in g:
        return head + f" {g.get('error', '-')} |" + " |" * 6
    made = ("reused | reused" if g.get("reused") else
            f"{_secs(g.get('generate_seconds'))} | {_secs(g.get('compact_seconds'))}")
    conv = [f"{k} {_secs(v)}" for k, v in g.get("convert", {}).items()]
    conv += [f"{k}: {why}" for k, why in g.get("convert_errors", {}).items()]
    return (head + f" {g['vertices']:,} | {g['edges']:,} | {g['max_degree']:,} | "
            f"{g['degeneracy']} | {made} | {', '.join(conv) or '-'} |")


def markdown(meta, graphs, rows, bad):
    """The two tables (and the graphs' preparation) as markdown."""
    out = [f"# Seed tables ({meta['host']}, {meta.get('device') or 'no GPU'})", ""]
    out += [f"Command: `{meta['argv']}`", "",
            f"CPU and hybrid runs with {meta.get('threads')} threads ({meta.get('cpus')} cores); "
            f"each run stopped after {meta.get('run_limit')} s, {meta.get('budget')} s for "
            f"everything ({_secs(meta.get('elapsed_seconds'))} s used). Warm-up (compiling or "
            f"loading every gthinker case on a small graph, in no row): "
            f"{_secs(meta.get('warmup_seconds'))} s.", ""]
    if bad:
        out += [f"**COUNT MISMATCH in {len(bad)} rows**: "
                + "; ".join(f"{r.graph} {r.tool} {r.variant}"
                            + (f" P{r.pattern}" if r.pattern else "") for r in bad), ""]
    out += ["## Graphs", "", "| graph | spec | vertices | edges | max degree | degeneracy | "
            "generate (s) | compact + prepare (s) | conversions (s) |", "|" + " --- |" * 9]
    out += [_graph_line(g) for g in graphs]
    for table, title in (("mce", "Table I analogue: maximal cliques"),
                         ("sm", "Table II analogue: subgraph matching (embeddings)")):
        mine = [r for r in rows if r.table == table]
        if not mine:
            continue
        kinds = {}
        for r in mine:
            kinds.setdefault(r.tool, r.time_kind)
        out += ["", f"## {title}", "", "Own time: " + "; ".join(
            f"{tool}: {kind}" for tool, kind in kinds.items() if kind) + ".", "",
            "| graph | pattern | tool | mode / scheme | count | own time (s) | whole process (s) "
            "| host peak (GiB) | GPU peak (MiB) | / gthinker best (own / process) |",
            "|" + " --- |" * 10]
        refs = {}
        for r in mine:
            if r.status == "ok" and r.comparable is not None:
                refs.setdefault(r.group(), r.comparable)
        for r in mine:
            pat = "-" if r.pattern is None else f"{r.pattern} {patterns.TDFS[r.pattern][0]}"
            ratio = "-" if not r.vs_best else " / ".join(
                "-" if x is None else f"{x:.2f}x" for x in r.vs_best)
            rss = "-" if r.peak_rss_bytes is None else f"{r.peak_rss_bytes / 2**30:.2f}"
            gpu = "-" if r.gpu_peak_mib is None else f"{r.gpu_peak_mib:,}"
            own = _secs(r.tool_seconds)
            if (r.extra.get("compile_seconds") or 0) >= COMPILE_NOTE:
                own += f" (+{r.extra['compile_seconds']:.1f} compile)"
            out.append(f"| {r.graph} | {pat} | {r.tool} | {r.variant} | "
                       f"{_cell_count(r, refs.get(r.group()))} | {own} | "
                       f"{_secs(r.wall_seconds)} | {rss} | {gpu} | {ratio} |")
    return "\n".join(out) + "\n"


# -- the benchmark ----------------------------------------------------------------------------


class Bench:
    """The runs of one call: budget, peers, output files."""

    def __init__(self, a):
        self.a = a
        self.t0 = time.perf_counter()
        self.rows: list[Row] = []
        self.graphs: list[dict] = []
        self.out = Path(a.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.stem = self.out / f"seed_tables{a.tag}"
        self.log = open(f"{self.stem}.log", "w")  # noqa: SIM115 (closed in main)
        self.jsonl = open(f"{self.stem}.jsonl", "w")  # noqa: SIM115
        self.env = dict(os.environ, PYTHON=sys.executable, GCG_THREADS=str(a.threads))
        self.scratch = Path(a.work) / "cwd"  # the runs' current folder (files tools drop)
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.peer = {}
        for name, var in PEER_DIRS.items():
            if a.peers:
                self.env[var] = self.peer[name] = str(Path(a.peers).resolve() / name)
        self.meta = {"host": platform.node(), "python": sys.version.split()[0],
                     "argv": shlex.join(sys.argv), "threads": a.threads,
                     "run_limit": a.run_limit, "budget": a.budget, "dry_run": a.dry_run,
                     "device": _device_name(), "cpus": os.cpu_count(),
                     "peers": {p: _build_info(d) for p, d in self.peer.items()}}

    def left(self):
        return self.a.budget - (time.perf_counter() - self.t0)

    def say(self, msg):
        line = f"[{time.perf_counter() - self.t0:7.1f} s] {msg}"
        print(line, flush=True)
        self.log.write(line + "\n")
        self.log.flush()

    def has(self, peer, binary):
        return peer in self.peer and os.access(Path(self.peer[peer]) / binary, os.X_OK)

    def peer_limit(self, ours):
        """A peer's run limit, given gthinker's rows of the same group: ``--peer-ratio``
        times gthinker's best whole process (at least ``--peer-floor`` seconds), so that a
        peer far behind stops early and leaves the budget to the other rows; the whole
        ``--run-limit`` when gthinker has no finished row there."""
        done = [r.wall_seconds for r in ours if r.status == "ok" and r.wall_seconds]
        if not done or not self.a.peer_ratio:
            return self.a.run_limit
        return min(self.a.run_limit, max(self.a.peer_floor, self.a.peer_ratio * min(done)))

    def run(self, row, cmd, parse, *, gpu, factor=1, limit=None):
        """Runs one row's command for at most ``limit`` seconds (``--run-limit`` unless
        given; no more than what is left of the budget), or records why not
        (``row.status`` set already, a dry run's GPU run, no budget left), and appends the
        row."""
        left = self.left()
        if row.status != "ok":
            pass
        elif gpu and self.a.dry_run:
            row.status = "skipped (dry run: needs a GPU)"
        elif left < self.a.min_left:
            row.status = "skipped (budget)"
        if row.status != "ok":
            return self._add(row)
        own = self.a.run_limit if limit is None else limit
        limit = min(own, left)
        row.cmd = shlex.join(map(str, cmd))
        res = run_child(cmd, limit, self.env, self.log, gpu=gpu, cwd=self.scratch)
        count, secs, extra = parse(res["out"])
        row.status = status_of(res, count, limit, extra.get("stopped"))
        if row.status.startswith("timeout") and limit < own:
            row.status += " (the budget's end)"
        elif row.status.startswith("timeout") and own < self.a.run_limit:
            row.status += f" (--peer-ratio {self.a.peer_ratio:g} x gthinker's best)"
        row.count = count if row.status == "ok" else None
        row.comparable = None if row.count is None else row.count * factor
        row.tool_seconds = secs if row.status == "ok" else None
        row.wall_seconds = res["wall"]
        row.peak_rss_bytes = res["peak_rss"]
        row.gpu_peak_mib = res["gpu_mib"]
        row.extra = {k: v for k, v in extra.items() if v is not None}
        return self._add(row)

    def _add(self, row):
        self.rows.append(row)
        self.jsonl.write(json.dumps(row.__dict__, default=str) + "\n")
        self.jsonl.flush()
        what = f"{row.table} {row.graph}" + (f" P{row.pattern}" if row.pattern else "")
        self.say(f"{what} {row.tool} {row.variant}: {row.status} count {row.count} "
                 f"own {_secs(row.tool_seconds)} s, process {_secs(row.wall_seconds)} s")
        return row

    def write(self):
        bad = judge(self.rows)
        self.meta["elapsed_seconds"] = round(time.perf_counter() - self.t0, 2)
        Path(f"{self.stem}.json").write_text(json.dumps(
            {"meta": self.meta, "graphs": self.graphs, "rows": [r.__dict__ for r in self.rows]},
            indent=1, default=str))
        Path(f"{self.stem}.md").write_text(markdown(self.meta, self.graphs, self.rows, bad))
        return bad


def _device_name():
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,"
                               "noheader", "-i", "0"], capture_output=True, text=True,
                              timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _build_info(folder):
    p = Path(folder) / "BUILD_INFO"
    return p.read_text().strip().splitlines() if p.exists() else "not built"


def _py(*args):
    return [sys.executable, *map(str, args)]


# -- graphs: generate, compact, convert ---------------------------------------------------------


def graph_specs(a):
    specs = [(p, f"preset {p} --scale {a.scale} --seed {a.seed}")
             for p in filter(None, a.presets.split(","))]
    for g in a.graph or (DRY_GRAPHS if a.dry_run else ()):
        name, sep, spec = g.partition("=")
        if not sep or not re.fullmatch(r"[\w.+-]+", name):
            raise SystemExit(f"--graph wants NAME=SPEC with NAME of letters, digits, -_.+; "
                             f"got {g!r}")
        specs.append((name, spec))
    return specs


def _formats(a, bench):
    need = set()
    for t in a.tables:
        need.update(TABLE_FORMATS[t])
    # A peer with no run asked for (no MCE-GPU scheme, no G-ThinkerCG mode) needs no input.
    if not a.mcegpu_schemes.strip(";"):
        need.discard("mcegpu")
    gcg = (a.gcg_modes if "mce" in a.tables else "") + (a.gcg_sm_modes if "sm" in a.tables
                                                        else "")
    if not gcg.strip(","):
        need.discard("gthinkercg")
    if not (bench.has("g2miner", "bin/clique_gpu_base") and
            any(int(p) in patterns.TDFS_CLIQUES for p in a.patterns.split(","))):
        need.discard("g2miner")
    return sorted(need)


def _step(bench, g, what, cmd, limit):
    """One preparation child: its result, or None with ``g['error']`` set (why)."""
    res = run_child(cmd, limit, bench.env, bench.log)
    if res["rc"] != 0:
        g["error"] = f"{what}: {status_of(res, None, limit)}"
        bench.say(f"{g['name']}: {g['error']}")
        return None
    return res


def prepare(bench, name, spec):
    """Generates, compacts and converts one graph (reusing a folder made from the same spec)."""
    a = bench.a
    g = {"name": name, "spec": spec, "dir": str(Path(a.work) / name), "convert": {}}
    bench.graphs.append(g)
    gdir = Path(g["dir"])
    stamp = gdir / "spec.txt"
    if not stamp.exists() or stamp.read_text() != spec:
        shutil.rmtree(gdir, ignore_errors=True)
        gdir.mkdir(parents=True)
    csr = gdir / "graph.csr"
    if not csr.exists():
        if bench.left() < a.min_left:
            g["error"] = "skipped (budget)"
            return None
        limit = bench.left()
        src = Path(spec.split(None, 1)[1]) if spec.startswith("file ") else gdir / "gen.csr"
        if not spec.startswith("file "):
            res = _step(bench, g, "generate", _py("-m", "gthinker", "generate", *shlex.split(spec),
                                                  "-o", src, "--prepare", "none"), limit)
            if res is None:
                return None
            g["generate_seconds"] = res["wall"]
        res = _step(bench, g, "compact", _py(PEERS / "convert.py", "compact", src, csr,
                                             "--prepare", a.prepare), bench.left())
        if res is None:
            return None
        g["compact_seconds"] = res["wall"]
        if src.parent == gdir:
            src.unlink()
        stamp.write_text(spec)
    else:
        g["reused"] = True
    g.update(_stats(csr))
    g["paths"] = {"csr": str(csr), "gthinkercg": str(gdir / "graph.bin"),
                  "mcegpu": str(gdir / "graph.bel"), "tdfs": str(gdir / "tdfs"),
                  "g2miner": str(gdir / "g2m" / "graph")}
    for fmt in _formats(a, bench):
        done = gdir / f"{fmt}.done"
        if done.exists():
            g["convert"][fmt] = float(done.read_text())
            continue
        need = FORMAT_BYTES[fmt](g["vertices"], 2 * g["edges"])
        free = shutil.disk_usage(gdir).free
        if free < need * DISK_MARGIN:
            g.setdefault("convert_errors", {})[fmt] = (
                f"no disk: {need / 2**30:.1f} GiB needed, {free / 2**30:.1f} GiB free")
            g["paths"].pop(fmt)
            continue
        check = [] if a.no_check else ["--check"]
        res = _step(bench, g, f"convert {fmt}", _py(PEERS / "convert.py", fmt, csr,
                                                    g["paths"][fmt], *check), bench.left())
        if res is None:  # one format failing leaves the others: its peer's rows say why
            g.setdefault("convert_errors", {})[fmt] = g.pop("error")
            g["paths"].pop(fmt)
            continue
        g["convert"][fmt] = res["wall"]
        done.write_text(f"{res['wall']:.3f}")
    bench.say(f"{name}: {g['vertices']:,} vertices, {g['edges']:,} edges, max degree "
              f"{g['max_degree']:,}, conversions {g['convert']}")
    return g


def _stats(csr):
    import gthinker

    graph = gthinker.Graph.load(csr)
    stats = {"vertices": graph.num_vertices, "edges": graph.num_edges,
             "max_degree": int(graph.max_degree), "degeneracy": int(graph.degeneracy),
             "csr_bytes": os.path.getsize(csr)}
    del graph
    return stats


# -- the rows of each table ----------------------------------------------------------------------


def _gthinker(bench, row, args):
    """A ``gthinker`` command row (stopped at the limit by SIGTERM, on which it prints its
    partial result, marked stopped: the row says timeout)."""
    row.time_kind = "job (compile excluded)"
    return bench.run(row, _py("-m", "gthinker", *args, "--threads", bench.a.threads, "--json"),
                     parse_gthinker, gpu=row.variant != "cpu")


def _peer(bench, g, row, peer, binary, fmt):
    """Sets ``row.status`` when the peer or its input is missing; returns the input path."""
    if not bench.has(peer, binary):
        row.status = f"not built ({peer}: no {binary} under --peers)"
    elif fmt not in g["paths"]:
        row.status = f"error: no input ({g.get('convert_errors', {}).get(fmt, fmt)})"
    return g["paths"].get(fmt)


def mce_rows(bench, g):
    a, name = bench.a, g["name"]
    kind = "maximal cliques"
    ours = [_gthinker(bench, Row("mce", name, "gthinker", mode, count_kind=kind),
                      ["mce", g["paths"]["csr"], "--mode", mode])
            for mode in a.mce_modes.split(",")]
    limit = bench.peer_limit(ours)
    for scheme in filter(None, a.mcegpu_schemes.split(";")):
        label, _, flags = scheme.partition("=")
        row = Row("mce", name, "MCE-GPU", f"{label} ({flags.strip()})", count_kind=kind,
                  time_kind="count time (its kernels; degeneracy order excluded)")
        bel = _peer(bench, g, row, "mcegpu", "parallel_mce_on_gpus", "mcegpu")
        bench.run(row, ["bash", PEERS / "mce_gpu.sh", "mce", bel, *flags.split()], parse_mcegpu,
                  gpu=True, limit=limit)
    for mode in filter(None, a.gcg_modes.split(",")):
        row = Row("mce", name, "G-ThinkerCG", mode, count_kind=kind,
                  time_kind="Total time (its master's run; loading excluded)")
        path = _peer(bench, g, row, "gthinkercg", "bin/app_mc", "gthinkercg")
        bench.run(row, ["bash", PEERS / "gthinkercg.sh", "mc", path, mode], parse_gthinkercg,
                  gpu=mode != "cpu", limit=limit)


def _query_file(bench, n):
    """The T-DFS pattern ``n`` as an edge list gthinker reads."""
    path = Path(bench.a.work) / "patterns" / f"tdfs{n}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{u} {v}\n" for u, v in patterns.TDFS[n][1]))
    return path


def sm_rows(bench, g):
    a, name = bench.a, g["name"]
    for n in (int(x) for x in a.patterns.split(",")):
        edges = patterns.TDFS[n][1]
        aut = patterns.automorphisms(edges)
        query = _query_file(bench, n)
        first = _gthinker(bench, Row("sm", name, "gthinker", "gpu", n, count_kind="embeddings"),
                          ["sm", g["paths"]["csr"], query, "--mode", "gpu"])
        cheap = a.dry_run or (first.status == "ok" and first.wall_seconds < a.cheap)
        why = (f"skipped (gthinker gpu: {first.status})" if first.status != "ok" else
               f"skipped (gthinker gpu took {first.wall_seconds:.1f} s, not under --cheap "
               f"{a.cheap:g} s)")
        ours = [first]
        for mode in (m for m in a.sm_modes.split(",") if m != "gpu"):
            row = Row("sm", name, "gthinker", mode, n, count_kind="embeddings")
            if not cheap:
                row.status = why
            ours.append(_gthinker(bench, row, ["sm", g["paths"]["csr"], query, "--mode", mode]))
        limit = bench.peer_limit(ours)
        row = Row("sm", name, "T-DFS", "gpu", n, count_kind="embeddings",
                  time_kind="kernel (CUDA events)")
        path = _peer(bench, g, row, "tdfs", "bin/ulb.out", "tdfs")
        gfile = Path(bench.peer.get("tdfs", ".")) / "src" / "data" / "pattern" / f"{n}.g"
        if row.status == "ok" and not (gfile.exists()
                                       and patterns.isomorphic(patterns.read_g(gfile), edges)):
            row.status = f"error: {gfile} is not pattern {n} ({patterns.TDFS[n][0]})"
        bench.run(row, ["bash", PEERS / "tdfs.sh", "run", path, gfile], parse_tdfs, gpu=True,
                  limit=limit)
        q = patterns.TDFS_TO_GTHINKERCG[n]
        for mode in filter(None, a.gcg_sm_modes.split(",")):
            row = Row("sm", name, "G-ThinkerCG", f"{mode} (-q {q})", n, count_kind="distinct",
                      time_kind="Total time (its master's run; loading excluded)")
            if mode != "gpu" and not cheap:
                row.status = why
            path = _peer(bench, g, row, "gthinkercg", "bin/app_gmatch", "gthinkercg")
            bench.run(row, ["bash", PEERS / "gthinkercg.sh", "gmatch", path, q, mode],
                      parse_gthinkercg, gpu=mode != "cpu", factor=aut, limit=limit)
        if n in patterns.TDFS_CLIQUES:
            k = patterns.TDFS_CLIQUES[n]
            row = Row("sm", name, "G2Miner", f"gpu (clique k={k})", n, count_kind="distinct",
                      time_kind="runtime (its kernel)")
            path = _peer(bench, g, row, "g2miner", "bin/clique_gpu_base", "g2miner")
            bench.run(row, ["bash", PEERS / "g2miner.sh", "clique", path, k], parse_g2miner,
                      gpu=True, factor=aut, limit=limit)


# -- warm-up (a child process) and main ---------------------------------------------------------


def warm_up(a):
    """Runs every gthinker case of the tables once on small graphs (compiling, or loading
    the compile cache): MCE in each mode on a graph of low degree and on one with a vertex
    of degree 1,600 (a hub's subtree), and in gpu mode with subtrees too big for a warp
    (the host's compaction, wider warps), each pattern in each matching mode."""
    import numpy as np

    import gthinker
    from gthinker.apps import mce, sm
    from gthinker.apps.mce import command as mce_command
    from gthinker.graphs import generate

    low = generate.powerlaw_cluster(400, 4, 0.3, seed=1)
    star = np.array([[0, 400 + i] for i in range(1600)])
    hub = gthinker.Graph.from_edges(np.concatenate([low.edge_array(), star]))
    usable = (lambda m: m == "cpu") if a.dry_run else (lambda m: True)  # noqa: E731
    cases = []
    if "mce" in a.tables:
        cases += [(f"mce {m} {name}", lambda m=m, gr=gr: mce.run(gr, mode=m, threads=a.threads))
                  for m in a.mce_modes.split(",") if usable(m)
                  for name, gr in (("low degree", low), ("hub", hub))]
        if usable("gpu") and "gpu" in a.mce_modes.split(","):  # hub subtrees past a warp
            cases.append(("mce gpu, subtrees too big for a warp", lambda: mce.run(
                low, mode="gpu", gpu_scratch_bytes=mce_command.WARMUP_SCRATCH_BYTES)))
    if "sm" in a.tables:
        for n in (int(x) for x in a.patterns.split(",")):
            q = gthinker.Graph.from_edges(np.array(patterns.TDFS[n][1]))
            cases += [(f"sm {m} pattern {n}", lambda m=m, q=q: sm.count(low, q, mode=m,
                                                                         threads=a.threads))
                      for m in a.sm_modes.split(",") if usable(m)]
    for name, case in cases:
        t0 = time.perf_counter()
        r = case()
        print(f"warm-up {name}: {time.perf_counter() - t0:.2f} s (count {r.count}, compile "
              f"{r.compile_seconds:.2f} s)", flush=True)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    add = ap.add_argument
    add("--table", choices=("mce", "sm", "both"), default="both")
    add("--presets", default=",".join(SEED_PRESETS), help="comma-separated preset names "
        "(gthinker generate preset NAME; '' for none) (default: %(default)s)")
    add("--scale", default="0.1", help="the presets' --scale (default: %(default)s)")
    add("--seed", default="1", help="the presets' --seed (default: %(default)s)")
    add("--graph", action="append", metavar="NAME=SPEC", help="another graph: SPEC is what "
        "follows 'gthinker generate' (e.g. 'rmat --scale 18 --a 0.5') or 'file PATH'")
    add("--work", default="/tmp/seed_tables", help="graphs and conversions (default: %(default)s)")
    add("--peers", help="the unpacked peers bundle (benchmarks/peers/bundle.sh), or "
        ".peers/build here; without it the peers' rows say 'not built'")
    add("--out", default="seed_tables_out", help="output folder (default: %(default)s)")
    add("--tag", default="", help="suffix of the output files' names")
    add("--threads", type=int, default=16, help="CPU threads of every CPU or hybrid run "
        "(default: %(default)s)")
    add("--run-limit", type=float, default=60.0, help="seconds a run may take (default: "
        "%(default)s)")
    add("--budget", type=float, default=480.0, help="seconds for everything; later runs "
        "are skipped (default: %(default)s)")
    add("--peer-ratio", type=float, default=10.0, help="a peer's run is stopped after this "
        "many times gthinker's best whole process in the same group (at least --peer-floor "
        "seconds; 0: --run-limit for every run; default: %(default)s)")
    add("--peer-floor", type=float, default=20.0, help="see --peer-ratio (default: "
        "%(default)s)")
    add("--min-left", type=float, default=10.0, help="no run starts with fewer seconds of "
        "budget left (default: %(default)s)")
    add("--mce-modes", default="cpu,gpu,hybrid", help="gthinker mce modes (default: %(default)s)")
    add("--mcegpu-schemes", default=MCEGPU_SCHEMES, help="';'-separated LABEL=FLAGS "
        "(default: %(default)s)")
    add("--gcg-modes", default="cpu,gpu,hybrid", help="G-ThinkerCG app_mc modes "
        "(default: %(default)s)")
    add("--patterns", default="1,2,3,4,5,6,7", help="T-DFS patterns (default: %(default)s)")
    add("--sm-modes", default="gpu,cpu,hybrid", help="gthinker sm modes; gpu first, the "
        "others only where it was under --cheap seconds (default: %(default)s)")
    add("--gcg-sm-modes", default="gpu", help="G-ThinkerCG app_gmatch modes (default: "
        "%(default)s; the seed recommends GPU-only for matching)")
    add("--cheap", type=float, default=10.0, help="see --sm-modes (default: %(default)s)")
    add("--prepare", default="all", help="forms stored in each graph's .csr (default: "
        "%(default)s)")
    add("--no-check", action="store_true", help="do not re-read the conversions")
    add("--no-warmup", action="store_true", help="skip the warm-up child")
    add("--warmup-limit", type=float, default=240.0, help="seconds for the warm-up "
        "(default: %(default)s)")
    add("--dry-run", action="store_true", help="tiny R-MAT graphs unless --graph, "
        "everything that needs a GPU skipped")
    add("--warm-up", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.tables = ("mce", "sm") if a.table == "both" else (a.table,)
    given = " ".join(sys.argv if argv is None else argv)
    if a.dry_run and "--presets" not in given:
        a.presets = ""
    if a.dry_run and "--gcg-sm-modes" not in given:
        a.gcg_sm_modes = "gpu,cpu"  # its CPU-only mode runs without a GPU
    bad = [p for p in a.patterns.split(",") if not p.isdigit() or int(p) not in patterns.TDFS]
    if bad:
        ap.error(f"--patterns: {bad} are not T-DFS patterns 1-7")
    return a


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    a = parse_args(argv)
    if a.warm_up:
        warm_up(a)
        return 0
    bench = Bench(a)
    try:
        bench.say(f"seed tables: {a.tables}, budget {a.budget:g} s, run limit {a.run_limit:g} s"
                  f", device {bench.meta['device']}")
        if not a.no_warmup:
            res = run_child(_py(__file__, *argv, "--warm-up"), a.warmup_limit, bench.env,
                            bench.log, gpu=not a.dry_run)
            bench.meta["warmup_seconds"] = round(res["wall"], 2)
            bench.meta["warmup"] = [ln for ln in res["out"].splitlines()
                                    if ln.startswith("warm-up")]
            bench.meta["warmup_status"] = status_of(res, 0, a.warmup_limit)
            bench.say(f"warm-up: {bench.meta['warmup_status']}, {res['wall']:.1f} s")
        for name, spec in graph_specs(a):
            g = prepare(bench, name, spec)
            if g is not None:
                if "mce" in a.tables:
                    mce_rows(bench, g)
                if "sm" in a.tables:
                    sm_rows(bench, g)
            bench.write()
    finally:
        bad = bench.write()
        bench.log.close()
        bench.jsonl.close()
    for r in bad:
        print(f"COUNT MISMATCH: {r.table} {r.graph} {r.tool} {r.variant}"
              + (f" pattern {r.pattern}" if r.pattern else "") + f": {r.comparable}",
              file=sys.stderr)
    print(f"wrote {bench.stem}.md, .json, .jsonl, .log ({time.perf_counter() - bench.t0:.1f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""``gthinker warmup``: compiles the bundled apps for this machine ahead of time.

It runs each app of the registry (:mod:`gthinker.registry`: each app says what to
run) once on a small generated graph, in CPU mode and, where a CUDA GPU is usable,
in GPU mode, so that every entry point and kernel a later run needs is in the
compile cache (:mod:`gthinker.compiler`), with the graph readers Numba caches itself.
For container images and shared clusters: run it once after installing, and no
user's first run compiles.

With a portable level (:func:`build_portable`: ``gthinker warmup --portable x86-64-v3``,
or ``GTHINKER_PREBUILD=x86-64-v3`` when building a wheel, setup.py) the CPU code is
built for that level of x86-64 instead of this machine's CPU, into the package's own
folder (:data:`gthinker.compiler.cache.PREBUILT`), where every machine of that level
loads it: a first run on a fresh install compiles nothing the bundled apps ship.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["build_portable", "steps", "warmup"]


def steps(gpu: bool):
    """(name, function) of each thing to compile: the readers, then each app's (CPU first)."""
    from gthinker import registry
    from gthinker.graphs import generate

    graph = generate.powerlaw_cluster(200, 4, 0.5, seed=1)
    steps = [("graph readers", lambda: _read_both_formats(graph))]
    for app in registry.apps().values():
        if app.warmup is not None:
            steps += app.warmup(graph, gpu)
    return steps


def _read_both_formats(graph) -> None:
    from gthinker.graphs.graph import Graph

    with tempfile.TemporaryDirectory(prefix="gthinker-warmup-") as tmp:
        for name in ("g.txt", "g.txt.gz", "g.graph"):
            path = Path(tmp) / name
            graph.write(path)
            Graph.read(path)


def warmup(gpu: bool | None = None, progress=None, part: tuple[int, int] = (0, 1)) -> dict:
    """Compiles what the bundled apps run, on the CPU and (``gpu=None``: where
    a CUDA GPU is usable) the GPU. ``progress(name, seconds)`` is called after
    each step. ``part`` (i, n): only every n-th step from the i-th (one of n processes
    compiling side by side). Returns ``{step: seconds}``."""
    from gthinker.gpu import device_status, simulator

    if gpu is None:
        gpu = device_status()[0] and not simulator.enabled()
    times = {}
    first, every = part
    for name, step in steps(gpu)[first::every]:
        t0 = time.perf_counter()
        step()
        times[name] = time.perf_counter() - t0
        if progress is not None:
            progress(name, times[name])
    return times


def build_portable(level: str, folder: Path | None = None, quiet: bool = False,
                   jobs: int | None = None) -> float:
    """Compiles what :func:`warmup` compiles on the CPU for the portable x86-64
    ``level`` (one of :data:`gthinker.compiler.cache.LEVELS`) into ``folder``
    (default: the package's :data:`~gthinker.compiler.cache.PREBUILT`), in a child
    process whose Numba targets that level (``jobs`` of them side by side, default one
    per core, each compiling a part). Returns the seconds it took; raises RuntimeError
    when a child fails."""
    from gthinker.compiler import cache

    if level not in cache.LEVELS:
        raise ValueError(f"unknown level {level!r}; one of {', '.join(cache.LEVELS)}")
    folder = Path(folder) if folder is not None else cache.PREBUILT
    env = {**os.environ, "NUMBA_CPU_NAME": level, "NUMBA_CPU_FEATURES": "",
           cache.ENV: str(folder)}
    # The child imports this same gthinker (a build folder, say) wherever it starts.
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    command = [sys.executable, "-m", "gthinker", "warmup", "--cpu-only", *(["-q"] if quiet else [])]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(steps(False))))
    t0 = time.perf_counter()
    children = [subprocess.Popen([*command, "--part", f"{i}/{jobs}"], env=env,
                                 cwd=tempfile.gettempdir()) for i in range(jobs)]
    failed = [child.wait() for child in children]
    if any(failed):
        raise RuntimeError(f"building the {level} code failed (exits {failed})")
    return time.perf_counter() - t0

"""``gthinker warmup``: compiles the bundled apps for this machine ahead of time.

It runs each app of the registry (:mod:`gthinker.registry`: each app says what to
run) once on a small generated graph, in CPU mode and, where a CUDA GPU is usable,
in GPU mode, so that every entry point and kernel a later run needs is in the
compile cache (:mod:`gthinker.compiler`), with the graph readers Numba caches itself.
For container images and shared clusters: run it once after installing, and no
user's first run compiles.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

__all__ = ["steps", "warmup"]


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


def warmup(gpu: bool | None = None, progress=None) -> dict:
    """Compiles what the bundled apps run, on the CPU and (``gpu=None``: where
    a CUDA GPU is usable) the GPU. ``progress(name, seconds)`` is called after
    each step. Returns ``{step: seconds}``."""
    from gthinker.gpu import device_status, simulator

    if gpu is None:
        gpu = device_status()[0] and not simulator.enabled()
    times = {}
    for name, step in steps(gpu):
        t0 = time.perf_counter()
        step()
        times[name] = time.perf_counter() - t0
        if progress is not None:
            progress(name, times[name])
    return times

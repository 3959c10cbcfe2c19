"""``gthinker warmup``: compiles the bundled apps for this machine ahead of time.

It runs each app once on a small generated graph, in CPU mode and, where a CUDA
GPU is usable, in GPU mode, so that every entry point and kernel a later run
needs is in the compile cache (:mod:`gthinker.cache`), with the graph readers
Numba caches itself. For container images and shared clusters: run it once
after installing, and no user's first run compiles.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

__all__ = ["warmup"]


def _steps(gpu: bool):
    """(name, function) of each thing to compile, CPU first."""
    from . import generate
    from .apps import count, gsword, mce, sm

    graph = generate.powerlaw_cluster(200, 4, 0.5, seed=1)
    steps = [
        ("graph readers", lambda: _read_both_formats(graph)),
        ("mce (cpu)", lambda: mce.run(graph, mode="cpu", threads=1)),
        ("sm (cpu)", lambda: sm.count(graph, "triangle", mode="cpu", threads=1)),
        ("count (cpu)", lambda: [count.count(graph, p, mode="cpu", threads=1)
                                 for p in ("triangle", "cliques")]),
    ]
    for name in gsword.estimators():
        steps.append((f"gsword {name} (cpu)", lambda name=name: gsword.estimate(
            graph, "4-cycle", estimator=name, samples=20_000, mode="cpu", threads=1)))
    if gpu:
        steps.append(("mce bitsets (gpu)", lambda: mce.run(graph, mode="gpu",
                                                           gpu_engine="bitsets")))
        steps.append(("mce levels (gpu)", lambda: mce.run(graph, mode="gpu",
                                                          gpu_engine="levels")))
        steps.append(("count (gpu)", lambda: count.count(graph, "triangle", mode="gpu")))
        for layout in ("prefix", "expand"):
            steps.append((f"sm {layout} (gpu)", lambda layout=layout: sm.count(
                graph, "triangle", mode="gpu", gpu_mode=layout)))
        for name in gsword.estimators():
            steps.append((f"gsword {name} (gpu)", lambda name=name: gsword.estimate(
                graph, "4-cycle", estimator=name, samples=20_000, mode="gpu")))
    return steps


def _read_both_formats(graph) -> None:
    from .graph import Graph

    with tempfile.TemporaryDirectory(prefix="gthinker-warmup-") as tmp:
        for name in ("g.txt", "g.txt.gz", "g.graph"):
            path = Path(tmp) / name
            graph.write(path)
            Graph.read(path)


def warmup(gpu: bool | None = None, progress=None) -> dict:
    """Compiles what the bundled apps run, on the CPU and (``gpu=None``: where
    a CUDA GPU is usable) the GPU. ``progress(name, seconds)`` is called after
    each step. Returns ``{step: seconds}``."""
    from .gpu import device_status, simulator

    if gpu is None:
        gpu = device_status()[0] and not simulator.enabled()
    times = {}
    for name, step in _steps(gpu):
        t0 = time.perf_counter()
        step()
        times[name] = time.perf_counter() - t0
        if progress is not None:
            progress(name, times[name])
    return times

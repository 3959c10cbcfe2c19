"""A toy app that lives outside gthinker, to show that an app is one module: it counts
wedges (paths of two edges, ``sum_v C(deg v, 2)``) with a CPU task, and declares its
command, its cluster request and its warm-up step in ``APP``. The tests make it known
through ``GTHINKER_APPS=wedges`` (with this folder on ``PYTHONPATH``)."""

from dataclasses import dataclass, field

import numpy as np

import gthinker
from gthinker.registry import App
from gthinker.runtime.request import Request, max_compile, squared


class Wedges(gthinker.Task):
    counters = ("wedges",)

    @staticmethod
    def spawn(ctx, v):
        return np.full(1, v, np.int32)

    @staticmethod
    def compute(ctx, record):
        d = ctx.degree(record[0])
        ctx.count(0, d * (d - 1) // 2)


@dataclass
class WedgeResult:
    count: int
    seconds: float
    mode: str
    threads: int
    compile_seconds: float = 0.0
    stats: dict = field(default_factory=dict)

    def to_dict(self):
        return {"count": self.count, "seconds": self.seconds, "mode": self.mode,
                "threads": self.threads}


def count_wedges(graph, threads=None, **options) -> WedgeResult:
    res = gthinker.run(Wedges, graph, threads=threads, **options)
    return WedgeResult(res.counters["wedges"], res.seconds, res.mode, res.threads,
                       res.compile_seconds, res.stats)


class WedgeRequest(Request):
    movable = True

    def run(self, graph, *, threads=None, output=None, stop=None, progress=None, **inputs):
        return count_wedges(graph, threads=threads, mode="cpu", time_budget=self.time_budget,
                            stop=stop, progress=progress, **inputs)

    def weights(self, graph):
        return squared(graph.degrees())

    def part(self, res):
        return {"count": res.count, **self.common(res, res.threads)}

    def merge(self, parts, seconds, threads, stats):
        return WedgeResult(sum(p["count"] for p in parts), seconds, "cpu", threads,
                           max_compile(parts), stats)


APP = App(
    name="wedges",
    summary="count wedges (paths of two edges)",
    description="Count the paths of two edges of a graph.",
    request=lambda mode="cpu", time_budget=None: WedgeRequest(mode=mode,
                                                              time_budget=time_budget),
    from_args=lambda args: {},
    describe=lambda res, label=None: [f"wedges: {res.count:,}"],
    modes=("cpu",),
    mode_help="cpu",
    progress="wedges",
    warmup=lambda graph, gpu: [("wedges (cpu)", lambda: count_wedges(graph, threads=1))],
)

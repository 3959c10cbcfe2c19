"""A toy app that lives outside gthinker, to show that an app is one module: it counts
wedges (paths of two edges, ``sum_v C(deg v, 2)``, over the vertices of at least
``min_degree`` neighbours) with a CPU task, and declares its options, its cluster request
and its warm-up step in ``APP``. The tests make it known
through ``GTHINKER_APPS=wedges`` (with this folder on ``PYTHONPATH``)."""

from dataclasses import dataclass, field

import numpy as np

import gthinker
from gthinker.options import AppOptions, choice, option_field, positive_int
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
        if d >= ctx.params[0]:
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


@dataclass(frozen=True)
class WedgeOptions(AppOptions):
    """Its options: one field each (its flag, its keyword, its rule)."""

    mode: str = option_field("cpu", "where to run", choice("cpu"))
    min_degree: int = option_field(2, "count the wedges at vertices of at least K neighbours",
                                   positive_int, metavar="K")


def count_wedges(graph, **options) -> WedgeResult:
    opts, rest = WedgeOptions.split(options)  # each checked; rest: gthinker.run's
    res = gthinker.run(Wedges, graph, mode=opts.mode, params=[opts.min_degree], **rest)
    return WedgeResult(res.counters["wedges"], res.seconds, res.mode, res.threads,
                       res.compile_seconds, res.stats)


class WedgeRequest(Request):
    movable = True

    def call(self, graph, **keywords):
        return count_wedges(graph, **keywords)

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
    options=WedgeOptions,
    request=WedgeRequest,
    describe=lambda res, label=None: [f"wedges: {res.count:,}"],
    progress="wedges",
    warmup=lambda graph, gpu: [("wedges (cpu)", lambda: count_wedges(graph, threads=1))],
)

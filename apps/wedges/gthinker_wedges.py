"""Wedges (paths of two edges, ``sum_v C(deg v, 2)``, over the vertices of at least
``min_degree`` neighbours), counted by a CPU task: an app that is one module.

The work is a :class:`Task` and a function that runs it; the declaration at the end
(its options, each declared once, its request and ``APP``) gives it a command
(``gthinker wedges GRAPH [--min-degree K]``), a request that runs on a Ray cluster
(``gthinker.cluster.wedges(graph, cluster=...)``, ``--ray``) and a warm-up step
(``gthinker warmup``). It imports gthinker's names from :mod:`gthinker.extending` only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gthinker.extending import (
    App,
    AppOptions,
    JobRequest,
    Task,
    choice,
    option_field,
    positive_int,
    run,
)


class Wedges(Task):
    counters = ("wedges",)

    @staticmethod
    def spawn(ctx, v):
        return np.full(1, v, np.int32)

    @staticmethod
    def compute(ctx, record):
        d = ctx.degree(record[0])
        if d >= ctx.params[0]:
            ctx.count(0, d * (d - 1) // 2)


@dataclass(frozen=True)
class WedgesOptions(AppOptions):
    """Its options: a field each (its flag, its keyword, its default, help and rule)."""

    mode: str = option_field("cpu", "where to run", choice("cpu"))
    min_degree: int = option_field(2, "count the wedges at vertices of at least K neighbours",
                                   positive_int, metavar="K")


def count_wedges(graph, **options):
    """The wedges of ``graph`` (anything :func:`gthinker.as_graph` takes): a
    :class:`gthinker.JobResult` whose ``counters["wedges"]`` is the count. ``options``:
    :class:`WedgesOptions`' (each checked by its rule) and :func:`gthinker.run`'s."""
    opts, rest = WedgesOptions.split(options)
    return run(Wedges, graph, mode=opts.mode, params=(opts.min_degree,), **rest)


# ---- the declaration: command, cluster request, warm-up -------------------------------

class WedgesRequest(JobRequest):
    """Roots are the graph's vertices; the parts' counters add up (:class:`JobRequest`)."""

    def call(self, graph, **keywords):
        return count_wedges(graph, **keywords)


APP = App(
    name="wedges",
    summary="count wedges (paths of two edges)",
    description="Count the paths of two edges of a graph.",
    options=WedgesOptions,
    request=WedgesRequest,
    describe=lambda res, label=None: [f"wedges: {res.counters['wedges']:,}"],
    progress="wedges",
    warmup=lambda graph, gpu: [("wedges (cpu)", lambda: count_wedges(graph, threads=1))],
)

"""Wedges (paths of two edges, ``sum_v C(deg v, 2)``), counted by a CPU task: an app
that is one module.

The work is a :class:`Task` and a function that runs it; the declaration at the end
(``APP``) gives it a command (``gthinker wedges GRAPH``), a request that runs on a Ray
cluster (``gthinker.cluster.wedges(graph, cluster=...)``, ``--ray``) and a warm-up step
(``gthinker warmup``). It imports gthinker's names from :mod:`gthinker.extending` only.
"""

import numpy as np

from gthinker.extending import App, Task, TaskRequest, run


class Wedges(Task):
    counters = ("wedges",)

    @staticmethod
    def spawn(ctx, v):
        return np.full(1, v, np.int32)

    @staticmethod
    def compute(ctx, record):
        d = ctx.degree(record[0])
        ctx.count(0, d * (d - 1) // 2)


def count_wedges(graph, threads=None, **options):
    """The wedges of ``graph`` (anything :func:`gthinker.as_graph` takes): a
    :class:`gthinker.JobResult` whose ``counters["wedges"]`` is the count. ``options``
    are :func:`gthinker.run`'s."""
    return run(Wedges, graph, threads=threads, **options)


# ---- the declaration: command, cluster request, warm-up -------------------------------

APP = App(
    name="wedges",
    summary="count wedges (paths of two edges)",
    description="Count the paths of two edges of a graph.",
    # its one mode is cpu (the command's --mode auto too): the request runs Wedges there
    request=lambda mode="cpu", time_budget=None: TaskRequest(Wedges, mode="cpu",
                                                             time_budget=time_budget),
    from_args=lambda args: {},
    describe=lambda res, label=None: [f"wedges: {res.counters['wedges']:,}"],
    modes=("cpu",),
    mode_help="cpu",
    progress="wedges",
    warmup=lambda graph, gpu: [("wedges (cpu)", lambda: count_wedges(graph, threads=1))],
)

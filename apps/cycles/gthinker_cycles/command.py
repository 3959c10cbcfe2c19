"""``gthinker cycles``: the k-cycle app as the command line, the cluster and
``gthinker warmup`` see it."""

from gthinker.extending import App, JobRequest

from .options import CyclesOptions


class CyclesRequest(JobRequest):
    """k-cycles: roots are the graph's vertices (each the smallest vertex of the cycles
    it starts); records are paths in the graph's ids, so they move between nodes."""

    def call(self, graph, **keywords):
        from .app import count_cycles

        return count_cycles(graph, **keywords)


def _warmup(graph, gpu):
    from .app import count_cycles

    modes = ("cpu", "gpu") if gpu else ("cpu",)
    return [(f"cycles ({mode})", lambda mode=mode: count_cycles(graph, mode=mode))
            for mode in modes]


APP = App(
    name="cycles",
    summary="count the simple cycles of k vertices (CPU, GPU or both)",
    description="Count the simple cycles of k vertices of a graph, each once.",
    options=CyclesOptions,
    request=CyclesRequest,
    describe=lambda res, label=None: [f"cycles: {res.counters['cycles']:,} ({res.mode})"],
    progress="cycles",
    warmup=_warmup,
)

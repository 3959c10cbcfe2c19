"""``gthinker cycles``: the k-cycle app as the command line, the cluster and
``gthinker warmup`` see it."""

import numbers

from gthinker.extending import App, JobRequest

#: The cycle length when none is given, and the shortest cycle.
DEFAULT_K = 4
MIN_K = 3


def checked_k(k) -> int:
    """``k`` if it is a cycle length (an integer >= MIN_K), else ValueError."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < MIN_K:
        raise ValueError(f"k must be an integer of at least {MIN_K}, got {k!r}")
    return int(k)


class CyclesRequest(JobRequest):
    """k-cycles: roots are the graph's vertices (each the smallest vertex of the cycles
    it starts); records are paths in the graph's ids, so they move between nodes."""

    def __init__(self, k=DEFAULT_K, **kw):
        super().__init__(**kw)
        self.k = checked_k(k)

    def run(self, graph, *, threads=None, output=None, stop=None, progress=None, **inputs):
        from .app import count_cycles

        return count_cycles(graph, self.k, mode=self.mode, threads=threads,
                            time_budget=self.time_budget, stop=stop, progress=progress,
                            **inputs, **self.options)


def _warmup(graph, gpu):
    from .app import count_cycles

    modes = ("cpu", "gpu") if gpu else ("cpu",)
    return [(f"cycles ({mode})", lambda mode=mode: count_cycles(graph, DEFAULT_K, mode=mode))
            for mode in modes]


APP = App(
    name="cycles",
    summary="count the simple cycles of k vertices (CPU, GPU or both)",
    description="Count the simple cycles of k vertices of a graph, each once.",
    request=lambda k=DEFAULT_K, mode="auto", time_budget=None, **options: CyclesRequest(
        k, mode=mode, time_budget=time_budget, options=options),
    from_args=lambda args: {"k": checked_k(args.k)},
    describe=lambda res, label=None: [f"cycles: {res.counters['cycles']:,} ({res.mode})"],
    add_arguments=lambda p: p.add_argument(
        "-k", type=int, default=DEFAULT_K,
        help=f"vertices of a cycle, at least {MIN_K} (default: {DEFAULT_K})"),
    gpu_options=True,
    progress="cycles",
    warmup=_warmup,
)

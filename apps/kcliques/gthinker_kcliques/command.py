"""``gthinker kcliques``: the k-clique app as the command line, the cluster and
``gthinker warmup`` see it."""

from gthinker.extending import App, JobRequest, positive_int, positive_int_arg, squared

#: The clique size when none is given.
DEFAULT_K = 3


class KCliquesRequest(JobRequest):
    """k-cliques: roots are the degeneracy-ordered graph's vertices (the app renumbers
    the graph the same way on every node, so records move between nodes as they are)."""

    def __init__(self, k=DEFAULT_K, **kw):
        super().__init__(**kw)
        self.k = positive_int("k", k)

    def run(self, graph, *, threads=None, output=None, stop=None, progress=None, **inputs):
        from .app import count_kcliques

        return count_kcliques(graph, self.k, threads=threads, time_budget=self.time_budget,
                              stop=stop, progress=progress, **inputs, **self.options)

    def weights(self, graph):
        return squared(graph.degeneracy_ordered().degrees())


def _describe(res, label=None) -> list[str]:
    sizes = res.histograms["size"]
    return [f"{len(sizes) - 1}-cliques: {res.counters['cliques']:,}",
            f"cliques by size: {', '.join(f'{s}: {n:,}' for s, n in enumerate(sizes) if s)}"]


def _add_arguments(p) -> None:
    p.add_argument("-k", type=positive_int_arg, default=DEFAULT_K,
                   help=f"clique size (default: {DEFAULT_K})")


def _warmup(graph, gpu):
    from .app import count_kcliques

    return [("kcliques (cpu)", lambda: count_kcliques(graph, DEFAULT_K, threads=1))]


APP = App(
    name="kcliques",
    summary="count the cliques of k vertices",
    description="Count the k-cliques of a graph (and the cliques of 1..k vertices by size).",
    # its one mode is cpu (--mode auto too); other keywords go to gthinker.run
    request=lambda k=DEFAULT_K, mode="cpu", time_budget=None, **options: KCliquesRequest(
        k, mode="cpu", time_budget=time_budget, options=options),
    from_args=lambda args: {"k": args.k},
    describe=_describe,
    add_arguments=_add_arguments,
    modes=("cpu",),
    mode_help="cpu",
    progress="cliques",
    warmup=_warmup,
)

"""``gthinker kcliques``: the k-clique app as the command line, the cluster and
``gthinker warmup`` see it."""

from gthinker.extending import App, JobRequest, squared

from .options import KCliquesOptions


class KCliquesRequest(JobRequest):
    """k-cliques: roots are the degeneracy-ordered graph's vertices (the app renumbers
    the graph the same way on every node, so records move between nodes as they are)."""

    def call(self, graph, **keywords):
        from .app import count_kcliques

        return count_kcliques(graph, **keywords)

    def weights(self, graph):
        return squared(graph.degeneracy_ordered().degrees())


def _describe(res, label=None) -> list[str]:
    sizes = res.histograms["size"]
    return [f"{len(sizes) - 1}-cliques: {res.counters['cliques']:,}",
            f"cliques by size: {', '.join(f'{s}: {n:,}' for s, n in enumerate(sizes) if s)}"]


def _warmup(graph, gpu):
    from .app import count_kcliques

    return [("kcliques (cpu)", lambda: count_kcliques(graph, threads=1))]


APP = App(
    name="kcliques",
    summary="count the cliques of k vertices",
    description="Count the k-cliques of a graph (and the cliques of 1..k vertices by size).",
    options=KCliquesOptions,
    request=KCliquesRequest,
    describe=_describe,
    progress="cliques",
    warmup=_warmup,
)

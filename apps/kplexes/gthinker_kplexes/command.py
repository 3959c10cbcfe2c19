"""``gthinker kplexes``: the maximal k-plex app as the command line, the cluster and
``gthinker warmup`` see it."""

from gthinker.extending import App, JobRequest, squared

from .options import KPlexesOptions


class KPlexesRequest(JobRequest):
    """Maximal k-plexes: roots are the degeneracy-ordered graph's vertices (the app
    renumbers the graph the same way on every node, so records move as they are)."""

    def call(self, graph, **keywords):
        from .app import find_kplexes

        return find_kplexes(graph, **keywords)

    def weights(self, graph):
        return squared(graph.degeneracy_ordered().degrees())


def _describe(res, label=None) -> list[str]:
    sizes = res.histograms["size"]
    return [f"maximal k-plexes: {res.counters['kplexes']:,}, largest: {res.maxima['largest']}",
            f"by size: {', '.join(f'{s}: {n:,}' for s, n in enumerate(sizes) if n)}"]


def _warmup(graph, gpu):
    from .app import find_kplexes

    return [("kplexes (cpu)", lambda: find_kplexes(graph, threads=1))]


APP = App(
    name="kplexes",
    summary="list the maximal k-plexes of at least q vertices",
    description="Find the maximal k-plexes of a graph (vertex sets in which each vertex "
                "misses at most k of the set, itself included) of at least q vertices.",
    options=KPlexesOptions,
    request=KPlexesRequest,
    describe=_describe,
    progress="kplexes",
    warmup=_warmup,
)

"""``gthinker kplexes``: the maximal k-plex app as the command line, the cluster and
``gthinker warmup`` see it."""

import numbers

from gthinker.extending import App, JobRequest, squared

#: k when none is given.
DEFAULT_K = 2


def checked(k, min_size=None) -> tuple[int, int]:
    """``(k, q)``: ``k`` >= 1 and the least size ``q`` (default ``2k - 1``, and at least
    that: smaller k-plexes may be disconnected, and the search looks for each one
    within two hops of its first vertex), or ValueError."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be an integer of at least 1, got {k!r}")
    least = 2 * int(k) - 1
    q = least if min_size is None else min_size
    if isinstance(q, bool) or not isinstance(q, numbers.Integral) or q < least:
        raise ValueError(f"min_size must be an integer of at least 2k - 1 = {least} (smaller "
                         f"k-plexes may be disconnected), got {min_size!r}")
    return int(k), int(q)


class KPlexesRequest(JobRequest):
    """Maximal k-plexes: roots are the degeneracy-ordered graph's vertices (the app
    renumbers the graph the same way on every node, so records move as they are)."""

    def __init__(self, k=DEFAULT_K, min_size=None, **kw):
        super().__init__(**kw)
        self.k, self.min_size = checked(k, min_size)

    def run(self, graph, *, threads=None, output=None, stop=None, progress=None, **inputs):
        from .app import find_kplexes

        return find_kplexes(graph, self.k, self.min_size, threads=threads,
                            time_budget=self.time_budget, output=self.output_for(output, inputs),
                            stop=stop, progress=progress, **inputs, **self.options)

    def weights(self, graph):
        return squared(graph.degeneracy_ordered().degrees())


def _request(k=DEFAULT_K, min_size=None, mode="cpu", time_budget=None, output=None,
             **options) -> KPlexesRequest:
    """Its one mode is cpu (the command's --mode auto too); other keywords go to
    gthinker.run."""
    return KPlexesRequest(k, min_size, mode="cpu", time_budget=time_budget, output=output,
                          options=options)


def _from_args(args) -> dict:
    k, q = checked(args.k, args.min_size)
    return {"k": k, "min_size": q}


def _describe(res, label=None) -> list[str]:
    sizes = res.histograms["size"]
    return [f"maximal k-plexes: {res.counters['kplexes']:,}, largest: {res.maxima['largest']}",
            f"by size: {', '.join(f'{s}: {n:,}' for s, n in enumerate(sizes) if n)}"]


def _add_arguments(p) -> None:
    p.add_argument("-k", type=int, default=DEFAULT_K,
                   help=f"each vertex may miss k vertices of the set, itself included "
                        f"(1: cliques; default: {DEFAULT_K})")
    p.add_argument("--min-size", type=int, default=None, metavar="Q",
                   help="least vertices of a k-plex, at least 2k - 1 (default: 2k - 1)")


def _warmup(graph, gpu):
    from .app import find_kplexes

    return [("kplexes (cpu)", lambda: find_kplexes(graph, DEFAULT_K, threads=1))]


APP = App(
    name="kplexes",
    summary="list the maximal k-plexes of at least q vertices",
    description="Find the maximal k-plexes of a graph (vertex sets in which each vertex "
                "misses at most k of the set, itself included) of at least q vertices.",
    request=_request,
    from_args=_from_args,
    describe=_describe,
    add_arguments=_add_arguments,
    modes=("cpu",),
    mode_help="cpu",
    lists_results=True,
    progress="kplexes",
    warmup=_warmup,
)

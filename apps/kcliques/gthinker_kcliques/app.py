"""k-clique counting on gthinker: the tutorial app of docs/writing-apps.md.

Counts the cliques of exactly k vertices (k = params[0]) of a degeneracy-ordered
graph, and on the way a histogram of all cliques of 1..k vertices. A task whose
time budget runs out hands its untried branches to other workers as records.

Task record layout (int32): [r, R[0..r), P...]: clique R, and P = the vertices
after R[-1] adjacent to all of R (sorted), which may still extend it.
"""

import numpy as np
from numba import njit

from gthinker.extending import Task, as_graph, run

from .options import KCliquesOptions


@njit(cache=True, nogil=True)
def _initial(ctx, v):
    """Record of v's task: R = [v], P = the neighbours of v with larger ids."""
    nb = ctx.neighbors(v)
    later = nb[np.searchsorted(nb, v):]  # ids are degeneracy ranks
    rec = np.empty(2 + later.size, np.int32)
    rec[0] = 1
    rec[1] = v
    rec[2:] = later
    return rec


@njit(cache=True, nogil=True)
def _child(ctx, rec, i):
    """Record of R + P[i], with candidates P[i+1:] & N(P[i])."""
    r = rec[0]
    p = rec[1 + r:]
    w = p[i]
    nb = ctx.neighbors(w)
    out = np.empty(2 + r + p.size - i - 1, np.int32)
    out[0] = r + 1
    out[1:1 + r] = rec[1:1 + r]
    out[1 + r] = w
    k = 2 + r
    j = 0
    for a in range(i + 1, p.size):  # sorted intersection
        while j < nb.size and nb[j] < p[a]:
            j += 1
        if j < nb.size and nb[j] == p[a]:
            out[k] = p[a]
            k += 1
    return out[:k]


@njit(cache=True, nogil=True)
def _extend(ctx, rec, k):
    r = rec[0]
    ctx.add_to_histogram(0, r)          # R is a clique of r vertices
    if r == k:
        ctx.count(0)
        return 0
    for i in range(rec.size - 1 - r):
        child = _child(ctx, rec, i)
        if ctx.timed_out():             # decompose: the branch becomes a task
            ctx.add_task(child)
        else:
            _extend(ctx, child, k)
    return 0


class KCliques(Task):
    counters = ("cliques",)             # ctx.count(0): k-cliques
    histograms = ("size",)              # row 0, bin s: cliques of s vertices

    # spawn and compute stay thin; the work lives in the helpers above. The
    # whole entry point is kept in gthinker's compile cache after its first run.
    @staticmethod
    def spawn(ctx, v):
        return _initial(ctx, v)

    @staticmethod
    def compute(ctx, record):
        _extend(ctx, record, ctx.params[0])


def count_kcliques(graph, k=None, **options):
    """The k-cliques of ``graph``: a JobResult whose ``counters["cliques"]`` is their
    number and ``histograms["size"]`` the cliques of 1..k vertices by size. ``k`` and
    ``options``: :class:`KCliquesOptions`' (each checked by its rule; None: its
    default) and :func:`gthinker.run`'s."""
    opts, rest = KCliquesOptions.split({"k": k, **options})
    ordered = as_graph(graph).degeneracy_ordered()  # computed once, kept with the graph
    return run(KCliques, ordered, mode=opts.mode, params=(opts.k,),
               histogram_bins=opts.k + 1, **rest)


if __name__ == "__main__":
    import networkx as nx

    k = 5
    G = nx.gnp_random_graph(300, 0.2, seed=7)
    res = count_kcliques(G, k, threads=4)
    count, hist = res.counters["cliques"], res.histograms["size"]
    sizes = np.bincount([len(c) for c in nx.enumerate_all_cliques(G) if len(c) <= k],
                        minlength=k + 1)
    expected = sum(1 for c in nx.enumerate_all_cliques(G) if len(c) == k)
    print(f"gthinker: {count} {k}-cliques; cliques by size: {hist[1:].tolist()}")
    print(f"networkx: {expected} {k}-cliques; cliques by size: {sizes[1:].tolist()}")
    # A tiny time budget forces decomposition: same answer, many spilled tasks.
    res2 = count_kcliques(G, k, threads=4, time_budget=1e-5)
    print(f"with time_budget=1e-5: {res2.counters['cliques']} {k}-cliques, "
          f"decomposed tasks: {res2.stats['tasks_decomposed'] > 0}")
    assert count == res2.counters["cliques"] == expected
    assert hist.tolist() == res2.histograms["size"].tolist() == sizes.tolist()
    print("OK")

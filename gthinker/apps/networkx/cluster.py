"""Triangles and clustering, as :mod:`networkx.algorithms.cluster`: ``triangles``,
``clustering``, ``transitivity``, ``average_clustering``.

All four read the triangles at every vertex, counted once per converted graph
by gthinker's count app (:func:`gthinker.apps.count.count` with
``per_vertex=True``) and kept with it. Every value is then computed from Python
integers with NetworkX's own expressions, in NetworkX's order, so the floats
are the same to the last bit.
"""

from __future__ import annotations

from gthinker.apps import count

from .checks import big_enough, many_nodes, simple
from .decorators import networkx_algorithm
from .info import setting


def _triangles_at(G) -> list[int]:
    """Triangles at each vertex (Python ints), counted once per backend graph."""
    if "triangles" not in G.results:
        res = count.count(G.graph, "triangle", mode="cpu", threads=setting("threads"),
                          per_vertex=True)
        G.results["triangles"] = res.per_vertex.tolist()
    return G.results["triangles"]


def _simple(G, nodes=None):
    return simple(G)


def _unweighted(G, nodes=None, weight=None):
    """Weighted clustering uses other formulas: NetworkX computes it."""
    if weight is not None:
        return f"weight={weight!r}: weighted clustering runs in NetworkX"
    return simple(G)


def _pays(G, nodes=None, weight=None):
    return many_nodes(G, nodes)


@networkx_algorithm("triangles", can_run=_simple, should_run=_pays)
def triangles(G, nodes=None):
    """NetworkX's ``triangles``: an int for one node, else a dict in node order."""
    tri = _triangles_at(G)
    if nodes is None:
        return dict(zip(G.nodes, tri, strict=True))
    if nodes in G:
        return tri[G.index[nodes]]
    return {v: tri[G.index[v]] for v in G.nbunch_iter(nodes)}


@networkx_algorithm("clustering", can_run=_unweighted, should_run=_pays)
def clustering(G, nodes=None, weight=None):
    """NetworkX's ``clustering`` of an unweighted undirected graph:
    ``2 T(u) / (deg(u) (deg(u) - 1))``, the int 0 where there is no triangle."""
    tri = _triangles_at(G)
    degrees = G.graph.degrees().tolist()
    values = {}
    for v in G.nbunch_iter(nodes):
        i = G.index[v]
        t, d = 2 * tri[i], degrees[i]
        values[v] = 0 if t == 0 else t / (d * (d - 1))
    if nodes in G:
        return values[nodes]
    return values


def _average_runs(G, nodes=None, weight=None, count_zeros=True):
    if nodes is not None and nodes in G:
        return "a single node (NetworkX raises: its clustering is a number)"
    return _unweighted(G, nodes, weight)


def _average_pays(G, nodes=None, weight=None, count_zeros=True):
    return many_nodes(G, nodes)


@networkx_algorithm("average_clustering", can_run=_average_runs, should_run=_average_pays)
def average_clustering(G, nodes=None, weight=None, count_zeros=True):
    """NetworkX's ``average_clustering``: the same sum in the same order
    (ZeroDivisionError for no nodes, as in NetworkX)."""
    c = clustering(G, nodes, weight=weight).values()
    if not count_zeros:
        c = [v for v in c if abs(v) > 0]
    return sum(c) / len(c)


def _transitivity_pays(G):
    return big_enough(G)


@networkx_algorithm("transitivity", can_run=simple, should_run=_transitivity_pays)
def transitivity(G):
    """NetworkX's ``transitivity``: ``6 triangles / sum deg (deg - 1)``, the int 0
    when there is no triangle or no node."""
    if len(G) == 0:
        return 0
    triangles = 2 * sum(_triangles_at(G))
    contri = sum(d * (d - 1) for d in G.graph.degrees().tolist())
    return 0 if triangles == 0 else triangles / contri

"""Cliques, as :mod:`networkx.algorithms.clique`: ``find_cliques``,
``find_cliques_recursive``, ``enumerate_all_cliques``, ``node_clique_number``.

Maximal cliques come from :func:`gthinker.apps.mce.iter_clique_batches`, which
streams them while the search runs; node names are looked up a batch at a time.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict

import numpy as np

from gthinker.apps import mce, sm

from .checks import big_enough, undirected
from .decorators import networkx_algorithm
from .info import setting


def _nodes_list(G, nodes=None):
    """NetworkX copies ``nodes`` by slicing and appends to the copy: a list works
    the same here; anything else keeps NetworkX's own behaviour."""
    if nodes is not None and not isinstance(nodes, list):
        return f"nodes given as a {type(nodes).__name__}, not a list"
    return undirected(G)


def _big_enough(G, nodes=None):
    return big_enough(G)


def _seeds(G, nodes) -> list[int]:
    """The vertices of ``nodes``, checked as NetworkX checks them: each in the
    graph, once, and adjacent to the ones before it."""
    seeds: list[int] = []
    for node in nodes:
        i = G.index.get(node)  # TypeError for an unhashable node, as in NetworkX
        if i is None or i in seeds or not all(_adjacent(G, j, i) for j in seeds):
            raise ValueError(f"The given `nodes` {nodes} do not form a clique")
        seeds.append(i)
    return seeds


def _adjacent(G, u: int, v: int) -> bool:
    row = G.graph.neighbors(u)
    k = int(np.searchsorted(row, v))
    return k < row.size and int(row[k]) == v


def _threads(G):
    """The configured threads; one below ``min_edges`` (a graph that reaches the
    backend only when asked for by name), so that the cliques come in the same order
    on every call, as NetworkX's do (NetworkX's own tests compare two calls)."""
    if G.graph.num_edges < setting("min_edges"):
        return 1
    return setting("threads")


def _maximal_cliques(G, nodes, seeds=None):
    """Yields the maximal cliques containing ``nodes`` (all of them when there
    are none) as lists of nodes, ``nodes`` first, in their order; ``nodes`` are
    checked on the first ``next`` unless their ``seeds`` are given."""
    if len(G) == 0:
        return
    if seeds is None:
        seeds = _seeds(G, nodes or [])
    containing = seeds or None
    first = set(seeds)
    batches = mce.iter_clique_batches(G.graph, threads=_threads(G), containing=containing)
    with contextlib.closing(batches):  # closing this generator stops the search at once
        for batch in batches:
            flat = G.node_array[batch.vertices].tolist()
            bounds = batch.offsets.tolist()
            if containing is None:
                for a, b in zip(bounds[:-1], bounds[1:], strict=True):
                    yield flat[a:b]
                continue
            ids = batch.vertices.tolist()
            for a, b in zip(bounds[:-1], bounds[1:], strict=True):
                yield list(nodes) + [flat[t] for t in range(a, b) if ids[t] not in first]


@networkx_algorithm("find_cliques", can_run=_nodes_list, should_run=_big_enough)
def find_cliques(G, nodes=None):
    """NetworkX's ``find_cliques``: a generator, ``nodes`` checked on the first ``next``."""
    return _maximal_cliques(G, nodes)


@networkx_algorithm("find_cliques_recursive", can_run=_nodes_list, should_run=_big_enough)
def find_cliques_recursive(G, nodes=None):
    """NetworkX's ``find_cliques_recursive``: ``nodes`` checked at the call."""
    if len(G) == 0:
        return iter([])
    seeds = _seeds(G, nodes or [])
    return _maximal_cliques(G, nodes, seeds)


@networkx_algorithm("enumerate_all_cliques", can_run=undirected, should_run=big_enough)
def enumerate_all_cliques(G):
    """Every clique, smallest first; within a size in NetworkX's order: each
    clique's nodes in graph order, the cliques in lexicographic order of that.
    Memory: one size's cliques at a time (NetworkX's queue holds a size too)."""
    names = G.nodes
    yield from ([node] for node in names)
    for u, v in G.graph.edge_array().tolist():
        yield [names[u], names[v]]
    for k in range(3, G.graph.degeneracy + 2):
        rows = _k_cliques(G.graph, k)
        if rows.shape[0] == 0:
            return
        for row in rows.tolist():
            yield [names[i] for i in row]


def _k_cliques(graph, k: int) -> np.ndarray:
    """The k-cliques of ``graph``, one sorted row each, rows in lexicographic order."""
    rows = sm.match(graph, f"{k}-clique", unique=True, threads=setting("threads"))
    rows.sort(axis=1)
    return rows[np.lexsort(rows.T[::-1])]


def _node_clique_number_runs(G, nodes=None, cliques=None, separate_nodes=False):
    """Cliques given by the caller are only tallied: NetworkX does that. Nodes
    must be one node, or a list, tuple or set of nodes of the graph (NetworkX
    raises for others)."""
    if cliques is not None:
        return "cliques given: NetworkX tallies them"
    if nodes is not None and nodes not in G:
        if not isinstance(nodes, (list, tuple, set, frozenset)):
            return f"nodes given as a {type(nodes).__name__}"
        if not all(n in G for n in nodes):
            return "nodes not in the graph (NetworkX raises)"
    return undirected(G)


def _node_clique_number_pays(G, nodes=None, cliques=None, separate_nodes=False):
    return big_enough(G)


@networkx_algorithm("node_clique_number", can_run=_node_clique_number_runs,
                    should_run=_node_clique_number_pays)
def node_clique_number(G, nodes=None, cliques=None, separate_nodes=False):
    """The size of the largest maximal clique at each node (``separate_nodes``
    is unused, as in NetworkX)."""
    if nodes is not None and nodes in G:
        res = mce.run(G.graph, mode="cpu", threads=setting("threads"),
                      containing=[G.index[nodes]])
        return res.max_size
    best = _largest_clique_at(G)
    if nodes is None:
        return defaultdict(int, zip(G.nodes, best, strict=True))
    return {n: best[G.index[n]] for n in nodes}


def _largest_clique_at(G) -> list[int]:
    """Per vertex, the size of the largest maximal clique containing it."""
    best = np.zeros(len(G), np.int64)
    for batch in mce.iter_clique_batches(G.graph, threads=setting("threads")):
        sizes = np.diff(batch.offsets)
        np.maximum.at(best, batch.vertices, np.repeat(sizes, sizes))
    return best.tolist()

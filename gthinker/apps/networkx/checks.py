"""Conditions the algorithms' ``can_run`` and ``should_run`` share. Each returns
True or a string that says why not; ``G`` is the caller's graph."""

from __future__ import annotations

from .info import setting


def undirected(G):
    """Directed graphs have other definitions (clustering) or are refused by NetworkX."""
    return True if not G.is_directed() else "directed graphs run in NetworkX"


def simple(G):
    """Undirected and not a multigraph (NetworkX's clustering refuses multigraphs)."""
    if G.is_multigraph():
        return "multigraphs run in NetworkX"
    return undirected(G)


def big_enough(G):
    """With automatic dispatch, small graphs stay with NetworkX: converting the graph
    and starting the workers costs more than NetworkX's whole run."""
    m, least = G.number_of_edges(), setting("min_edges")
    if m < least:
        return f"a small graph ({m} edges, min_edges={least}): NetworkX is faster here"
    return True


def many_nodes(G, nodes):
    """A single node is a small job that NetworkX does on its neighbourhood alone;
    the backend counts the whole graph."""
    if nodes is not None and nodes in G:
        return "one node: NetworkX counts only its neighbourhood"
    return big_enough(G)


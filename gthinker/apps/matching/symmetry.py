"""A query's symmetries: isomorphism tests, automorphism orbits, |Aut(q)| and the
symmetry-breaking restrictions along a matching order.

Written in plain Python on small graphs (queries), as adjacency sets and optional
labels: an automorphism must keep labels (a labeled query's symmetries are its
label-preserving automorphisms).

**Restrictions** (Grochow-Kellis; G2Miner and GraphPi derive theirs the same way):
walk the matching order; at position ``i`` the vertex ``u = order[i]`` has an orbit
under the automorphisms that fix ``order[:i]`` pointwise; every other vertex ``w`` of
that orbit gets ``m[i] < m[pos(w)]``, then ``u`` is fixed too. Exactly one embedding
of every automorphism class meets all of them, so an enumeration under them finds
each distinct subgraph once, and ``|Aut(q)|`` is the product of the orbit sizes.
Every restriction ``(i, j)`` has ``i < j``: the orbit's other vertices are not yet
fixed, so they come later in the order.

>>> square = [{1, 3}, {0, 2}, {1, 3}, {0, 2}]
>>> restrictions(square, None, [0, 1, 3, 2])
([(0, 1), (0, 2), (0, 3), (1, 2)], 8)
"""

from __future__ import annotations

__all__ = ["adjacency", "isomorphic", "automorphism_exists", "restrictions", "twins"]


def adjacency(graph) -> list[set[int]]:
    """The adjacency sets of a :class:`gthinker.Graph` (a small query)."""
    return [set(map(int, graph.neighbors(u))) for u in range(graph.num_vertices)]


def _same(labels_a, a, labels_b, b) -> bool:
    return labels_a is None or labels_a[a] == labels_b[b]


def _extend(adj_a, adj_b, labels_a, labels_b, image, used, rest, i) -> bool:
    """Backtracking: map ``rest[i:]`` of graph a into graph b, keeping adjacency both
    ways with the vertices mapped so far (``image``, -1 for unmapped)."""
    if i == len(rest):
        return True
    u = rest[i]
    for v in range(len(adj_b)):
        if used[v] or len(adj_b[v]) != len(adj_a[u]) or not _same(labels_a, u, labels_b, v):
            continue
        if all((image[w] in adj_b[v]) == (w in adj_a[u])
               for w in range(len(adj_a)) if image[w] >= 0):
            image[u], used[v] = v, True
            if _extend(adj_a, adj_b, labels_a, labels_b, image, used, rest, i + 1):
                return True
            image[u], used[v] = -1, False
    return False


def _mapping_exists(adj_a, adj_b, labels_a, labels_b, fixed: dict) -> bool:
    """Is there an isomorphism from graph a to graph b (adjacency sets, labels or
    None) that maps u -> fixed[u]?"""
    n = len(adj_a)
    if n != len(adj_b):
        return False
    image, used = [-1] * n, [False] * n
    for u, v in fixed.items():
        if (used[v] or len(adj_a[u]) != len(adj_b[v])
                or not _same(labels_a, u, labels_b, v)):
            return False
        image[u], used[v] = v, True
    for u, v in fixed.items():
        for w, x in fixed.items():
            if (w in adj_a[u]) != (x in adj_b[v]):
                return False
    # The vertices with the most mapped neighbours first: they prune soonest.
    rest = [u for u in range(n) if image[u] < 0]
    rest.sort(key=lambda u: (-sum(image[w] >= 0 for w in adj_a[u]), -len(adj_a[u]), u))
    return _extend(adj_a, adj_b, labels_a, labels_b, image, used, rest, 0)


def isomorphic(adj_a, adj_b, labels_a=None, labels_b=None) -> bool:
    """Are the two small graphs isomorphic (labels kept, when given)?"""
    if sorted(map(len, adj_a)) != sorted(map(len, adj_b)):
        return False
    return _mapping_exists(adj_a, adj_b, labels_a, labels_b, {})


def automorphism_exists(adj, labels, fixed: dict) -> bool:
    """Is there an automorphism (labels kept) that maps u -> fixed[u]?"""
    return _mapping_exists(adj, adj, labels, labels, fixed)


def restrictions(adj, labels, order) -> tuple[list[tuple[int, int]], int]:
    """The symmetry-breaking restrictions along ``order`` (pairs of positions
    ``(i, j)``, ``i < j``, meaning ``m[i] < m[j]``) and ``|Aut(q)|``; see the module
    docstring."""
    pos = {int(u): i for i, u in enumerate(order)}
    fixed: dict[int, int] = {}
    out, aut = [], 1
    for i, u in enumerate(order):
        u = int(u)
        orbit = [w for w in range(len(adj)) if w not in fixed
                 and (w == u or automorphism_exists(adj, labels, {**fixed, u: w}))]
        aut *= len(orbit)
        out += sorted((i, pos[w]) for w in orbit if w != u)
        fixed[u] = u
    return out, aut


def twins(adj, labels, u: int) -> list[int]:
    """The vertices (u among them) with u's neighbours and label, not adjacent to it:
    any two of them are swapped by an automorphism that fixes every other vertex."""
    return [w for w in range(len(adj)) if adj[w] == adj[u] and _same(labels, w, labels, u)]

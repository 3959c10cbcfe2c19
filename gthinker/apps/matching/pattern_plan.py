"""The pattern plan: what the query's shape alone decides, before any data is seen.

A :class:`PatternPlan` is plain data, so that every engine (the CPU search of
:mod:`gthinker.apps.matching.search`, the clique engine and formulas of
:mod:`gthinker.apps.count`, a GPU engine) can be written against it:

``order``
    The query vertex at each position of the matching order. Every vertex after the
    first has an earlier neighbour, and the order ends with its count-only tail.
``backward``
    Per position, the earlier positions adjacent to it (its candidates are the
    intersection of their data vertices' neighbour lists).
``restrictions``
    Pairs of positions ``(i, j)``, ``i < j``, meaning ``m[i] < m[j]`` (data vertex
    ids): symmetry breaking from the automorphism group along ``order``
    (:func:`gthinker.apps.matching.symmetry.restrictions`). Under them each distinct
    subgraph is found once; embeddings = distinct subgraphs x ``automorphisms``.
``automorphisms``
    ``|Aut(q)|`` (labeled queries: the label-preserving automorphisms).
``count_only``
    How many last positions are counted from intersection sizes, never enumerated:
    1 (the last vertex); 2 (the last two, not adjacent to each other: ``|A| |B| -
    |A & B|``, or the pairs ``x < y`` when a restriction joins them); more when the
    tail is a class of twins (same neighbours, same label: ``C(|A|, r)`` under their
    restrictions, ``|A| (|A| - 1) ... (|A| - r + 1)`` without). 0 for one vertex.
``clique``
    k when the query is a k-clique (unlabeled, or all its labels equal): the oriented
    clique engine counts it, each clique once with no symmetry checks.
``shape``
    The name of the named pattern (:data:`gthinker.apps.matching.patterns.PATTERNS`,
    ``k-path``, ``k-star``, ``k-clique``) the query is isomorphic to, labels all equal
    or none; engines with a closed formula for a shape use it.

>>> p = pattern_plan(pattern("diamond"))
>>> p.order, p.restrictions, p.count_only, p.automorphisms, p.shape
((0, 2, 1, 3), ((0, 1), (2, 3)), 2, 4, 'diamond')
>>> pattern_plan(pattern("5-clique")).clique
5
"""

from __future__ import annotations

from dataclasses import dataclass

import gthinker

from . import symmetry
from .patterns import PATTERNS, pattern

__all__ = ["PatternPlan", "pattern_plan", "pattern_order", "tail_length", "shape_name"]


@dataclass(frozen=True)
class PatternPlan:
    """The plan of a query pattern (see the module docstring for each field)."""

    num_vertices: int
    edges: tuple[tuple[int, int], ...]  # (u, v), u < v: the query's edges
    labels: tuple[int, ...] | None  # per query vertex, or None (unlabeled)
    order: tuple[int, ...]
    backward: tuple[tuple[int, ...], ...]
    restrictions: tuple[tuple[int, int], ...]
    automorphisms: int
    count_only: int
    clique: int | None = None
    shape: str | None = None

    @property
    def uniform_label(self) -> int | None:
        """The one label of a labeled query whose labels are all equal, else None."""
        if self.labels is None or len(set(self.labels)) != 1:
            return None
        return self.labels[0]

    def tail_chain(self) -> bool:
        """Do restrictions join the count-only positions to each other?"""
        first = self.num_vertices - self.count_only
        return any(i >= first for i, _ in self.restrictions)


def _connected(adj, keep) -> bool:
    keep = set(keep)
    if not keep:
        return False
    start = next(iter(keep))
    seen, stack = {start}, [start]
    while stack:
        for w in adj[stack.pop()]:
            if w in keep and w not in seen:
                seen.add(w)
                stack.append(w)
    return seen == keep


def _tail(adj, labels) -> list[int]:
    """The best count-only tail: the largest class of twins (two or more, same label)
    whose removal leaves the rest connected; else the non-adjacent pair with the
    most neighbours (the smallest intersections) that leaves it connected; else the
    vertex of highest degree that is not a cut vertex."""
    n = len(adj)
    if n < 2:
        return []
    everyone = set(range(n))
    best = []
    for u in range(n):
        cls = symmetry.twins(adj, labels, u)
        if len(cls) >= 2 and len(cls) > len(best) and _connected(adj, everyone - set(cls)):
            best = cls
    if len(best) >= 3:
        return best
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)
             if b not in adj[a] and _connected(adj, everyone - {a, b})]
    if pairs:
        return list(max(pairs, key=lambda e: (len(adj[e[0]]) + len(adj[e[1]]), e)))
    # (ties to the highest id: a clique keeps its own order, 0, 1, ..., k - 1)
    return [max((u for u in range(n) if _connected(adj, everyone - {u})),
                key=lambda u: (len(adj[u]), u))]


def pattern_order(adj, labels=None, sizes=None) -> list[int]:
    """A matching order that ends with the best count-only tail (:func:`_tail`). The
    prefix is GraphQL/RI-like: first the vertex with the fewest candidates per edge
    (``sizes[u] / deg(u)``; unlabeled: the highest degree), then again and again the
    vertex with the most already-placed neighbours (ties: fewer candidates, higher
    degree, lower id)."""
    n = len(adj)
    sizes = [1] * n if sizes is None else [int(s) for s in sizes]
    tail = _tail(adj, labels)
    rest = [u for u in range(n) if u not in tail]
    first = min(rest, key=lambda u: (sizes[u] / max(len(adj[u]), 1), -len(adj[u]), u))
    order, placed = [first], {first}
    while len(order) < len(rest):
        u = min((u for u in rest if u not in placed and adj[u] & placed),
                key=lambda u: (-len(adj[u] & placed), sizes[u], -len(adj[u]), u))
        order.append(u)
        placed.add(u)
    return order + sorted(tail)


def tail_length(adj, labels, order) -> int:
    """How many last positions of ``order`` can be counted without being enumerated:
    the last vertex; the last two when they are not adjacent; the longest run of
    twins (same neighbours, same label) at the end, all placed after their
    neighbours."""
    n = len(order)
    if n < 2:
        return 0
    last = int(order[-1])
    run = 1
    while run < n - 1 and int(order[n - 1 - run]) in symmetry.twins(adj, labels, last):
        run += 1
    if run >= 3:
        return run
    return 2 if n >= 3 and int(order[-2]) not in adj[last] else 1


def _uniform(labels) -> bool:
    return labels is None or len(set(labels)) <= 1


def shape_name(adj, labels=None) -> str | None:
    """The named pattern the query is isomorphic to (labels all equal, or none)."""
    if not _uniform(labels):
        return None
    n, m = len(adj), sum(map(len, adj)) // 2
    names = list(PATTERNS) + [f"{n}-clique", f"{n}-path", f"{n}-star"]
    for name in names:
        q = pattern(name) if n >= 2 or name in PATTERNS else None
        if q is None or q.num_vertices != n or q.num_edges != m:
            continue
        if symmetry.isomorphic(adj, symmetry.adjacency(q)):
            return "triangle" if name == "3-clique" else name
    return None


def pattern_plan(query: gthinker.Graph, order=None, sizes=None) -> PatternPlan:
    """The :class:`PatternPlan` of a connected query. ``order``: a matching order to
    keep (its count-only tail is what it allows); otherwise :func:`pattern_order`
    with the candidate counts ``sizes`` (per query vertex) if known."""
    n = query.num_vertices
    adj = symmetry.adjacency(query)
    labels = None if query.labels is None else tuple(int(x) for x in query.labels)
    if order is None:
        order = pattern_order(adj, labels, sizes)
    order = tuple(int(u) for u in order)
    pos = {u: i for i, u in enumerate(order)}
    backward = tuple(tuple(sorted(pos[w] for w in adj[u] if pos[w] < i))
                     for i, u in enumerate(order))
    restrictions, aut = symmetry.restrictions(adj, labels, order)
    edges = tuple((u, w) for u in range(n) for w in sorted(adj[u]) if u < w)
    clique = n if len(edges) == n * (n - 1) // 2 and _uniform(labels) else None
    return PatternPlan(num_vertices=n, edges=edges, labels=labels, order=order,
                       backward=backward, restrictions=tuple(restrictions),
                       automorphisms=aut, count_only=tail_length(adj, labels, order),
                       clique=clique, shape=shape_name(adj, labels) if n <= 8 else None)

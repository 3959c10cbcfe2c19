"""Labeled patterns of frequent subgraph mining, in canonical form.

A pattern is a connected graph of ``m`` vertices with vertex labels and labeled edges.
Its canonical form is its **minimum DFS code** (gSpan): every depth-first traversal of
the pattern writes its edges as tuples ``(i, j, label_i, edge_label, label_j)``, ``i`` and
``j`` the discovery ranks of the two ends (``i < j`` a forward edge, ``i > j`` a backward
one, listed right after the discovery of ``i``); the least of these codes in tuple order
names the pattern, so two isomorphic patterns have the same code and each is reported
once. :func:`canonical` finds it greedily: the states (partial traversals) whose code so
far is the least are kept and advanced together, which is exact because every partial
depth-first traversal can be completed.

A :class:`Pattern` is stored in its canonical numbering (vertex ``i`` is the ``i``-th
discovered): ``labels[i]`` and ``edges``, a tuple of ``(i, j, edge_label)`` with
``i < j``. :func:`extensions` grows a pattern by one edge (between two of its vertices,
or to a new vertex), :func:`sub_patterns` lists the connected patterns of one edge less
(for the anti-monotone test: a candidate all of whose sub-patterns are frequent).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Pattern", "canonical", "extensions", "single_edge", "sub_patterns"]


@dataclass(frozen=True)
class Pattern:
    """A connected labeled pattern in canonical numbering; ``code`` is its minimum DFS
    code (the key that names it)."""

    labels: tuple[int, ...]
    edges: tuple[tuple[int, int, int], ...]
    code: tuple[tuple[int, int, int, int, int], ...]

    @property
    def num_vertices(self) -> int:
        return len(self.labels)

    @property
    def num_edges(self) -> int:
        return len(self.edges)

    def adjacency(self) -> dict[tuple[int, int], int]:
        """``{(i, j): edge_label}`` for both orders of every edge."""
        adj = {}
        for i, j, el in self.edges:
            adj[(i, j)] = adj[(j, i)] = el
        return adj

    def to_dict(self) -> dict:
        return {"vertices": list(self.labels),
                "edges": [[i, j, self.labels[i], el, self.labels[j]] for i, j, el in self.edges]}

    def text(self) -> str:
        """``(a)-[e]-(b) ...``: each edge with its two vertices' numbers and labels (the
        edge label shown only where it is not 0)."""
        parts = []
        for i, j, el in self.edges:
            mid = "-" if el == 0 else f"-[{el}]-"
            parts.append(f"{i}:{self.labels[i]}{mid}{j}:{self.labels[j]}")
        return " ".join(parts)


def _neighbours(m, edges):
    nbr = [dict() for _ in range(m)]
    for i, j, el in edges:
        nbr[i][j] = el
        nbr[j][i] = el
    return nbr


def _advance(state, labels, nbr):
    """The next code edges of a partial traversal ``state`` = (rank, stack, used), each
    with the state it leads to: the one backward edge due, else every forward edge from
    the deepest vertex of the rightmost path that has an undiscovered neighbour."""
    rank, stack, used = state
    r = stack[-1]
    back = [w for w in nbr[r] if w in rank and frozenset((r, w)) not in used]
    if back:
        w = min(back, key=rank.__getitem__)
        edge = (rank[r], rank[w], labels[r], nbr[r][w], labels[w])
        return [(edge, (rank, stack, used | {frozenset((r, w))}))]
    for depth in range(len(stack) - 1, -1, -1):
        u = stack[depth]
        fresh = [w for w in nbr[u] if w not in rank]
        if fresh:
            out = []
            for w in fresh:
                new_rank = dict(rank)
                new_rank[w] = len(rank)
                edge = (rank[u], len(rank), labels[u], nbr[u][w], labels[w])
                out.append((edge, (new_rank, stack[:depth + 1] + (w,),
                                   used | {frozenset((u, w))})))
            return out
    return []


def canonical(labels, edges) -> Pattern:
    """The pattern of vertex labels ``labels`` and edges ``(i, j, edge_label)`` (connected,
    at least one edge), renumbered in the order of its minimum DFS code."""
    m = len(labels)
    nbr = _neighbours(m, edges)
    states = [({v: 0}, (v,), frozenset()) for v in range(m)]
    code = []
    for _ in range(len(edges)):
        steps = [step for s in states for step in _advance(s, labels, nbr)]
        if not steps:
            raise ValueError("pattern is not connected")
        best = min(edge for edge, _ in steps)
        code.append(best)
        states = [s for edge, s in steps if edge == best]
    rank = states[0][0]
    if len(rank) != m:
        raise ValueError("pattern is not connected")
    new_labels = [0] * m
    for v, r in rank.items():
        new_labels[r] = labels[v]
    new_edges = tuple(sorted((min(i, j), max(i, j), el) for i, j, _, el, _ in code))
    return Pattern(tuple(new_labels), new_edges, tuple(code))


def single_edge(a: int, edge_label: int, b: int) -> Pattern:
    return canonical((a, b), ((0, 1, edge_label),))


def extensions(p: Pattern, frequent_edges) -> set[Pattern]:
    """The patterns of one edge more than ``p`` whose new edge is one of
    ``frequent_edges`` (``(label_a, edge_label, label_b)`` triples, both orders present):
    an edge between two non-adjacent vertices of ``p``, or from a vertex to a new one."""
    by_label: dict[int, list[tuple[int, int]]] = {}
    for a, el, b in frequent_edges:
        by_label.setdefault(a, []).append((el, b))
    adj = p.adjacency()
    m = p.num_vertices
    out = set()
    for i in range(m):
        for el, b in by_label.get(p.labels[i], ()):
            out.add(canonical(p.labels + (b,), p.edges + ((i, m, el),)))
            for j in range(i + 1, m):
                if p.labels[j] == b and (i, j) not in adj:
                    out.add(canonical(p.labels, p.edges + ((i, j, el),)))
    return out


def sub_patterns(p: Pattern) -> list[Pattern]:
    """The connected patterns of ``p`` less one edge (a vertex left without edges goes
    too); an edge whose removal splits ``p`` in two parts of edges gives none."""
    out = []
    for k in range(p.num_edges):
        rest = p.edges[:k] + p.edges[k + 1:]
        degree = [0] * p.num_vertices
        for i, j, _ in rest:
            degree[i] += 1
            degree[j] += 1
        keep = [v for v in range(p.num_vertices) if degree[v] > 0]
        new = {v: x for x, v in enumerate(keep)}
        labels = tuple(p.labels[v] for v in keep)
        edges = tuple((new[i], new[j], el) for i, j, el in rest)
        if _connected(len(keep), edges):
            out.append(canonical(labels, edges))
    return out


def _connected(m, edges) -> bool:
    nbr = _neighbours(m, edges)
    seen, todo = {0}, [0]
    while todo:
        for w in nbr[todo.pop()]:
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return len(seen) == m

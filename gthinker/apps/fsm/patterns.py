"""Labeled patterns of frequent subgraph mining, in canonical form.

A pattern is a connected graph of ``m`` vertices with vertex labels and labeled edges.
Its canonical form is its **minimum DFS code** (gSpan): every depth-first traversal of
the pattern writes its edges as tuples ``(i, j, label_i, edge_label, label_j)``, ``i`` and
``j`` the discovery ranks of the two ends (``i < j`` a forward edge, ``i > j`` a backward
one, listed right after the discovery of ``i``); the least of these codes in tuple order
names the pattern, so two isomorphic patterns have the same code and each is reported
once. :func:`canonical` finds it greedily: the states (partial traversals) whose code so
far is the least are kept and advanced together (equal states merged), which is exact
because every partial depth-first traversal can be completed; it starts from the
vertices of the least label only (the first code edge starts at rank 0); given a
``memo`` dict it keeps the forms it computes there (the candidates of a level share
many sub-patterns).

A :class:`Pattern` is stored in its canonical numbering (vertex ``i`` is the ``i``-th
discovered): ``labels[i]`` and ``edges``, a tuple of ``(i, j, edge_label)`` with
``i < j``. :func:`extensions` grows a pattern by one edge (between two of its vertices,
or to a new vertex), :func:`sub_graphs` and :func:`sub_patterns` list the connected
graphs of one edge less (for the anti-monotone test: a candidate all of whose
sub-patterns are frequent), and :func:`invariant` is a key isomorphic graphs share (a
cheap first test of that).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Pattern", "canonical", "extensions", "invariant", "single_edge", "sub_graphs",
           "sub_patterns"]


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


def canonical(labels, edges, memo: dict | None = None) -> Pattern:
    """The pattern of vertex labels ``labels`` and edges ``(i, j, edge_label)`` (connected,
    at least one edge), renumbered in the order of its minimum DFS code; looked up in and
    added to ``memo`` (keyed by the labels and edges asked) where one is given."""
    key = (tuple(labels), tuple(tuple(e) for e in edges))
    if memo is None:
        return _canonical(*key)
    if key not in memo:
        memo[key] = _canonical(*key)
    return memo[key]


def _canonical(labels, edges) -> Pattern:
    m = len(labels)
    nbr = [[] for _ in range(m)]  # (neighbour, edge label, edge bit)
    for k, (i, j, el) in enumerate(edges):
        nbr[i].append((j, el, 1 << k))
        nbr[j].append((i, el, 1 << k))
    low = min(labels)
    # a state: (rank of each vertex, -1 undiscovered; the rightmost path; used edge bits)
    states = {(tuple(0 if w == v else -1 for w in range(m)), (v,), 0)
              for v in range(m) if labels[v] == low}
    code = []
    for _ in range(len(edges)):
        best, steps = None, []
        for state in states:
            edge, nxt = _step(state, labels, nbr, best)
            if edge is None:
                continue
            if best is None or edge < best:
                best, steps = edge, []
            steps.extend(nxt)
        if best is None:
            raise ValueError("pattern is not connected")
        code.append(best)
        states = set(steps)
    rank = next(iter(states))[0]
    if min(rank) < 0:
        raise ValueError("pattern is not connected")
    new_labels = [0] * m
    for v, r in enumerate(rank):
        new_labels[r] = labels[v]
    new_edges = tuple(sorted((min(i, j), max(i, j), el) for i, j, _, el, _ in code))
    return Pattern(tuple(new_labels), new_edges, tuple(code))


def _step(state, labels, nbr, best):
    """The least next code edge of a partial traversal ``state`` (None when it has
    none or it is greater than ``best``), with the states it leads to: the one backward
    edge due, else the forward edges from the deepest vertex of the rightmost path that
    has an undiscovered neighbour."""
    rank, stack, used = state
    r = stack[-1]
    back, bit, el, to = -1, 0, 0, 0
    for w, e, b in nbr[r]:
        if rank[w] >= 0 and not used & b and (back < 0 or rank[w] < back):
            back, bit, el, to = rank[w], b, e, w
    if back >= 0:
        edge = (rank[r], back, labels[r], el, labels[to])
        if best is not None and edge > best:
            return None, ()
        return edge, ((rank, stack, used | bit),)
    nxt = max(rank) + 1
    for depth in range(len(stack) - 1, -1, -1):
        u = stack[depth]
        least, outs = None, []
        for w, e, b in nbr[u]:
            if rank[w] < 0:
                key = (e, labels[w])
                if least is None or key < least:
                    least, outs = key, [(w, b)]
                elif key == least:
                    outs.append((w, b))
        if least is None:
            continue
        edge = (rank[u], nxt, labels[u], least[0], least[1])
        if best is not None and edge > best:
            return None, ()
        base = stack[:depth + 1]
        return edge, tuple((rank[:w] + (nxt,) + rank[w + 1:], base + (w,), used | b)
                           for w, b in outs)
    return None, ()


def single_edge(a: int, edge_label: int, b: int) -> Pattern:
    return canonical((a, b), ((0, 1, edge_label),))


def extensions(p: Pattern, frequent_edges) -> list[tuple[tuple, tuple]]:
    """The graphs ``(labels, edges)`` of one edge more than ``p`` (not in canonical form,
    possibly isomorphic to each other) whose new edge is one of ``frequent_edges``
    (``(label_a, edge_label, label_b)`` triples, both orders present): an edge between two
    non-adjacent vertices of ``p``, or from a vertex to a new one."""
    by_label: dict[int, list[tuple[int, int]]] = {}
    for a, el, b in frequent_edges:
        by_label.setdefault(a, []).append((el, b))
    adj = p.adjacency()
    m = p.num_vertices
    out = []
    for i in range(m):
        for el, b in by_label.get(p.labels[i], ()):
            out.append((p.labels + (b,), p.edges + ((i, m, el),)))
            for j in range(i + 1, m):
                if p.labels[j] == b and (i, j) not in adj:
                    out.append((p.labels, p.edges + ((i, j, el),)))
    return out


def invariant(labels, edges) -> tuple:
    """A key that isomorphic graphs share (two graphs with different keys are not
    isomorphic): the sorted vertex labels and the sorted labelled edges."""
    return (tuple(sorted(labels)),
            tuple(sorted((min(labels[i], labels[j]), el, max(labels[i], labels[j]))
                         for i, j, el in edges)))


def sub_graphs(labels, edges) -> list[tuple[tuple, tuple]]:
    """The connected graphs ``(labels, edges)`` of a connected graph less one edge (a
    vertex left without edges goes too); an edge whose removal splits it in two parts of
    edges gives none."""
    m = len(labels)
    degree = [0] * m
    for i, j, _ in edges:
        degree[i] += 1
        degree[j] += 1
    out = []
    for k, (i, j, _) in enumerate(edges):
        rest = edges[:k] + edges[k + 1:]
        if degree[i] > 1 and degree[j] > 1:  # i and j stay: connected unless a bridge
            if _connected(m, rest):
                out.append((labels, rest))
            continue
        gone = i if degree[i] == 1 else j  # a leaf edge: the rest stays connected
        if degree[i] == 1 and degree[j] == 1:  # the single edge
            continue
        out.append((labels[:gone] + labels[gone + 1:],
                    tuple((a - (a > gone), b - (b > gone), el) for a, b, el in rest)))
    return out


def sub_patterns(p: Pattern, memo: dict | None = None) -> list[Pattern]:
    """The connected patterns of ``p`` less one edge, in canonical form (:func:`sub_graphs`;
    ``memo`` as for :func:`canonical`)."""
    return [canonical(labels, edges, memo) for labels, edges in sub_graphs(p.labels, p.edges)]


def _connected(m, edges) -> bool:
    nbr = _neighbours(m, edges)
    seen, todo = {0}, [0]
    while todo:
        for w in nbr[todo.pop()]:
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return len(seen) == m

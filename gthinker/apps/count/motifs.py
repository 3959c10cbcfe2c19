"""Motifs: every connected pattern of 3, 4 or 5 vertices counted at once, exactly.

:func:`motif_names` lists them by size, by the names of
:data:`gthinker.apps.matching.patterns.PATTERNS` and the ``k-path``, ``k-star`` and
``k-clique`` families (stable names; the 5-vertex ones carry their networkx
graph-atlas ids in that table):

- 3: ``3-path``, ``triangle``
- 4: ``4-path``, ``4-star``, ``4-cycle``, ``tailed-triangle``, ``diamond``, ``4-clique``
- 5: the 21 connected graphs of 5 vertices, from ``5-path`` to ``5-clique``

Two kinds of count, both exact:

- **non-induced** (``induced=False``): the distinct subgraphs isomorphic to each
  pattern, as :func:`gthinker.apps.count.count` counts one pattern (a 4-cycle is
  counted inside every 4-clique, three times);
- **induced** (the default, as igraph's ``motifs_randesu`` and ESCAPE count them):
  the vertex sets whose induced subgraph is isomorphic to the pattern; every
  connected vertex set of that size is in exactly one motif.

They are tied by ``noninduced(H) = sum over H' of c(H, H') induced(H')``, ``c(H, H')``
the copies of ``H`` among the spanning subgraphs of ``H'`` (a pattern with as many
vertices and at least as many edges): the induced counts come from the non-induced
ones by back-substitution from the densest pattern (the clique, whose two counts
are equal). The non-induced counts are those of the count app (cliques on the
oriented graph, formulas, the search with count-only last levels).
"""

from __future__ import annotations

import itertools

from ..matching import symmetry
from ..matching.pattern_plan import pattern_plan
from ..matching.patterns import PATTERNS, pattern

__all__ = ["SIZES", "containment", "induced_counts", "motif_names"]

#: The motif sizes counted.
SIZES = (3, 4, 5)

_FAMILIES = ("path", "star", "clique")


def motif_names(size: int) -> list[str]:
    """The names of the connected patterns of ``size`` vertices, by edge count (then
    name): the keys of the motif counts.

    >>> motif_names(4)
    ['4-path', '4-star', '4-cycle', 'tailed-triangle', 'diamond', '4-clique']
    """
    if size not in SIZES:
        raise ValueError(f"motif size must be one of {', '.join(map(str, SIZES))}, got "
                         f"{size!r}")
    if size == 3:  # the 3-path is also the 3-star; the 3-clique is the triangle
        return ["3-path", "triangle"]
    names = [name for name in PATTERNS if pattern(name).num_vertices == size]
    names += [f"{size}-{family}" for family in _FAMILIES]
    return sorted(names, key=lambda n: (pattern(n).num_edges, n))


def _edges(name) -> set[tuple[int, int]]:
    adj = symmetry.adjacency(pattern(name))
    return {(u, w) for u in range(len(adj)) for w in adj[u] if u < w}


def containment(size: int) -> dict[tuple[str, str], int]:
    """``c(H, H')`` for every pair of motifs of ``size`` vertices with ``c > 0``:
    the spanning subgraphs of ``H'`` isomorphic to ``H`` (brute force over the
    vertex permutations; ``c(H, H) = 1``)."""
    names = motif_names(size)
    edges = {n: _edges(n) for n in names}
    aut = {n: pattern_plan(pattern(n)).automorphisms for n in names}
    out = {}
    perms = list(itertools.permutations(range(size)))
    for h in names:
        for g in names:
            if len(edges[h]) > len(edges[g]):
                continue
            maps = sum(all(tuple(sorted((p[a], p[b]))) in edges[g] for a, b in edges[h])
                       for p in perms)
            if maps:
                out[h, g] = maps // aut[h]
    return out


def induced_counts(size: int, noninduced: dict[str, int]) -> dict[str, int]:
    """The induced motif counts from the non-induced ones (see the module docstring).

    >>> induced_counts(3, {"3-path": 3, "triangle": 1})  # a triangle: no induced path
    {'3-path': 0, 'triangle': 1}
    """
    names = motif_names(size)
    c = containment(size)
    out: dict[str, int] = {}
    for h in reversed(names):  # the densest first: its supergraphs are all known
        out[h] = noninduced[h] - sum(c[h, g] * out[g] for g in out if (h, g) in c)
    return {n: out[n] for n in names}

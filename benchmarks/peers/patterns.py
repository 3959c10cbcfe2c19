"""The unlabeled patterns of the matching table, as each peer names them.

T-DFS ships data/pattern/1.g .. 7.g (``e U V 1`` lines); G-ThinkerCG's ``app_gmatch -q Q``
builds pattern Q from common/graph.h (``selectPresetPatterns``); G2Miner counts cliques
only. The edge lists below are those files' and that function's, written out here (facts
about their inputs, no code of theirs); :func:`isomorphic` checks that each T-DFS pattern
and the G-ThinkerCG pattern given for it are the same shape, and ``seed_tables.py`` checks
the ``.g`` files it runs against :data:`TDFS`.

The seed paper's own queries P1-P3 (its Table II(a)) are drawn in a figure whose shapes
are not in its text, so they are not mapped here.
"""

from __future__ import annotations

import itertools

#: T-DFS pattern number -> (name, edges).
TDFS = {
    1: ("diamond", [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3)]),
    2: ("4-clique", [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]),
    3: ("4-clique + a vertex on two", [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4),
                                       (2, 3)]),
    4: ("diamond + a vertex on its tips", [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 4),
                                           (3, 4)]),
    5: ("wheel W4", [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 4), (2, 3), (3, 4)]),
    6: ("5-clique minus an edge", [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4),
                                   (2, 3), (3, 4)]),
    7: ("5-clique", [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4),
                     (3, 4)]),
}

#: G-ThinkerCG preset pattern (its -q) -> (its comment's name, edges).
GTHINKERCG = {
    0: ("triangle", [(0, 1), (0, 2), (1, 2)]),
    2: ("chordal square", [(0, 1), (0, 2), (0, 3), (1, 2), (2, 3)]),
    5: ("chordal house", [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (2, 3), (3, 4)]),
    6: ("chordal roof", [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 4), (3, 4)]),
    8: ("solar square", [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 4), (2, 3), (3, 4)]),
    9: ("near 5 clique", [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3),
                          (3, 4)]),
    24: ("4 clique", [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]),
    25: ("5 clique", [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4),
                      (3, 4)]),
}

#: T-DFS pattern -> the G-ThinkerCG pattern of the same shape (checked by the tests).
TDFS_TO_GTHINKERCG = {1: 2, 2: 24, 3: 5, 4: 6, 5: 8, 6: 9, 7: 25}

#: T-DFS pattern -> k, where the pattern is the k-clique (G2Miner's clique_gpu_base counts
#: those, 4 <= k <= 8).
TDFS_CLIQUES = {2: 4, 7: 5}


def _norm(edges):
    return {tuple(sorted(e)) for e in edges}


def _vertices(edges):
    return sorted({v for e in edges for v in e})


def automorphisms(edges) -> int:
    """|Aut| of the pattern, by trying every permutation (at most 7 vertices here)."""
    es = _norm(edges)
    vs = _vertices(edges)
    return sum(_norm((p[vs.index(a)], p[vs.index(b)]) for a, b in es) == es
               for p in itertools.permutations(vs))


def isomorphic(a, b) -> bool:
    """Whether two patterns are the same shape, by trying every bijection."""
    ea, eb = _norm(a), _norm(b)
    va, vb = _vertices(a), _vertices(b)
    if len(ea) != len(eb) or len(va) != len(vb):
        return False
    return any(_norm((p[va.index(x)], p[va.index(y)]) for x, y in ea) == eb
               for p in itertools.permutations(vb))


def read_g(path) -> list[tuple[int, int]]:
    """The edges of a T-DFS ``.g`` pattern file (``e U V LABEL`` lines)."""
    with open(path) as fh:
        return [tuple(map(int, line.split()[1:3])) for line in fh if line.startswith("e ")]

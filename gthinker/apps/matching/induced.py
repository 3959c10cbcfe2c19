"""Induced matching of one query, from the non-induced counts of its supergraphs.

An induced embedding of a query ``Q`` maps its vertices injectively to data vertices so
that a pair of query vertices is adjacent exactly when its image is: the query's
non-edges must be non-edges of the data too. For a map ``f`` let ``D(f)`` be the query
pairs whose images are data edges; a (non-induced) embedding of the query plus a set
``S`` of its non-edges is a map with ``E(Q) + S`` inside ``D(f)``, and an induced
embedding one with ``D(f) = E(Q)``. By inclusion-exclusion over ``S``::

    induced(Q) = sum over sets S of non-edges of (-1)^|S| embeddings(Q + S)

The graphs ``Q + S`` fall into a few isomorphism classes (for labeled queries, maps that
keep labels), so the sum needs one non-induced count per class with a nonzero
coefficient, by whatever engine counts that shape best (cliques, formulas, the search).
A query with more than :data:`MAX_NON_EDGES` non-edges is refused (its classes would be
too many counts).

>>> [(g.num_edges, c) for g, c in supergraphs(_path3())]  # 3-path: itself, minus triangles
[(2, 1), (3, -1)]
"""

from __future__ import annotations

import itertools

import numpy as np

import gthinker

__all__ = ["MAX_NON_EDGES", "supergraphs", "induced_embeddings"]

#: The most non-edges a query matched induced may have (2**MAX_NON_EDGES sets of them).
MAX_NON_EDGES = 10
#: Queries of more vertices than this are not grouped by isomorphism class (too many
#: permutations): each set of non-edges is then counted on its own.
_GROUP_UPTO = 7


def _path3():
    return gthinker.Graph.from_edges([(0, 1), (1, 2)])


def _pairs(k: int):
    return [(a, b) for a in range(k) for b in range(a + 1, k)]


def _canonical_masks(k: int, labels, masks: np.ndarray) -> np.ndarray:
    """For each edge set (a bitmask over the pairs of ``k`` vertices), the smallest mask
    of its images under the label-keeping vertex permutations: equal for isomorphic
    graphs."""
    pairs = _pairs(k)
    index = {p: i for i, p in enumerate(pairs)}
    perms = [p for p in itertools.permutations(range(k))
             if labels is None or all(labels[p[i]] == labels[i] for i in range(k))]
    image = np.array([[index[tuple(sorted((p[a], p[b])))] for a, b in pairs] for p in perms],
                     np.int64)  # (perms, pairs): where pair j goes
    weights = np.left_shift(np.int64(1), image)
    bits = ((masks[:, None] >> np.arange(len(pairs), dtype=np.int64)) & 1).astype(bool)
    best = np.empty(masks.size, np.int64)
    for i in range(masks.size):
        best[i] = weights[:, bits[i]].sum(axis=1).min()
    return best


def supergraphs(query: gthinker.Graph) -> list[tuple[gthinker.Graph, int]]:
    """``(graph, coefficient)``: one graph of each isomorphism class of the query plus a
    set of its non-edges (the query itself first), and the sum of ``(-1)^|S|`` over the
    sets ``S`` of that class; classes whose sum is 0 left out. ValueError for a query
    with more than :data:`MAX_NON_EDGES` non-edges."""
    k = query.num_vertices
    pairs = _pairs(k)
    have = {(int(a), int(b)) for a in range(k) for b in query.neighbors(a) if a < b}
    missing = [i for i, p in enumerate(pairs) if p not in have]
    if len(missing) > MAX_NON_EDGES:
        raise ValueError(f"induced matching takes queries of at most {MAX_NON_EDGES} "
                         f"non-edges (vertex pairs without an edge); this one has "
                         f"{len(missing)}")
    base = sum(1 << i for i, p in enumerate(pairs) if p in have)
    subsets = []
    for r in range(len(missing) + 1):
        for extra in itertools.combinations(missing, r):
            subsets.append((base | sum(1 << i for i in extra), (-1) ** r))
    masks = np.array([m for m, _ in subsets], np.int64)
    labels = None if query.labels is None else query.labels.tolist()
    keys = (_canonical_masks(k, labels, masks) if k <= _GROUP_UPTO
            else masks)
    classes: dict[int, list] = {}
    for (mask, sign), key in zip(subsets, keys.tolist(), strict=True):
        entry = classes.setdefault(key, [mask, 0])
        entry[1] += sign
    out = []
    for mask, coefficient in classes.values():
        if coefficient == 0:
            continue
        edges = [pairs[i] for i in range(len(pairs)) if mask >> i & 1]
        g = gthinker.Graph.from_edges(np.array(edges, np.int64).reshape(-1, 2), num_vertices=k,
                                      labels=query.labels)
        out.append((g, coefficient))
    return out


def induced_embeddings(query: gthinker.Graph, embeddings) -> int:
    """The induced embeddings of ``query``: ``embeddings(graph)`` counts the
    (non-induced) embeddings of one of :func:`supergraphs` in the data graph."""
    return sum(c * int(embeddings(g)) for g, c in supergraphs(query))

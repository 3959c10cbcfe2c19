"""Named query patterns, and query graphs from a name, a file or a graph.

Shared by the matching apps (:mod:`gthinker.apps.sm`, :mod:`gthinker.apps.gsword`,
:mod:`gthinker.apps.count`) through :func:`as_query`.
"""

from __future__ import annotations

import os
import re

import numpy as np

import gthinker

__all__ = ["matched", "PATTERNS", "as_query", "is_pattern", "pattern", "portable_query"]

#: The patterns known by name, as edge lists (the k-vertex families, k-clique, k-path
#: and k-star, are built on demand). With those families they name every connected
#: graph of 3, 4 and 5 vertices (the motifs of :mod:`gthinker.apps.count.motifs`); the
#: comment after each 5-vertex one is its id in networkx's graph atlas.
PATTERNS = {
    "triangle": [(0, 1), (1, 2), (0, 2)],
    "4-cycle": [(0, 1), (1, 2), (2, 3), (3, 0)],
    "diamond": [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)],
    "tailed-triangle": [(0, 1), (1, 2), (0, 2), (2, 3)],
    "house": [(0, 1), (1, 2), (2, 3), (3, 0), (2, 4), (3, 4)],  # G43
    "fork": [(0, 4), (1, 3), (2, 3), (3, 4)],  # G30: a 3-star with one leg made longer
    "cricket": [(0, 4), (1, 4), (2, 3), (2, 4), (3, 4)],  # G34: two pendants at one corner
    "bull": [(0, 1), (0, 2), (0, 4), (1, 2), (2, 3)],  # G35: pendants at two corners
    "long-tailed-triangle": [(0, 4), (1, 2), (1, 3), (2, 3), (3, 4)],  # G36: a 2-edge tail
    "banner": [(0, 1), (1, 3), (1, 4), (2, 3), (2, 4)],  # G37: a 4-cycle with a pendant
    "5-cycle": [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)],  # G38
    "dart": [(0, 1), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4)],  # G40: pendant at a diagonal end
    "kite": [(0, 1), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)],  # G41: pendant at a tip
    "bowtie": [(0, 1), (0, 4), (1, 4), (2, 3), (2, 4), (3, 4)],  # G42: two triangles, one vertex
    "K2,3": [(0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4)],  # G44
    "tailed-4-clique": [(0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)],  # G45
    "book": [(0, 3), (0, 4), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)],  # G46: 3 triangles, 1 edge
    "gem": [(0, 1), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (3, 4)],  # G47: a 4-path and a hub
    "4-wheel-minus-spoke": [(0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 4)],  # G48
    "4-clique-wedge": [(0, 1), (0, 3), (0, 4), (1, 3), (1, 4), (2, 3), (2, 4),
                       (3, 4)],  # G49: a 4-clique and a vertex joined to two of it
    "4-wheel": [(0, 1), (0, 3), (0, 4), (1, 2), (1, 4), (2, 3), (2, 4), (3, 4)],  # G50
    "5-clique-minus-edge": [(0, 1), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4),
                            (3, 4)],  # G51
}
_FAMILY = re.compile(r"^(\d+)-(clique|path|star)$")


def pattern(name: str) -> gthinker.Graph:
    """A named, unlabeled query: a name of :data:`PATTERNS` (``triangle``,
    ``4-cycle``, ``diamond``, ``tailed-triangle``, ``house``, ...), or ``k-clique``,
    ``k-path``, ``k-star`` (each with k vertices: a k-star is a centre and k - 1
    leaves)."""
    if name in PATTERNS:
        edges = PATTERNS[name]
    else:
        m = _FAMILY.match(name)
        if not m:
            raise ValueError(
                f"unknown query pattern {name!r} (and no such file): use one of "
                f"{', '.join(PATTERNS)}, or k-clique, k-path, k-star (k vertices, k >= 2), "
                "or a query graph file")
        k, kind = int(m.group(1)), m.group(2)
        if k < 2:
            raise ValueError(f"query pattern {name!r} needs k >= 2 vertices")
        if kind == "clique":
            edges = [(a, b) for a in range(k) for b in range(a + 1, k)]
        elif kind == "path":
            edges = [(a, a + 1) for a in range(k - 1)]
        else:
            edges = [(0, a) for a in range(1, k)]
    return gthinker.Graph.from_edges(np.array(edges, np.int64))


def is_pattern(name: str) -> bool:
    """True if ``name`` names a pattern of :func:`pattern`."""
    return name in PATTERNS or _FAMILY.match(name) is not None


def as_query(query) -> gthinker.Graph:
    """A query graph from a pattern name, a path, or anything :func:`gthinker.as_graph` takes."""
    if isinstance(query, str) and is_pattern(query):
        return pattern(query)
    if isinstance(query, str) and not os.path.exists(query) and os.sep not in query \
            and "." not in query:  # neither a file nor a pattern: say which patterns exist
        return pattern(query)  # raises, listing them
    return gthinker.as_graph(query)


def portable_query(query):
    """A query as it travels in a request (to cluster nodes, where the path may not exist):
    a name that is no file as it is, anything else (a file, a graph) as its graph."""
    if isinstance(query, str) and not os.path.exists(query):
        return query
    return as_query(query)


def matched(induced: bool, labels: str = "") -> str:
    """How a count matched, as its output line says it: ``"non-induced"`` or
    ``"induced"``, and what became of the labels when a graph had any."""
    how = "induced" if induced else "non-induced"
    return how + (f"; labels {labels}" if labels else "")

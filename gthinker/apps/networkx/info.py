"""What NetworkX reads about the backend while it imports (entry point
``networkx.backend_info``): the functions, their notes, the default config.

This module must not import networkx: NetworkX calls :func:`get_info` in the
middle of its own import.
"""

from __future__ import annotations

#: The functions the backend implements, with the note NetworkX adds to each
#: function's docstring. :mod:`gthinker.apps.networkx.interface` checks that these
#: are exactly the functions registered.
FUNCTIONS = {
    "find_cliques": "Streams the cliques while gthinker's workers search (all cores).",
    "find_cliques_recursive": "The same search as find_cliques (no recursion).",
    "enumerate_all_cliques": "One gthinker k-clique listing per size, each size sorted "
                             "as NetworkX orders it.",
    "node_clique_number": "One maximal-clique pass for all nodes; a single node searches "
                          "only its neighbourhood. Falls back with given cliques.",
    "triangles": "Per-vertex triangle counts of gthinker's count app.",
    "clustering": "Unweighted, undirected graphs (falls back otherwise).",
    "transitivity": "Undirected simple graphs (falls back otherwise).",
    "average_clustering": "Unweighted, undirected graphs (falls back otherwise).",
}

#: ``nx.config.backends.gthinker``: ``threads`` (CPU workers; None: all cores)
#: and ``min_edges`` (with automatic dispatch, graphs with fewer edges stay with
#: NetworkX, which is faster there; ``backend="gthinker"`` always runs here).
DEFAULT_CONFIG = {"threads": None, "min_edges": 2000}


def get_info() -> dict:
    """The backend's metadata, in the form NetworkX documents for ``backend_info``."""
    return {
        "backend_name": "gthinker",
        "project": "gthinker",
        "package": "gthinker",
        "short_summary": "Parallel clique enumeration and triangle counting (C++ core, "
                         "Numba tasks).",
        "functions": {name: {"additional_docs": doc} for name, doc in FUNCTIONS.items()},
        "default_config": dict(DEFAULT_CONFIG),
    }


def setting(key: str):
    """``nx.config.backends.gthinker[key]``, or its default where NetworkX holds
    no config for the backend (one registered by hand, not by entry points)."""
    import networkx as nx

    config = nx.config.backends.get("gthinker") or {}
    return config.get(key, DEFAULT_CONFIG[key])

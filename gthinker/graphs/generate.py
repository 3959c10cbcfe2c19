"""Seeded, reproducible synthetic graphs, and the ``gthinker generate`` command.

All generators return a :class:`gthinker.graphs.graph.Graph` whose vertices are
``0 .. n-1`` (isolated vertices included). The same arguments and seed
always give the same graph (for a given NumPy/Numba version).

Generators
----------
rmat(scale, edge_factor=16, a=0.57, b=0.19, c=0.19, seed=0)
    Recursive-matrix (R-MAT / Graph500-style, without vertex permutation).
gnp(n, p, seed=0)
    Erdos-Renyi G(n, p).
powerlaw_cluster(n, m, p, seed=0)
    Holme-Kim power-law graph with tunable clustering (the algorithm of
    ``networkx.powerlaw_cluster_graph``), compiled with Numba.
shaped(vertices, edges, max_degree, ..., seed=0)
    A graph of a given size, edge count, largest degree and clustering: Chung-Lu
    on power-law weights with a hub, anchor edges and closures of random
    neighbourhoods; bipartite and folded bipartite too (:mod:`gthinker.graphs.model`).
preset(name, scale=1.0, seed=0)
    :func:`shaped` graphs in the shapes of the seed paper's Table I graphs
    (:data:`PRESETS`; ``docs/generating.md``).
label_edges(graph, count, skew=0.3, seed=0, directed=False)
    Any of them with random edge labels 1 .. count of a skewed frequency (label 1 on a share
    ``skew`` of the edges, as ``rdf:type``), and directions if asked.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from gthinker import compiler, options
from gthinker.graphs import edges as graph_edges
from gthinker.graphs import model as shaped_model
from gthinker.graphs.graph import Graph
from gthinker.graphs.shapes import (
    FULL_SCALE,
    MAX_CLOSURE,
    MAX_GROUP,
    MAX_VERTICES,
    PRESETS,
    SHAPED_DEFAULTS,
    Model,
    Preset,
    Side,
    check_count,
    check_number,
)

__all__ = ["gnp", "powerlaw_cluster", "rmat", "shaped", "preset", "label_edges", "Preset",
           "PRESETS",
           "SHAPED_DEFAULTS", "MAX_CLOSURE", "MAX_GROUP"]

_MAX_N = MAX_VERTICES
_RMAT_CHUNK = 1 << 22


# ---------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------


@compiler.jit("graph generators")
def _rmat_kernel(rng, scale, m, ta, tab, tabc):
    """``m`` R-MAT pairs; thresholds are cumulative probabilities times 2**16.

    Each uniform double supplies 48 random bits, used as three 16-bit
    uniforms (one per recursion level), to save random-number calls.
    """
    u = np.empty(m, dtype=np.int64)
    v = np.empty(m, dtype=np.int64)
    for k in range(m):
        x = 0
        y = 0
        bits = 0
        left = 0
        for _ in range(scale):
            if left == 0:
                bits = np.int64(rng.random() * 281474976710656.0)  # 2**48
                left = 3
            r = bits & 0xFFFF
            bits >>= 16
            left -= 1
            x <<= 1
            y <<= 1
            if r >= tab:
                x |= 1
                if r >= tabc:
                    y |= 1
            elif r >= ta:
                y |= 1
        u[k] = x
        v[k] = y
    return u, v


@compiler.jit("graph generators")
def _randint(rng, k):
    i = int(rng.random() * k)
    return i if i < k else k - 1


@compiler.jit("graph generators")
def _holme_kim(rng, n, m, p):
    """Edges of networkx.powerlaw_cluster_graph(n, m, p) (same algorithm)."""
    max_e = m * (n - m)
    eu = np.empty(max_e, dtype=np.int64)
    ev = np.empty(max_e, dtype=np.int64)
    ne = 0
    head = np.full(n, -1, dtype=np.int64)
    nxt = np.empty(2 * max_e, dtype=np.int64)
    to = np.empty(2 * max_e, dtype=np.int64)
    na = 0
    repeated = np.empty(m + 2 * max_e, dtype=np.int64)
    for i in range(m):
        repeated[i] = i
    nrep = m
    adj_stamp = np.full(n, -1, dtype=np.int64)  # == source: adjacent to source
    pick_stamp = np.full(n, -1, dtype=np.int64)
    targets = np.empty(m, dtype=np.int64)
    for source in range(m, n):
        # m distinct targets drawn from the repeated-nodes list
        nt = 0
        while nt < m:
            x = repeated[_randint(rng, nrep)]
            if pick_stamp[x] != source:
                pick_stamp[x] = source
                targets[nt] = x
                nt += 1
        count = 0
        target = -1
        while count < m:
            new = -1
            if count > 0 and rng.random() < p:
                # triad formation: a neighbour of target not yet linked to source
                cnt = 0
                e = head[target]
                while e >= 0:
                    w = to[e]
                    if w != source and adj_stamp[w] != source:
                        cnt += 1
                    e = nxt[e]
                if cnt > 0:
                    pick = _randint(rng, cnt)
                    e = head[target]
                    while e >= 0:
                        w = to[e]
                        if w != source and adj_stamp[w] != source:
                            if pick == 0:
                                new = w
                                break
                            pick -= 1
                        e = nxt[e]
            if new < 0:
                nt -= 1
                new = targets[nt]
                target = new
            if adj_stamp[new] != source:
                adj_stamp[new] = source
                eu[ne] = source
                ev[ne] = new
                ne += 1
                to[na] = new
                nxt[na] = head[source]
                head[source] = na
                na += 1
                to[na] = source
                nxt[na] = head[new]
                head[new] = na
                na += 1
            repeated[nrep] = new
            nrep += 1
            count += 1
        for _ in range(m):
            repeated[nrep] = source
            nrep += 1
    return eu[:ne], ev[:ne]


# ---------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------




def label_edges(graph: Graph, count: int | None, skew: float = graph_edges.DEFAULT_SKEW,
                seed: int = 0, directed: bool = False) -> Graph:
    """``graph`` with one of ``count`` edge labels drawn per edge, label 1 on a share
    ``skew`` of them and the others uniform (:func:`gthinker.graphs.edges.skewed_labels`;
    ``count`` None: no labels); with ``directed``, each edge pointing one way or the
    other at random. The same arguments give the same graph.

    >>> g = label_edges(rmat(8, seed=1), 4, skew=0.5, seed=1)
    >>> g.edge_labels is not None, g.directed
    (True, False)
    """
    src, dst, _ = graph_edges.arcs(graph)
    labels = None if count is None else graph_edges.skewed_labels(src.size, count, skew, seed)
    if directed:
        flip = np.random.default_rng([seed, 0xD1]).random(src.size) < 0.5
        src, dst = np.where(flip, dst, src), np.where(flip, src, dst)
    out = Graph.from_pairs(src, dst, graph.num_vertices, ids=graph.ids, labels=graph.labels,
                           source=graph.report.source, edge_labels=labels, directed=directed)
    return out


def _finish(g: Graph, source: str) -> Graph:
    g.report.source = source
    return g


def rmat(scale, edge_factor=16, a=0.57, b=0.19, c=0.19, seed=0) -> Graph:
    """R-MAT graph on ``2**scale`` vertices.

    ``edge_factor * 2**scale`` vertex pairs are drawn: each pair descends
    ``scale`` levels of the adjacency matrix, choosing the top-left,
    top-right, bottom-left or bottom-right quadrant with probabilities
    ``a, b, c, d = 1 - a - b - c`` (resolved to multiples of 2**-16).
    Self-loops and repeated pairs are dropped (see ``graph.report``), so
    the graph has somewhat fewer edges than pairs drawn. Vertex ids are
    ``0 .. 2**scale - 1``, isolated vertices included; a larger ``a`` gives
    a more skewed degree distribution with high-degree vertices near id 0.

    Parameters
    ----------
    scale : int
        ``1 <= scale <= 30``.
    edge_factor : int
        Pairs drawn per vertex, ``>= 0``.
    a, b, c : float
        Quadrant probabilities; each ``>= 0`` and ``a + b + c <= 1``.
    seed : int
        Random seed, an integer from 0 to 2**63 - 1.

    Returns
    -------
    Graph

    Raises
    ------
    ValueError
        Parameters out of range.
    """
    if isinstance(scale, bool) or not isinstance(scale, (int, np.integer)) or not 1 <= scale <= 30:
        raise ValueError(f"scale must be an integer in 1..30, got {scale!r}")
    if (
        isinstance(edge_factor, bool)
        or not isinstance(edge_factor, (int, np.integer))
        or edge_factor < 0
    ):
        raise ValueError(f"edge_factor must be a non-negative integer, got {edge_factor!r}")
    probs = {"a": a, "b": b, "c": c}
    for name, val in probs.items():
        if not isinstance(val, (int, float, np.floating, np.integer)) or not math.isfinite(val):
            raise ValueError(f"{name} must be a number, got {val!r}")
        if val < 0:
            raise ValueError(f"{name} must be >= 0, got {val}")
    d = 1.0 - a - b - c
    if d < -1e-12:
        raise ValueError(f"a + b + c must be <= 1 (d = 1 - a - b - c >= 0), got {a + b + c:g}")
    seed = options.seed("seed", seed)
    n = 1 << int(scale)
    m = int(edge_factor) * n
    rng = np.random.default_rng(seed)
    thresholds = [round(x * 65536) for x in (a, a + b, a + b + c)]
    # the pairs as int32 (ids < 2**30), chunk by chunk: 8 bytes a pair until the CSR
    u = np.empty(m, np.int32)
    v = np.empty(m, np.int32)
    for start in range(0, m, _RMAT_CHUNK):
        cu, cv = _rmat_kernel(rng, int(scale), min(_RMAT_CHUNK, m - start), *thresholds)
        u[start:start + cu.size] = cu
        v[start:start + cv.size] = cv
        del cu, cv
    g = Graph.from_pairs(u, v, n)
    return _finish(g, f"rmat(scale={scale}, edge_factor={edge_factor}, a={a}, b={b}, "
                      f"c={c}, seed={seed})")


def _decode_pairs(k):
    """Map pair indices ``k`` in ``[0, n(n-1)/2)`` to ``(i, j)`` with ``j < i``."""
    i = np.floor((1.0 + np.sqrt(1.0 + 8.0 * k.astype(np.float64))) / 2.0).astype(np.int64)
    for _ in range(2):
        i -= (i * (i - 1) // 2 > k).astype(np.int64)
        i += ((i + 1) * i // 2 <= k).astype(np.int64)
    j = k - i * (i - 1) // 2
    return i, j


def _sample_distinct(rng, total, count):
    """``count`` distinct integers drawn uniformly from ``[0, total)``, sorted."""
    if count == 0:
        return np.empty(0, dtype=np.int64)
    chosen = np.empty(0, dtype=np.int64)
    while chosen.size < count:
        need = count - chosen.size
        extra = rng.integers(0, total, size=int(need * 1.05) + 16, dtype=np.int64)
        # sort + mask rather than np.unique, which is much slower here (numpy 2.4)
        both = np.concatenate([chosen, extra])
        both.sort()
        mask = np.empty(both.size, dtype=bool)
        mask[0] = True
        np.not_equal(both[1:], both[:-1], out=mask[1:])
        chosen = both[mask]
    excess = chosen.size - count
    if excess:
        # dropping a uniform random subset keeps the result a uniform random set
        drop = rng.choice(chosen.size, size=excess, replace=False)
        keep = np.ones(chosen.size, dtype=bool)
        keep[drop] = False
        chosen = chosen[keep]
    return chosen


def gnp(n, p, seed=0) -> Graph:
    """Erdos-Renyi random graph G(n, p).

    The number of edges is drawn from Binomial(n(n-1)/2, p) and that many
    distinct vertex pairs are then sampled uniformly (for ``p > 1/2`` the
    non-edges are sampled instead), which gives exactly the G(n, p)
    distribution in time proportional to the number of edges.

    Parameters
    ----------
    n : int
        Number of vertices, ``0 <= n < 2**31``.
    p : float
        Edge probability, ``0 <= p <= 1``.
    seed : int
        Random seed, an integer from 0 to 2**63 - 1.

    Returns
    -------
    Graph
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 0 <= n <= _MAX_N:
        raise ValueError(f"n must be an integer in 0..2**31-1, got {n!r}")
    if not isinstance(p, (int, float, np.floating, np.integer)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be a probability in [0, 1], got {p!r}")
    seed = options.seed("seed", seed)
    n = int(n)
    total = n * (n - 1) // 2
    rng = np.random.default_rng(seed)
    count = int(rng.binomial(total, p)) if total else 0
    if count > total // 2:
        if total > 500_000_000:
            raise ValueError(f"gnp(n={n}, p={p}) would have about {count:,} edges; too dense")
        non = _sample_distinct(rng, total, total - count)
        keep = np.ones(total, dtype=bool)
        keep[non] = False
        k = np.flatnonzero(keep).astype(np.int64)
    else:
        k = _sample_distinct(rng, total, count)
    i, j = _decode_pairs(k)
    g = Graph.from_edges(np.column_stack([j, i]), num_vertices=n)
    return _finish(g, f"gnp(n={n}, p={p}, seed={seed})")


def powerlaw_cluster(n, m, p, seed=0) -> Graph:
    """Holme-Kim power-law graph with tunable clustering.

    Same algorithm as :func:`networkx.powerlaw_cluster_graph`: each new
    vertex attaches to ``m`` existing vertices by preferential attachment,
    and after each attachment, with probability ``p``, the next link instead
    closes a triangle with a neighbour of the previous target. Compiled with
    Numba (n = 100,000, m = 5 takes well under a second); the random stream
    differs from networkx's, so graphs are not identical to networkx's for
    the same seed.

    Parameters
    ----------
    n : int
        Number of vertices.
    m : int
        Edges added per new vertex, ``1 <= m <= n``.
    p : float
        Triangle-closing probability in ``[0, 1]``.
    seed : int
        Random seed, an integer from 0 to 2**63 - 1.

    Returns
    -------
    Graph
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= _MAX_N:
        raise ValueError(f"n must be an integer in 1..2**31-1, got {n!r}")
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 1 <= m <= n:
        raise ValueError(f"m must be an integer with 1 <= m <= n (n={n}), got {m!r}")
    if not isinstance(p, (int, float, np.floating, np.integer)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be a probability in [0, 1], got {p!r}")
    seed = options.seed("seed", seed)
    rng = np.random.default_rng(seed)
    u, v = _holme_kim(rng, int(n), int(m), float(p))
    g = Graph.from_edges(np.column_stack([u, v]), num_vertices=int(n))
    return _finish(g, f"powerlaw_cluster(n={n}, m={m}, p={p}, seed={seed})")


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Shaped graphs and the presets
# ---------------------------------------------------------------------------

def shaped(vertices, edges, max_degree, *, top=None, floor=SHAPED_DEFAULTS["floor"],
           closure=SHAPED_DEFAULTS["closure"], group=SHAPED_DEFAULTS["group"], bipartite=None,
           top2=None, folded=False, seed=0, progress: Callable | None = None) -> Graph:
    """A seeded graph with ``vertices`` vertices, exactly ``edges`` edges, a hub of
    exactly ``max_degree`` neighbours and heavy-tailed degrees, a ``closure`` share
    of its edges closing random neighbourhoods (clustering); or a bipartite one.

    The model (:mod:`gthinker.graphs.model`): the hub's neighbours are drawn by
    weight; every other vertex gets one edge (none is isolated); Chung-Lu edges join
    vertices drawn by weight, the non-hub vertices' weights following a power law
    from ``top`` down to ``floor`` whose exponent is solved so that the edges come
    out; then closures pick a vertex and ``group`` of its neighbours and join them
    all (``group=2``: a wedge closed into a triangle). The same arguments and seed
    give the same graph on any number of threads.

    Parameters
    ----------
    vertices : int
        Vertices (of the first side, for a bipartite graph), at least 2.
    edges : int
        Edges, exactly (loops and repeats are never kept).
    max_degree : int
        The hub's degree, exactly (0: no hub). The other vertices stay below it
        unless ``top`` or the closures push them past it.
    top : float, optional
        The largest weight of a non-hub vertex (about its expected degree, less its
        closures); default ``max_degree / 2``.
    floor : float
        The smallest weight (a vertex's expected degree beyond its anchor edge).
    closure : float
        The share of the edges placed as closures, in ``[0, 0.9]``.
    group : int
        Neighbours joined by one closure, 2 to 16.
    bipartite : int, optional
        The size of a second side: every edge then joins the two sides, and the hub
        is on the second side (its neighbours on the first).
    top2 : float, optional
        The second side's ``top`` (default ``max_degree / 2``).
    folded : bool
        Bipartite only: number both sides from 0, so that the graph has
        ``max(vertices, bipartite)`` vertices and a vertex may be on both (a KONECT
        bipartite file read as one graph).
    seed : int
        Random seed, from 0 to 2**63 - 1.
    progress : callable, optional
        Called with a line of text per step.

    Returns
    -------
    Graph
        Vertices ``0 .. n-1``; ``graph.report.source`` names the call.

    Raises
    ------
    ValueError
        An argument out of range, or a combination no graph has (too few edges for
        one per vertex, a hub larger than the other side, ...).

    Examples
    --------
    >>> g = shaped(2000, 20000, 300, closure=0.2, seed=1)
    >>> g.num_vertices, g.num_edges, g.max_degree
    (2000, 20000, 300)
    """
    call = (f"shaped(vertices={vertices}, edges={edges}, max_degree={max_degree}, top={top}, "
            f"floor={floor}, closure={closure}, group={group}, bipartite={bipartite}, "
            f"top2={top2}, folded={folded}, seed={seed})")
    model = _shaped_model(vertices, edges, max_degree, top, floor, closure, group, bipartite,
                          top2, folded)
    seed = options.seed("seed", seed)
    return _finish(shaped_model.build(model, seed, progress), call)


def _shaped_model(vertices, edges, max_degree, top, floor, closure, group, bipartite, top2,
                  folded) -> Model:
    vertices = check_count("vertices", vertices, 2)
    edges = check_count("edges", edges, 1, 2**31 - 1)
    max_degree = check_count("max_degree", max_degree, 0)
    floor = check_number("floor", floor, 0.0, low_open=True)
    closure = check_number("closure", closure, 0.0, MAX_CLOSURE)
    group = check_count("group", group, 2, MAX_GROUP)
    hubs = (max_degree,) if max_degree else ()
    half = max(max_degree / 2, floor)
    top = half if top is None else check_number("top", top, floor)
    if bipartite is None:
        if folded or top2 is not None:
            raise ValueError("folded and top2 describe a bipartite graph: give bipartite too")
        if max_degree > vertices - 2:
            raise ValueError(f"max_degree {max_degree:,} needs at least {max_degree + 2:,} "
                             f"vertices, got {vertices:,}")
        return Model(edges, (Side(vertices, top, floor, hubs),), closure=closure, group=group)
    bipartite = check_count("bipartite", bipartite, 2)
    top2 = half if top2 is None else check_number("top2", top2, floor)
    if closure:
        raise ValueError("closures join two neighbours of a vertex, which a bipartite graph "
                         "keeps on one side: give closure=0 with bipartite")
    if max_degree > vertices:
        raise ValueError(f"the hub (on the second side) has its {max_degree:,} neighbours on "
                         f"the first side, which has {vertices:,} vertices")
    if vertices + (0 if folded else bipartite) > _MAX_N:
        raise ValueError("more than 2**31 - 1 vertices")
    sides = (Side(vertices, top, floor), Side(bipartite, top2, floor, hubs))
    return Model(edges, sides, folded=bool(folded))


def preset(name: str, scale: float = FULL_SCALE, seed: int = 0,
           progress: Callable | None = None) -> Graph:
    """The graph of preset ``name`` (:data:`PRESETS`) at ``scale`` (0 < scale <= 1:
    vertices, edges and hub degrees times ``scale``; :meth:`Preset.model`).

    >>> g = preset("soc-pokec", scale=0.001, seed=0)
    >>> g.num_vertices, g.num_edges
    (1633, 22302)
    """
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; use one of {', '.join(PRESETS)}")
    seed = options.seed("seed", seed)
    model = PRESETS[name].model(scale)
    graph = shaped_model.build(model, seed, progress)
    return _finish(graph, f"preset({name!r}, scale={scale}, seed={seed})")

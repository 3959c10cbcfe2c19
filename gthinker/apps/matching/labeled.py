"""Matching that honours edge labels, directions and the semantics SGSI names, on the
CPU workers.

The search runs on the data graph's *keyed rows* (:func:`gthinker.graphs.edges.keyed_rows`):
each row sorted by ``(key, neighbour)``, a key being an edge label and, in a directed
graph, a direction. A query edge from an earlier position ``b`` to position ``d`` is a
*constraint* ``(b, key)``: the candidates of ``d`` are the neighbours of ``M[b]`` under
that key, one sorted run of ``M[b]``'s row found by two binary searches (SGSI's PCSR:
neighbours by label without scanning the row), intersected over ``d``'s constraints
(the shortest run first), then kept by the vertex label, and by the semantics:

``isomorphism`` (the default)
    An injective map of the query's vertices that keeps vertex labels and maps every
    query edge to a data edge of the same label and direction (non-induced, as
    :mod:`gthinker.apps.sm` counts). A data vertex must also have, for each key, at least
    as many neighbours under it as the query vertex has (a filter, not a rule).
``homomorphism``
    The same without injectivity: query vertices may share a data vertex (SPARQL's
    semantics).
``edge-isomorphism``
    A homomorphism that maps distinct query edges to distinct data edges.

Counts are embeddings; distinct subgraphs (``unique``) are embeddings divided by
``|Aut(q)|`` (isomorphism only), the automorphisms counted by the same search of the
query in itself. A task that runs past the time budget hands its unexplored branches
to the other workers as partial matches ``[k, M[0], ..., M[k-1]]``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

import gthinker
from gthinker.extending import intersect, keyed_rows, lower_bound, put

from .shared_options import ISOMORPHISM, SEMANTICS, semantics_field

__all__ = ["SEMANTICS", "ISOMORPHISM", "semantics_field", "say_once", "LabeledPlan",
           "LabeledMatching", "needs_labeled", "labeled_plan", "run_labeled", "effective_graphs",
           "edges_free"]


# The params' header: query size, semantics (index in SEMANTICS), whether a limit
# claims matches, then where each table starts.
(H_NQ, H_SEM, H_LIMITED, H_DIRECTED, H_ORDER, H_CPTR, H_CPOS, H_CKEY, H_QLAB, H_FPTR, H_FKEY,
 H_FNUM, H_KEYS, H_CAP, H_HEADER) = range(15)


def say_once(message: str) -> None:
    """``message`` on stderr, once per process."""
    if message not in _said:
        _said.add(message)
        print(f"gthinker: {message}", file=sys.stderr, flush=True)


_said: set = set()


def needs_labeled(data: gthinker.Graph, query: gthinker.Graph, semantics: str) -> bool:
    """Whether matching ``query`` in ``data`` needs this module's search: edge labels or
    directions on both sides, or semantics other than isomorphism."""
    data, query = effective_graphs(data, query)
    return semantics != ISOMORPHISM or not (data.plain and query.plain)


def effective_graphs(data: gthinker.Graph, query: gthinker.Graph):
    """``(data, query)`` as they are matched: what only the data graph has is dropped
    (a query without edge labels matches edges of any label; an undirected query without
    edge labels matches the directed data graph's undirected skeleton), and edge labels
    that are one and the same label on both sides are dropped too (they change nothing).

    Raises
    ------
    ValueError
        A query with edge labels or directions the data graph does not have, or an
        undirected query with edge labels on a directed data graph.
    """
    if query.directed and not data.directed:
        raise ValueError("the query is directed and the data graph is not")
    if query.edge_labels is not None and data.edge_labels is None:
        raise ValueError("only the query has edge labels: give both graphs edge labels, or "
                         "neither")
    if data.directed and not query.directed:
        if query.edge_labels is not None:
            raise ValueError("the data graph is directed and the query is not: give the "
                             "query directions (a .g file, or an edge list read as directed)")
        data = _without(data, edge_labels=True, directions=True)
    if query.edge_labels is None and data.edge_labels is not None:
        data = _without(data, edge_labels=True)
    if query.edge_labels is not None and _one_label(query) == _one_label(data) is not None:
        data = _without(data, edge_labels=True)
        query = _without(query, edge_labels=True)
    return data, query


def _one_label(g) -> int | None:
    lab = g.edge_labels
    if lab is None or not lab.size or lab.min() != lab.max():
        return None
    return int(lab[0])


def _without(g: gthinker.Graph, edge_labels=False, directions=False) -> gthinker.Graph:
    """``g`` without its edge labels or directions (the same arrays otherwise)."""
    def build(g):
        return gthinker.Graph(g.indptr, g.indices, ids=g.ids, labels=g.labels, report=g.report,
                              node_names=g.node_names,
                              edge_labels=None if edge_labels else g.edge_labels,
                              directions=None if directions else g.directions)
    return g.derived(("without", edge_labels, directions), build)


@dataclass
class LabeledPlan:
    """The search's plan: the matching order, the params the compiled search reads, and
    the graph it runs on (the data graph's keyed rows, its vertex labels and ids)."""

    order: list
    params: np.ndarray
    graph: gthinker.Graph
    semantics: str


def _keyed(data: gthinker.Graph):
    """The task graph (keyed rows as its rows) and the keys, kept with ``data``."""
    def build(g):
        kptr, nb, keys = keyed_rows(g)
        task = gthinker.Graph(kptr, nb, ids=g.ids, labels=g.labels, report=g.report,
                              node_names=g.node_names)
        return task, keys
    return data.derived("keyed rows", build)


def _query_keys(query: gthinker.Graph) -> list[dict]:
    """Per query vertex u, ``{w: [keys of the edges between u and w, seen from w]}``."""
    kptr, nb, keys = keyed_rows(query)
    out = [dict() for _ in range(query.num_vertices)]
    for w in range(query.num_vertices):
        for i in range(kptr[w], kptr[w + 1]):
            out[int(nb[i])].setdefault(w, []).append(int(keys[i]))
    return out


def matching_order(query: gthinker.Graph) -> list[int]:
    """Connected order: the vertex of most neighbours first, then each time the vertex
    with the most neighbours already placed (ties: more neighbours, then smaller id)."""
    nq = query.num_vertices
    deg = query.degrees()
    order = [int(np.argmax(deg))]
    placed = np.zeros(nq, bool)
    placed[order[0]] = True
    while len(order) < nq:
        best, score = -1, None
        for u in range(nq):
            if placed[u]:
                continue
            back = int(placed[query.neighbors(u)].sum())
            s = (back, int(deg[u]), -u)
            if back and (score is None or s > score):
                best, score = u, s
        if best < 0:
            raise ValueError("the query graph is disconnected: match its components separately")
        order.append(best)
        placed[best] = True
    return order


def labeled_plan(data: gthinker.Graph, query: gthinker.Graph, semantics: str = ISOMORPHISM,
                 limited: bool = False) -> LabeledPlan:
    """The plan of matching ``query`` in ``data`` (both as :func:`effective_graphs` leaves
    them) under ``semantics``."""
    if semantics not in SEMANTICS:
        raise ValueError(f"unknown semantics {semantics!r}; use one of {', '.join(SEMANTICS)}")
    task, keys = _keyed(data)
    order = matching_order(query)
    pos = {u: i for i, u in enumerate(order)}
    qkeys = _query_keys(query)
    cpos, ckey, cptr = [], [], [0]
    fkey, fnum, fptr = [], [], [0]
    for d, u in enumerate(order):
        for w, ks in sorted(qkeys[u].items(), key=lambda item: pos[item[0]]):
            if pos[w] < d:
                for k in ks:
                    cpos.append(pos[w])
                    ckey.append(k)
        cptr.append(len(cpos))
        counts: dict = {}
        for ks in qkeys[u].values():  # the keys of u's edges seen from u
            for k in ks:
                mine = k ^ 1 if query.directed else k
                counts[mine] = counts.get(mine, 0) + 1
        for k in sorted(counts):
            fkey.append(k)
            fnum.append(counts[k])
        fptr.append(len(fkey))
    qlab = [] if query.labels is None else [int(query.labels[u]) for u in order]
    deg = np.diff(task.indptr)
    cap = int(deg.max()) if deg.size else 0
    tables = [order, cptr, cpos, ckey, qlab, fptr, fkey, fnum, keys]
    head = np.zeros(H_HEADER, np.int64)
    head[H_NQ], head[H_SEM], head[H_LIMITED] = len(order), SEMANTICS.index(semantics), limited
    head[H_CAP] = max(cap, 1)
    head[H_DIRECTED] = query.directed
    at = H_HEADER
    for slot, table in zip((H_ORDER, H_CPTR, H_CPOS, H_CKEY, H_QLAB, H_FPTR, H_FKEY, H_FNUM,
                            H_KEYS), tables, strict=True):
        head[slot] = at if len(table) else -1
        at += len(table)
    params = np.concatenate([head] + [np.asarray(t, np.int64) for t in tables])
    return LabeledPlan(order, params, task, semantics)


# ---- the compiled search ---------------------------------------------------------------


@gthinker.compiler.jit("labeled SM functions", nogil=True)
def _run(P, kptr, v, k):
    """``(lo, hi)``: the entries of ``v``'s keyed row under key ``k``."""
    off = P[H_KEYS]
    lo = lower_bound(P, off + kptr[v], off + kptr[v + 1], k)
    hi = lower_bound(P, lo, off + kptr[v + 1], k + 1)
    return lo - off, hi - off


@gthinker.compiler.jit("labeled SM functions", nogil=True)
def _fits(P, labels, kptr, d, v):
    """Whether data vertex ``v`` may take position ``d`` by itself: its label, and under
    isomorphism at least as many neighbours under each key as the query vertex."""
    if P[H_QLAB] >= 0 and labels[v] != P[P[H_QLAB] + d]:
        return False
    if P[H_SEM] != 0:
        return True
    for t in range(P[P[H_FPTR] + d], P[P[H_FPTR] + d + 1]):
        lo, hi = _run(P, kptr, v, P[P[H_FKEY] + t])
        if hi - lo < P[P[H_FNUM] + t]:
            return False
    return True


@gthinker.compiler.jit("labeled SM functions", nogil=True)
def edges_free(P, M, EA, EB, d, x, directed):
    """Edge-isomorphism: whether position ``d`` taking ``x`` maps its constraints to data
    edges no earlier query edge (nor another of its own) was mapped to. A data edge is a
    pair ``(a, b)``: from ``a`` to ``b`` (``directed``: the key's direction), else
    ``a < b``. Writes them into ``d``'s slots of ``EA``/``EB`` either way: they hold the
    edges of the last vertex tried at ``d``, the one a deeper level sees. CPU and CUDA
    (:mod:`gthinker.apps.matching.labeled_gpu` compiles it for the device)."""
    for c in range(P[P[H_CPTR] + d], P[P[H_CPTR] + d + 1]):
        y = M[P[P[H_CPOS] + c]]
        a, b = y, x
        if (P[P[H_CKEY] + c] & 1) != 0:  # an in-edge of y: from x to y
            a, b = x, y
        if directed == 0 and a > b:
            a, b = b, a
        for e in range(c):
            if EA[e] == a and EB[e] == b:
                return False
        EA[c] = a
        EB[c] = b
    return True


@gthinker.compiler.jit("labeled SM functions", nogil=True)
def _candidates(P, kptr, nb, labels, M, cand, candlen, EA, EB, d, directed):
    """cand[d]: the data vertices that may take position ``d`` after ``M[:d]``."""
    lo, hi = P[P[H_CPTR] + d], P[P[H_CPTR] + d + 1]
    best, blo, bhi = -1, 0, 0
    for c in range(lo, hi):
        a, b = _run(P, kptr, M[P[P[H_CPOS] + c]], P[P[H_CKEY] + c])
        if best < 0 or b - a < bhi - blo:
            best, blo, bhi = c, a, b
    n = bhi - blo
    put(cand[d], 0, nb[blo:bhi])
    for c in range(lo, hi):
        if n == 0:
            break
        if c != best:
            a, b = _run(P, kptr, M[P[P[H_CPOS] + c]], P[P[H_CKEY] + c])
            n = intersect(cand[d], n, nb[a:b], cand[d])
    k = 0
    for i in range(n):
        x = cand[d, i]
        if not _fits(P, labels, kptr, d, x):
            continue
        if P[H_SEM] == 0:
            used = False
            for p in range(d):
                used |= M[p] == x
            if used:
                continue
        elif P[H_SEM] == 2 and not edges_free(P, M, EA, EB, d, x, directed):
            continue
        cand[d, k] = x
        k += 1
    candlen[d] = k


@gthinker.compiler.jit("labeled SM functions", nogil=True)
def _leaves(ctx, P, M, cand, n, d):
    """Claims and lists the full matches ``M[:d] + cand[d, i]``; returns how many count."""
    if P[H_LIMITED] != 0:
        n = ctx.take(n)
    if n > 0 and ctx.emitting():
        nq = P[H_NQ]
        line = np.empty(nq, np.int32)
        for p in range(d):
            line[P[P[H_ORDER] + p]] = M[p]
        for i in range(n):
            line[P[P[H_ORDER] + d]] = cand[d, i]
            ctx.emit(line)
    return n


@gthinker.compiler.jit("labeled SM functions", nogil=True)
def _search(ctx, rec):
    """The full matches that extend ``rec`` = ``[k, M[0], ..., M[k-1]]``."""
    P = ctx.params
    kptr, nb, labels = ctx.indptr, ctx.indices, ctx.labels
    nq = P[H_NQ]
    directed = P[H_DIRECTED] != 0
    k = rec[0]
    M = np.empty(nq, np.int32)
    put(M, 0, rec[1 : 1 + k])
    ne = max(P[P[H_CPTR] + nq], 1)
    EA = np.empty(ne, np.int64)
    EB = np.empty(ne, np.int64)
    for p in range(1, k):  # the edges of the restored prefix (edge-isomorphism)
        if P[H_SEM] == 2:
            edges_free(P, M, EA, EB, p, M[p], directed)
    cand = np.empty((nq, P[H_CAP]), np.int32)
    candlen = np.zeros(nq, np.int64)
    if k == nq:
        cand[nq - 1, 0] = M[nq - 1]
        return _leaves(ctx, P, M, cand, 1, nq - 1)
    _candidates(P, kptr, nb, labels, M, cand, candlen, EA, EB, k, directed)
    if k == nq - 1:
        return _leaves(ctx, P, M, cand, candlen[k], k)
    idx = np.zeros(nq, np.int64)
    d = k
    found = 0
    while d >= k:
        if idx[d] >= candlen[d]:
            d -= 1
            continue
        if ctx.timed_out():  # every unexplored branch becomes a task
            for dd in range(k, d + 1):
                for i in range(idx[dd], candlen[dd]):
                    task = np.empty(dd + 2, np.int32)
                    task[0] = dd + 1
                    put(task, 1, M[:dd])
                    task[dd + 1] = cand[dd, i]
                    ctx.add_task(task)
            break
        x = cand[d, idx[d]]
        idx[d] += 1
        M[d] = x
        if P[H_SEM] == 2:
            edges_free(P, M, EA, EB, d, x, directed)
        nd = d + 1
        _candidates(P, kptr, nb, labels, M, cand, candlen, EA, EB, nd, directed)
        if nd == nq - 1:
            got = _leaves(ctx, P, M, cand, candlen[nd], nd)
            found += got
            if got < candlen[nd]:  # the limit is reached: the job is stopping
                break
        elif candlen[nd]:
            d = nd
            idx[d] = 0
    return found


@gthinker.compiler.jit("labeled SM functions", nogil=True)
def _compute(ctx, rec):
    ctx.count(0, _search(ctx, rec))
    return 0


@gthinker.compiler.jit("labeled SM functions", nogil=True)
def _spawn(ctx, v):
    P = ctx.params
    if not _fits(P, ctx.labels, ctx.indptr, 0, v):
        return np.empty(0, np.int32)
    out = np.empty(2, np.int32)
    out[0] = 1
    out[1] = v
    return out


class LabeledMatching(gthinker.Task):
    """The CPU task; ``params`` come from :func:`labeled_plan`."""

    counters = ("matches",)

    @staticmethod
    def spawn(ctx, v):
        return _spawn(ctx, v)

    @staticmethod
    def compute(ctx, record):
        _compute(ctx, record)


def run_labeled(p: LabeledPlan, **options) -> gthinker.JobResult:
    """Runs plan ``p`` on the CPU workers; ``options`` go to :func:`gthinker.run`."""
    return gthinker.run(LabeledMatching, p.graph, mode="cpu", params=p.params, **options)


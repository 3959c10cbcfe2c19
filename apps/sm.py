"""Subgraph matching: count (or list) the embeddings of a query graph in a data graph.

An *embedding* is an injective map of the query's vertices to data vertices
that keeps labels (when the graphs are labeled) and maps every query edge to a
data edge (non-induced matching, the convention of the subgraph-matching
literature). ``unique=True`` counts distinct subgraphs instead: embeddings
that differ only by an automorphism of the query count once, so
``embeddings == unique * |Aut(q)|``.

How the search works (all of it host-side planning, then a compiled
:class:`gthinker.Task`):

- **Candidate filtering.** ``C(u)`` holds the data vertices with u's label,
  at least u's degree, and, for every label, at least as many neighbours
  with that label as u has (neighbour-label-frequency filtering, NLF).
- **Matching order** (in the style of GraphQL/RI): first the query vertex
  with the fewest candidates per edge (``|C(u)| / deg(u)``), then again and
  again the unmatched vertex with the most already-matched neighbours; ties
  go to fewer candidates, then to the higher degree. Every vertex after the
  first has a matched neighbour (the query is connected).
- **Extension.** The candidates of the vertex at position ``d`` are the
  intersection of the neighbour lists of its matched (backward) neighbours,
  filtered by ``C(u)``, injectivity and the symmetry-breaking constraints.
  When an earlier position's backward neighbours are a subset of this one's,
  its intersection is reused and only the rest is intersected (T-DFS).
- **Symmetry breaking** (``unique``): for the query's automorphism group, a
  chain of stabilizers gives constraints ``M(a) < M(b)``
  (Grochow-Kellis); exactly one embedding per automorphism class meets them.
- **Decomposition.** A task that runs past the time budget hands every
  unexplored branch, as a partial match, to the other workers.

Records: ``[k, M[0], ..., M[k-1]]``, a partial match of the first ``k``
positions of the matching order.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field

import numpy as np

import gthinker
from gthinker.setops import intersect

from .sm_layout import (
    H_BACK,
    H_BACK_PTR,
    H_BITMAP,
    H_CAP,
    H_LESS,
    H_LESS_PTR,
    H_LIMITED,
    H_MORE,
    H_MORE_PTR,
    H_NQ,
    H_ORDER,
    H_REUSE,
    H_SRC,
    H_SRC_PTR,
    H_WORDS,
    HEADER,
)

__all__ = ["PATTERNS", "Plan", "SMResult", "SubgraphMatching", "check_query", "checked_order",
           "choose_gpu_mode", "count", "is_candidate", "is_pattern", "match", "pattern", "plan",
           "search"]

# ---- named query patterns ------------------------------------------------------------

PATTERNS = {
    "triangle": [(0, 1), (1, 2), (0, 2)],
    "4-cycle": [(0, 1), (1, 2), (2, 3), (3, 0)],
    "diamond": [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)],
    "tailed-triangle": [(0, 1), (1, 2), (0, 2), (2, 3)],
    "house": [(0, 1), (1, 2), (2, 3), (3, 0), (2, 4), (3, 4)],
}
_FAMILY = re.compile(r"^(\d+)-(clique|path|star)$")


def pattern(name: str) -> gthinker.Graph:
    """A named, unlabeled query: ``triangle``, ``4-cycle``, ``diamond``,
    ``tailed-triangle``, ``house``, or ``k-clique``, ``k-path``, ``k-star``
    (each with k vertices: a k-star is a centre and k - 1 leaves)."""
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


# ---- planning (host side) ------------------------------------------------------------


@dataclass
class Plan:
    """What the compiled search needs, packed into the job's ``params``."""

    order: np.ndarray  # query vertex at each position
    candidates: list  # per query vertex: sorted data vertices after filtering
    constraints: list  # (a, b): M(a) < M(b), query vertices (unique counting)
    automorphisms: int  # |Aut(q)|
    params: np.ndarray = field(repr=False)


def _labels(g):
    return None if g.labels is None else np.asarray(g.labels, np.int64)


def check_query(data: gthinker.Graph, query: gthinker.Graph):
    """Raises ValueError when ``query`` cannot be matched in ``data`` as given
    (empty, labeled on one side only, or not connected)."""
    nq = query.num_vertices
    if nq == 0:
        raise ValueError("the query graph is empty")
    if (data.labels is None) != (query.labels is None):
        which = "data graph" if data.labels is not None else "query"
        raise ValueError(f"only the {which} has vertex labels: give both graphs labels, or "
                         "neither")
    seen = np.zeros(nq, bool)
    stack = [0]
    seen[0] = True
    while stack:
        u = stack.pop()
        for w in query.neighbors(u):
            if not seen[w]:
                seen[w] = True
                stack.append(int(w))
    if not seen.all():
        raise ValueError(f"the query graph is disconnected ({int(seen.sum())} of {nq} "
                         "vertices reachable from vertex 0): match its components separately")


def _neighbour_label_counts(g: gthinker.Graph, labels, wanted):
    """Per vertex, the number of neighbours with each label of ``wanted``: (n, len(wanted))."""
    n = g.num_vertices
    out = np.zeros((n, len(wanted)), np.int64)
    if labels is None or not len(wanted):
        return out
    rows = np.repeat(np.arange(n), np.diff(g.indptr))
    nl = labels[g.indices]
    for j, lab in enumerate(wanted):
        out[:, j] = np.bincount(rows[nl == lab], minlength=n)
    return out


def filter_candidates(data: gthinker.Graph, query: gthinker.Graph) -> list:
    """C(u) for every query vertex u: label, degree and NLF filtering."""
    dl, ql = _labels(data), _labels(query)
    ddeg, qdeg = data.degrees(), query.degrees()
    wanted = np.unique(ql) if ql is not None else np.zeros(0, np.int64)
    dn = _neighbour_label_counts(data, dl, wanted)
    qn = _neighbour_label_counts(query, ql, wanted)
    out = []
    for u in range(query.num_vertices):
        ok = ddeg >= qdeg[u]
        if ql is not None:
            ok &= dl == ql[u]
            ok &= (dn >= qn[u]).all(axis=1)
        out.append(np.flatnonzero(ok).astype(np.int32))
    return out


def matching_order(query: gthinker.Graph, candidates) -> np.ndarray:
    nq = query.num_vertices
    deg = query.degrees()
    size = np.array([len(c) for c in candidates], np.float64)
    first = min(range(nq), key=lambda u: (size[u] / max(int(deg[u]), 1), -int(deg[u]), u))
    order, placed = [first], np.zeros(nq, bool)
    placed[first] = True
    while len(order) < nq:
        best = None
        for u in range(nq):
            if placed[u]:
                continue
            back = int(placed[query.neighbors(u)].sum())
            if back == 0:
                continue
            key = (-back, size[u], -int(deg[u]), u)
            if best is None or key < best[0]:
                best = (key, u)
        order.append(best[1])
        placed[best[1]] = True
    return np.array(order, np.int64)


def checked_order(query: gthinker.Graph, order) -> np.ndarray:
    """``order`` as an int64 array, checked to be a connected matching order
    (a permutation of the query vertices); ValueError otherwise."""
    nq = query.num_vertices
    order = np.asarray(order, np.int64).ravel()
    if sorted(order.tolist()) != list(range(nq)):
        raise ValueError(f"order must be a permutation of the {nq} query vertices, got "
                         f"{order.tolist()}")
    seen = np.zeros(nq, bool)
    for i, u in enumerate(order):
        if i and not seen[query.neighbors(int(u))].any():
            raise ValueError(f"order {order.tolist()}: query vertex {int(u)} at position {i} "
                             "has no neighbour earlier in the order")
        seen[u] = True
    return order


def _automorphism_exists(adj, deg, labels, fixed: dict) -> bool:
    """Is there an automorphism of the query (adjacency sets ``adj``, degrees
    ``deg``) that maps u -> fixed[u]? (backtracking)"""
    nq = len(adj)
    image = [-1] * nq
    used = [False] * nq
    for u, v in fixed.items():
        if deg[u] != deg[v] or (labels is not None and labels[u] != labels[v]) or used[v]:
            return False
        image[u], used[v] = v, True
    for u, v in fixed.items():  # fixed pairs must agree with each other
        for w in adj[u]:
            if image[w] >= 0 and image[w] not in adj[v]:
                return False
    # Extend in BFS order from the fixed vertices, so each new one has a mapped neighbour.
    rest = [u for u in range(nq) if image[u] < 0]
    rest.sort(key=lambda u: -sum(image[w] >= 0 for w in adj[u]))

    def extend(i):
        if i == len(rest):
            return True
        u = rest[i]
        for v in range(nq):
            if used[v] or deg[v] != deg[u] or (labels is not None and labels[v] != labels[u]):
                continue
            if all((image[w] < 0) or (image[w] in adj[v]) for w in adj[u]):
                image[u], used[v] = v, True
                if extend(i + 1):
                    return True
                image[u], used[v] = -1, False
        return False

    return extend(0)


def symmetry_constraints(query: gthinker.Graph):
    """Grochow-Kellis constraints and |Aut(q)|: walk a stabilizer chain; at each step
    the first vertex with a nontrivial orbit gets ``M(u) < M(v)`` for every other
    v of its orbit, then is fixed."""
    labels = _labels(query)
    nq = query.num_vertices
    adj = [set(map(int, query.neighbors(u))) for u in range(nq)]
    deg = query.degrees()
    fixed: dict[int, int] = {}
    constraints, aut = [], 1
    for u in range(nq):
        pinned = {w: w for w in fixed}
        orbit = [v for v in range(nq) if v not in pinned
                 and (v == u or _automorphism_exists(adj, deg, labels, {**pinned, u: v}))]
        aut *= len(orbit)
        constraints += [(u, v) for v in orbit if v != u]
        fixed[u] = u
    return constraints, aut


def plan(data, query, unique: bool = False, limited: bool = False, order=None) -> Plan:
    """Filters candidates, picks the matching order and packs both (with the
    symmetry-breaking constraints when ``unique``) into the job's params.
    ``limited``: the run has a limit, so matches are claimed with ``ctx.take``.
    ``order``: a matching order to use instead of :func:`matching_order`'s (a
    permutation of the query vertices in which every vertex after the first has
    an earlier neighbour)."""
    data = gthinker.as_graph(data)
    query = as_query(query)
    check_query(data, query)
    cands = filter_candidates(data, query)
    nq = query.num_vertices
    if order is None:
        order = matching_order(query, cands)
    else:
        order = checked_order(query, order)
    pos = np.empty(nq, np.int64)
    pos[order] = np.arange(nq)
    back = [sorted(int(pos[w]) for w in query.neighbors(int(order[d])) if pos[w] < d)
            for d in range(nq)]
    reuse, src = [-1] * nq, []
    for d in range(nq):
        best = -1
        for j in range(1, d):  # the latest earlier position whose set is a proper subset
            if back[j] and set(back[j]) < set(back[d]):
                best = j
        reuse[d] = best
        src.append(back[d] if best < 0 else sorted(set(back[d]) - set(back[best])))
    constraints, aut = symmetry_constraints(query)
    less = [[] for _ in range(nq)]  # at position d: M[p] < M[d] for these p < d
    more = [[] for _ in range(nq)]  # at position d: M[p] > M[d]
    if unique:
        for a, b in constraints:  # M(a) < M(b)
            pa, pb = int(pos[a]), int(pos[b])
            if pa < pb:
                less[pb].append(pa)
            else:
                more[pa].append(pb)
    n = data.num_vertices
    words = (n + 63) // 64
    bitmap = np.zeros((nq, words), np.uint64)
    for d in range(nq):
        c = cands[order[d]].astype(np.int64)
        np.bitwise_or.at(bitmap[d], c >> 6, np.uint64(1) << (c & 63).astype(np.uint64))

    def csr(lists):
        ptr = np.zeros(len(lists) + 1, np.int64)
        ptr[1:] = np.cumsum([len(x) for x in lists])
        flat = np.array([v for x in lists for v in x], np.int64)
        return ptr, flat

    parts = {}
    parts[H_BACK_PTR], parts[H_BACK] = csr(back)
    parts[H_ORDER] = order
    parts[H_SRC_PTR], parts[H_SRC] = csr(src)
    parts[H_REUSE] = np.array(reuse, np.int64)
    parts[H_LESS_PTR], parts[H_LESS] = csr(less)
    parts[H_MORE_PTR], parts[H_MORE] = csr(more)
    parts[H_BITMAP] = bitmap.view(np.int64).ravel()
    header = np.zeros(HEADER, np.int64)
    # Scratch per position: an intersection at d is a subset of the neighbours
    # of each backward neighbour's data vertex, so of the fewest a candidate
    # of any backward position can have.
    ddeg = data.degrees()
    most = [int(ddeg[cands[order[d]]].max()) if len(cands[order[d]]) else 0 for d in range(nq)]
    cap = max([min(most[b] for b in back[d]) for d in range(1, nq)], default=0)
    header[H_NQ], header[H_CAP], header[H_WORDS] = nq, max(cap, 1), words
    header[H_LIMITED] = int(limited)
    chunks, off = [header], HEADER
    for key in (H_SRC_PTR, H_SRC, H_REUSE, H_LESS_PTR, H_LESS, H_MORE_PTR, H_MORE,
                H_BITMAP, H_BACK_PTR, H_BACK, H_ORDER):
        header[key] = off
        chunks.append(parts[key])
        off += len(parts[key])
    return Plan(order=order, candidates=[cands[u] for u in range(nq)],
                constraints=constraints if unique else [], automorphisms=aut,
                params=np.concatenate(chunks))


# ---- the compiled search -------------------------------------------------------------


@gthinker.cache.jit("SM functions", nogil=True, inline="always")
def is_candidate(P, d, v):
    """Is data vertex ``v`` a candidate of position ``d`` in plan params ``P``?"""
    w = P[P[H_BITMAP] + d * P[H_WORDS] + (v >> 6)]
    return (w >> (v & 63)) & 1


@gthinker.cache.jit("SM functions", nogil=True)
def _spawn(ctx, v):
    P = ctx.params
    if not is_candidate(P, 0, v):
        return np.empty(0, np.int32)
    out = np.empty(2, np.int32)
    out[0] = 1
    out[1] = v
    return out


@gthinker.cache.jit("SM functions", nogil=True)
def _raw(ctx, P, M, raw, rawlen, d):
    """raw[d] = the intersection of N(M[b]) over d's backward neighbours b: an
    earlier position's intersection (reuse) or the shortest list, intersected
    with the rest straight into raw[d] (a copy only for a single list)."""
    lo, hi = P[P[H_SRC_PTR] + d], P[P[H_SRC_PTR] + d + 1]
    r = P[P[H_REUSE] + d]
    first = -1
    if r < 0:
        for s in range(lo, hi):
            if first < 0 or ctx.degree(M[P[P[H_SRC] + s]]) < ctx.degree(M[P[P[H_SRC] + first]]):
                first = s
        base = ctx.neighbors(M[P[P[H_SRC] + first]])
        n = base.size
    else:
        base = raw[r]
        n = rawlen[r]
    copied = False
    for s in range(lo, hi):
        if s != first:
            if copied:
                n = intersect(raw[d], n, ctx.neighbors(M[P[P[H_SRC] + s]]), raw[d])
            else:
                n = intersect(base, n, ctx.neighbors(M[P[P[H_SRC] + s]]), raw[d])
                copied = True
    if not copied:
        raw[d, :n] = base[:n]
    rawlen[d] = n


@gthinker.cache.jit("SM functions", nogil=True)
def _candidates(ctx, P, M, raw, rawlen, cand, candlen, d):
    _raw(ctx, P, M, raw, rawlen, d)
    k = 0
    less_lo, less_hi = P[P[H_LESS_PTR] + d], P[P[H_LESS_PTR] + d + 1]
    more_lo, more_hi = P[P[H_MORE_PTR] + d], P[P[H_MORE_PTR] + d + 1]
    for i in range(rawlen[d]):
        v = raw[d, i]
        if not is_candidate(P, d, v):
            continue
        ok = True
        for p in range(d):
            if M[p] == v:
                ok = False
                break
        if ok:
            for s in range(less_lo, less_hi):
                if M[P[P[H_LESS] + s]] >= v:
                    ok = False
                    break
        if ok:
            for s in range(more_lo, more_hi):
                if M[P[P[H_MORE] + s]] <= v:
                    ok = False
                    break
        if ok:
            cand[d, k] = v
            k += 1
    candlen[d] = k


@gthinker.cache.jit("SM functions", nogil=True)
def _leaves(ctx, P, M, last, n, d):
    """The full matches ``M[:d] + last[i]`` for ``i < n`` (``d`` is the last
    position): claims them from the run's limit and lists them when the run
    writes output. Returns how many count (fewer than ``n`` once the limit is
    reached)."""
    if P[H_LIMITED] != 0:
        n = ctx.take(n)
    if n > 0 and ctx.emitting():
        line = np.empty(P[H_NQ], np.int32)  # data vertex per query vertex, in query order
        for p in range(d):
            line[P[P[H_ORDER] + p]] = M[p]
        u = P[P[H_ORDER] + d]
        for i in range(n):
            line[u] = last[i]
            ctx.emit(line)
    return n


@gthinker.cache.jit("SM functions", nogil=True)
def search(ctx, rec, head):
    """Counts the full matches that extend the partial match of ``rec[head:]``
    (``[k, M[0], ..., M[k-1]]``); ``rec[:head]`` is a tag that every record it
    hands to other workers keeps in front. Returns (matches, records handed out)."""
    P = ctx.params
    k = rec[head]
    nq = P[H_NQ]
    M = np.empty(nq, np.int32)
    M[:k] = rec[head + 1 : head + 1 + k]
    if k == nq:
        return _leaves(ctx, P, M, M[nq - 1 :], 1, nq - 1), 0
    cap = P[H_CAP]
    raw = np.empty((nq, cap), np.int32)
    rawlen = np.zeros(nq, np.int64)
    cand = np.empty((nq, cap), np.int32)
    candlen = np.zeros(nq, np.int64)
    idx = np.zeros(nq, np.int64)
    for d in range(1, k):  # intersections of the prefix, for reuse further down
        _raw(ctx, P, M, raw, rawlen, d)
    _candidates(ctx, P, M, raw, rawlen, cand, candlen, k)
    if k == nq - 1:
        return _leaves(ctx, P, M, cand[k], candlen[k], k), 0
    d = k
    found = 0
    added = 0
    while d >= k:
        if idx[d] >= candlen[d]:
            d -= 1
            continue
        if ctx.timed_out():  # every unexplored branch becomes a task
            for dd in range(k, d + 1):
                for i in range(idx[dd], candlen[dd]):
                    task = np.empty(head + dd + 2, np.int32)
                    task[:head] = rec[:head]
                    task[head] = dd + 1
                    task[head + 1 : head + dd + 1] = M[:dd]
                    task[head + dd + 1] = cand[dd, i]
                    ctx.add_task(task)
                    added += 1
            break
        M[d] = cand[d, idx[d]]
        idx[d] += 1
        nd = d + 1
        _candidates(ctx, P, M, raw, rawlen, cand, candlen, nd)
        if nd == nq - 1:
            got = _leaves(ctx, P, M, cand[nd], candlen[nd], nd)
            found += got
            if got < candlen[nd]:  # the limit is reached: the job is stopping
                break
        elif candlen[nd]:
            d = nd
            idx[d] = 0
    return found, added


@gthinker.cache.jit("SM functions", nogil=True)
def _compute(ctx, rec):
    found, _ = search(ctx, rec, 0)
    ctx.count(0, found)
    return 0


class SubgraphMatching(gthinker.Task):
    """The CPU task. ``params`` come from :func:`plan`."""

    counters = ("matches",)

    @staticmethod
    def spawn(ctx, v):
        return _spawn(ctx, v)

    @staticmethod
    def compute(ctx, record):
        _compute(ctx, record)


# ---- the Python API ------------------------------------------------------------------

#: GPU record layout: expand once some partial match of the first level has at
#: least this many candidates (see :func:`choose_gpu_mode`). Measured on an
#: H200 (docs/benchmarks.md): prefix was faster on email-Enron (largest fanout
#: 1,383), expand on an R-MAT graph with hubs of tens of thousands; the value
#: between them is a choice, not a measured optimum.
EXPAND_FANOUT = 8192


def fanouts(data: gthinker.Graph, p: Plan) -> np.ndarray:
    """For every candidate v of the first position, its number of candidates at
    the second: the fanout of the first level of the search tree."""
    c0 = p.candidates[int(p.order[0])]
    if len(p.order) < 2 or not len(c0):
        return np.zeros(len(c0), np.int64)
    mask = np.zeros(data.num_vertices, bool)
    mask[p.candidates[int(p.order[1])]] = True
    hits = mask[data.indices].astype(np.int64)
    csum = np.concatenate(([0], np.cumsum(hits)))
    return csum[data.indptr[c0 + 1]] - csum[data.indptr[c0]]


def choose_gpu_mode(data: gthinker.Graph, p: Plan) -> tuple[str, str]:
    """``("prefix" | "expand", why)`` from the fanouts of the first level:
    prefix (one warp extends a partial match with all its candidates, sharing
    the work) unless some partial match has EXPAND_FANOUT candidates or more:
    such a record would keep one warp busy while the others idle, and expand
    (one record per candidate) spreads it over all warps."""
    f = fanouts(data, p)
    if not len(f):
        return "prefix", "no candidates"
    top = int(f.max())
    why = f"largest first-level fanout {top} (expand from {EXPAND_FANOUT})"
    return ("expand" if top >= EXPAND_FANOUT else "prefix"), why


#: In auto mode a query whose candidates allow fewer partial matches than this
#: (the sum over positions of the product of candidate counts so far) runs on the
#: CPU: the GPU's set-up costs more than such a search.
SMALL_SEARCH = 100_000


def _small_search(p: Plan) -> str:
    """Why the search of plan ``p`` is too small for the GPU, or ''."""
    bound = 0
    product = 1
    for u in p.order:
        product *= max(len(p.candidates[int(u)]), 1)
        bound += product
        if bound >= SMALL_SEARCH:
            return ""
    return f"a small search (at most {bound:,} partial matches)"


@dataclass
class SMResult:
    count: int  # embeddings, or distinct subgraphs when unique
    unique: bool
    automorphisms: int
    seconds: float
    mode: str
    threads: int
    order: list
    candidates: list  # |C(u)| per query vertex
    gpu_mode: str | None = None  # prefix or expand (gpu and hybrid modes)
    stopped: str | None = None  # "limit" when the run stopped at its limit
    stats: dict = field(default_factory=dict, repr=False)
    compile_seconds: float = 0.0  # not in seconds; 0 when the compile cache had the code
    mode_reason: str = ""  # why mode="auto" chose this mode

    def to_dict(self) -> dict:
        return {"count": self.count, "unique": self.unique, "automorphisms": self.automorphisms,
                "seconds": self.seconds, "compile_seconds": self.compile_seconds,
                "mode": self.mode, "mode_reason": self.mode_reason, "gpu_mode": self.gpu_mode,
                "threads": self.threads, "order": self.order, "candidates": self.candidates,
                "stopped": self.stopped}


def count(data, query, unique: bool = False, mode: str = "auto", threads: int | None = None,
          time_budget: float | None = None, gpu_mode: str = "auto", limit: int | None = None,
          output=None, progress=None, **options) -> SMResult:
    """Counts the embeddings of ``query`` in ``data`` (or, with ``unique``, the
    distinct subgraphs).

    Parameters
    ----------
    data, query : gthinker.Graph, or anything :func:`gthinker.as_graph` takes
        ``query`` may also be a pattern name (see :func:`pattern`). Both
        labeled, or neither.
    mode : {"auto", "cpu", "gpu", "hybrid"}
        ``"auto"``: the GPU alone where a CUDA GPU is usable (G-ThinkerCG's
        advice for SM, measured in docs/benchmarks.md), else the CPU; the CPU
        with ``limit`` or ``output``, and for a search smaller than
        :data:`SMALL_SEARCH` partial matches.
    gpu_mode : {"auto", "prefix", "expand"}
        GPU record layout (see :mod:`gthinker.apps.sm_gpu`); ``"auto"`` picks
        it with :func:`choose_gpu_mode`.
    limit : int, optional
        Stop after this many matches (the count is then ``limit``, and
        ``stopped == "limit"``). CPU only.
    output : path, optional
        Write every match (or the first ``limit``) to this file, one per line:
        the data vertices (original ids) matched to query vertices 0, 1, ...
        CPU only.
    **options
        Passed on to :func:`gthinker.run` (``gpu_options``, ``spill_limit``, ...).
    """
    if gpu_mode not in ("auto", "prefix", "expand"):
        raise ValueError(f"gpu_mode must be auto, prefix or expand, got {gpu_mode!r}")
    listing = limit is not None or output is not None
    if mode in ("gpu", "hybrid") and listing:
        raise ValueError("limit and output (--limit, --output) run on the CPU only; use "
                         "mode='cpu' (--mode cpu)")
    data = gthinker.as_graph(data)
    p = plan(data, query, unique, limited=limit is not None)
    mode, why = gthinker.gpu.resolve_mode(mode, auto="gpu", cpu_because=(
        "listing matches runs on the CPU" if listing else _small_search(p)))
    chosen = None
    if mode in ("gpu", "hybrid"):
        from .sm_gpu import SubgraphMatchingExpandGPU, SubgraphMatchingPrefixGPU

        chosen = gpu_mode if gpu_mode != "auto" else choose_gpu_mode(data, p)[0]
        options["gpu"] = (SubgraphMatchingPrefixGPU if chosen == "prefix"
                          else SubgraphMatchingExpandGPU)
    res = gthinker.run(SubgraphMatching, data, mode=mode, threads=threads,
                       time_budget=time_budget, params=p.params, limit=limit, output=output,
                       progress=progress, **options)
    return SMResult(count=res.counters["matches"], unique=unique,
                    automorphisms=p.automorphisms, seconds=res.seconds, mode=res.mode,
                    threads=res.threads, order=[int(u) for u in p.order],
                    candidates=[len(c) for c in p.candidates], gpu_mode=chosen,
                    stopped=res.stopped, stats=res.stats, compile_seconds=res.compile_seconds,
                    mode_reason=why)


def match(data, query, unique: bool = False, limit: int | None = None,
          threads: int | None = None, **options) -> np.ndarray:
    """Lists the matches: an int64 array with one row per match (at most
    ``limit``) and one column per query vertex, holding the data vertex (its
    original id) matched to it. Row order differs from run to run. For a
    networkx graph whose nodes are not integers, an object array of node names
    (of the same shape, whatever the names are: tuples, strings, mixed).

    >>> import networkx as nx
    >>> match(nx.complete_graph(3), "triangle", unique=True, threads=1).tolist()
    [[0, 1, 2]]
    """
    data = gthinker.as_graph(data)
    query = as_query(query)
    nq = query.num_vertices
    with tempfile.TemporaryDirectory(prefix="gthinker-") as tmp:
        path = os.path.join(tmp, "matches.txt")
        count(data, query, unique=unique, mode="cpu", threads=threads, limit=limit,
              output=path, **options)
        rows = np.fromfile(path, dtype=np.int64, sep=" ").reshape(-1, nq)
    names = data.node_names
    if names is not None:  # one element per name: tuple names must not become rows
        return np.fromiter(names, dtype=object, count=len(names))[rows]
    return rows

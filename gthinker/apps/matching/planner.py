"""The matching planner: what subgraph matching, gSWORD and pattern counting decide
on the host before they search.

- **Candidate filtering** (:func:`filter_candidates`): ``C(u)`` holds the data
  vertices with u's label, at least u's degree, and, for every label, at least as
  many neighbours with that label as u has (neighbour-label-frequency filtering,
  NLF). During the search the rule that a data vertex may take a position
  (:func:`admissible`: in ``C(u)``, unused, within the symmetry-breaking
  constraints) is written once here, in plain Python, and compiled for the CPU
  (:data:`is_admissible`) and for the GPU (:func:`device_functions`).
- **Matching orders**: :func:`matching_order` (GraphQL/RI style, the SM app's),
  :func:`quicksi_order` (infrequent candidate-graph edges first, gSWORD's),
  :func:`checked_order` (a caller's own), picked by name with :func:`order_for`.
  Every vertex after the first has an earlier neighbour (the query is connected);
  :func:`backward_positions` lists those earlier neighbours.
- **The pattern plan** (:mod:`gthinker.apps.matching.pattern_plan`): by default the
  order comes from the query's shape, ending with its count-only tail, and the
  symmetry-breaking restrictions follow it (:mod:`gthinker.apps.matching.symmetry`:
  a chain of stabilizers along the order, Grochow-Kellis); exactly one embedding
  per automorphism class meets them (``unique=True`` counting).
  :func:`symmetry_constraints` gives them along the query's own vertex order.
- **The plan** (:func:`plan`, :class:`Plan`): all of the above packed into one int64
  array, the job's ``params``, read by the CPU search (:mod:`gthinker.apps.matching.search`),
  the GPU contexts (:mod:`gthinker.apps.matching.levels_gpu`) and gSWORD's trawling tasks.

**The params layout.** A header of ``HEADER`` values and offsets, then the arrays.
Header slots: ``H_NQ`` query vertices; ``H_CAP`` the most extensions one partial
match can have (a bound for per-level buffers); ``H_WORDS`` 64-bit words per
candidate bitmap; ``H_LIMITED`` 1 when the run stops at a limit; then the offsets
of the arrays: ``H_SRC_PTR``/``H_SRC`` (per position, the backward positions whose
neighbour lists it intersects), ``H_REUSE`` (an earlier position whose
intersection it starts from, or -1), ``H_LESS_PTR``/``H_LESS`` and
``H_MORE_PTR``/``H_MORE`` (per position d, the earlier positions p with
``M[p] < M[d]``, resp. ``M[p] > M[d]``), ``H_BITMAP`` (one candidate bitmap per
position), ``H_BACK_PTR``/``H_BACK`` (the backward neighbours of each position)
and ``H_ORDER`` (the query vertex at each position). ``H_TAIL``: how many last
positions are count-only (the pattern plan's ``count_only``; 0: enumerate every
level); ``H_TAIL_CHAIN``: 1 when restrictions join those positions to each other;
``H_TAIL_FILTER``: 1 when their candidates must still be checked against ``C(u)``
(labeled queries: the label; unlabeled, adjacency to every neighbour implies the
degree filter); ``H_TAIL_SAME``: 1 when the last two positions have the same
backward neighbours (one intersection serves both).

**Search records.** A partial match of the first ``k`` positions of the order is
the record ``[k, M[0], ..., M[k-1]]`` (data vertices, int32), on the CPU and in the
GPU's expand mode; a record may carry a tag in front (gSWORD's trawling:
``[slot, k, M...]``) that the records it spawns keep. The GPU's prefix mode adds
the candidates of position k behind the match (see :mod:`gthinker.apps.matching.levels_gpu`).
"""

from __future__ import annotations

import types as pytypes
from dataclasses import dataclass, field

import numpy as np

import gthinker

from . import symmetry
from .pattern_plan import PatternPlan, pattern_plan
from .patterns import as_query

__all__ = ["HEADER", "Plan", "admissible", "admissible_within", "backward_positions",
           "check_query", "checked_order", "match_labels", "constraint_ranges",
           "constraint_ranges_cpu", "device_functions", "edges_between", "filter_candidates",
           "in_candidates",
           "is_admissible", "is_admissible_within", "is_candidate", "label_subgraph",
           "matching_order", "order_for", "plan", "plan_within", "quicksi_order",
           "symmetry_constraints"]

# ---- the params layout ---------------------------------------------------------------

H_NQ, H_CAP, H_WORDS, H_LIMITED = 0, 1, 2, 3
H_SRC_PTR, H_SRC, H_REUSE = 4, 5, 6
H_LESS_PTR, H_LESS, H_MORE_PTR, H_MORE, H_BITMAP = 7, 8, 9, 10, 11
H_BACK_PTR, H_BACK, H_ORDER = 12, 13, 14
H_TAIL, H_TAIL_CHAIN, H_TAIL_FILTER, H_TAIL_SAME = 15, 16, 17, 18
HEADER = 19


# ---- the query, and candidate filtering ----------------------------------------------


def _labels(g):
    return None if g.labels is None else np.asarray(g.labels, np.int64)


def _unlabeled(g: gthinker.Graph) -> gthinker.Graph:
    """``g`` without its vertex labels (:meth:`gthinker.Graph.unlabeled`: its arrays,
    edge labels, directions and prepared structural forms shared)."""
    return g.unlabeled()


def match_labels(data: gthinker.Graph, query: gthinker.Graph, ignore: bool = False):
    """The one rule of sm, count and gsword for vertex labels (docs/formats.md,
    'Labels'): ``(data, query, note)``, the graphs to match and what became of the
    labels (the result says it: "" when neither graph has labels, "honoured", or
    "ignored: why").

    - both labeled: labels are honoured (a match maps a vertex to one of its label);
    - ``ignore`` (``--ignore-labels``): both are matched unlabeled;
    - only the data graph labeled (a pattern name, an edge-list query): its labels are
      ignored for this match, and the note says so;
    - only the query labeled: with all its labels equal it is matched unlabeled (every
      data vertex counts as having that label); with several, ValueError (a
      label-preserving match needs labels on both sides)."""
    if data.labels is None and query.labels is None:
        return data, query, ""
    if ignore:
        return _unlabeled(data), _unlabeled(query), "ignored: --ignore-labels"
    if data.labels is not None and query.labels is not None:
        return data, query, "honoured"
    if data.labels is not None:
        return _unlabeled(data), query, "ignored: the query has none"
    kinds = np.unique(query.labels)
    if kinds.size > 1:
        raise ValueError(f"the query has {kinds.size} different vertex labels and the data "
                         "graph none: give the data graph labels, or match the structure "
                         "only with ignore_labels (--ignore-labels)")
    return data, _unlabeled(query), f"ignored: the query's are all {int(kinds[0])}, the data " \
        "graph has none"


def check_query(data: gthinker.Graph, query: gthinker.Graph):
    """Raises ValueError when ``query`` cannot be matched in ``data`` as given
    (empty, labeled on one side only, or not connected)."""
    nq = query.num_vertices
    if nq == 0:
        raise ValueError("the query graph is empty")
    if (data.labels is None) != (query.labels is None):
        which = "data graph" if data.labels is not None else "query"
        raise ValueError(f"only the {which} has vertex labels: give both graphs labels, or "
                         "neither (match_labels applies the rule of the apps)")
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
    """C(u) for every query vertex u (sorted int32 data vertices): label, degree
    and NLF filtering."""
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


def label_subgraph(data: gthinker.Graph, label: int) -> gthinker.Graph:
    """The subgraph of ``data`` induced by its vertices labeled ``label``, unlabeled
    (where a query whose labels all equal ``label`` has all its matches)."""
    keep = np.asarray(data.labels) == label
    rows = np.repeat(np.arange(data.num_vertices), np.diff(data.indptr))
    mask = keep[rows] & keep[data.indices] & (rows < data.indices)
    edges = np.stack([rows[mask], data.indices[mask]], axis=1).astype(np.int64)
    return gthinker.Graph.from_edges(edges, num_vertices=data.num_vertices)


def edges_between(data: gthinker.Graph, sources, targets) -> np.ndarray:
    """For every data vertex of ``sources``, its number of neighbours in ``targets``."""
    sources = np.asarray(sources, np.int64)
    mask = np.zeros(data.num_vertices, bool)
    mask[targets] = True
    csum = np.concatenate(([0], np.cumsum(mask[data.indices], dtype=np.int64)))
    return csum[data.indptr[sources + 1]] - csum[data.indptr[sources]]


# ---- matching orders -----------------------------------------------------------------


def matching_order(query: gthinker.Graph, candidates) -> np.ndarray:
    """GraphQL/RI-style order: first the query vertex with the fewest candidates per
    edge (``|C(u)| / deg(u)``), then again and again the unmatched vertex with the
    most already-matched neighbours; ties go to fewer candidates, then to the higher
    degree, then to the lower id."""
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


def _edge_weights(data, cands, query):
    """Per query edge (u, w): the number of data edges between C(u) and C(w)."""
    out = {}
    for u in range(query.num_vertices):
        for w in query.neighbors(u):
            w = int(w)
            if w > u:
                out[u, w] = out[w, u] = int(edges_between(data, cands[u], cands[w]).sum())
    return out


def quicksi_order(data, query, cands) -> np.ndarray:
    """QuickSI-style order (infrequent edges first): start at the query edge with
    the fewest candidate-graph edges, on its endpoint with fewer candidates;
    then, Prim-like, add the vertex joined to the placed ones by the lightest
    edge (ties: more placed neighbours, fewer candidates, lower id)."""
    nq = query.num_vertices
    if nq == 1:
        return np.zeros(1, np.int64)
    w = _edge_weights(data, cands, query)
    size = [len(c) for c in cands]
    u, v = min(((a, b) for (a, b) in w if a < b),
               key=lambda e: (w[e], min(size[e[0]], size[e[1]]), e))
    first, second = (u, v) if (size[u], u) <= (size[v], v) else (v, u)
    order, placed = [first, second], np.zeros(nq, bool)
    placed[[first, second]] = True
    while len(order) < nq:
        best = None
        for x in range(nq):
            if placed[x]:
                continue
            nb = [int(y) for y in query.neighbors(x) if placed[y]]
            if not nb:
                continue
            key = (min(w[x, y] for y in nb), -len(nb), size[x], x)
            if best is None or key < best[0]:
                best = (key, x)
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


def order_for(data, query, cands, order) -> np.ndarray:
    """The matching order named by ``order``: ``"sm"`` (:func:`matching_order`),
    ``"quicksi"`` (:func:`quicksi_order`), or a permutation of the query vertices
    (:func:`checked_order`)."""
    if isinstance(order, str):
        if order == "quicksi":
            return quicksi_order(data, query, cands)
        if order == "sm":
            return matching_order(query, cands)
        raise ValueError(f"order must be 'quicksi', 'sm' or a list of query vertices, "
                         f"got {order!r}")
    return checked_order(query, order)


def backward_positions(query: gthinker.Graph, order) -> list:
    """Per position d, the sorted earlier positions whose query vertices are
    neighbours of ``order[d]``."""
    nq = query.num_vertices
    pos = np.empty(nq, np.int64)
    pos[order] = np.arange(nq)
    return [sorted(int(pos[w]) for w in query.neighbors(int(order[d])) if pos[w] < d)
            for d in range(nq)]


# ---- symmetry breaking ---------------------------------------------------------------


def symmetry_constraints(query: gthinker.Graph):
    """Grochow-Kellis constraints along the query's own vertex order, and |Aut(q)|:
    ``(constraints, automorphisms)``, the constraints as pairs ``(u, v)`` of query
    vertices meaning ``M(u) < M(v)`` (see :func:`gthinker.apps.matching.symmetry.restrictions`)."""
    order = range(query.num_vertices)
    pairs, aut = symmetry.restrictions(symmetry.adjacency(query), _labels(query), order)
    return [(order[i], order[j]) for i, j in pairs], aut


# ---- the plan ------------------------------------------------------------------------


@dataclass
class Plan:
    """What the compiled search needs, packed into the job's ``params``."""

    order: np.ndarray  # query vertex at each position
    candidates: list  # per query vertex: sorted data vertices after filtering
    constraints: list  # (a, b): M(a) < M(b), query vertices (unique counting)
    automorphisms: int  # |Aut(q)|
    params: np.ndarray = field(repr=False)
    pattern: PatternPlan | None = field(default=None, repr=False)  # what the shape decided


def _reuse(back, tail):
    """Per position d: the latest earlier position before ``tail`` (the first
    count-only one, whose intersections are not kept) whose backward set is a proper
    subset of d's (its intersection is reused, T-DFS), or -1; and the backward
    positions d still intersects."""
    reuse, src = [], []
    for d in range(len(back)):
        best = -1
        for j in range(1, min(d, tail)):
            if back[j] and set(back[j]) < set(back[d]):
                best = j
        reuse.append(best)
        src.append(back[d] if best < 0 else sorted(set(back[d]) - set(back[best])))
    return reuse, src


def _bitmaps(n, cands, order):
    """One bitmap of ``n`` bits per position: its candidates."""
    words = (n + 63) // 64
    bitmap = np.zeros((len(order), words), np.uint64)
    for d, u in enumerate(order):
        c = cands[u].astype(np.int64)
        np.bitwise_or.at(bitmap[d], c >> 6, np.uint64(1) << (c & 63).astype(np.uint64))
    return bitmap


def _csr(lists):
    ptr = np.zeros(len(lists) + 1, np.int64)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    flat = np.array([v for x in lists for v in x], np.int64)
    return ptr, flat


#: The header slots that hold an array's offset, in the order the arrays follow it.
_SECTIONS = (H_SRC_PTR, H_SRC, H_REUSE, H_LESS_PTR, H_LESS, H_MORE_PTR, H_MORE, H_BITMAP,
             H_BACK_PTR, H_BACK, H_ORDER)


def _pack(header, parts):
    """The header, with the offsets of ``parts`` (slot -> array), then the arrays."""
    chunks, off = [header], HEADER
    for key in _SECTIONS:
        header[key] = off
        chunks.append(parts[key])
        off += len(parts[key])
    return np.concatenate(chunks)


def plan(data, query, unique: bool = False, limited: bool = False, order=None) -> Plan:
    """Filters candidates, takes the pattern plan (:func:`pattern_plan`: the order,
    its count-only tail and the symmetry-breaking restrictions, applied when
    ``unique``) and packs them into the job's params.
    ``limited``: the run has a limit, so matches are claimed with ``ctx.take``.
    ``order``: a matching order to use instead of the pattern plan's (a permutation
    of the query vertices in which every vertex after the first has an earlier
    neighbour), or ``"sm"`` / ``"quicksi"`` (:func:`order_for`)."""
    data = gthinker.as_graph(data)
    query = as_query(query)
    check_query(data, query)
    cands = filter_candidates(data, query)
    nq = query.num_vertices
    if order is not None:
        order = order_for(data, query, cands, order)
    pp = pattern_plan(query, order=order, sizes=[len(c) for c in cands])
    order = np.array(pp.order, np.int64)
    back = [list(b) for b in pp.backward]
    tail = pp.count_only
    reuse, src = _reuse(back, nq - tail)
    restrictions = pp.restrictions if unique else ()
    less, more = [[] for _ in range(nq)], [[] for _ in range(nq)]
    for i, j in restrictions:
        less[j].append(i)
    bitmap = _bitmaps(data.num_vertices, cands, order)
    parts = {}
    parts[H_BACK_PTR], parts[H_BACK] = _csr(back)
    parts[H_ORDER] = order
    parts[H_SRC_PTR], parts[H_SRC] = _csr(src)
    parts[H_REUSE] = np.array(reuse, np.int64)
    parts[H_LESS_PTR], parts[H_LESS] = _csr(less)
    parts[H_MORE_PTR], parts[H_MORE] = _csr(more)
    parts[H_BITMAP] = bitmap.view(np.int64).ravel()
    header = np.zeros(HEADER, np.int64)
    # Scratch per position: an intersection at d is a subset of the neighbours
    # of each backward neighbour's data vertex, so of the fewest a candidate
    # of any backward position can have.
    ddeg = data.degrees()
    most = [int(ddeg[cands[order[d]]].max()) if len(cands[order[d]]) else 0 for d in range(nq)]
    cap = max([min(most[b] for b in back[d]) for d in range(1, nq)], default=0)
    header[H_NQ], header[H_CAP], header[H_WORDS] = nq, max(cap, 1), bitmap.shape[1]
    header[H_LIMITED] = int(limited)
    header[H_TAIL] = tail
    header[H_TAIL_CHAIN] = int(unique and pp.tail_chain())
    header[H_TAIL_FILTER] = int(query.labels is not None)
    header[H_TAIL_SAME] = int(nq >= 2 and back[-1] == back[-2])
    return Plan(order=order, candidates=[cands[u] for u in range(nq)],
                constraints=[(pp.order[i], pp.order[j]) for i, j in restrictions],
                automorphisms=pp.automorphisms, params=_pack(header, parts), pattern=pp)


def plan_within(p: Plan, ids) -> Plan:
    """Plan ``p`` for the subgraph of its data graph induced by ``ids`` (sorted vertex
    ids, renumbered 0, 1, ... in their order, so the symmetry-breaking restrictions
    compare alike): the candidates and their bitmaps restricted to ``ids`` and
    renumbered, the order, restrictions and the rest of the params as they are
    (:mod:`gthinker.apps.matching.partitions`)."""
    ids = np.asarray(ids, np.int64)
    cands = [np.searchsorted(ids, c[np.isin(c, ids, assume_unique=True)]) for c in p.candidates]
    order = p.order
    bitmap = _bitmaps(len(ids), cands, order).view(np.int64).ravel()
    params = p.params
    at, size = int(params[H_BITMAP]), int(params[H_NQ]) * int(params[H_WORDS])
    new = np.concatenate([params[:at], bitmap, params[at + size:]])
    for key in _SECTIONS:
        if new[key] > at:
            new[key] += bitmap.size - size
    new[H_WORDS] = (len(ids) + 63) // 64
    return Plan(order=order, candidates=cands, constraints=p.constraints,
                automorphisms=p.automorphisms, params=new, pattern=p.pattern)


# ---- the candidate rule, for every target --------------------------------------------
# Plain Python, compiled per target by _compiled(): the functions call each other
# by name, and the name resolves to the same target's version.


def in_candidates(P, d, v):
    """Is data vertex ``v`` in the candidate bitmap of position ``d`` of plan params ``P``?"""
    w = P[P[H_BITMAP] + d * P[H_WORDS] + (v >> 6)]
    return ((w >> (v & 63)) & 1) != 0


def constraint_ranges(P, d):
    """Where the symmetry-breaking constraints of position ``d`` lie in plan params
    ``P``: ``(less_lo, less_hi, more_lo, more_hi)``, ranges of ``H_LESS`` and ``H_MORE``."""
    return (P[P[H_LESS_PTR] + d], P[P[H_LESS_PTR] + d + 1], P[P[H_MORE_PTR] + d],
            P[P[H_MORE_PTR] + d + 1])


def admissible_within(P, M, base, k, c, d, v, less_lo, less_hi, more_lo, more_hi):
    """:func:`admissible`, given position d's :func:`constraint_ranges` (a loop
    over many candidates of one position reads them once)."""
    if not in_candidates(P, d, v):
        return False
    n = k if k < d else d
    for p in range(n):
        if M[base + p] == v:
            return False
    if n < d and c == v:
        return False
    for s in range(less_lo, less_hi):
        p = P[P[H_LESS] + s]
        x = M[base + p] if p < k else c
        if x >= v:
            return False
    for s in range(more_lo, more_hi):
        p = P[P[H_MORE] + s]
        x = M[base + p] if p < k else c
        if x <= v:
            return False
    return True


def admissible(P, M, base, k, c, d, v):
    """May data vertex ``v`` take position ``d`` of plan params ``P``, after the
    partial match whose position ``p < d`` holds ``M[base + p]`` for ``p < k`` and
    ``c`` for ``p == k`` (``k == d``, or ``k == d - 1`` with ``c`` at position k)?
    Checks ``C(u)``, injectivity and the symmetry-breaking constraints; adjacency
    to the backward neighbours is the caller's (intersections on the CPU, binary
    searches on the GPU)."""
    less_lo, less_hi, more_lo, more_hi = constraint_ranges(P, d)
    return admissible_within(P, M, base, k, c, d, v, less_lo, less_hi, more_lo, more_hi)


_RULE = (in_candidates, constraint_ranges, admissible_within, admissible)


def _compiled(target):
    """The candidate rule's functions compiled for ``target`` ("cpu": inlined into
    the compiled search; "cuda": device functions), by name."""
    ns = dict(globals())
    for fn in _RULE:
        rebound = pytypes.FunctionType(fn.__code__, ns, fn.__name__, fn.__defaults__,
                                       fn.__closure__)
        if target == "cpu":
            ns[fn.__name__] = gthinker.compiler.jit("the matching planner", nogil=True,
                                                 inline="always")(rebound)
        else:
            from numba import cuda

            ns[fn.__name__] = cuda.jit(device=True, inline=True)(rebound)
    return {fn.__name__: ns[fn.__name__] for fn in _RULE}


_CPU = _compiled("cpu")
#: :func:`in_candidates` compiled for the CPU workers.
is_candidate = _CPU["in_candidates"]
#: :func:`admissible` compiled for the CPU workers.
is_admissible = _CPU["admissible"]
#: :func:`admissible_within` compiled for the CPU workers.
is_admissible_within = _CPU["admissible_within"]
#: :func:`constraint_ranges` compiled for the CPU workers.
constraint_ranges_cpu = _CPU["constraint_ranges"]


def device_functions() -> dict:
    """The candidate rule's functions (:func:`in_candidates`, :func:`constraint_ranges`,
    :func:`admissible_within`, :func:`admissible`) as CUDA device functions, by name."""
    return _compiled("cuda")

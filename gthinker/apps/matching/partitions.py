"""Graphs larger than the GPU: the matching search and the clique count in parts.

A search from its first vertices (its *roots*) reads only what lies within ``hops`` of
them: for the matching search the eccentricity of the first query vertex of the order
(every vertex of a match is that far from its root at most, along the match's own
edges, through candidates), for the clique engine on an oriented graph one hop of
out-neighbours. When the graph's copy does not fit what the device can give it, the
device's free memory less :data:`WORKING_BYTES` for the engines' buffers, or a cap
(``gpu_memory``, ``--gpu-memory``) asks for it, :func:`cut` splits the roots (in
vertex order) into ranges whose *neighbourhood*, the subgraph induced by what lies
within ``hops`` of them, fits: a range whose neighbourhood is too large is halved
until it fits. :func:`induced` builds a range's neighbourhood on the host, renumbered
in the same vertex order (so that the symmetry-breaking restrictions compare alike;
``ids`` keep the original ids), :func:`run_parts` runs the job on one part after the
other with only the range as first vertices, building the next part on a host thread
while the device searches the current one, and sums the counts. A match is counted
in the part of its root only, so the sum is the count of the whole graph. A root whose
neighbourhood alone does not fit (a hub, two hops out) is searched from its edges: the
partial matches ``[2, v, w]``, in ranges of ``w`` whose neighbourhood with ``v`` fits
(:func:`_edge_parts`). docs/gpu.md, "Graphs larger than the GPU", tells the whole scheme.

The parts' neighbourhoods overlap (a hub near many ranges is copied with each): on a
graph with hubs and a two-hop query the parts can be many. SGSI (Zeng et al.) cuts
by edge label and into edge-balanced segments instead; the ranges here need no
change to the engines, which see each part as a graph of its own.
"""

from __future__ import annotations

import dataclasses
import time
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

import gthinker
from gthinker.extending import GraphTooLargeError

from .planner import Plan, plan_within
from .search import SubgraphMatching

__all__ = ["WORKING_BYTES", "Part", "ball", "cap_for", "cliques_in_parts", "cut", "graph_bytes",
           "hops_of", "induced", "range_records", "run_parts", "search_cap", "search_in_parts"]

#: Device memory left to the engines' working buffers when the graph is matched in
#: parts because it does not fit (no ``gpu_memory`` given): the depth-first engine's
#: kept lists (``DFSEngine.list_bytes``, 4 GiB) and task queue, the level-by-level
#: engine's subgraph buffer (a share of what is free once the graph is there) and the
#: clique engine's candidate buffers.
WORKING_BYTES = 8 << 30


def graph_bytes(graph: gthinker.Graph, per_vertex: float = 0.0) -> int:
    """Bytes of ``graph``'s copy on the device (CSR and labels), with ``per_vertex``
    more bytes per vertex (a plan's candidate bitmaps: a bit per query vertex)."""
    n = graph.num_vertices
    return int(graph.indptr.nbytes + graph.indices.nbytes
               + (graph.labels.nbytes if graph.labels is not None else 0) + per_vertex * n)


def cap_for(graph: gthinker.Graph, gpu_memory: int | None, per_vertex: float = 0.0
            ) -> int | None:
    """The device bytes a part may take when ``graph`` is matched in parts, or None when
    it is matched whole: ``gpu_memory`` when the graph's copy is larger; without it, the
    device's free memory less :data:`WORKING_BYTES` (at most half of it) when the graph's
    copy is larger than that (never on the simulator, which has no figures)."""
    need = graph_bytes(graph, per_vertex)
    if gpu_memory is not None:
        return int(gpu_memory) if need > gpu_memory else None
    figures = gthinker.gpu.memory_info()
    if figures is None:
        return None
    room = figures[0] - min(WORKING_BYTES, figures[0] // 2)
    return room if need > room else None


# ---- neighbourhoods -------------------------------------------------------------------

@gthinker.compiler.jit("matching parts", nogil=True)
def _ball(indptr, indices, roots, hops, allowed, seen, out):
    """Marks in ``seen`` and lists in ``out`` the vertices within ``hops`` of ``roots``
    through ``allowed`` ones (the roots whatever they are); returns how many, and the
    entries of the subgraph they induce. Leaves ``seen`` cleared."""
    k = 0
    for r in roots:
        if not seen[r]:
            seen[r] = 1
            out[k] = r
            k += 1
    lo = 0
    for _ in range(hops):
        hi = k
        for i in range(lo, hi):
            v = out[i]
            for e in range(indptr[v], indptr[v + 1]):
                w = indices[e]
                if not seen[w] and allowed[w]:
                    seen[w] = 1
                    out[k] = w
                    k += 1
        lo = hi
    entries = 0
    for i in range(k):
        v = out[i]
        for e in range(indptr[v], indptr[v + 1]):
            entries += seen[indices[e]]
    for i in range(k):
        seen[out[i]] = 0
    return k, entries


@gthinker.compiler.jit("matching parts", nogil=True)
def _induced(indptr, indices, ids, newid):
    """The CSR of the subgraph induced by ``ids`` (sorted), renumbered by ``newid`` (-1
    for the vertices left out), and the position of each kept entry in ``indices``."""
    k = ids.size
    ptr = np.zeros(k + 1, np.int64)
    for i in range(k):
        v = ids[i]
        c = 0
        for e in range(indptr[v], indptr[v + 1]):
            if newid[indices[e]] >= 0:
                c += 1
        ptr[i + 1] = ptr[i] + c
    out = np.empty(ptr[k], np.int32)
    pos = np.empty(ptr[k], np.int64)
    for i in range(k):
        v = ids[i]
        j = ptr[i]
        for e in range(indptr[v], indptr[v + 1]):
            w = newid[indices[e]]
            if w >= 0:
                out[j] = w
                pos[j] = e
                j += 1
    return ptr, out, pos


class _Scratch:
    """The per-vertex arrays a ball takes (one set per thread)."""

    def __init__(self, n: int):
        self.seen = np.zeros(n, np.uint8)
        self.out = np.empty(n, np.int32)


def ball(graph: gthinker.Graph, roots, hops: int, allowed=None, scratch=None
         ) -> tuple[np.ndarray, int]:
    """The sorted vertices within ``hops`` of ``roots`` along ``graph``'s rows, through
    vertices ``allowed`` (a bool per vertex; None: all), and the entries (edges, each
    way) of the subgraph they induce."""
    n = graph.num_vertices
    scratch = scratch or _Scratch(n)
    allowed = np.ones(n, np.bool_) if allowed is None else allowed
    k, entries = _ball(graph.indptr, graph.indices, np.asarray(roots, np.int32), int(hops),
                       allowed, scratch.seen, scratch.out)
    return np.sort(scratch.out[:k]), int(entries)


def _bytes(graph, k: int, entries: int, per_vertex: float) -> int:
    labels = 4 * k if graph.labels is not None else 0
    return int(8 * (k + 1) + 4 * entries + labels + per_vertex * k)


#: A range grows until it is within this share of the largest that fits (a binary
#: search on its end stops there: ranges a little short of the cap, found in fewer
#: neighbourhoods).
CLOSE_ENOUGH = 1 / 8


def cut(graph: gthinker.Graph, roots, hops: int, cap: int, allowed=None,
        per_vertex: float = 0.0, always=(), oversized=None) -> list[np.ndarray]:
    """``roots`` (sorted) cut into consecutive ranges whose neighbourhoods (:func:`ball`)
    take at most ``cap`` bytes on the device, each about the largest that fits (from
    the last range's size, doubled while it fits, then halved back: within
    :data:`CLOSE_ENOUGH` of the largest). ``always``: vertices every range's
    neighbourhood starts from too. A root whose neighbourhood alone does not fit goes to
    the list ``oversized`` where one is given, else raises GraphTooLargeError."""
    roots = np.asarray(roots, np.int32)
    always = np.asarray(always, np.int32)
    scratch = _Scratch(graph.num_vertices)

    def need(part) -> int:
        ids, entries = ball(graph, np.concatenate([always, part]), hops, allowed, scratch)
        return _bytes(graph, ids.size, entries, per_vertex)

    done, start, size = [], 0, 1
    while start < roots.size:
        left = roots.size - start
        ok, bad, size = 0, left + 1, min(size, left)
        while bad - ok > max(1, int(ok * CLOSE_ENOUGH)):
            if need(roots[start:start + size]) <= cap:
                ok = size
                size = min(2 * size, left) if bad > left else (ok + bad) // 2
                if ok == left:
                    break
            else:
                bad = size
                size = (ok + bad) // 2
            if size <= ok:
                break
        if ok == 0 and oversized is not None:
            oversized.append(int(roots[start]))
            start += 1
            continue
        if ok == 0:
            v = int(graph.ids[roots[start]])
            raise GraphTooLargeError(
                f"the {hops}-hop neighbourhood of vertex {v} alone needs "
                f"{need(roots[start:start + 1]):,} bytes of GPU memory, more than the "
                f"{cap:,} a part may take; raise --gpu-memory, or run it with --mode cpu")
        done.append(roots[start:start + ok])
        start, size = start + ok, ok
    return done


class Part(NamedTuple):
    """A range's neighbourhood: ``graph`` (renumbered in vertex order; ``graph.ids``
    the original ids), ``roots`` (the range, renumbered) and ``vertices`` (the
    vertices of the whole graph it holds, sorted: part vertex i is ``vertices[i]``)."""

    graph: gthinker.Graph
    roots: np.ndarray
    vertices: np.ndarray


def induced(graph: gthinker.Graph, roots, hops: int, allowed=None) -> Part:
    """The :class:`Part` of ``roots``: the subgraph of ``graph`` induced by the vertices
    within ``hops`` of them."""
    ids, _ = ball(graph, roots, hops, allowed)
    newid = np.full(graph.num_vertices, -1, np.int32)
    newid[ids] = np.arange(ids.size, dtype=np.int32)
    ptr, out, pos = _induced(graph.indptr, graph.indices, ids, newid)
    labels = graph.labels[ids] if graph.labels is not None else None
    extra = {}
    edge_labels = getattr(graph, "edge_labels", None)
    if edge_labels is not None:  # (edge-labeled graphs: their labels travel too)
        extra["edge_labels"] = edge_labels[pos]
    sub = gthinker.Graph(ptr, out, ids=graph.ids[ids], labels=labels, **extra)
    return Part(sub, newid[np.asarray(roots, np.int64)], ids)


# ---- the job in parts -----------------------------------------------------------------

def run_parts(graph: gthinker.Graph, jobs: list, job, allowed=None) -> gthinker.JobResult:
    """``job(part, extra)`` (returns a :class:`gthinker.JobResult`) for each of ``jobs``,
    ``(roots, hops, extra)``: the part of ``roots`` and ``hops`` (:func:`induced`), in
    turn, the next part built on a host thread while the job runs; the results merged:
    counters summed, the figures of each part in ``stats["parts"]`` (``from_records``:
    given ``extra``, a hub's edges). Stops after a part that stopped (a limit, a stop
    token)."""
    results, figures = [], []
    jobs = jobs or [(np.zeros(0, np.int32), 0, None)]  # no roots: one empty part
    start = time.perf_counter()
    with ThreadPoolExecutor(1, thread_name_prefix="gthinker-parts") as pool:
        def build(item):
            t0 = time.perf_counter()
            return t0, induced(graph, item[0], item[1], allowed), time.perf_counter()

        ahead = pool.submit(build, jobs[0])
        for i in range(len(jobs)):
            t0, part, t1 = ahead.result()
            ahead = pool.submit(build, jobs[i + 1]) if i + 1 < len(jobs) else None
            res = job(part, jobs[i][2])
            results.append(res)
            figures.append({"roots": int(part.roots.size), "vertices": part.graph.num_vertices,
                            "edges": part.graph.num_edges, "bytes": graph_bytes(part.graph),
                            "from_records": jobs[i][2] is not None,
                            "build_seconds": t1 - t0, "seconds": res.seconds})
            del part
            if res.stopped:
                if ahead is not None:
                    ahead.cancel()
                break
    return _merged(results, figures, time.perf_counter() - start)


def _merged(results: list, figures: list, wall: float) -> gthinker.JobResult:
    """One result of the parts': the wall time of them all less compiling in
    ``seconds``."""
    first = results[0]
    counters = {k: sum(int(r.counters[k]) for r in results) for k in first.counters}
    maxima = {}
    for k in first.maxima:
        seen = [r.maxima[k] for r in results if r.maxima[k] is not None]
        maxima[k] = max(seen) if seen else None
    histograms = {k: sum(np.asarray(r.histograms[k]) for r in results) for k in first.histograms}
    stats = {**results[-1].stats, "parts": figures}
    return dataclasses.replace(
        first, counters=counters, maxima=maxima, histograms=histograms, stats=stats,
        seconds=wall - sum(r.compile_seconds for r in results),
        compile_seconds=sum(r.compile_seconds for r in results),
        stopped=next((r.stopped for r in results if r.stopped), None))


def hops_of(backward, first: int = 1) -> int:
    """The eccentricity of positions ``0..first-1`` of a matching order whose position d
    has the earlier neighbours ``backward[d]`` (positions): how far from its root (its
    first ``first`` vertices) a match reaches."""
    adj = [set() for _ in backward]
    for d, back in enumerate(backward):
        for b in back:
            adj[d].add(b)
            adj[b].add(d)
    seen = set(range(min(first, len(backward))))
    front, hops = set(seen), 0
    while True:
        front = {w for u in front for w in adj[u]} - seen
        if not front:
            return hops
        seen |= front
        hops += 1


# ---- the matching search in parts ---------------------------------------------------

def _bitmap_bytes(p: Plan) -> float:
    """Bytes per data vertex of ``p``'s candidate bitmaps (a bit per query vertex)."""
    return len(p.order) / 8


def search_cap(data: gthinker.Graph, p: Plan, gpu_memory: int | None) -> int | None:
    """:func:`cap_for` the graph and the candidate bitmaps of plan ``p``."""
    return cap_for(data, gpu_memory, _bitmap_bytes(p))


def search_in_parts(data: gthinker.Graph, p: Plan, cap: int, mode: str, **options
                    ) -> tuple[gthinker.JobResult, int]:
    """The matching search of plan ``p`` in parts of at most ``cap`` bytes (see the
    module docstring): ``(the merged job result, parts)``. ``options`` go to each
    part's :func:`gthinker.run` (``gpu``, ``threads``, ...); ``vertices``, if given,
    limits the roots. A root whose neighbourhood alone does not fit (a hub, two hops
    out) is searched from its edges instead (:func:`_edge_parts`)."""
    if p.pattern is None:
        raise ValueError("matching in parts needs the plan's pattern plan (plan())")
    roots = p.candidates[int(p.order[0])]
    within = options.pop("vertices", None)
    if within is not None:
        roots = np.intersect1d(roots, np.asarray(within, np.int64))
    allowed = np.zeros(data.num_vertices, np.bool_)
    for c in p.candidates:
        allowed[c] = True
    backward = p.pattern.backward
    hops = hops_of(backward)
    oversized = [] if len(p.order) > 1 else None
    ranges = cut(data, roots, hops, cap, allowed, _bitmap_bytes(p), oversized=oversized)
    jobs = [(r, hops, None) for r in ranges]
    for v in oversized or ():
        jobs += _edge_parts(data, p, v, cap, allowed)

    def job(part: Part, records) -> gthinker.JobResult:
        sub = plan_within(p, part.vertices)
        if records is None:
            return gthinker.run(SubgraphMatching, part.graph, mode=mode, params=sub.params,
                                vertices=part.roots, **options)
        return gthinker.run(SubgraphMatching, part.graph, mode=mode, params=sub.params,
                            vertices=[], records=records(part), **options)

    return run_parts(data, jobs, job, allowed), len(jobs)


def _edge_parts(data: gthinker.Graph, p: Plan, v: int, cap: int, allowed) -> list:
    """The parts of root ``v`` searched from its edges: the partial matches ``[2, v, w]``
    (``w`` its neighbours that may take the order's second position), cut into ranges of
    ``w`` whose neighbourhood with ``v``, as far as the rest of the match reaches from
    the first two positions, fits."""
    u0, u1 = int(p.order[0]), int(p.order[1])
    nb = data.neighbors(v)
    ws = nb[np.isin(nb, p.candidates[u1], assume_unique=True) & (nb != v)]
    for a, b in p.constraints:
        if (a, b) == (u0, u1):
            ws = ws[ws > v]
        elif (a, b) == (u1, u0):
            ws = ws[ws < v]
    hops = hops_of(p.pattern.backward, 2)
    try:
        ranges = cut(data, ws, hops, cap, allowed, _bitmap_bytes(p), always=[v])
    except GraphTooLargeError as e:
        raise GraphTooLargeError(f"{e} (searched from the edges of vertex "
                                 f"{int(data.ids[v])}, whose neighbourhood is larger)") from None

    def records(part: Part):
        # part.roots: [v, w...] renumbered (v first: induced() keeps the roots' order)
        pairs = np.empty((part.roots.size - 1, 3), np.int32)
        pairs[:, 0], pairs[:, 1], pairs[:, 2] = 2, part.roots[0], part.roots[1:]
        return pairs.ravel(), np.arange(0, pairs.size + 1, 3, dtype=np.int64)

    return [(np.concatenate([[v], r]).astype(np.int32), hops, records) for r in ranges]


# ---- the clique count in parts --------------------------------------------------------

def cliques_in_parts(dag: gthinker.Graph, k: int, cap: int, job, within=None
                     ) -> tuple[gthinker.JobResult, int]:
    """The k-cliques of the oriented graph ``dag`` in parts of at most ``cap`` bytes:
    a clique lies in its lowest vertex's out-neighbours, so a part is a range of roots
    (those with at least ``k - 1`` out-neighbours, of ``within`` if given) and the
    subgraph of its out-rows induced by the roots and their out-neighbours (one hop).
    ``job(part, records)`` counts a part's cliques from its roots, given as range
    records (:func:`range_records`); ``(merged result, parts)``."""
    roots = np.arange(dag.num_vertices, dtype=np.int64) if within is None \
        else np.asarray(within, np.int64)
    roots = roots[np.diff(dag.indptr)[roots] >= k - 1]
    ranges = cut(dag, roots, 1, cap)
    return run_parts(dag, [(r, 1, None) for r in ranges],
                     lambda part, _: job(part, range_records(np.sort(part.roots)))), len(ranges)


def range_records(roots) -> tuple[np.ndarray, np.ndarray]:
    """The range records ``[-1 - lo, hi]`` (:mod:`gthinker.apps.matching.ranges`) of the
    runs of consecutive vertices in ``roots`` (sorted), and their starts."""
    roots = np.asarray(roots, np.int64)
    if not roots.size:
        return np.zeros(0, np.int32), np.zeros(1, np.int64)
    breaks = np.flatnonzero(np.diff(roots) != 1) + 1
    lo = roots[np.concatenate([[0], breaks])]
    hi = roots[np.concatenate([breaks - 1, [roots.size - 1]])] + 1
    data = np.empty((lo.size, 2), np.int32)
    data[:, 0], data[:, 1] = -1 - lo, hi
    return data.ravel(), np.arange(0, data.size + 1, 2, dtype=np.int64)

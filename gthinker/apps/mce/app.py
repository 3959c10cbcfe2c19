"""Maximal clique enumeration (MCE), written on the public Task API as any user would.

Bron-Kerbosch with Tomita pivoting [1]_ [2]_. The graph is renumbered in
degeneracy order, so the initial task of vertex ``v`` is ``R = {v}``,
``P`` = its later neighbours and ``X`` = its earlier ones [3]_. Inside a task,
``P`` and ``X`` become bitsets over a local universe (``P`` first, then the
vertices of ``X`` that matter: of each set of ``X`` vertices with the same
neighbours in ``P``, one, and none without any, :mod:`.local`), so every set
operation is a few word-wide ANDs, and a hub's task, whose ``X`` may hold millions
of vertices, costs about as much as its distinct neighbourhoods in ``P``.
Choosing a pivot also settles a node without branching when a vertex of ``X``
is adjacent to all of ``P`` (no clique below is maximal) or ``P`` is itself a
clique (``R + P`` is the one maximal clique below), and drops from ``X`` the
vertices with no neighbour left in ``P``. A node with at most three vertices in
``P`` (nearly half of all nodes on social graphs) is settled without branching,
by a few word-wide ANDs per maximal clique of ``G[P]`` (when counting; listing
cliques takes the general loop).

When a task runs past the time budget it stops recursing: every branch not yet
taken, at every level of its search, becomes a task record ``(R + w, P & N(w),
X & N(w))`` for other workers, as in G-ThinkerCG's timeout decomposition.

Task record layout (int32): ``[|R|, |P|, |X|, R..., P..., X...]``, ``P`` and
``X`` sorted, ids of the degeneracy-ordered graph.

References
----------
.. [1] C. Bron and J. Kerbosch, "Algorithm 457: finding all cliques of an
   undirected graph", CACM 16(9), 1973.
.. [2] E. Tomita, A. Tanaka, H. Takahashi, "The worst-case time complexity for
   generating all maximal cliques", TCS 363(1), 2006.
.. [3] D. Eppstein, M. Loeffler, D. Strash, "Listing all maximal cliques in
   sparse graphs in near-optimal time", ISAAC 2010.

Examples
--------
>>> import networkx as nx, gthinker
>>> g = gthinker.Graph.from_networkx(nx.karate_club_graph())
>>> gthinker.apps.mce.run(g, threads=2).count
36
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

import gthinker
from gthinker.extending import (
    batches,
    check_output,
    count_bits,
    gather,
    intersect_positions,
    lowest_bit,
    pop_lowest,
    popcount,
    put,
    say_skeleton,
    unowned,
)

from .local import initial_record, merge, x_rows
from .options import HYBRID_CPU_CHUNK, HYBRID_GPU_CHUNK, MCEOptions

__all__ = ["CliqueBatch", "MaximalCliques", "MCEOptions", "MCEResult", "internal_ids",
           "iter_clique_batches", "iter_cliques", "run"]


@gthinker.compiler.jit("MCE functions", nogil=True, inline="always")
def _row_count(pb, row, pw):
    c = 0
    for t in range(pw):
        c += popcount(pb[t] & row[t])
    return c


@gthinker.compiler.jit("MCE functions", nogil=True, inline="always")
def _min_size(ctx):
    """The smallest clique to report: the run's ``params[0]`` (1 when it has none)."""
    return ctx.params[0] if ctx.params.size else 1


#: What :func:`_choose_pivot` returns instead of a pivot when no branching is needed.
_DOMINATED = -1  # a vertex of X is adjacent to all of P: no clique below is maximal
_ONE_CLIQUE = -2  # P is a clique no vertex of X extends: R + P is the one maximal clique


@gthinker.compiler.jit("MCE functions", nogil=True)
def _choose_pivot(pb, xb, ax, axp, p, pw, kw):
    """Tomita pivot: the vertex of P | X with the most neighbours in P (ties to
    the first of P, then of X), or ``_DOMINATED`` / ``_ONE_CLIQUE``. Clears from
    ``xb`` the vertices with no neighbour in P: P only shrinks below this node,
    so they can never block one of its cliques."""
    size = 0
    for t in range(pw):
        size += popcount(pb[t])
    best = -1
    best_count = -1
    clique = True
    for w in range(pw):
        word = pb[w]
        while word != 0:
            u = (w << 6) + lowest_bit(word)
            word &= word - 1
            c = _row_count(pb, ax[u], pw)
            if c != size - 1:
                clique = False
            if c > best_count:
                best_count = c
                best = u
    for w in range(kw):
        word = xb[w]
        while word != 0:
            b = lowest_bit(word)
            word &= word - 1
            u = (w << 6) + b
            c = _row_count(pb, ax[u], pw) if u < p else _row_count(pb, axp[u - p], pw)
            if c == size:
                return _DOMINATED
            if c == 0:
                xb[w] &= ~(1 << b)
            elif c > best_count:
                best_count = c
                best = u
    return _ONE_CLIQUE if clique else best


@gthinker.compiler.jit("MCE functions", nogil=True)
def _clique(rbase, pglob, rl, depth):
    out = np.empty(rbase.size + depth + 1, np.int32)
    put(out, 0, rbase)
    for d in range(depth + 1):
        out[rbase.size + d] = pglob[rl[d]]
    return out


@gthinker.compiler.jit("MCE functions", nogil=True)
def _emit(ctx, rbase, pglob, rl, depth, pb, pw):
    """Writes the clique R + rl[:depth + 1] + the vertices of bitset ``pb`` to the
    job's output."""
    nr = rbase.size + depth + 1
    out = np.empty(nr + count_bits(pb, pw), np.int32)
    put(out, 0, _clique(rbase, pglob, rl, depth))
    gather(pb, pw, pglob, out, nr)
    ctx.emit(out)


@gthinker.compiler.jit("MCE functions", nogil=True)
def _report(ctx, size):
    """Counts one maximal clique of ``size`` vertices (at least :func:`_min_size`)."""
    ctx.count(0, 1)
    ctx.update_max(0, size)
    ctx.add_to_histogram(0, size)


@gthinker.compiler.jit("MCE functions", nogil=True)
def _spill(ctx, rbase, pglob, xglob, rl, depth, pc, xc, p, pw, kw):
    """Hands the branch (R + rl[..depth], pc, xc) to other workers as a record."""
    np_ = count_bits(pc, pw)
    nx = count_bits(xc, kw)
    nr = rbase.size + depth + 1
    rec = np.empty(3 + nr + np_ + nx, np.int32)
    rec[0] = nr
    rec[1] = np_
    rec[2] = nx
    put(rec, 3, _clique(rbase, pglob, rl, depth))
    k = gather(pc, pw, pglob, rec, 3 + nr)
    # X bits below p are former P vertices, bits from p on are X' vertices:
    # two sorted runs of global ids, merged into one sorted list.
    lo = np.empty(nx, np.int32)
    hi = np.empty(nx, np.int32)
    nlo = 0
    nhi = 0
    for w in range(kw):
        word = xc[w]
        while word != 0:
            u = (w << 6) + lowest_bit(word)
            word &= word - 1
            if u < p:
                lo[nlo] = pglob[u]
                nlo += 1
            else:
                hi[nhi] = xglob[u - p]
                nhi += 1
    merge(lo, nlo, hi, nhi, rec, k)
    ctx.add_task(rec)


@gthinker.compiler.jit("MCE functions", nogil=True, inline="always")
def _unblocked(xb, ra, rb, kw):
    """True if no vertex of X is adjacent to both rows' vertices (to the one
    vertex, with ``ra`` given twice)."""
    for t in range(kw):
        if xb[t] & ra[t] & rb[t] != 0:
            return False
    return True


@gthinker.compiler.jit("MCE functions", nogil=True, inline="always")
def _tally(hist, size, ok, tally):
    """``tally`` = (cliques, largest size, smallest size counted), with one clique
    of ``size`` added if ``ok`` and it is big enough."""
    found, largest, min_size = tally
    if ok and size >= min_size:
        hist[size] += 1
        return found + 1, max(largest, size), min_size
    return tally


@gthinker.compiler.jit("MCE functions", nogil=True)
def _small_p(pb, xb, ax, pw, kw, base, hist, min_size):
    """The node with ``|P| <= 3`` settled without branching: its maximal cliques
    are R + C for each maximal clique C of G[P] (a triangle; else its edges and
    its isolated vertices) that no vertex of X is adjacent to all of. ``base`` is
    ``|R|``; sizes go into ``hist``, the cliques below ``min_size`` left out.
    Returns (cliques found, the largest size)."""
    a = b = c = -1
    for w in range(pw):
        word = pb[w]
        while word != 0:
            u = (w << 6) + lowest_bit(word)
            word &= word - 1
            if a < 0:
                a = u
            elif b < 0:
                b = u
            else:
                c = u
    t = (0, 0, min_size)
    ra = ax[a]
    rb = ax[b] if b >= 0 else ra
    rc = ax[c] if c >= 0 else ra
    ab = b >= 0 and (ra[b >> 6] >> (b & 63)) & 1 != 0
    ac = c >= 0 and (ra[c >> 6] >> (c & 63)) & 1 != 0
    bc = c >= 0 and (rb[c >> 6] >> (c & 63)) & 1 != 0
    if ab and ac and bc:
        free = True
        for w in range(kw):
            if xb[w] & ra[w] & rb[w] & rc[w] != 0:
                free = False
        t = _tally(hist, base + 3, free, t)
    else:
        t = _tally(hist, base + 2, ab and _unblocked(xb, ra, rb, kw), t)
        t = _tally(hist, base + 2, ac and _unblocked(xb, ra, rc, kw), t)
        t = _tally(hist, base + 2, bc and _unblocked(xb, rb, rc, kw), t)
        t = _tally(hist, base + 1, not (ab or ac) and _unblocked(xb, ra, ra, kw), t)
        t = _tally(hist, base + 1, b >= 0 and not (ab or bc) and _unblocked(xb, rb, rb, kw), t)
        t = _tally(hist, base + 1, c >= 0 and not (ac or bc) and _unblocked(xb, rc, rc, kw), t)
    return t[0], t[1]


@gthinker.compiler.jit("MCE functions", nogil=True, inline="always")
def _local_graph(indptr, indices, pglob, xall):
    """The subtree's graph as bitset rows over P (bits ``0..p-1``) then X' (bits
    ``p..``), X' being the vertices of X that matter (:func:`.local.x_rows`: a
    neighbour in P, one per distinct row over P): ``ax[u]``, the whole row of P
    vertex u; ``axp[x - p]``, the P part of X' vertex x. Returns ``(ax, axp, xglob,
    covered, widest)``, ``xglob`` the global ids of X', ``covered`` True if an X vertex
    is adjacent to all of P (the subtree has no maximal clique; the rest is empty),
    ``widest`` the most neighbours a P vertex has in P."""
    xglob, axp, covered = x_rows(indptr, indices, pglob, xall)
    p = pglob.size
    q = xglob.size
    kw = (p + q + 63) >> 6
    ax = np.zeros((p, kw), np.int64)
    pos = np.empty(max(p, 1), np.int32)
    widest = 0
    for i in range(p):
        v = pglob[i]
        c = intersect_positions(indices[indptr[v] : indptr[v + 1]], pglob, pos)
        widest = max(widest, c)
        for t in range(c):
            j = pos[t]
            ax[i, j >> 6] |= 1 << (j & 63)
    for x in range(q):
        j = p + x
        for w in range(axp.shape[1]):
            word = axp[x, w]
            while word != 0:
                i = (w << 6) + lowest_bit(word)
                word &= word - 1
                ax[i, j >> 6] |= 1 << (j & 63)
    return ax, axp, xglob, covered, widest


@gthinker.compiler.jit("MCE functions", nogil=True, inline="always")
def _bron_kerbosch(ctx, rbase, pglob, xall):
    """Enumerates the maximal cliques R + C, C a clique of P, with X as exclusions.

    The cliques are tallied in locals and the histogram row, and reach ``ctx``
    once at the end: a call that takes ``ctx`` costs a reference count per array
    in it, which per clique doubled the time of the whole search."""
    ax, axp, xglob, covered, widest = _local_graph(ctx.indptr, ctx.indices, pglob, xall)
    if covered:  # an X vertex extends every clique of this subtree
        return
    p = pglob.size
    k = p + xglob.size
    pw = (p + 63) >> 6
    kw = (k + 63) >> 6
    # The search adds at most a clique of G[P]: no more than ``widest + 1`` vertices, a
    # level each (a hub's X' makes each level wide; few levels keep that small).
    maxd = min(p, widest + 1) + 1
    ps = np.zeros((maxd, pw), np.int64)
    xs = np.zeros((maxd, kw), np.int64)
    cs = np.zeros((maxd, pw), np.int64)
    rl = np.empty(maxd, np.int32)
    for i in range(p):
        ps[0, i >> 6] |= 1 << (i & 63)
    for i in range(p, k):
        xs[0, i >> 6] |= 1 << (i & 63)
    _walk(ctx, rbase, pglob, xglob, ax, axp, ps, xs, cs, rl)


@gthinker.compiler.jit("MCE functions", nogil=True)
def _walk(ctx, rbase, pglob, xglob, ax, axp, ps, xs, cs, rl):
    """The search of :func:`_bron_kerbosch` from its root node (``ps[0]``, ``xs[0]``).
    Works on views of the arrays without reference counts (the caller holds them):
    Numba counts a view's references, atomically, at every row taken."""
    ax = unowned(ax)
    axp = unowned(axp)
    ps = unowned(ps)
    xs = unowned(xs)
    cs = unowned(cs)
    rl = unowned(rl)
    min_size = _min_size(ctx)
    emitting = ctx.emitting()
    hist = ctx.histograms[0]
    p = pglob.size
    pw = ps.shape[1]
    kw = xs.shape[1]
    piv = _choose_pivot(ps[0], xs[0], ax, axp, p, pw, kw)
    if piv == _ONE_CLIQUE:
        _report(ctx, rbase.size + p)
        if emitting:
            _emit(ctx, rbase, pglob, rl, -1, ps[0], pw)
    if piv < 0:  # settled
        return
    prow = ax[piv] if piv < p else axp[piv - p]
    for t in range(pw):
        cs[0, t] = ps[0, t] & ~prow[t]

    found = 0
    largest = 0
    depth = 0
    while depth >= 0:
        v = pop_lowest(cs[depth], pw)
        if v < 0:
            depth -= 1
            continue
        rl[depth] = v
        row = ax[v]
        pc = ps[depth + 1]
        xc = xs[depth + 1]
        psize = 0
        for t in range(pw):
            pc[t] = ps[depth, t] & row[t]
            psize += popcount(pc[t])
        xempty = True
        for t in range(kw):
            xc[t] = xs[depth, t] & row[t]
            if xc[t] != 0:
                xempty = False
        ps[depth, v >> 6] &= ~(1 << (v & 63))
        xs[depth, v >> 6] |= 1 << (v & 63)
        size = rbase.size + depth + 1 + psize  # of the largest clique below
        if size < min_size:
            continue
        if psize > 0 and ctx.timed_out():
            _spill(ctx, rbase, pglob, xglob, rl, depth, pc, xc, p, pw, kw)
            continue
        if 0 < psize <= 3 and not emitting:
            n, big = _small_p(pc, xc, ax, pw, kw, rbase.size + depth + 1, hist, min_size)
            found += n
            largest = max(largest, big)
            continue
        piv = _ONE_CLIQUE if psize == 0 and xempty else _DOMINATED
        if psize > 0:
            piv = _choose_pivot(pc, xc, ax, axp, p, pw, kw)
        if piv == _ONE_CLIQUE:  # R + P is maximal
            found += 1
            largest = max(largest, size)
            hist[size] += 1
            if emitting:
                _emit(ctx, rbase, pglob, rl, depth, pc, pw)
        if piv < 0:
            continue
        depth += 1
        prow = ax[piv] if piv < p else axp[piv - p]
        for t in range(pw):
            cs[depth, t] = ps[depth, t] & ~prow[t]
    ctx.count(0, found)
    ctx.update_max(0, largest)


class MaximalCliques(gthinker.Task):
    """Counts maximal cliques (and their sizes) of a degeneracy-ordered graph."""

    counters = ("cliques",)
    maxima = ("max_size",)
    histograms = ("size",)

    # spawn and compute stay thin; the work lives in the helpers above and below.
    # The compiled entry point is kept in gthinker's compile cache.
    @staticmethod
    def spawn(ctx, v):
        return initial_record(ctx.indptr, ctx.indices, v)

    @staticmethod
    def compute(ctx, record):
        _compute_record(ctx, record)


@gthinker.compiler.jit("MCE functions", nogil=True, inline="always")
def _compute_record(ctx, record):
    nr = record[0]
    np_ = record[1]
    nx = record[2]
    rbase = record[3 : 3 + nr]
    pglob = record[3 + nr : 3 + nr + np_]
    xall = record[3 + nr + np_ : 3 + nr + np_ + nx]
    if nr + np_ < _min_size(ctx):  # no clique of this subtree is big enough
        return
    if np_ == 0:
        if nx == 0:  # R itself is maximal
            _report(ctx, nr)
            if ctx.emitting():
                ctx.emit(rbase)
        return
    if _dominated(ctx.indptr, ctx.indices, pglob, xall):
        return
    _bron_kerbosch(ctx, rbase, pglob, xall)


@gthinker.compiler.jit("MCE functions", nogil=True)
def _dominated(indptr, indices, pglob, xall, tries=8):
    """True if one of a few vertices of X is adjacent to all of P: then every
    clique of this subtree extends by it, so none is maximal. Costs
    O(tries |P| log d); spares the bitset set-up (O(|P| d)) in dense cores,
    e.g. a complete graph, where every vertex task ends here."""
    nx = xall.size
    if nx == 0:
        return False
    pos = np.empty(pglob.size, np.int32)
    step = max(1, nx // tries)
    for j in range(0, nx, step):
        x = xall[j]
        nb = indices[indptr[x] : indptr[x + 1]]
        if nb.size >= pglob.size and intersect_positions(pglob, nb, pos) == pglob.size:
            return True
    return False


@dataclass
class MCEResult:
    """Result of :func:`run`: ``count`` maximal cliques, the largest of ``max_size``
    vertices, ``histogram[size] = number of maximal cliques of that size``."""

    count: int
    max_size: int
    histogram: dict[int, int]
    seconds: float
    mode: str
    threads: int
    stats: dict = field(default_factory=dict)
    #: Seconds spent compiling (0 when the compile cache had the code); not in ``seconds``.
    compile_seconds: float = 0.0
    #: Why this mode was chosen, when ``mode="auto"`` chose it.
    mode_reason: str = ""
    #: "stop" when a stop token ended the run early: the counts are partial.
    stopped: str | None = None

    def to_dict(self) -> dict:
        return {
            "count": self.count,
            "max_size": self.max_size,
            "histogram": {str(k): v for k, v in self.histogram.items()},
            "seconds": round(self.seconds, 6),
            "compile_seconds": round(self.compile_seconds, 6),
            "mode": self.mode,
            "mode_reason": self.mode_reason,
            "threads": self.threads,
            "stopped": self.stopped,
            "stats": self.stats,
        }


def _cpu_because(graph, output, containing=None) -> str:
    """Why auto mode should run on the CPU, or ''."""
    if output is not None:
        return "listing cliques runs on the CPU"
    if containing is not None:
        return "cliques containing given vertices run on the CPU"
    return gthinker.gpu.small_graph(graph)


def run(graph: gthinker.Graph, *, containing=None, progress=None, **options) -> MCEResult:
    """Enumerates the maximal cliques of ``graph``.

    Parameters
    ----------
    graph : gthinker.Graph, or anything :func:`gthinker.as_graph` accepts
        (a path, a networkx graph, a scipy.sparse matrix, an edge array)
    containing : sequence of vertices, optional
        Only the maximal cliques that contain all of these vertices (original
        ids, or node names for a graph built from networkx names), as
        networkx ``find_cliques(G, nodes)``: they must form a clique
        (ValueError otherwise). The search starts from one task whose ``R``
        is these vertices and whose ``P`` is their common neighbours. CPU only.
    progress : callable, optional
        Called with the runtime's snapshot dict every couple of seconds.
    **options
        The options of :class:`MCEOptions`, each with its default and rule (as
        ``gthinker mce --help`` lists them): ``mode`` (``"gpu"`` searches on the GPU
        alone, ``"hybrid"`` on the GPU beside the CPU workers; ``"auto"`` is hybrid
        where a CUDA GPU is usable and cpu elsewhere, and with ``output`` or
        ``containing``), ``gpu_engine`` (``"bitsets"``, a warp per subtree over a
        bitset graph, :mod:`gthinker.apps.mce.bitsets_gpu`; ``"levels"``, the
        level-by-level :class:`gthinker.apps.mce.levels_gpu.MaximalCliquesGPU` on the
        framework's GPU worker, the one engine that takes the GPU worker's options;
        ``"auto"``: bitsets, whatever the degrees), ``min_size`` (only the maximal
        cliques of at least this many vertices count, and are written; the CPU search
        prunes every subtree whose ``|R| + |P|`` is smaller, so a large ``min_size`` also
        saves time, while the GPU engines search everything and filter by size at the
        end), ``output`` (stream every maximal clique to this file, one per line,
        original vertex ids), ``trace``, ``gpu_node_budget``, ``gpu_cpu_share``,
        ``gpu_scratch_bytes``; and those of :func:`gthinker.run` (``threads``,
        ``time_budget``, ``cpu_chunk``: by default :data:`HYBRID_CPU_CHUNK` in hybrid mode,
        ``spill_limit``, ``stop``, ...).

    Returns
    -------
    MCEResult
        ``count`` maximal cliques (an isolated vertex is one of size 1, as in
        networkx ``find_cliques`` and igraph ``maximal_cliques``), ``max_size``
        the largest, and ``histogram``, the number of maximal cliques of each
        size ``{size: count}`` (sizes with none left out), all counted
        without listing the cliques. With ``min_size``, the cliques of at
        least that size; ``max_size`` is 0 if there are none.
    """
    # The arguments first, before a graph file is read.
    opts, options = MCEOptions.split(options)
    output = opts.output
    check_output(output, [graph])
    graph = gthinker.as_graph(graph)
    say_skeleton(graph, "mce")
    if containing is not None and len(containing) == 0:
        containing = None
    if containing is not None and opts.mode in ("gpu", "hybrid"):
        raise ValueError("cliques containing given vertices (containing=) run on the CPU "
                         "only; use mode='cpu'")
    mode, why = gthinker.gpu.resolve_mode(
        opts.mode, cpu_because=_cpu_because(graph, output, containing))
    gpu_engine = "bitsets" if opts.gpu_engine == "auto" else opts.gpu_engine
    seeds = None if containing is None else internal_ids(graph, containing)
    order, _core_numbers = graph.degeneracy_order()
    ordered = graph.degeneracy_ordered()
    bins = graph.degeneracy + 2
    if seeds is not None:
        rank = np.empty(graph.num_vertices, np.int64)
        rank[order] = np.arange(graph.num_vertices)
        options.update(vertices=[], records=[_seed_record(ordered, rank[seeds], containing)])
    if mode in ("gpu", "hybrid"):
        options["gpu"] = _engine(gpu_engine, opts)
        if mode == "hybrid" and gpu_engine == "bitsets" and options.get("gpu_chunk") is None:
            share, least = HYBRID_GPU_CHUNK
            options["gpu_chunk"] = max(least, ordered.num_vertices // share)
    if mode == "hybrid" and options.get("cpu_chunk") is None:
        options["cpu_chunk"] = HYBRID_CPU_CHUNK
    res = gthinker.run(
        MaximalCliques,
        ordered,
        mode=mode,
        histogram_bins=bins,
        output=output,
        trace=opts.trace,
        progress=progress,
        params=[opts.min_size],
        **options,
    )
    if mode in ("gpu", "hybrid"):
        res.stats["gpu_engine"] = gpu_engine
    _add_memory(res.stats)
    return _result(res, mode, why, opts.min_size)


def _add_memory(stats: dict) -> None:
    """``stats["gpu_peak_bytes"]``, what the GPU engine allocated at its peak (graph,
    scratch, buffers; summed over GPUs) where it says, beside the job's
    ``host_peak_bytes``, this process's peak resident memory."""
    gpu = stats.get("gpu", {})
    peak = gpu.get("peak_bytes", gpu.get("buffer_bytes"))
    if peak is not None:
        stats["gpu_peak_bytes"] = int(peak)


def internal_ids(graph: gthinker.Graph, vertices) -> np.ndarray:
    """The internal ids (0..n-1) of ``vertices``, given as original ids or, for
    a graph with :attr:`~gthinker.Graph.node_names`, as node names; ValueError
    names the first one that is not in the graph."""
    vertices = list(vertices)
    if graph.node_names is not None:
        index = {name: i for i, name in enumerate(graph.node_names)}
        missing = [v for v in vertices if v not in index]
        found = [index.get(v, -1) for v in vertices]
    else:
        ids = np.asarray(graph.ids)
        by_id = np.argsort(ids, kind="stable")
        asked = np.array([v if isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                          else -1 for v in vertices], np.int64)
        pos = np.minimum(np.searchsorted(ids, asked, sorter=by_id), max(ids.size - 1, 0))
        hit = (ids[by_id[pos]] == asked) if ids.size else np.zeros(asked.size, bool)
        missing = [v for v, h in zip(vertices, hit.tolist(), strict=True) if not h]
        found = by_id[pos] if ids.size else []
    if missing:
        raise ValueError(f"vertex {missing[0]!r} is not in the graph")
    return np.asarray(found, np.int64)


def _seed_record(ordered: gthinker.Graph, seeds: np.ndarray, containing) -> np.ndarray:
    """The task ``[|R|, |P|, 0, R..., P...]`` whose maximal cliques are those that
    contain ``seeds`` (ids of ``ordered``): R = the seeds, P = their common
    neighbours (a clique K ⊇ R is maximal iff K - R is a maximal clique of P)."""
    common = None
    for v in seeds.tolist():
        if common is not None and not np.isin(v, common):
            raise ValueError(f"the vertices {list(containing)!r} do not form a clique")
        nb = ordered.neighbors(v)
        common = nb if common is None else np.intersect1d(common, nb, assume_unique=True)
    return np.concatenate([[seeds.size, common.size, 0], np.sort(seeds), common]).astype(np.int32)


def _engine(gpu_engine, opts):
    """The GPU engine class of ``gpu_engine`` (with the options of :class:`MCEOptions`)."""
    if gpu_engine == "levels":
        from .levels_gpu import MaximalCliquesGPU

        return MaximalCliquesGPU
    from .bitsets_gpu import BitsetsEngine

    return BitsetsEngine.configured(budget=opts.gpu_node_budget, cpu_share=opts.gpu_cpu_share,
                                    scratch_bytes=opts.gpu_scratch_bytes)


def _result(res, mode, why, min_size) -> MCEResult:
    """The MCEResult of a finished job. The GPU engines count cliques of every
    size: only the sizes from ``min_size`` on are kept (the CPU search has
    none smaller)."""
    hist = res.histograms["size"].copy()
    hist[:min_size] = 0
    sizes = np.flatnonzero(hist)
    return MCEResult(
        count=int(hist.sum()),
        max_size=int(sizes[-1]) if sizes.size else 0,
        histogram={int(s): int(hist[s]) for s in sizes},
        seconds=res.seconds,
        mode=mode,
        threads=res.threads,
        stats=res.stats,
        compile_seconds=res.compile_seconds,
        mode_reason=why,
        stopped=res.stopped,
    )


class CliqueBatch(NamedTuple):
    """Maximal cliques read together: clique ``i`` is
    ``vertices[offsets[i]:offsets[i + 1]]`` (int64 original ids, in the order
    the search found them; sizes ``np.diff(offsets)``)."""

    vertices: np.ndarray
    offsets: np.ndarray


def iter_clique_batches(graph, threads: int | None = None, **options):
    """Yields the maximal cliques of ``graph`` in :class:`CliqueBatch` es, while
    the search runs (:func:`gthinker.extending.batches`: the search writes binary
    records into a pipe on a background thread; each batch is what the pipe held,
    up to about a megabyte), so the first cliques arrive long before the search
    ends, and memory stays bounded: while the consumer does not read, the workers
    wait. Closing the generator early (``break``, ``close()``, garbage collection)
    stops the search and removes the pipe. Options as :func:`run` (``min_size``,
    ``containing``, ...); CPU only.
    """
    graph = gthinker.as_graph(graph)

    def search(**output):
        run(graph, threads=threads, **output, **options)

    # Closed explicitly: a generator only dropped may be closed late (when the
    # garbage collector finds it), and its search would run on meanwhile.
    with contextlib.closing(batches(search)) as found:
        for batch in found:
            yield CliqueBatch(batch.values, batch.offsets)


def iter_cliques(graph, threads: int | None = None, **options):
    """Yields every maximal clique of ``graph``, in the graph's own vertex ids,
    as the search finds them (see :func:`iter_clique_batches`: bounded memory,
    the search stops when the generator is closed).

    Each clique is a sorted int64 array of original ids, or a list of node
    names for a networkx graph whose nodes are not integers. Order differs
    from networkx ``find_cliques``. Options as :func:`run` (``min_size``,
    ``containing``, ...).

    >>> import networkx as nx
    >>> sorted(len(c) for c in iter_cliques(nx.path_graph(4), threads=1))
    [2, 2, 2]
    >>> sorted(c.tolist() for c in iter_cliques(nx.complete_graph(4), min_size=4, threads=1))
    [[0, 1, 2, 3]]
    """
    graph = gthinker.as_graph(graph)
    names = graph.node_names
    with contextlib.closing(iter_clique_batches(graph, threads, **options)) as batches:
        for batch in batches:
            bounds = batch.offsets.tolist()
            for a, b in zip(bounds[:-1], bounds[1:], strict=True):
                ids = np.sort(batch.vertices[a:b])
                yield [names[i] for i in ids.tolist()] if names is not None else ids

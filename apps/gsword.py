"""gSWORD: sampling-based subgraph counting (estimates of the number of embeddings).

A random-walk (RW) estimator draws *samples*: a sample maps the query vertices
one at a time, in a matching order, to data vertices, each chosen at random
among the candidates that the partial match allows, and multiplies the sizes
(weights) of the sets it chose from. A sample that completes a match is worth
that product (the inverse of its probability, Horvitz-Thompson); one that dies
is worth 0. The mean over samples is an unbiased estimate of the number of
embeddings (the count of :func:`gthinker.apps.sm.count` with ``unique=False``).

Everything runs on the **candidate graph** (:func:`candidate_graph`): the
global candidates ``C(u)`` of the SM app's label/degree/NLF filtering, and for
every query edge ``(u_j, u_d)`` with ``j`` before ``d`` in the order, a CSR
from each candidate of ``u_j`` to its local candidates
``C(u_j, u_d, v) = N(v) & C(u_d)``, stored as indices into ``C(u_d)``.

**Estimators** follow gSWORD's Refine-Sample-Validate steps. An estimator is
a subclass of :class:`Estimator` with three small functions, written once in
plain Python and compiled for the CPU (Numba) and for the GPU (Numba-CUDA):

``refine(cgp, cgi, inst, d, v, src) -> bool``
    keep candidate ``v`` of position ``d``? (``inst[:d]``: the partial
    instance, as candidate indices; ``src``: the backward edge whose local
    list the candidates come from).
``weight(cgp, cgi, inst, d, v) -> float``
    the Sample step's weight of a kept candidate (1.0: uniform). A candidate
    is chosen with probability ``w / W``, ``W`` the total weight, and the
    sample's weight is multiplied by ``W / w``.
``validate(cgp, cgi, inst, d, v, src) -> bool``
    is ``inst[:d] + v`` still a valid partial instance? A sample that fails
    dies.

With ``refines = False`` the Refine step keeps every local candidate and the
Sample step is uniform, picked in O(1) without a scan (WanderJoin). Estimator
functions may call the candidate-graph helpers of this module
(:data:`HELPERS`); import them by name.

On the GPU (:mod:`gthinker.apps.gsword_gpu`) samples run 32 to a warp, with
per-block sample pools, sample inheritance and warp streaming. **Trawling**
stops some samples after ``d`` vertices and counts the rest of their matches
exactly on the CPU workers, as framework tasks running the SM app's
enumeration, while the GPU samples the next batch.
"""

from __future__ import annotations

import math
import threading
import time
import types as pytypes
from dataclasses import dataclass, field

import numpy as np
from numba import njit

import gthinker
from gthinker.runtime import MAX_THREADS, positive_int

from . import sm

__all__ = ["Alley", "CandidateGraph", "Estimator", "GSwordResult", "HELPERS", "WanderJoin",
           "candidate_graph", "estimate", "estimators", "quicksi_order"]

#: Largest query the samplers take (per-sample state lives in fixed-size arrays).
MAX_QUERY = 32
#: Samples per round: one warp's worth. Rounds are the units of the standard error.
ROUND = 32
#: The most samples one estimate takes (each batch keeps 16 bytes per ROUND samples).
MAX_SAMPLES = 2**34

# ---- the candidate graph (host side) --------------------------------------------------

# Header of cgp (int64): offsets of its arrays.
_G_NQ, _G_COFF, _G_BPTR, _G_BPOS, _G_ROWS = 0, 1, 2, 3, 4
_G_HEADER = 5


@dataclass
class CandidateGraph:
    """The candidate graph in gSWORD's format, flattened into two arrays.

    ``cgp`` (int64): a header, then ``coff`` (where each position's global
    candidates start in ``cgi``), ``bptr``/``bpos`` (per position ``d``, a
    CSR of its backward edges: the earlier positions ``j`` adjacent to it),
    and per backward edge the row pointers of its CSR (absolute offsets into
    ``cgi``, one row per candidate of ``j``). ``cgi`` (int32): the global
    candidates (data vertex ids, sorted) and the local candidate lists
    (indices into ``C(u_d)``, sorted).
    """

    order: np.ndarray  # query vertex at each position
    candidates: list  # per position: sorted data vertex ids
    cgp: np.ndarray
    cgi: np.ndarray
    edges: int  # candidate-graph edges stored

    @property
    def num_positions(self) -> int:
        return len(self.order)

    def empty(self) -> bool:
        return any(len(c) == 0 for c in self.candidates)


def _edge_weights(data, cands, query):
    """Per query edge (u, w): the number of data edges between C(u) and C(w)."""
    out = {}
    for u in range(query.num_vertices):
        for w in query.neighbors(u):
            w = int(w)
            if w < u:
                continue
            mask = np.zeros(data.num_vertices, bool)
            mask[cands[w]] = True
            hits = mask[data.indices].astype(np.int64)
            csum = np.concatenate(([0], np.cumsum(hits)))
            c = cands[u]
            out[u, w] = out[w, u] = int((csum[data.indptr[c + 1]] - csum[data.indptr[c]]).sum())
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


def _order(data, query, cands, order):
    if isinstance(order, str):
        if order == "quicksi":
            return quicksi_order(data, query, cands)
        if order == "sm":
            return sm.matching_order(query, cands)
        raise ValueError(f"order must be 'quicksi', 'sm' or a list of query vertices, "
                         f"got {order!r}")
    return sm._checked_order(query, order)


def candidate_graph(data, query, order="quicksi") -> CandidateGraph:
    """Builds the candidate graph of ``query`` in ``data`` (see :class:`CandidateGraph`).

    ``order``: ``"quicksi"`` (default), ``"sm"`` (the SM app's order) or an
    explicit permutation of the query vertices."""
    data = gthinker.as_graph(data)
    query = sm.as_query(query)
    sm._check(data, query)
    nq = query.num_vertices
    if nq > MAX_QUERY:
        raise ValueError(f"the query has {nq} vertices; gsword samples queries of at most "
                         f"{MAX_QUERY}")
    cands = sm.filter_candidates(data, query)
    order = _order(data, query, cands, order)
    pos = np.empty(nq, np.int64)
    pos[order] = np.arange(nq)
    pc = [cands[int(u)].astype(np.int32) for u in order]  # candidates per position
    back = [sorted(int(pos[w]) for w in query.neighbors(int(order[d])) if pos[w] < d)
            for d in range(nq)]
    coff = np.zeros(nq + 1, np.int64)
    coff[1:] = np.cumsum([len(c) for c in pc])
    pieces = list(pc)
    cgi_len = int(coff[-1])
    rows_blocks, bpos = [], []
    indptr, indices = data.indptr, data.indices
    for d in range(nq):
        index_of = np.full(data.num_vertices, -1, np.int64)
        index_of[pc[d]] = np.arange(len(pc[d]))
        for j in back[d]:
            c = pc[j].astype(np.int64)
            deg = indptr[c + 1] - indptr[c]
            starts = np.repeat(indptr[c], deg)
            within = np.arange(int(deg.sum())) - np.repeat(np.cumsum(deg) - deg, deg)
            mapped = index_of[indices[starts + within]]
            keep = mapped >= 0
            rows = np.repeat(np.arange(len(c)), deg)[keep]
            counts = np.bincount(rows, minlength=len(c))
            ptr = np.zeros(len(c) + 1, np.int64)
            ptr[1:] = np.cumsum(counts)
            rows_blocks.append(ptr + cgi_len)
            pieces.append(mapped[keep].astype(np.int32))
            cgi_len += int(ptr[-1])
            bpos.append(j)
    bptr = np.zeros(nq + 1, np.int64)
    bptr[1:] = np.cumsum([len(b) for b in back])
    header = np.zeros(_G_HEADER, np.int64)
    header[_G_NQ] = nq
    off = _G_HEADER
    header[_G_COFF] = off
    off += nq + 1
    header[_G_BPTR] = off
    off += nq + 1
    header[_G_BPOS] = off
    off += len(bpos)
    header[_G_ROWS] = off  # per backward edge: where its row pointers start in cgp
    row_starts = np.zeros(len(rows_blocks), np.int64)
    off += len(rows_blocks)
    for e, blk in enumerate(rows_blocks):
        row_starts[e] = off
        off += len(blk)
    cgp = np.concatenate([header, coff, bptr, np.array(bpos, np.int64), row_starts]
                         + rows_blocks).astype(np.int64)
    cgi = np.concatenate(pieces).astype(np.int32) if pieces else np.zeros(0, np.int32)
    return CandidateGraph(order=order, candidates=pc, cgp=cgp, cgi=cgi,
                          edges=int(cgi_len - coff[-1]))


# ---- device-neutral helpers ---------------------------------------------------------
# Plain Python, compiled per target (njit for the CPU, cuda.jit(device=True) for
# the GPU) by _namespace(): the functions below call each other by name, and the
# name resolves to the same target's version.

_U64 = np.uint64
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0
_TRAWL_STREAM = np.uint64(0x7A3D5C1B2E4F6A8D)


def num_positions(cgp):
    """Positions (query vertices) of the candidate graph."""
    return cgp[0]


def num_candidates(cgp, d):
    """|C(u_d)|: global candidates of position d."""
    return cgp[cgp[1] + d + 1] - cgp[cgp[1] + d]


def vertex(cgp, cgi, d, v):
    """Data vertex id of candidate index v of position d."""
    return cgi[cgp[cgp[1] + d] + v]


def num_back(cgp, d):
    """Backward edges of position d (earlier positions adjacent to it)."""
    return cgp[cgp[2] + d + 1] - cgp[cgp[2] + d]


def back_position(cgp, d, k):
    """The earlier position j of position d's k-th backward edge."""
    return cgp[cgp[3] + cgp[cgp[2] + d] + k]


def local_range(cgp, d, k, vj):
    """(lo, hi): cgi[lo:hi] is C(u_j, u_d, vj), as sorted candidate indices of
    position d, for d's k-th backward edge (j, d) and candidate vj of j."""
    rows = cgp[cgp[4] + cgp[cgp[2] + d] + k]
    return cgp[rows + vj], cgp[rows + vj + 1]


def contains(cgi, lo, hi, v):
    """Is v in the sorted cgi[lo:hi]? (binary search)"""
    while lo < hi:
        mid = (lo + hi) >> 1
        x = cgi[mid]
        if x == v:
            return True
        if x < v:
            lo = mid + 1
        else:
            hi = mid
    return False


def in_local(cgp, cgi, inst, d, k, v):
    """Is candidate v of position d a local candidate along d's k-th backward
    edge, i.e. adjacent to the data vertex matched at that edge's position?"""
    lo, hi = local_range(cgp, d, k, inst[back_position(cgp, d, k)])
    return contains(cgi, lo, hi, v)


def in_all_local(cgp, cgi, inst, d, v, skip):
    """v is a local candidate along every backward edge of d except ``skip``."""
    for k in range(num_back(cgp, d)):
        if k != skip and not in_local(cgp, cgi, inst, d, k, v):
            return False
    return True


def injective(cgp, cgi, inst, d, v):
    """The data vertex of candidate v of d is not matched at an earlier position."""
    x = vertex(cgp, cgi, d, v)
    for p in range(d):
        if vertex(cgp, cgi, p, inst[p]) == x:
            return False
    return True


#: Helpers an estimator's functions may call (import them by name).
HELPERS = ("num_positions", "num_candidates", "vertex", "num_back", "back_position",
           "local_range", "contains", "in_local", "in_all_local", "injective")


def _mix(z):
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


def _rng_init(seed, sid):
    """Counter-based stream of sample ``sid``: the same draws whichever thread
    or warp runs the sample, so a seed reproduces the run."""
    return _mix(_U64(seed) ^ _mix(_U64(sid) * _GOLDEN + _GOLDEN))


def _rng_next(state):
    state = state + _GOLDEN
    return state, float(_mix(state) >> _S11) * _INV53


def _trawl_depth(seed, sid, nq):
    """d with P(d = j) proportional to 2^-j for j in [min(3, nq), nq]."""
    lo = 3 if nq > 3 else nq
    s = _rng_init(_U64(seed) ^ _TRAWL_STREAM, sid)
    s, u = _rng_next(s)
    total = 0.0
    for j in range(lo, nq + 1):
        total += 2.0 ** (lo - j)
    acc = 0.0
    for j in range(lo, nq + 1):
        acc += 2.0 ** (lo - j) / total
        if u < acc:
            return j
    return nq


def _source(cgp, inst, d):
    """The backward edge of d with the shortest local candidate list: (k, lo, hi)."""
    best, blo, bhi = -1, 0, 0
    for k in range(num_back(cgp, d)):
        lo, hi = local_range(cgp, d, k, inst[back_position(cgp, d, k)])
        if best < 0 or hi - lo < bhi - blo:
            best, blo, bhi = k, lo, hi
    return best, blo, bhi


def _stream(cgp, cgi, inst, d, src, lo, hi, cur, curw, total, state):
    """Refine and Sample over cgi[lo:hi], one candidate at a time: a weighted
    reservoir of one (the kept candidate is v with probability w / total)."""
    for i in range(lo, hi):
        v = cgi[i]
        if _est_refine(cgp, cgi, inst, d, v, src):  # noqa: F821 - bound per estimator
            w = _est_weight(cgp, cgi, inst, d, v)  # noqa: F821
            if w > 0.0:
                total += w
                state, u = _rng_next(state)
                if u * total < w:
                    cur = v
                    curw = w
    return cur, curw, total, state


def _uniform(cgi, lo, hi, state):
    """Uniform pick from cgi[lo:hi] in O(1) (no Refine step)."""
    state, u = _rng_next(state)
    n = hi - lo
    i = int(u * n)
    if i >= n:
        i = n - 1
    return cgi[lo + i], state


def _first(cgp, state):
    """Uniform candidate of position 0: (index, |C(u_0)|, state); index -1 when
    there is none."""
    n0 = num_candidates(cgp, 0)
    if n0 == 0:
        return -1, n0, state
    state, u = _rng_next(state)
    i = int(u * n0)
    if i >= n0:
        i = n0 - 1
    return i, n0, state


def _step(cgp, cgi, inst, d, weight, state, refines):
    """Refine, Sample and Validate at position d: (alive, weight, state), with
    inst[d] set when alive."""
    src, lo, hi = _source(cgp, inst, d)
    if hi <= lo:
        return False, weight, state
    if refines:
        v, curw, total, state = _stream(cgp, cgi, inst, d, src, lo, hi, -1, 0.0, 0.0, state)
        if total <= 0.0:
            return False, weight, state
        weight *= total / curw
    else:
        v, state = _uniform(cgi, lo, hi, state)
        weight *= float(hi - lo)
    if not _est_validate(cgp, cgi, inst, d, v, src):  # noqa: F821 - bound per estimator
        return False, weight, state
    inst[d] = v
    return True, weight, state


def _sample_one(cgp, cgi, inst, seed, sid, td, refines):
    """One sample on the CPU (no warp): returns (weight, d). d == nq: a full
    valid instance of that weight; 0 < d < nq: stopped for trawling after d
    vertices with that weight; d == 0: the sample died (weight 0)."""
    nq = num_positions(cgp)
    i, n0, state = _first(cgp, _rng_init(seed, sid))
    if i < 0:
        return 0.0, 0
    inst[0] = i
    weight = float(n0)
    for d in range(1, nq):
        if d == td:
            return weight, d
        alive, weight, state = _step(cgp, cgi, inst, d, weight, state, refines)
        if not alive:
            return 0.0, 0
    return weight, nq


def _walk_from(cgp, cgi, inst, start, seed, sid, walks, refines):
    """Mean of ``walks`` samples that start from the partial instance
    inst[:start]: an unbiased estimate of its number of full matches."""
    nq = num_positions(cgp)
    total_value = 0.0
    base = inst.copy()
    for t in range(walks):
        state = _rng_init(seed, sid * 1000003 + t)
        inst[:] = base
        weight = 1.0
        alive = True
        for d in range(start, nq):
            alive, weight, state = _step(cgp, cgi, inst, d, weight, state, refines)
            if not alive:
                break
        if alive:
            total_value += weight
    inst[:] = base
    return total_value / walks


def _walk_many(cgp, cgi, t_inst, t_depth, slots, seed, first, every, walks, refines, out):
    """out[j] = _walk_from of trawl slot slots[j] (a sample cut off at depth
    t_depth[slot], global sample first + slot * every)."""
    for j in range(slots.size):
        s = slots[j]
        inst = t_inst[s].copy()
        out[j] = _walk_from(cgp, cgi, inst, t_depth[s], seed, first + s * every, walks, refines)


def _sample_rounds(cgp, cgi, seed, first, n, r_lo, r_hi, every, refines,
                   out_sum, out_valid, t_inst, t_depth, t_weight):
    """CPU sampler: rounds r_lo..r_hi of a batch of n samples (sample i of the
    batch is global sample first + i). Sample i is trawled when every > 0 and
    i % every == 0, into trawl slot i // every."""
    nq = num_positions(cgp)
    inst = np.zeros(nq, np.int32)
    for r in range(r_lo, r_hi):
        s = 0.0
        valid = 0
        for lane in range(32):
            i = r * 32 + lane
            if i >= n:
                break
            td = 0
            if every > 0 and i % every == 0:
                td = _trawl_depth(seed, first + i, nq)
                if td >= nq:
                    td = 0
            w, d = _sample_one(cgp, cgi, inst, seed, first + i, td, refines)
            if d == nq:
                s += w
                valid += 1
            elif d > 0:
                slot = i // every
                t_depth[slot] = d
                t_weight[slot] = w
                t_inst[slot, :d] = inst[:d]
        out_sum[r] = s
        out_valid[r] = valid


_DUAL = (num_positions, num_candidates, vertex, num_back, back_position, local_range, contains,
         in_local, in_all_local, injective, _mix, _rng_init, _rng_next, _trawl_depth, _source,
         _stream, _uniform, _first)
_CPU_ONLY = (_step, _sample_one, _walk_from, _walk_many, _sample_rounds)


# ---- estimators ---------------------------------------------------------------------


class Estimator:
    """Base class of a RW estimator (see the module docs). Subclass it and define
    ``refine``, ``weight`` and ``validate`` as static methods; the defaults keep
    every candidate, weigh them alike and check nothing."""

    name = "estimator"
    #: False: the Refine step keeps every local candidate and Sample is uniform,
    #: picked in O(1) (``refine`` and ``weight`` are not called).
    refines = True

    @staticmethod
    def refine(cgp, cgi, inst, d, v, src):
        return True

    @staticmethod
    def weight(cgp, cgi, inst, d, v):
        return 1.0

    @staticmethod
    def validate(cgp, cgi, inst, d, v, src):
        return True


class WanderJoin(Estimator):
    """WanderJoin: a random walk on the candidate graph. The next vertex is
    drawn from one local candidate list (the shortest), uniformly; Validate
    checks injectivity and the other backward edges."""

    name = "wj"
    refines = False

    @staticmethod
    def validate(cgp, cgi, inst, d, v, src):
        return injective(cgp, cgi, inst, d, v) and in_all_local(cgp, cgi, inst, d, v, src)


class Alley(Estimator):
    """Alley: Refine keeps the candidates adjacent to every matched backward
    neighbour (the intersection of the local lists), so each sampled vertex
    keeps the instance valid but for injectivity, which Validate checks."""

    name = "alley"
    refines = True

    @staticmethod
    def refine(cgp, cgi, inst, d, v, src):
        return in_all_local(cgp, cgi, inst, d, v, src)

    @staticmethod
    def validate(cgp, cgi, inst, d, v, src):
        return injective(cgp, cgi, inst, d, v)


def estimators() -> dict:
    """The bundled estimators by name."""
    return {"wj": WanderJoin, "alley": Alley}


_NAMESPACES: dict = {}
_NS_LOCK = threading.Lock()


def _rebind(fn, ns, name=None):
    return pytypes.FunctionType(fn.__code__, ns, name or fn.__name__, fn.__defaults__,
                                fn.__closure__)


def _namespace(est, target):
    """This module's helpers and ``est``'s three functions compiled for
    ``target`` ("cpu" or "cuda"), in one namespace where they find each other."""
    key = (est, target)
    with _NS_LOCK:
        if key in _NAMESPACES:
            return _NAMESPACES[key]
        if target == "cpu":
            def jit(f):
                return njit(nogil=True)(f)
            funcs = _DUAL + _CPU_ONLY
        else:
            from numba import cuda

            def jit(f):
                return cuda.jit(device=True)(f)
            funcs = _DUAL
        ns = dict(globals())
        for f in funcs:
            ns[f.__name__] = jit(_rebind(f, ns))
        for role in ("refine", "weight", "validate"):
            fn = getattr(est, role)
            if not callable(fn):
                raise TypeError(f"{est.__qualname__}.{role} must be a function")
            g = dict(fn.__globals__)
            g.update({h: ns[h] for h in HELPERS})
            ns["_est_" + role] = jit(_rebind(fn, g))
        if target == "cpu":  # the one function called from Python (cut-off trawls)
            gthinker.cache.attach(ns["_walk_many"], target="cpu", name=f"gsword_{est.name}_walks",
                                  label=f"gSWORD {est.name} cut-off estimates")
        _NAMESPACES[key] = ns
        return ns


# ---- the CPU sampler and the trawling tasks, on the framework's workers ---------------

def _cpu_task(est):
    """The Task that samples on the CPU workers: record [r_lo, r_hi], rounds of
    the current batch; params carry the batch and the addresses of its arrays."""
    ns = _namespace(est, "cpu")
    cached = ns.get("_cpu_task_class")
    if cached is not None:
        return cached
    from numba import carray, types

    from gthinker.task import _pointer_intrinsic

    f64 = _pointer_intrinsic(types.float64)
    i64 = _pointer_intrinsic(types.int64)
    i32 = _pointer_intrinsic(types.int32)
    sample_rounds = ns["_sample_rounds"]
    refines = bool(est.refines)

    @njit(nogil=True)
    def run_rounds(P, rec):
        cgp = carray(i64(P[0]), P[1])
        cgi = carray(i32(P[2]), P[3])
        rounds = P[8]
        nslots = P[12]
        nq = P[13]
        out_sum = carray(f64(P[9]), rounds)
        out_valid = carray(i64(P[10]), rounds)
        t_inst = carray(i32(P[11]), (max(nslots, 1), nq))
        t_depth = carray(i64(P[14]), max(nslots, 1))
        t_weight = carray(f64(P[15]), max(nslots, 1))
        sample_rounds(cgp, cgi, P[4], P[5], P[6], rec[0], rec[1], P[7], refines,
                      out_sum, out_valid, t_inst, t_depth, t_weight)

    def compute(ctx, record):
        run_rounds(ctx.params, record)

    cls = type(f"GSwordSample_{est.name}", (gthinker.Task,), {
        "compute": staticmethod(compute), "__doc__": "gSWORD sampling on the CPU workers.",
    })
    ns["_cpu_task_class"] = cls
    return cls


@gthinker.cache.jit("gSWORD functions", nogil=True)
def _prefix_ok(ctx, P, M, k):
    """Is M[:k] a valid partial match of SM plan P (candidates, injective, edges)?"""
    for p in range(k):
        if not sm._is_candidate(P, p, M[p]):
            return False
        for q in range(p):
            if M[q] == M[p]:
                return False
        for s in range(P[P[sm._H_BACK_PTR] + p], P[P[sm._H_BACK_PTR] + p + 1]):
            nb = ctx.neighbors(M[P[P[sm._H_BACK] + s]])
            i = np.searchsorted(nb, M[p])
            if i >= nb.size or nb[i] != M[p]:
                return False
    return True


@gthinker.cache.jit("gSWORD functions", nogil=True)
def _trawl_compute(ctx, rec):
    """Record [slot, k, M...]: count the matches that extend M[:k] (the SM
    app's enumeration) into histogram 0, bin slot; histogram 1, bin slot gets
    (records handed out - 1), so a slot whose enumeration finished sums to -1."""
    slot = rec[0]
    found = 0
    added = 0
    if rec.size >= 2 and _prefix_ok(ctx, ctx.params, rec[2:], rec[1]):
        found, added = sm._search(ctx, rec, 1)
    ctx.add_to_histogram(0, slot, found)
    ctx.add_to_histogram(1, slot, added - 1)
    return 0


class Trawl(gthinker.Task):
    """CPU side of trawling: exact enumeration of a sampled partial instance."""

    histograms = ("matches", "pending")

    @staticmethod
    def compute(ctx, record):
        _trawl_compute(ctx, record)


# ---- the estimate -------------------------------------------------------------------


#: In auto mode fewer samples than this are drawn on the CPU: starting the GPU
#: costs more than drawing them.
SMALL_SAMPLES = 100_000


@dataclass
class GSwordResult:
    query: str
    estimate: float
    samples: int
    valid_ratio: float  # full valid instances drawn per sample
    stderr: float
    ci95: tuple
    seconds: float  # wall time of the call (candidate graph, sampling, trawling), not compiling
    #: samples / sampling_seconds; None when nothing was sampled (a query vertex has no
    #: candidate, so the estimate is exactly 0)
    samples_per_second: float | None
    sampling_seconds: float  # time in the samplers (kernels, or CPU workers)
    build_seconds: float  # candidate graph
    estimator: str
    mode: str
    trawl: bool
    batches: int
    seed: int
    inheritance: bool
    streaming: bool
    order: list
    candidates: list
    trawl_stats: dict = field(default_factory=dict)
    threads: int = 0
    compile_seconds: float = 0.0  # 0 when the compile cache had the samplers
    #: Why the interval should not be trusted (see :func:`diagnose`); empty when
    #: the estimator's own diagnostics found nothing wrong.
    warnings: list = field(default_factory=list)
    #: "stop" when a stop token ended the run early (the estimate is over the
    #: batches completed by then); None when every batch ran.
    stopped: str | None = None

    @property
    def reliable(self) -> bool:
        """False when :attr:`warnings` says the interval may miss the count."""
        return not self.warnings

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in (
            "query", "estimate", "samples", "valid_ratio", "stderr", "seconds",
            "compile_seconds", "samples_per_second", "sampling_seconds", "build_seconds",
            "estimator", "mode", "trawl", "batches", "seed", "inheritance", "streaming",
            "order", "candidates", "threads", "reliable", "warnings", "stopped")}
        d["ci95"] = list(self.ci95)
        d["trawl_stats"] = dict(self.trawl_stats)
        return d


def _resolve_estimator(estimator):
    if isinstance(estimator, str):
        table = estimators()
        if estimator not in table:
            raise ValueError(f"unknown estimator {estimator!r}: use one of "
                             f"{', '.join(table)}, or an Estimator subclass")
        return table[estimator]
    if isinstance(estimator, type) and issubclass(estimator, Estimator):
        return estimator
    raise TypeError(f"estimator must be a name or an Estimator subclass, got {estimator!r}")


class _Batch:
    """Outputs of one batch of samples."""

    def __init__(self, first, n, every, nq):
        self.first, self.n, self.every = first, n, every
        self.rounds = (n + ROUND - 1) // ROUND
        self.slots = (n + every - 1) // every if every > 0 else 0
        self.out_sum = np.zeros(self.rounds, np.float64)
        self.out_valid = np.zeros(self.rounds, np.int64)
        self.t_inst = np.zeros((max(self.slots, 1), nq), np.int32)
        self.t_depth = np.zeros(max(self.slots, 1), np.int64)
        self.t_weight = np.zeros(max(self.slots, 1), np.float64)


def _trawl_records(cg, batch):
    """SM records ``(data, starts)``, record i = [slot, d, data vertices...], of the
    batch's stopped samples, and their slots."""
    nq = cg.num_positions
    slots = np.flatnonzero(batch.t_depth[: batch.slots] > 0)
    d = batch.t_depth[slots]
    coff = cg.cgp[cg.cgp[_G_COFF]: cg.cgp[_G_COFF] + nq]
    rows = np.empty((len(slots), nq + 2), np.int64)
    rows[:, 0] = slots
    rows[:, 1] = d
    rows[:, 2:] = cg.cgi[coff[None, :] + batch.t_inst[slots]]
    keep = np.arange(nq + 2)[None, :] < (d + 2)[:, None]
    starts = np.zeros(len(slots) + 1, np.int64)
    starts[1:] = np.cumsum(d + 2)
    return slots, (rows[keep].astype(np.int32), starts)


class _TrawlJob:
    """Enumerates a batch's trawled prefixes on the CPU workers, in a thread,
    until ``cut()``."""

    def __init__(self, data, plan_params, records, slots, threads, time_budget):
        self.stop = gthinker.StopToken()
        self.result = None
        self.error = None
        self.slots = slots
        self.started = time.perf_counter()

        def work():
            try:
                self.result = gthinker.run(
                    Trawl, data, vertices=np.zeros(0, np.int32), records=records,
                    params=plan_params, threads=threads, time_budget=time_budget,
                    histogram_bins=max(int(slots.max()) + 1 if len(slots) else 1, 1),
                    stop=self.stop)
            except BaseException as exc:  # noqa: BLE001 - re-raised by cut()
                self.error = exc

        self.thread = threading.Thread(target=work, name="gsword-trawl", daemon=True)
        self.thread.start()

    def wait(self, seconds):
        """Waits until ``seconds`` after the start, or until the enumeration ends."""
        self.thread.join(max(0.0, self.started + seconds - time.perf_counter()))

    def cut(self):
        """Stops the enumeration; returns (matches, finished) per slot."""
        self.stop.set()
        self.thread.join()
        if self.error is not None:
            raise self.error
        hist = self.result.histograms
        matches = hist["matches"][self.slots]
        finished = hist["pending"][self.slots] == -1
        return matches, finished


def _finish_trawl(ns, cg, batch, slots, matches, finished, seed, walks, refines, stats):
    """Adds each trawled sample's value to its round: W_d x (its exact count
    when the enumeration finished, else a fresh sampled estimate of it)."""
    rest = matches.astype(np.float64)
    cut = np.flatnonzero(~finished)
    if cut.size:
        values = np.empty(cut.size)
        ns["_walk_many"](cg.cgp, cg.cgi, batch.t_inst, batch.t_depth,
                         np.ascontiguousarray(slots[cut], dtype=np.int64),
                         np.int64(seed ^ 0x5DEECE66D), np.int64(batch.first),
                         np.int64(batch.every), np.int64(walks), refines, values)
        rest[cut] = values
    np.add.at(batch.out_sum, (slots * batch.every) // ROUND, batch.t_weight[slots] * rest)
    stats["matches"] += int(matches[finished].sum())
    stats["records"] += len(slots)
    stats["finished"] += int(finished.sum())
    stats["cut_off"] += int((~finished).sum())


def estimate(data, query, estimator="alley", samples: int = 1_000_000, mode: str = "auto",
             trawl: bool = True, batches: int = 6, seed: int = 0, threads: int | None = None,
             order="quicksi", inheritance: bool = True, streaming: bool = True,
             trawl_samples: int = 4096, trawl_window: float | None = None,
             cutoff_walks: int = 16, time_budget: float = 0.1, name: str | None = None,
             progress=None, gpu_options: dict | None = None,
             stop: gthinker.StopToken | None = None) -> GSwordResult:
    """Estimates the number of embeddings of ``query`` in ``data`` by sampling.

    Parameters
    ----------
    data, query : gthinker.Graph, or anything :func:`gthinker.as_graph` takes
        ``query`` may also be a pattern name (see :func:`gthinker.apps.sm.pattern`).
    estimator : "wj", "alley", or an :class:`Estimator` subclass
    samples : int
        Samples to draw (split evenly over the batches).
    mode : {"auto", "cpu", "gpu"}
        Where to sample: the CPU workers, or the GPU; ``"auto"``: the GPU
        where a CUDA GPU is usable, else the CPU.
    trawl : bool
        Stop some samples after d vertices and count the rest of their
        matches exactly on the CPU workers while the next batch is sampled
        (``trawl_samples`` per batch; the last batch has none, its time is
        the last one's enumeration window). An enumeration still running at
        the end of the next batch is cut off; its sample's value is then a
        fresh sampled estimate of its matches (``cutoff_walks`` walks from the
        same prefix) instead of the exact count, so that the estimate stays
        unbiased. Needs ``batches >= 2``.
    trawl_window : float, optional
        Seconds the CPU workers may enumerate a batch's prefixes. Default:
        on the GPU, the time the GPU takes to sample the next batch; on the
        CPU (which samples and enumerates in turn), the time the batch took
        to sample, but at least 0.05 s. Given: the GPU also waits this long
        at least.
    batches : int
        Batches the samples are split into when trawling (the pipeline runs
        over them); without trawling all samples go in one batch.
    seed : int
        The same seed, data, query and options give the same estimate (trawl
        enumerations that get cut off depend on timing).
    inheritance, streaming : bool
        The GPU's sample inheritance and warp streaming (for ablation).
    order : "quicksi", "sm" or a list of query vertices
    stop : gthinker.StopToken, optional
        Once set, the run ends after cutting off the batch in progress: the
        estimate is over the batches completed by then (``stopped == "stop"``).

    The result's ``warnings`` (``reliable`` is False when there are some) say
    when the estimator's diagnostics doubt the interval: see :func:`diagnose`.
    """
    t0 = time.perf_counter()
    compiled_before = gthinker.cache.compile_seconds()
    est = _resolve_estimator(estimator)
    samples = positive_int("samples", samples, MAX_SAMPLES)
    batches = positive_int("batches", batches, samples)
    trawl_samples = positive_int("trawl_samples", trawl_samples)
    cutoff_walks = positive_int("cutoff_walks", cutoff_walks)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**63:
        raise ValueError(f"seed must be an integer in [0, 2**63), got {seed!r}")
    seed = int(seed)
    mode, _why = gthinker.gpu.resolve_mode(
        mode, allowed=("cpu", "gpu"), auto="gpu",
        cpu_because=f"few samples (< {SMALL_SAMPLES:,})" if samples < SMALL_SAMPLES else "")
    if threads is None:
        threads = gthinker.default_threads()
    threads = positive_int("threads", threads, MAX_THREADS)
    data = gthinker.as_graph(data)
    query_graph = sm.as_query(query)
    tb = time.perf_counter()
    cg = candidate_graph(data, query_graph, order)
    nq = cg.num_positions
    build_seconds = time.perf_counter() - tb
    label = name if name is not None else (query if isinstance(query, str) else "query")
    refines = bool(est.refines)

    plan_params = None
    if trawl and batches >= 2 and nq > 1 and not cg.empty():
        plan_params = sm.plan(data, query_graph, order=cg.order).params
    if plan_params is None:
        batches = 1  # batches exist for the trawling pipeline
    sizes = [samples // batches + (1 if b < samples % batches else 0) for b in range(batches)]
    sizes = [s for s in sizes if s > 0]
    if trawl_window is not None and not (isinstance(trawl_window, (int, float))
                                         and trawl_window >= 0):
        raise ValueError(f"trawl_window must be a number of seconds >= 0, got {trawl_window!r}")
    if plan_params is not None:
        Trawl.compiled()  # compile before the clock runs (and not inside a window)
    if mode == "gpu":
        from .gsword_gpu import GPUSampler

        sampler = GPUSampler(est, cg, inheritance=inheritance, streaming=streaming,
                             **(gpu_options or {}))
    else:
        sampler = _CPUSampler(est, cg, data, threads)
    stats = {"records": 0, "finished": 0, "cut_off": 0, "matches": 0, "trawl_seconds": 0.0}
    ns_cpu = _namespace(est, "cpu") if plan_params is not None else None
    sampling_seconds = 0.0
    pending = None  # (trawl job, batch, slots) of the previous batch
    done = []
    first = 0
    for b, n in enumerate(sizes):
        last = b == len(sizes) - 1
        every = 0
        if plan_params is not None and not last:
            every = max(1, n // trawl_samples)
        batch = _Batch(first, n, every, nq)
        first += n
        ts = time.perf_counter()
        cs = gthinker.cache.compile_seconds()
        sampler.run(batch, seed, stop)
        took = time.perf_counter() - ts - (gthinker.cache.compile_seconds() - cs)
        sampling_seconds += took
        if pending is not None:
            job, pb, slots = pending
            if trawl_window is not None:
                job.wait(trawl_window)
            matches, finished = job.cut()
            stats["trawl_seconds"] += time.perf_counter() - job.started
            _finish_trawl(ns_cpu, cg, pb, slots, matches, finished, seed, cutoff_walks, refines,
                          stats)
            done.append(pb)
            pending = None
        if stop is not None and stop.is_set():
            break  # this batch may be cut short: it is left out
        if every > 0:
            slots, recs = _trawl_records(cg, batch)
            if len(slots):
                job = _TrawlJob(data, plan_params, recs, slots, threads, time_budget)
                if mode == "cpu":
                    # No GPU to overlap with: give the enumeration the time this
                    # batch took to sample, then cut it off.
                    job.wait(trawl_window if trawl_window is not None else max(took, 0.05))
                    matches, finished = job.cut()
                    stats["trawl_seconds"] += time.perf_counter() - job.started
                    _finish_trawl(ns_cpu, cg, batch, slots, matches, finished, seed,
                                  cutoff_walks, refines, stats)
                    done.append(batch)
                else:
                    pending = (job, batch, slots)
            else:
                done.append(batch)
        else:
            done.append(batch)
        if progress is not None:
            drawn = sum(x.n for x in done)
            progress({"batch": b + 1, "batches": len(sizes), "samples": first,
                      "estimate": _combine(done, drawn)[0] if done else 0.0})
    total = sum(x.n for x in done)
    est_value, stderr, valid = _combine(done, total)
    compile_seconds = gthinker.cache.compile_seconds() - compiled_before
    seconds = time.perf_counter() - t0 - compile_seconds
    return GSwordResult(
        query=label, estimate=est_value, samples=total,
        valid_ratio=valid / total if total else 0.0, stderr=stderr,
        # The count is never negative: the interval is clamped at 0.
        ci95=(max(0.0, est_value - 1.96 * stderr), est_value + 1.96 * stderr), seconds=seconds,
        samples_per_second=None if cg.empty() or sampling_seconds <= 0 else (
            total / sampling_seconds),
        sampling_seconds=sampling_seconds, build_seconds=build_seconds, estimator=est.name,
        mode=mode, trawl=plan_params is not None, batches=len(sizes), seed=seed,
        inheritance=bool(inheritance) and mode == "gpu",
        streaming=bool(streaming) and mode == "gpu" and refines,
        order=[int(u) for u in cg.order], candidates=[len(c) for c in cg.candidates],
        trawl_stats=stats, threads=threads, compile_seconds=compile_seconds,
        warnings=diagnose(done, valid), stopped="stop" if len(done) < len(sizes) else None)


#: Fewer valid samples than this: the interval is flagged (the normal
#: approximation behind it needs many nonzero values).
MIN_VALID = 100
#: A single round holding more than this share of the estimate, or an
#: effective number of rounds below MIN_EFFECTIVE_ROUNDS: heavy-tailed weights.
MAX_ROUND_SHARE = 0.2
MIN_EFFECTIVE_ROUNDS = 30


def diagnose(batches, valid) -> list[str]:
    """The estimator's own warning signs, as sentences (empty: none seen).

    The 95% interval is estimate +- 1.96 standard errors of the round means: it
    covers the count about 95% of the time when the values are many and not
    heavy-tailed. Two signs that they are not: few valid samples, and weight
    concentrated in a few rounds (effective rounds ``(sum T)^2 / sum T^2``).
    Rare heavy samples that were never drawn leave no sign: a clean result is
    not a guarantee."""
    sums = np.concatenate([b.out_sum for b in batches]) if batches else np.zeros(0)
    out = []
    if 0 < valid < MIN_VALID:
        out.append(f"only {valid} valid samples (fewer than {MIN_VALID})")
    total = float(sums.sum())
    if total > 0:
        share = float(sums.max()) / total
        effective = total * total / float(sums @ sums)
        if share > MAX_ROUND_SHARE or effective < MIN_EFFECTIVE_ROUNDS:
            out.append(f"heavy-tailed weights: one round of {ROUND} samples holds "
                       f"{share:.0%} of the estimate, {effective:.1f} effective rounds")
    return out


def _combine(batches, total):
    """(estimate, standard error, valid samples): the mean over all samples of
    their values. Rounds are the independent units (inheritance ties the
    samples of a round together); the variance is the cluster-sample one,
    per batch: R / (R - 1) * sum over rounds of (T_r - mean_b * n_r)^2."""
    s = 0.0
    var = 0.0
    valid = 0
    for b in batches:
        t = float(b.out_sum.sum())
        s += t
        valid += int(b.out_valid.sum())
        if b.rounds > 1:
            n_r = np.full(b.rounds, ROUND, np.float64)
            n_r[-1] = b.n - ROUND * (b.rounds - 1)
            resid = b.out_sum - (t / b.n) * n_r
            var += b.rounds / (b.rounds - 1) * float(resid @ resid)
    if total <= 0:
        return 0.0, 0.0, 0
    return s / total, math.sqrt(var) / total, valid


class _CPUSampler:
    """Samples a batch on the framework's CPU workers: one record per chunk of rounds."""

    CHUNK = 8  # rounds per task record

    def __init__(self, est, cg, data, threads):
        self.task = _cpu_task(est)
        self.task.compiled()
        self.cg = cg
        self.data = data
        self.threads = threads

    def run(self, batch, seed, stop=None):
        cg = self.cg
        nq = cg.num_positions
        if cg.empty():
            return
        starts = np.arange(0, batch.rounds, self.CHUNK, dtype=np.int64)
        recs = np.stack([starts, np.minimum(starts + self.CHUNK, batch.rounds)], 1)
        data = recs.astype(np.int32).ravel()
        rec_starts = np.arange(0, 2 * len(recs) + 1, 2, dtype=np.int64)
        P = np.array([
            cg.cgp.ctypes.data, cg.cgp.size, cg.cgi.ctypes.data, cg.cgi.size,
            seed, batch.first, batch.n, batch.every,
            batch.rounds, batch.out_sum.ctypes.data, batch.out_valid.ctypes.data,
            batch.t_inst.ctypes.data, batch.slots, nq, batch.t_depth.ctypes.data,
            batch.t_weight.ctypes.data], np.int64)
        gthinker.run(self.task, self.data, vertices=np.zeros(0, np.int32),
                     records=(data, rec_starts), params=P, threads=self.threads,
                     histogram_bins=1, stop=stop)

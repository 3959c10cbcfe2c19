"""gSWORD's sampling core, shared by the CPU and the GPU samplers: the candidate
graph (:func:`candidate_graph`), its device-neutral helpers (:data:`HELPERS`),
the random walk of one sample, the estimators (:class:`Estimator`,
:class:`WanderJoin`, :class:`Alley`) and :func:`namespace`, which compiles the
helpers with an estimator's three functions for the CPU or for the GPU.

:mod:`gthinker.apps.gsword` (the estimate, batches, trawling, the CPU sampler)
and :mod:`gthinker.apps.gsword_gpu` (the GPU sampler) both build on this module;
see :mod:`gthinker.apps.gsword` for the method.
"""

from __future__ import annotations

import threading
import types as pytypes
from dataclasses import dataclass

import numpy as np
from numba import njit

import gthinker

from . import sm

__all__ = ["Alley", "CandidateGraph", "Estimator", "HELPERS", "MAX_QUERY", "MAX_SAMPLES", "ROUND",
           "WanderJoin", "candidate_graph", "estimators", "namespace", "quicksi_order"]

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

    def candidate_offsets(self) -> np.ndarray:
        """Where each position's global candidates start in ``cgi``."""
        return self.cgp[self.cgp[_G_COFF]: self.cgp[_G_COFF] + self.num_positions]


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
    return sm.checked_order(query, order)


def candidate_graph(data, query, order="quicksi") -> CandidateGraph:
    """Builds the candidate graph of ``query`` in ``data`` (see :class:`CandidateGraph`).

    ``order``: ``"quicksi"`` (default), ``"sm"`` (the SM app's order) or an
    explicit permutation of the query vertices."""
    data = gthinker.as_graph(data)
    query = sm.as_query(query)
    sm.check_query(data, query)
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


def namespace(est, target):
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



"""gSWORD's sampling core, shared by the CPU and the GPU samplers: the candidate
graph's device-neutral helpers (:data:`HELPERS`), the random walk of one sample,
the estimators (:class:`Estimator`, :class:`WanderJoin`, :class:`Alley`),
:func:`namespace`, which compiles the helpers with an estimator's three
functions for the CPU or for the GPU, and :class:`Batch`, the outputs of one
batch of samples that either sampler fills.

:mod:`gthinker.apps.gsword` (the estimate and its batches),
:mod:`gthinker.apps.gsword.cpu` (the CPU sampler), :mod:`gthinker.apps.gsword.trawl`
(trawling) and :mod:`gthinker.apps.gsword.gpu` (the GPU sampler) build on this
module and on the candidate graph (:mod:`gthinker.apps.gsword.candidates`); see
:mod:`gthinker.apps.gsword` for the method.
"""

from __future__ import annotations

import threading
import types as pytypes

import numpy as np
from numba import njit

import gthinker
from gthinker.extending import put

from .options import MAX_SAMPLES

__all__ = ["Alley", "Batch", "Estimator", "HELPERS", "MAX_SAMPLES", "ROUND", "WanderJoin",
           "estimators", "namespace"]

#: Samples per round: one warp's worth. Rounds are the units of the standard error.
ROUND = 32


class Batch:
    """Outputs of one batch of ``n`` samples, global samples ``first`` to
    ``first + n - 1``: per round the sum of the sample values (``out_sum``) and
    the full valid instances (``out_valid``); with ``every > 0``, per trawl slot
    (sample ``i`` of the batch with ``i % every == 0`` goes to slot ``i // every``)
    the prefix a stopped sample reached (``t_inst``, candidate indices), its
    length (``t_depth``, 0: the sample was not stopped) and its weight."""

    def __init__(self, first, n, every, nq):
        self.first, self.n, self.every = first, n, every
        self.rounds = (n + ROUND - 1) // ROUND
        self.slots = (n + every - 1) // every if every > 0 else 0
        self.out_sum = np.zeros(self.rounds, np.float64)
        self.out_valid = np.zeros(self.rounds, np.int64)
        self.t_inst = np.zeros((max(self.slots, 1), nq), np.int32)
        self.t_depth = np.zeros(max(self.slots, 1), np.int64)
        self.t_weight = np.zeros(max(self.slots, 1), np.float64)


# ---- device-neutral helpers ---------------------------------------------------------
# Plain Python, compiled per target (njit for the CPU, cuda.jit(device=True) for
# the GPU) by namespace(): the functions below call each other by name, and the
# name resolves to the same target's version.

_U64 = np.uint64
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0
_TRAWL_STREAM = np.uint64(0x7A3D5C1B2E4F6A8D)
_SEED_KEY = np.uint64(0xD1B54A32D192ED03)
_F1 = np.uint64(0xFF51AFD7ED558CCD)
_F2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)


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


def _fmix(z):
    """MurmurHash3's 64-bit finalizer: the start states' mixer, another function
    than the draws' (:func:`_mix`)."""
    z = (z ^ (z >> _S33)) * _F1
    z = (z ^ (z >> _S33)) * _F2
    return z ^ (z >> _S33)


def _rng_init(seed, sid):
    """Counter-based stream of sample ``sid``: the same draws whichever thread
    or warp runs the sample, so a seed reproduces the run. The start state hashes
    the seed and the sample id with :func:`_fmix`, not with the draws' own mixer:
    start states that were that mixer's output (``_mix(seed ^ _mix(sid))``) made
    some seeds' streams measurably off, seed 0 most (the HPRD query_dense_32_8
    estimate 3.6 standard errors high over 2M samples and 4.1 over 4M, where 39
    other seeds gave an sd of 1.0; and random start states, none: see
    docs/gsword.md, "Intervals")."""
    return _fmix(_fmix(_U64(seed) * _GOLDEN + _SEED_KEY) ^ _fmix(_U64(sid) * _GOLDEN + _GOLDEN))


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


def _fold(cur, curw, total, state, v, vw, w):
    """Weighted reservoir of one: offers v, of weight w > 0, to the reservoir
    (cur, its weight curw; total: the weight offered so far). v is kept with
    probability w / (total + w), and its weight stored as vw. Returns the
    reservoir, the new total and the generator state."""
    total += w
    state, u = _rng_next(state)
    if u * total < w:
        cur = v
        curw = vw
    return cur, curw, total, state


def _stream(cgp, cgi, inst, d, src, lo, hi, cur, curw, total, state):
    """Refine and Sample over cgi[lo:hi], one candidate at a time: a weighted
    reservoir of one (the kept candidate is v with probability w / total)."""
    for i in range(lo, hi):
        v = cgi[i]
        if _est_refine(cgp, cgi, inst, d, v, src):  # noqa: F821 - bound per estimator
            w = _est_weight(cgp, cgi, inst, d, v)  # noqa: F821
            if w > 0.0:
                cur, curw, total, state = _fold(cur, curw, total, state, v, w, w)
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
    """One sample alone, without a warp (the CPU sampler's, and the GPU's trawled
    samples): returns (weight, d). d == nq: a full
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


def _walk_once(cgp, cgi, inst, start, seed, sid, t, refines):
    """Walk ``t`` of trawl sample ``sid`` from the partial instance inst[:start]:
    its weight if it completes a match, else 0 (inst[start:] is overwritten,
    inst[:start] kept). The mean over walks is an unbiased estimate of the
    prefix's number of full matches; the GPU draws the same walks."""
    nq = num_positions(cgp)
    state = _rng_init(seed, sid * 1000003 + t)
    weight = 1.0
    for d in range(start, nq):
        alive, weight, state = _step(cgp, cgi, inst, d, weight, state, refines)
        if not alive:
            return 0.0
    return weight


def _walk_from(cgp, cgi, inst, start, seed, sid, walks, refines):
    """Mean of ``walks`` samples that start from the partial instance
    inst[:start]: an unbiased estimate of its number of full matches."""
    total_value = 0.0
    for t in range(walks):
        total_value += _walk_once(cgp, cgi, inst, start, seed, sid, t, refines)
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
                put(t_inst[slot], 0, inst[:d])
        out_sum[r] = s
        out_valid[r] = valid


_DUAL = (num_positions, num_candidates, vertex, num_back, back_position, local_range, contains,
         in_local, in_all_local, injective, _mix, _fmix, _rng_init, _rng_next, _trawl_depth,
         _source, _fold, _stream, _uniform, _first, _step, _sample_one, _walk_once)
_CPU_ONLY = (_walk_from, _walk_many, _sample_rounds)


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
            gthinker.compiler.attach(ns["_walk_many"], target="cpu",
                                     name=f"gsword_{est.name}_walks",
                                     label=f"gSWORD {est.name} cut-off estimates")
        _NAMESPACES[key] = ns
        return ns



"""gSWORD's GPU sampler: one kernel per estimator, built from its device functions.

A warp runs 32 samples at a time (a *round*), one per lane, and all lanes map
the same position at the same time (gSWORD's sample synchronization). Each
block owns a contiguous share of the batch's rounds, its *sample pool*, and
its warps fetch the next round with an atomic add on a shared-memory counter.
The partial instances live in shared memory (one row per lane), so any lane
can read another's.

- **Sample inheritance** (``inheritance=True``): before each position, the
  lanes whose sample died (or stopped for trawling) copy the live partial
  sample of the lowest live lane, the parent; the parent's weight is divided
  by the number of lanes that now hold it (itself included), which keeps the
  Horvitz-Thompson estimate unbiased (gSWORD's push-down recursive
  estimator). Without it a dead lane idles until the round ends.
- **Warp streaming** (``streaming=True``, estimators that refine): while some
  lane has 32 or more candidates left, the whole warp refines 32 of that
  lane's candidates at once, keeps one by A-Res (key ``u ** (1 / w)``, the
  warp's maximum), and the leader folds it into its weighted reservoir of one
  with probability ``(sum of the 32 weights) / (total so far)``. The rest is
  streamed by each lane alone. Either way the kept candidate has probability
  ``w / W``.
- **Trawling**: sample ``i`` of the batch with ``i % every == 0`` stops after
  ``d`` vertices (drawn with P(d = j) proportional to 2^-j) and writes its
  prefix and weight to slot ``i // every`` for the CPU workers.

The random draws of a lane come from a counter-based generator keyed by the
seed and the sample's id, so a seed gives the same estimate however the
rounds land on warps.
"""

from __future__ import annotations

import contextlib
import math
import threading
import warnings

import numpy as np
from numba import cuda, int32

from gthinker.gpu import launch
from gthinker.gpu.simulator import enabled as simulator_enabled

from .candidates import MAX_QUERY
from .sampling import ROUND, namespace

__all__ = ["GPUSampler", "build_kernel"]

FULL = 0xFFFFFFFF
WARPS = 8  # warps per block (256 threads)
BLOCKS_PER_SM = 8  # most blocks a launch has per multiprocessor

_FUNCTIONS: dict = {}  # the kernel function of each (estimator, options)
_LOCK = threading.Lock()


# ---- device functions shared by every estimator's kernel ----------------------------


@cuda.jit(device=True, inline=True)
def _lowest(mask):
    """Index of the lowest set bit of a non-zero mask."""
    return cuda.popc(mask ^ (mask - 1)) - 1


@cuda.jit(device=True)
def _hand_over(inst, d, slot, weight, t_inst, t_depth, t_weight):
    """Trawling: writes the lane's prefix ``inst[:d]`` and its weight to ``slot``
    for the CPU workers."""
    for p in range(d):
        t_inst[slot, p] = inst[p]
    t_depth[slot] = d
    t_weight[slot] = weight


@cuda.jit(device=True)
def _inherit(sh, w, lane, inst, d, mask, alive, weight):
    """Sample inheritance (all lanes; ``mask``: the live lanes, neither 0 nor
    FULL): dead lanes copy the prefix of the lowest live lane, and the parent's
    weight is shared among the lanes that now hold it. Returns (alive, weight)."""
    parent = _lowest(mask)
    share = cuda.shfl_sync(FULL, weight, parent) / (33 - cuda.popc(mask))
    if not alive:
        for p in range(d):
            inst[p] = sh[w, parent, p]
        alive = True
        weight = share
    elif lane == parent:
        weight = share
    cuda.syncwarp(FULL)
    return alive, weight


@cuda.jit(device=True)
def _round_totals(alive, weight):
    """The round's value (the sum of the live lanes' weights) and its number of
    full valid instances, on every lane."""
    val = weight if alive else 0.0
    off = 16
    while off > 0:
        val += cuda.shfl_xor_sync(FULL, val, off)
        off >>= 1
    return val, cuda.popc(cuda.ballot_sync(FULL, alive))


# ---- device functions built from an estimator's -------------------------------------


def _warp_stream(ns):
    """Warp streaming of estimator namespace ``ns``: see the module docs."""
    refine, weigh = ns["_est_refine"], ns["_est_weight"]
    rng_next, fold = ns["_rng_next"], ns["_fold"]

    @cuda.jit(device=True)
    def warp_stream(cgp, cgi, sh, w, lane, d, alive, src, it, hi, state):
        """While some lane has 32 or more candidates left (from ``it`` to ``hi``),
        the warp refines 32 of the lowest such lane's at once and that lane folds
        the A-Res pick into its reservoir. Returns (cur, curw, total, it, state)."""
        cur = -1
        curw = 0.0
        total = 0.0
        while True:
            m = cuda.ballot_sync(FULL, alive and hi - it >= 32)
            if m == 0:
                break
            leader = _lowest(m)
            l_it = cuda.shfl_sync(FULL, it, leader)
            l_src = cuda.shfl_sync(FULL, src, leader)
            c = cgi[l_it + lane]
            linst = sh[w, leader]
            wt = 0.0
            if refine(cgp, cgi, linst, d, c, l_src):
                wt = weigh(cgp, cgi, linst, d, c)
            state, uu = rng_next(state)
            key = -1.0
            if wt > 0.0:
                key = uu ** (1.0 / wt)
            bk = key
            bv = c
            bw = wt
            tot = wt
            off = 16
            while off > 0:
                ok = cuda.shfl_xor_sync(FULL, bk, off)
                ov = cuda.shfl_xor_sync(FULL, bv, off)
                ow = cuda.shfl_xor_sync(FULL, bw, off)
                tot += cuda.shfl_xor_sync(FULL, tot, off)
                if ok > bk or (ok == bk and ov < bv):
                    bk = ok
                    bv = ov
                    bw = ow
                off >>= 1
            if lane == leader:  # the 32 as one offer: bv (weight bw), of weight tot
                it += 32
                if tot > 0.0:
                    cur, curw, total, state = fold(cur, curw, total, state, bv, bw, tot)
        return cur, curw, total, it, state

    return warp_stream


def _position_step(ns, refines, streams):
    """Refine and Sample at one position, for estimator namespace ``ns``."""
    source, stream, uniform = ns["_source"], ns["_stream"], ns["_uniform"]
    warp_stream = _warp_stream(ns)

    @cuda.jit(device=True)
    def step(cgp, cgi, sh, w, lane, inst, d, alive, weight, state):
        """All lanes together: the candidate v a live lane picks at position d,
        from the local list of backward edge src. Returns (alive, v, src,
        weight, state)."""
        src = -1
        lo = 0
        hi = 0
        if alive:
            src, lo, hi = source(cgp, inst, d)
        v = -1
        if refines:
            cur = -1
            curw = 0.0
            total = 0.0
            it = lo
            if streams:
                cur, curw, total, it, state = warp_stream(cgp, cgi, sh, w, lane, d, alive, src,
                                                          it, hi, state)
            if alive:
                cur, curw, total, state = stream(cgp, cgi, inst, d, src, it, hi, cur, curw,
                                                 total, state)
                if total <= 0.0:
                    alive = False
                else:
                    weight *= total / curw
                    v = cur
        elif alive:
            if hi <= lo:
                alive = False
            else:
                v, state = uniform(cgi, lo, hi, state)
                weight *= float(hi - lo)
        return alive, v, src, weight, state

    return step


def _sampling_kernel(ns, step, inherit, warps):
    """The kernel (not compiled): a warp draws rounds from its block's pool and
    runs each round's 32 samples position by position."""
    rng_init, trawl_depth = ns["_rng_init"], ns["_trawl_depth"]
    num_positions, first_vertex = ns["num_positions"], ns["_first"]
    validate = ns["_est_validate"]
    maxq = MAX_QUERY

    def kernel(cgp, cgi, seed, first, n, every, rounds, per_block, out_sum, out_valid,
               t_inst, t_depth, t_weight):
        sh = cuda.shared.array((warps, 32, maxq), int32)
        pool = cuda.shared.array(1, int32)
        tid = cuda.threadIdx.x
        lane = tid & 31
        w = tid >> 5
        if tid == 0:
            pool[0] = 0
        cuda.syncthreads()
        r_lo = cuda.blockIdx.x * per_block
        r_hi = min(r_lo + per_block, rounds)
        nq = num_positions(cgp)
        inst = sh[w, lane]
        while True:
            r = 0
            if lane == 0:
                r = cuda.atomic.add(pool, 0, 1) + r_lo
            r = cuda.shfl_sync(FULL, r, 0)
            if r >= r_hi:
                break
            i = r * 32 + lane
            sid = first + i
            state = rng_init(seed, sid)
            td = 0
            if i < n and every > 0 and i % every == 0:
                td = trawl_depth(seed, sid, nq)
                if td >= nq:
                    td = 0
            alive = False
            weight = 0.0
            if i < n:
                k, n0, state = first_vertex(cgp, state)
                if k >= 0:
                    alive = True
                    inst[0] = k
                    weight = float(n0)
            for d in range(1, nq):
                if alive and d == td:  # trawl: hand the prefix to the CPU
                    _hand_over(inst, d, i // every, weight, t_inst, t_depth, t_weight)
                    alive = False
                cuda.syncwarp(FULL)
                mask = cuda.ballot_sync(FULL, alive)
                if mask == 0:
                    break
                if inherit and mask != FULL:
                    alive, weight = _inherit(sh, w, lane, inst, d, mask, alive, weight)
                alive, v, src, weight, state = step(cgp, cgi, sh, w, lane, inst, d, alive,
                                                    weight, state)
                if alive:
                    if validate(cgp, cgi, inst, d, v, src):
                        inst[d] = v
                    else:
                        alive = False
            val, cnt = _round_totals(alive, weight)
            if lane == 0:
                out_sum[r] = val
                out_valid[r] = cnt
            cuda.syncwarp(FULL)

    return kernel


def build_kernel(est, inheritance: bool, streaming: bool, warps: int = WARPS):
    """The sampling kernel of estimator ``est`` with ``warps`` warps per block
    (compiled once per options and process)."""
    key = (est, bool(inheritance), bool(streaming), int(warps))
    with _LOCK:  # the kernel function is made once per key too
        fn = _FUNCTIONS.get(key)
        if fn is None:
            ns = namespace(est, "cuda")
            refines = bool(est.refines)
            step = _position_step(ns, refines, bool(streaming) and refines)
            fn = _FUNCTIONS[key] = _sampling_kernel(ns, step, bool(inheritance), int(warps))
    return launch.kernel(fn, name=f"gsword_{est.name}", key=key,
                         label=f"the gSWORD {est.name} sampler (GPU)")


@contextlib.contextmanager
def _quiet_simulator(on):
    """The simulator runs the device code on numpy scalars, whose uint64
    arithmetic warns on the wrap-around that the generator relies on."""
    if not on:
        yield
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*overflow encountered", category=RuntimeWarning)
        yield


class GPUSampler:
    """Runs batches of samples on the GPU (see the module docs)."""

    def __init__(self, est, cg, inheritance=True, streaming=True, blocks=None,
                 rounds_per_warp=4, warps=None):
        self.simulated = simulator_enabled()
        if warps is None:
            warps = 1 if self.simulated else WARPS  # the simulator: a Python thread per lane
        self.warps = int(warps)
        self.kernel = build_kernel(est, inheritance, streaming, self.warps)
        self.cg = cg
        self.d_cgp = cuda.to_device(cg.cgp)
        self.d_cgi = cuda.to_device(cg.cgi if cg.cgi.size else np.zeros(1, np.int32))
        self.max_blocks = int(launch.blocks(BLOCKS_PER_SM) if blocks is None else blocks)
        self.rounds_per_warp = int(rounds_per_warp)
        self.warm()

    def warm(self):
        """Compiles the kernel (a launch with no rounds)."""
        nq = self.cg.num_positions
        zero = np.int64(0)
        with _quiet_simulator(self.simulated):
            self.kernel[1, 32 * self.warps](
                self.d_cgp, self.d_cgi, zero, zero, zero, zero, zero, np.int64(1),
                cuda.to_device(np.zeros(1, np.float64)), cuda.to_device(np.zeros(1, np.int64)),
                cuda.to_device(np.zeros((1, nq), np.int32)),
                cuda.to_device(np.zeros(1, np.int64)), cuda.to_device(np.zeros(1, np.float64)))
        cuda.synchronize()

    def run(self, batch, seed, stop=None):  # stops between batches (a launch is short)
        if self.cg.empty() or batch.rounds == 0:
            return
        blocks = min(self.max_blocks,
                     max(1, math.ceil(batch.rounds / (self.warps * self.rounds_per_warp))))
        per_block = math.ceil(batch.rounds / blocks)
        blocks = math.ceil(batch.rounds / per_block)
        d_sum = cuda.device_array(batch.rounds, np.float64)
        d_valid = cuda.device_array(batch.rounds, np.int64)
        d_inst = cuda.to_device(batch.t_inst)
        d_depth = cuda.to_device(batch.t_depth)
        d_weight = cuda.to_device(batch.t_weight)
        with _quiet_simulator(self.simulated):
            self.kernel[blocks, 32 * self.warps](
                self.d_cgp, self.d_cgi, np.int64(seed), np.int64(batch.first),
                np.int64(batch.n), np.int64(batch.every), np.int64(batch.rounds),
                np.int64(per_block), d_sum, d_valid, d_inst, d_depth, d_weight)
        d_sum.copy_to_host(batch.out_sum)
        d_valid.copy_to_host(batch.out_valid)
        if batch.every > 0:
            d_inst.copy_to_host(batch.t_inst)
            d_depth.copy_to_host(batch.t_depth)
            d_weight.copy_to_host(batch.t_weight)


assert ROUND == 32

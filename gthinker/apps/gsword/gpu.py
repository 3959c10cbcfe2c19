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
- **Trawling**: sample ``i`` of a batch with ``i % every == 0`` is drawn by the
  trawl kernel, alone (the CPU's walk: both stop at the same prefixes): it stops
  after ``d`` vertices (P(d = j) proportional to 2^-j) and its prefix and weight
  go to slot ``i // every`` for the CPU workers; the walks kernel draws its
  cut-off walks (the CPU's, bit for bit). The batch kernels skip these samples.

Launches return at once: the pipeline (:mod:`gthinker.apps.gsword.app`) launches
the batches back to back and waits only for the round sums it needs. Grids have
at least a block per multiprocessor (:func:`gthinker.gpu.launch.blocks`).

The random draws of a lane come from a counter-based generator keyed by the
seed and the sample's id, so a seed gives the same estimate however the
rounds land on warps.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
import warnings

import numpy as np
from numba import cuda, int32

from gthinker.extending import (
    EngineResults,
    EngineSetup,
    GPUEngine,
    RunOptions,
    gpu,
    launch,
    simulator,
)

from .candidates import MAX_QUERY
from .sampling import ROUND, namespace
from .trawl import WALK_STREAM

__all__ = ["GPUSampler", "SamplingEngine", "build_kernel", "build_trawl_kernels"]

FULL = 0xFFFFFFFF
WARPS = 8  # warps per block (256 threads)
BLOCKS_PER_SM = 8  # most blocks a sampling launch has per multiprocessor
TRAWL_BLOCKS_PER_SM = 2  # blocks of the trawl and walks kernels (grid-stride loops)
TRAWL_THREADS = 128
#: Samples each GPU of an estimate with the default ``gpus`` gets at least: one H100
#: sampled 10^6 samples of hprd's query_dense_16_1 in about 1.2 ms, so a share of this
#: many takes some 25 ms, several times a GPU's start-up (a smaller estimate takes
#: fewer GPUs, one at the least).
SPREAD_SAMPLES = 20_000_000

_FUNCTIONS: dict = {}  # the kernel function of each (estimator, options)
_LOCK = threading.Lock()


# ---- device functions shared by every estimator's kernel ----------------------------


@cuda.jit(device=True, inline=True)
def _lowest(mask):
    """Index of the lowest set bit of a non-zero mask."""
    return cuda.popc(mask ^ (mask - 1)) - 1


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
    """The kernel (not compiled): rounds ``begin .. begin + rounds - 1`` of a batch
    (a device's share), split into a pool per block; a warp draws rounds from its
    block's pool and runs each round's 32 samples position by position, the round
    sum of round ``r`` going to ``out_sum[r0 + r - begin]``. Trawled samples (sample
    ``i`` of the batch with ``i % every == 0``) are the trawl kernel's: here their
    lanes start dead (they inherit, where inheritance is on, like any dead lane)."""
    rng_init = ns["_rng_init"]
    num_positions, first_vertex = ns["num_positions"], ns["_first"]
    validate = ns["_est_validate"]
    maxq = MAX_QUERY

    def kernel(cgp, cgi, seed, first, n, every, begin, rounds, per_block, r0, out_sum,
               out_valid):
        sh = cuda.shared.array((warps, 32, maxq), int32)
        pool = cuda.shared.array(1, int32)
        tid = cuda.threadIdx.x
        lane = tid & 31
        w = tid >> 5
        if tid == 0:
            pool[0] = 0
        cuda.syncthreads()
        r_lo = begin + cuda.blockIdx.x * per_block
        r_hi = min(r_lo + per_block, begin + rounds)
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
            state = rng_init(seed, first + i)
            alive = False
            weight = 0.0
            if i < n and not (every > 0 and i % every == 0):
                k, n0, state = first_vertex(cgp, state)
                if k >= 0:
                    alive = True
                    inst[0] = k
                    weight = float(n0)
            for d in range(1, nq):
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
                out_sum[r0 + r - begin] = val
                out_valid[r0 + r - begin] = cnt
            cuda.syncwarp(FULL)

    return kernel


def _trawl_kernel(ns, refines):
    """The trawled samples of a run, one thread each (no warp: the CPU sampler's
    walk, so both draw the same prefixes): slot ``j`` is global sample
    ``sid[j]``, stopped after ``d`` vertices (P(d = j) proportional to 2^-j), and
    its prefix, ``d`` (0: it died first; ``nq``: the depth drawn was ``nq``, and
    it ran to the end) and weight go to the slot's row."""
    sample_one, trawl_depth = ns["_sample_one"], ns["_trawl_depth"]
    num_positions = ns["num_positions"]
    maxq = MAX_QUERY

    def kernel(cgp, cgi, seed, sid, t_inst, t_depth, t_weight):
        inst = cuda.local.array(maxq, int32)
        nq = num_positions(cgp)
        for j in range(cuda.grid(1), sid.size, cuda.gridsize(1)):
            td = trawl_depth(seed, sid[j], nq)
            if td >= nq:
                td = 0
            weight, d = sample_one(cgp, cgi, inst, seed, sid[j], td, refines)
            for p in range(nq):  # the prefix, then zeros (valid candidate indices)
                t_inst[j, p] = inst[p] if p < d and d < nq else 0
            t_depth[j] = d
            t_weight[j] = weight

    return kernel


def _walks_kernel(ns, refines):
    """Cut-off estimates: thread ``k`` runs walk ``k % walks`` of trawl slot
    ``k // walks`` from its prefix (:func:`~gthinker.apps.gsword.sampling._walk_once`,
    as on the CPU) into ``out[k]``; slots that stopped at neither 0 nor ``nq`` only."""
    walk_once, num_positions = ns["_walk_once"], ns["num_positions"]
    maxq = MAX_QUERY

    def kernel(cgp, cgi, seed, sid, t_inst, t_depth, walks, out):
        inst = cuda.local.array(maxq, int32)
        nq = num_positions(cgp)
        for k in range(cuda.grid(1), sid.size * walks, cuda.gridsize(1)):
            j = k // walks
            d = t_depth[j]
            value = 0.0
            if 0 < d < nq:
                for p in range(d):
                    inst[p] = t_inst[j, p]
                value = walk_once(cgp, cgi, inst, d, seed, sid[j], k % walks, refines)
            out[k] = value

    return kernel


def _walk_means(values, walks, out):
    """out[j] = the mean of walks ``j * walks`` .. ``j * walks + walks - 1``, summed in
    order (as the CPU's :func:`~gthinker.apps.gsword.sampling._walk_from`: the same
    float)."""
    for j in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        total = 0.0
        for t in range(walks):
            total += values[j * walks + t]
        out[j] = total / walks


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


def build_trawl_kernels(est):
    """(trawl kernel, walks kernel) of estimator ``est`` (compiled once per process)."""
    with _LOCK:
        fns = _FUNCTIONS.get((est, "trawl"))
        if fns is None:
            ns = namespace(est, "cuda")
            fns = _FUNCTIONS[(est, "trawl")] = (_trawl_kernel(ns, bool(est.refines)),
                                                _walks_kernel(ns, bool(est.refines)))
    return tuple(launch.kernel(fn, name=f"gsword_{est.name}_{part}", key=(est,),
                               label=f"the gSWORD {est.name} trawl kernels (GPU)")
                 for fn, part in zip(fns, ("trawl", "walks"), strict=True))


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


class _Clock:
    """The GPU time of a run's kernels: CUDA events around them (on the simulator,
    which has no timed events, the host's clock from the first launch to the
    last wait)."""

    def __init__(self, simulated):
        self.simulated = simulated
        self.begun = self.ended = None

    def start(self):
        if self.begun is None:
            self.begun = time.perf_counter() if self.simulated else _recorded()

    def mark(self):
        """After a launch: the run's kernels so far end here."""
        if not self.simulated:
            self.ended = _recorded()

    def waited(self):
        """After a wait for the kernels so far (the simulator's end of the clock)."""
        if self.simulated:
            self.ended = time.perf_counter()

    def seconds(self) -> float:
        if self.begun is None or self.ended is None:
            return 0.0
        if self.simulated:
            return self.ended - self.begun
        self.ended.synchronize()
        return cuda.event_elapsed_time(self.begun, self.ended) / 1000.0


def _recorded():
    ev = cuda.event(timing=True)
    ev.record()
    return ev


class SamplingEngine(GPUEngine):
    """gSWORD's sampler on one device: a GPU engine, made on its device (the candidate
    graph goes there once) and driven by :class:`GPUSampler`, which shares each batch's
    rounds and trawled samples among the devices of ``gpus``. Launches return at once;
    :meth:`collect` waits for a share's round sums. Its knobs (class attributes, set
    with :meth:`configured`): the estimator and the GPU options of the module docs;
    from the run's :class:`~gthinker.GPUOptions`, ``blocks`` (the most blocks of a
    launch) and ``threads_per_block`` (warps of a block)."""

    name = "gsword"
    #: Rounds it sampled, and the full valid instances among their samples (collected).
    counters = ("rounds", "valid")
    estimator: type | None = None
    inheritance = True
    streaming = True
    rounds_per_warp = 4

    def __init__(self, cg, setup):
        super().__init__(cg, setup)
        opts = setup.options.gpu
        self.simulated = simulator.enabled()
        if opts.threads_per_block is not None:
            self.warps = opts.threads_per_block // 32
        else:
            self.warps = 1 if self.simulated else WARPS  # the simulator: a thread per lane
        self.kernel = build_kernel(self.estimator, self.inheritance, self.streaming,
                                   self.warps)
        self.cg = cg
        self.d_cgp, self.d_cgi = cg.on_device()
        # At least a block per multiprocessor (a block with no rounds ends at once).
        self.min_blocks = launch.blocks(1)
        self.max_blocks = int(launch.blocks(BLOCKS_PER_SM) if opts.blocks is None
                              else opts.blocks)
        self.clock = _Clock(self.simulated)
        self.rounds = self.valid = self.launches = 0
        self.d_sum = self.d_valid = None

    def trawl(self, sid, seed, walks):
        """Draws the trawled samples ``sid`` and waits for them: ``(prefixes, depths,
        weights, cut-off estimates)`` on the host (see :meth:`GPUSampler.trawl`)."""
        nq = self.cg.num_positions
        trawl, walk = build_trawl_kernels(self.estimator)
        d_sid = cuda.to_device(sid)
        d_inst = cuda.device_array((sid.size, nq), np.int32)
        d_depth = cuda.device_array(sid.size, np.int64)
        d_weight = cuda.device_array(sid.size, np.float64)
        d_walks = cuda.device_array(sid.size * walks, np.float64)
        d_means = cuda.device_array(sid.size, np.float64)
        means = launch.kernel(_walk_means, name="gsword_walk_means",
                              label="gSWORD's cut-off estimates (GPU)")
        grid = launch.blocks(TRAWL_BLOCKS_PER_SM)
        self.clock.start()
        with _quiet_simulator(self.simulated):
            trawl[grid, TRAWL_THREADS](self.d_cgp, self.d_cgi, np.int64(seed), d_sid, d_inst,
                                       d_depth, d_weight)
            walk[grid, TRAWL_THREADS](self.d_cgp, self.d_cgi, np.int64(seed ^ WALK_STREAM),
                                      d_sid, d_inst, d_depth, np.int64(walks), d_walks)
            means[grid, TRAWL_THREADS](d_walks, np.int64(walks), d_means)
        self.clock.mark()
        self.launches += 3
        found = (d_inst.copy_to_host(), d_depth.copy_to_host(), d_weight.copy_to_host(),
                 d_means.copy_to_host())
        self.clock.waited()
        return found

    def start(self, rounds):
        """Allocates the round sums of its shares of a run's batches (``rounds`` in all:
        each share writes from its ``r0`` on)."""
        self.d_sum = cuda.device_array(max(rounds, 1), np.float64)
        self.d_valid = cuda.device_array(max(rounds, 1), np.int64)

    def launch(self, batch, share, seed):
        """Starts sampling rounds ``share.begin .. share.end - 1`` of ``batch`` (returns
        at once)."""
        rounds = share.end - share.begin
        if rounds == 0:
            return
        want = math.ceil(rounds / (self.warps * self.rounds_per_warp))
        blocks = min(self.max_blocks, max(self.min_blocks, want))
        per_block = math.ceil(rounds / blocks)
        self.clock.start()
        share.began = None if self.simulated else _recorded()
        with _quiet_simulator(self.simulated):
            self.kernel[blocks, 32 * self.warps](
                self.d_cgp, self.d_cgi, np.int64(seed), np.int64(batch.first),
                np.int64(batch.n), np.int64(batch.every), np.int64(share.begin),
                np.int64(rounds), np.int64(per_block), np.int64(share.r0), self.d_sum,
                self.d_valid)
        self.clock.mark()
        share.ended = self.clock.ended
        self.rounds += rounds
        self.launches += 1

    def seconds(self, share) -> float | None:
        """The GPU time of a launched share (waits for it); None on the simulator."""
        if self.simulated or share.began is None:
            return None
        share.ended.synchronize()
        return cuda.event_elapsed_time(share.began, share.ended) / 1000.0

    def collect(self, shares):
        """Waits for ``shares`` (``(batch, share)`` pairs, launched, consecutive in its
        round sums) and copies their round sums and valid counts into the batches."""
        shares = [(b, s) for b, s in shares if s.end > s.begin]
        if not shares:
            return
        lo = shares[0][1].r0
        hi = shares[-1][1].r0 + shares[-1][1].end - shares[-1][1].begin
        sums, valid = self.d_sum[lo:hi].copy_to_host(), self.d_valid[lo:hi].copy_to_host()
        self.clock.waited()
        self.valid += int(valid.sum())
        for b, s in shares:
            at = slice(s.r0 - lo, s.r0 - lo + s.end - s.begin)
            b.out_sum[s.begin:s.end] = sums[at]
            b.out_valid[s.begin:s.end] = valid[at]

    def results(self) -> EngineResults:
        return EngineResults(np.array([self.rounds, self.valid], np.int64),
                             np.zeros(0, np.int64), [])

    def snapshot(self) -> dict:
        return {"device": gpu.device_status()[1], "launches": self.launches,
                "rounds": self.rounds, "valid": self.valid,
                "kernel_seconds": self.clock.seconds()}


class _Share:
    """A device's share of a batch: rounds ``begin .. end - 1``, written from ``r0`` on
    in its round sums; ``began``, ``ended``: the events around its launch."""

    __slots__ = ("begin", "end", "r0", "began", "ended")

    def __init__(self, begin, end, r0):
        self.begin, self.end, self.r0 = begin, end, r0
        self.began = self.ended = None


def _even_cuts(n, parts) -> list[int]:
    """``parts + 1`` bounds of ``parts`` even shares of ``n`` items."""
    return [n * k // parts for k in range(parts + 1)]


class GPUSampler:
    """Runs batches of samples on the GPUs of ``options.gpu.gpus`` (default all; see the
    module docs), a :class:`SamplingEngine` per device: each batch's rounds, and the
    trawled samples, are shared evenly among them (a sample's value depends on the
    seed and its index only, so the estimate does not depend on how many GPUs drew
    it). Launches return at once, :meth:`collect` waits for a batch's round sums;
    :meth:`trawl` draws the trawled samples of all batches first (and waits for them)."""

    def __init__(self, est, cg, inheritance=True, streaming=True, options=None, samples=None):
        options = RunOptions() if options is None else options
        self.cg = cg
        # With the default gpus, as many GPUs as the samples fill (SPREAD_SAMPLES each).
        self.devices = gpu.by_work(options.gpu.gpus, lambda have: have if samples is None
                               else samples // SPREAD_SAMPLES)
        engine = SamplingEngine.configured(estimator=est, inheritance=inheritance,
                                           streaming=streaming)

        def made(device):
            setup = EngineSetup(params=np.zeros(0, np.int64), histogram_bins=0, cpu_threads=0,
                                options=options, device=device, peers=len(self.devices) - 1)
            with gpu.on_device(device):
                return engine(cg, setup)

        self.engines = [made(d) for d in self.devices]
        self.shares: dict = {}  # id(batch) -> its shares, one per engine

    def _each(self, work):
        """``work(engine, k)`` for each engine ``k`` on its device; their answers."""
        out = []
        for k, e in enumerate(self.engines):
            with gpu.on_device(e.device):
                out.append(work(e, k))
        return out

    @property
    def sampling_seconds(self) -> float:
        """GPU time from the first kernel of this sampler's run to its last one's end
        (the devices run side by side: the longest)."""
        return max(e.clock.seconds() for e in self.engines)

    def stats(self) -> tuple[dict, list]:
        """``(totals, per device)``: its engines' figures (:func:`gthinker.gpu.device_totals`)."""
        return gpu.device_totals(self._each(lambda e, _: e.snapshot()), self.devices,
                                 final=True)

    def trawl(self, batches, seed, walks):
        """Draws the trawled samples of ``batches`` (those with ``every > 0``) and
        waits for them: their prefixes, depths and weights go to each batch's
        ``t_inst``, ``t_depth``, ``t_weight``, and the mean of ``walks`` walks from
        each prefix (its cut-off estimate, unused where the enumeration finishes)
        to ``batch.walked``. Batches sampled later skip these samples."""
        batches = [b for b in batches if b.every > 0 and b.slots > 0]
        if self.cg.empty() or not batches:
            return
        sid = np.concatenate([b.first + b.every * np.arange(b.slots, dtype=np.int64)
                              for b in batches])
        cuts = _even_cuts(sid.size, len(self.engines))
        found = self._each(lambda e, k: e.trawl(sid[cuts[k]:cuts[k + 1]], seed, walks)
                           if cuts[k + 1] > cuts[k] else None)
        inst, depth, weight, walked = (np.concatenate([f[i] for f in found if f is not None])
                                       for i in range(4))
        at = 0
        for b in batches:
            part = slice(at, at + b.slots)
            b.t_inst[:] = inst[part]
            b.t_depth[:] = depth[part]
            b.t_weight[:] = weight[part]
            b.walked = walked[part]
            at += b.slots

    def start(self, batches):
        """Shares the rounds of ``batches`` among the devices and allocates each
        device's round sums (one array for the run on each)."""
        used = [0] * len(self.engines)
        for b in batches:
            cuts = _even_cuts(b.rounds, len(self.engines))
            self.shares[id(b)] = shares = []
            for k in range(len(self.engines)):
                shares.append(_Share(cuts[k], cuts[k + 1], used[k]))
                used[k] += cuts[k + 1] - cuts[k]
        self._each(lambda e, k: e.start(used[k]))

    def launch(self, batch, seed):
        """Starts sampling ``batch`` on every device (returns at once; :meth:`collect`
        waits)."""
        if self.cg.empty() or batch.rounds == 0:
            return
        shares = self.shares[id(batch)]
        self._each(lambda e, k: e.launch(batch, shares[k], seed))

    def batch_seconds(self, batch) -> float | None:
        """The GPU time of a launched ``batch`` (waits for it: the slowest device's
        share); None on the simulator, whose times mean nothing."""
        if id(batch) not in self.shares:
            return None
        took = self._each(lambda e, k: e.seconds(self.shares[id(batch)][k]))
        return None if None in took else max(took)

    def collect(self, batches):
        """Waits for ``batches`` (consecutive, launched) and copies their round sums
        and valid counts back."""
        if self.cg.empty() or not batches:
            return
        self._each(lambda e, k: e.collect([(b, self.shares[id(b)][k]) for b in batches]))

    def run(self, batch, seed, walks=1):
        """Samples ``batch`` (its trawled samples first) and waits for it."""
        self.trawl([batch], seed, walks)
        self.start([batch])
        self.launch(batch, seed)
        self.collect([batch])


assert ROUND == 32

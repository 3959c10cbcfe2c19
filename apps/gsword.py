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
from dataclasses import dataclass, field

import numpy as np
from numba import njit

import gthinker
from gthinker.runtime import MAX_THREADS, positive_int

from . import sm
from .gsword_sampling import (  # noqa: F401 - re-exported: the app's public names
    HELPERS,
    MAX_QUERY,
    MAX_SAMPLES,
    ROUND,
    Alley,
    CandidateGraph,
    Estimator,
    WanderJoin,
    back_position,
    candidate_graph,
    contains,
    estimators,
    in_all_local,
    in_local,
    injective,
    local_range,
    namespace,
    num_back,
    num_candidates,
    num_positions,
    quicksi_order,
    vertex,
)
from .sm_layout import H_BACK, H_BACK_PTR

__all__ = ["Alley", "CandidateGraph", "Estimator", "GSwordResult", "HELPERS", "WanderJoin",
           "candidate_graph", "diagnose", "estimate", "estimators", "quicksi_order"]


# ---- the CPU sampler and the trawling tasks, on the framework's workers ---------------

def _cpu_task(est):
    """The Task that samples on the CPU workers: record [r_lo, r_hi], rounds of
    the current batch; params carry the batch and the addresses of its arrays."""
    ns = namespace(est, "cpu")
    cached = ns.get("_cpu_task_class")
    if cached is not None:
        return cached
    from numba import carray, types

    from gthinker.task import pointer_intrinsic

    f64 = pointer_intrinsic(types.float64)
    i64 = pointer_intrinsic(types.int64)
    i32 = pointer_intrinsic(types.int32)
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
        if not sm.is_candidate(P, p, M[p]):
            return False
        for q in range(p):
            if M[q] == M[p]:
                return False
        for s in range(P[P[H_BACK_PTR] + p], P[P[H_BACK_PTR] + p + 1]):
            nb = ctx.neighbors(M[P[P[H_BACK] + s]])
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
        found, added = sm.search(ctx, rec, 1)
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
    #: Per completed batch ``(first sample, samples, round sums, valid per round)``:
    #: what estimates merge from (:mod:`gthinker.cluster`).
    rounds: list = field(default_factory=list, repr=False)

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
    coff = cg.candidate_offsets()
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
             cutoff_walks: int = 16, time_budget: float | None = None, name: str | None = None,
             progress=None, gpu_options: dict | None = None,
             stop: gthinker.StopToken | None = None,
             first_sample: int = 0) -> GSwordResult:
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
    first_sample : int
        Global index of the first sample: sample ``i``'s value depends on the
        seed and its index only, so runs of consecutive samples split one
        estimate over processes (:mod:`gthinker.cluster`).
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
    ns_cpu = namespace(est, "cpu") if plan_params is not None else None
    sampling_seconds = 0.0
    pending = None  # (trawl job, batch, slots) of the previous batch
    done = []
    first = first_sample
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
        warnings=diagnose(done, valid), stopped="stop" if len(done) < len(sizes) else None,
        rounds=[(b.first, b.n, b.out_sum, b.out_valid) for b in done])


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

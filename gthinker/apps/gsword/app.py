"""gSWORD: sampling-based subgraph counting (estimates of the number of embeddings).

A random-walk (RW) estimator draws *samples*: a sample maps the query vertices
one at a time, in a matching order, to data vertices, each chosen at random
among the candidates that the partial match allows, and multiplies the sizes
(weights) of the sets it chose from. A sample that completes a match is worth
that product (the inverse of its probability, Horvitz-Thompson); one that dies
is worth 0. The mean over samples is an unbiased estimate of the number of
embeddings (the count of :func:`gthinker.apps.sm.count` with ``unique=False``).

Everything runs on the **candidate graph** (:func:`candidate_graph`): the
global candidates ``C(u)`` of the planner's label/degree/NLF filtering
(:mod:`gthinker.apps.matching.planner`), and for
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

On the GPU (:mod:`gthinker.apps.gsword.gpu`) samples run 32 to a warp, with
per-block sample pools, sample inheritance and warp streaming. **Trawling**
stops some samples after ``d`` vertices and counts the rest of their matches
exactly on the CPU workers, as framework tasks running the SM app's
enumeration, while the GPU samples the next batch
(:mod:`gthinker.apps.gsword.trawl`).

Modules: this one (the estimate: options, batches, the combined estimate and
its diagnostics), :mod:`gthinker.apps.gsword.candidates` (the candidate graph),
:mod:`gthinker.apps.gsword.sampling` (helpers, walk, estimators),
:mod:`gthinker.apps.gsword.cpu` and :mod:`gthinker.apps.gsword.gpu` (the
samplers), :mod:`gthinker.apps.gsword.trawl` (trawling).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import psutil

import gthinker
from gthinker.runtime import positive_int

from ..matching.patterns import as_query
from ..matching.planner import plan, quicksi_order
from .candidates import MAX_QUERY, CandidateGraph, candidate_graph
from .cpu import CPUSampler
from .sampling import (  # noqa: F401 - re-exported: the app's public names
    HELPERS,
    MAX_SAMPLES,
    ROUND,
    Alley,
    Batch,
    Estimator,
    WanderJoin,
    back_position,
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
    vertex,
)
from .trawl import Trawl, TrawlJob, finish_trawl, trawl_records

__all__ = ["Alley", "CandidateGraph", "Estimator", "GSwordResult", "HELPERS", "MAX_QUERY",
           "WanderJoin", "candidate_graph", "diagnose", "estimate", "estimators",
           "check_samples", "quicksi_order", "summary"]


# ---- the estimate -------------------------------------------------------------------


#: In auto mode fewer samples than this are drawn on the CPU: starting the GPU
#: costs more than drawing them.
SMALL_SAMPLES = 100_000


@dataclass
class GSwordResult:
    """The estimate of :func:`estimate`. With no samples drawn (a run stopped before its
    first batch ended) there is no estimate: ``estimate``, ``stderr``, ``ci95`` and
    ``valid_ratio`` are None and ``warnings`` says why (``reliable`` is False)."""

    query: str
    estimate: float | None
    samples: int
    valid_ratio: float | None  # full valid instances drawn per sample
    stderr: float | None
    ci95: tuple | None
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
        d["ci95"] = list(self.ci95) if self.ci95 is not None else None
        d["trawl_stats"] = dict(self.trawl_stats)
        return d


#: Bytes an estimate keeps per round of ROUND samples (its sum and its valid count),
#: for every batch until the end.
ROUND_BYTES = 16


def check_samples(samples, batches) -> tuple[int, int]:
    """``samples`` (1 to ``MAX_SAMPLES``) and ``batches`` (1 to ``samples``) by their
    rules, and the samples against memory: their round sums must fit in half the
    free memory, else ValueError says how many would."""
    samples = positive_int("samples", samples, MAX_SAMPLES)
    batches = positive_int("batches", batches, samples)
    need = -(-samples // ROUND) * ROUND_BYTES
    free = psutil.virtual_memory().available
    if need > free // 2:
        fit = (free // 2) // ROUND_BYTES * ROUND
        raise ValueError(
            f"samples={samples:,} keep {need / 2**30:.1f} GiB of round sums ({ROUND_BYTES} "
            f"bytes per {ROUND} samples), more than half the {free / 2**30:.1f} GiB of free "
            f"memory: at most {fit:,} samples fit in one call (split larger estimates over "
            f"calls with first_sample=, whose rounds merge)")
    return samples, batches


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
    samples, batches = check_samples(samples, batches)
    trawl_samples = positive_int("trawl_samples", trawl_samples)
    cutoff_walks = positive_int("cutoff_walks", cutoff_walks)
    seed = gthinker.options.seed("seed", seed)
    if trawl_window is not None:
        trawl_window = gthinker.options.seconds_or_off("trawl_window", trawl_window)
    time_budget = gthinker.options.check("time_budget", time_budget)
    threads = gthinker.options.check("threads", threads) or gthinker.default_threads()
    gthinker.gpu.check_mode(mode, ("cpu", "gpu"))
    mode, _why = gthinker.gpu.resolve_mode(
        mode, allowed=("cpu", "gpu"), auto="gpu",
        cpu_because=f"few samples (< {SMALL_SAMPLES:,})" if samples < SMALL_SAMPLES else "")
    data = gthinker.as_graph(data)
    query_graph = as_query(query)
    tb = time.perf_counter()
    cg = candidate_graph(data, query_graph, order)
    build_seconds = time.perf_counter() - tb
    plan_params = None
    if trawl and batches >= 2 and cg.num_positions > 1 and not cg.empty():
        plan_params = plan(data, query_graph, order=cg.order).params
        Trawl.compiled()  # compile before the clock runs (and not inside a window)
    else:
        batches = 1  # batches exist for the trawling pipeline
    sizes = [samples // batches + (1 if b < samples % batches else 0) for b in range(batches)]
    sizes = [s for s in sizes if s > 0]
    run = _Pipeline(est, cg, data, mode, threads, int(seed), plan_params, time_budget,
                    trawl_window, cutoff_walks, inheritance, streaming, gpu_options)
    done = run.batches(sizes, first_sample, trawl_samples, stop, progress)
    total = sum(x.n for x in done)
    fields = summary(done)
    compile_seconds = gthinker.cache.compile_seconds() - compiled_before
    seconds = time.perf_counter() - t0 - compile_seconds
    return GSwordResult(
        query=name if name is not None else (query if isinstance(query, str) else "query"),
        samples=total, **fields, seconds=seconds,
        samples_per_second=None if cg.empty() or run.sampling_seconds <= 0 or not total else (
            total / run.sampling_seconds),
        sampling_seconds=run.sampling_seconds, build_seconds=build_seconds, estimator=est.name,
        mode=mode, trawl=plan_params is not None, batches=len(sizes), seed=int(seed),
        inheritance=bool(inheritance) and mode == "gpu",
        streaming=bool(streaming) and mode == "gpu" and bool(est.refines),
        order=[int(u) for u in cg.order], candidates=[len(c) for c in cg.candidates],
        trawl_stats=run.stats, threads=threads, compile_seconds=compile_seconds,
        stopped="stop" if len(done) < len(sizes) else None,
        rounds=[(b.first, b.n, b.out_sum, b.out_valid) for b in done])


class _Pipeline:
    """The batches of one estimate: each is sampled, and its trawled samples are
    enumerated on the CPU workers while the next batch is sampled (on the GPU), or
    right after it (on the CPU, which samples and enumerates in turn)."""

    def __init__(self, est, cg, data, mode, threads, seed, plan_params, time_budget,
                 trawl_window, cutoff_walks, inheritance, streaming, gpu_options):
        self.cg, self.data, self.mode, self.threads, self.seed = cg, data, mode, threads, seed
        self.plan_params, self.time_budget = plan_params, time_budget
        self.trawl_window, self.cutoff_walks = trawl_window, cutoff_walks
        self.refines = bool(est.refines)
        if mode == "gpu":
            from .gpu import GPUSampler

            self.sampler = GPUSampler(est, cg, inheritance=inheritance, streaming=streaming,
                                      **(gpu_options or {}))
        else:
            self.sampler = CPUSampler(est, cg, data, threads)
        self.ns_cpu = namespace(est, "cpu") if plan_params is not None else None
        self.stats = {"records": 0, "finished": 0, "cut_off": 0, "matches": 0,
                      "trawl_seconds": 0.0}
        self.sampling_seconds = 0.0
        self.done = []
        self.pending = None  # (trawl job, batch, slots) of the previous batch

    def batches(self, sizes, first, trawl_samples, stop, progress):
        """Runs batches of ``sizes`` samples from global sample ``first`` on; returns
        the batches completed (all, unless ``stop`` was set)."""
        for b, n in enumerate(sizes):
            every = 0
            if self.plan_params is not None and b < len(sizes) - 1:
                every = max(1, n // trawl_samples)
            batch = Batch(first, n, every, self.cg.num_positions)
            first += n
            took = self._sample(batch, stop)
            if self.pending is not None:
                self._collect(*self.pending)
                self.pending = None
            if stop is not None and stop.is_set():
                break  # this batch may be cut short: it is left out
            self._trawl(batch, took)
            if progress is not None:
                drawn = sum(x.n for x in self.done)
                progress({"batch": b + 1, "batches": len(sizes), "samples": first,
                          "estimate": _combine(self.done, drawn)[0] if drawn else None})
        return self.done

    def _sample(self, batch, stop):
        """Samples ``batch``; returns the seconds it took, compiling left out."""
        ts = time.perf_counter()
        cs = gthinker.cache.compile_seconds()
        self.sampler.run(batch, self.seed, stop)
        took = time.perf_counter() - ts - (gthinker.cache.compile_seconds() - cs)
        self.sampling_seconds += took
        return took

    def _trawl(self, batch, took):
        """Starts the enumeration of ``batch``'s trawled samples (the batch is done
        when there are none); on the CPU, waits for it and finishes the batch."""
        if batch.every <= 0:
            self.done.append(batch)
            return
        slots, recs = trawl_records(self.cg, batch)
        if not len(slots):
            self.done.append(batch)
            return
        job = TrawlJob(self.data, self.plan_params, recs, slots, self.threads, self.time_budget)
        if self.mode == "cpu":
            # No GPU to overlap with: give the enumeration the time this
            # batch took to sample, then cut it off.
            job.wait(self.trawl_window if self.trawl_window is not None else max(took, 0.05))
            self._collect(job, batch, slots)
        else:
            self.pending = (job, batch, slots)

    def _collect(self, job, batch, slots):
        """Cuts the enumeration of ``batch`` off (after ``trawl_window`` at least,
        when given) and adds its samples' values: the batch is done."""
        if self.trawl_window is not None:
            job.wait(self.trawl_window)
        matches, finished = job.cut()
        self.stats["trawl_seconds"] += time.perf_counter() - job.started
        finish_trawl(self.ns_cpu, self.cg, batch, slots, matches, finished, self.seed,
                     self.cutoff_walks, self.refines, self.stats)
        self.done.append(batch)


#: Fewer valid samples than this: the interval is flagged (the normal
#: approximation behind it needs many nonzero values).
MIN_VALID = 100
#: A single round holding more than this share of the estimate, or an
#: effective number of rounds below MIN_EFFECTIVE_ROUNDS: heavy-tailed weights.
MAX_ROUND_SHARE = 0.2
MIN_EFFECTIVE_ROUNDS = 30
#: Batch means further apart than their standard errors allow at this
#: significance (a chi-square test): the walks disagree.
BATCH_AGREEMENT_P = 0.001
#: Why a run with no samples has no estimate.
NO_SAMPLES = "no samples were drawn (the run was stopped before its first batch ended)"


def summary(batches) -> dict:
    """The estimate's fields of a :class:`GSwordResult` over the completed ``batches``
    (each with ``n``, ``out_sum`` and ``out_valid``): ``estimate``, ``stderr``,
    ``ci95`` (clamped at 0: a count is never negative), ``valid_ratio`` and
    ``warnings``; with no samples, no estimate (None) and the reason."""
    total = sum(b.n for b in batches)
    if total <= 0:
        return {"estimate": None, "stderr": None, "ci95": None, "valid_ratio": None,
                "warnings": [NO_SAMPLES]}
    est, stderr, valid = _combine(batches, total)
    return {"estimate": est, "stderr": stderr,
            "ci95": (max(0.0, est - 1.96 * stderr), est + 1.96 * stderr),
            "valid_ratio": valid / total, "warnings": diagnose(batches, valid)}


def diagnose(batches, valid) -> list[str]:
    """The estimator's own warning signs, as sentences (empty: none seen), for the
    completed ``batches`` (each with ``n`` samples and the round sums ``out_sum``)
    holding ``valid`` valid samples.

    The 95% interval is estimate +- 1.96 standard errors of the round means: it
    covers the count about 95% of the time when the values are many and not
    heavy-tailed, and the batches sample the same thing. Signs that they are
    not: no samples at all, few valid samples, weight concentrated in a few rounds
    (effective rounds ``(sum T)^2 / sum T^2``), and batch means further apart than
    their standard errors allow (:func:`_batch_disagreement`). Rare heavy samples
    that were never drawn leave no sign: a clean result is not a guarantee."""
    if not any(b.out_sum.size for b in batches):
        return [NO_SAMPLES]
    sums = np.concatenate([b.out_sum for b in batches])
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
    disagree = _batch_disagreement(batches)
    if disagree:
        out.append(disagree)
    return out


def _round_residuals(b):
    """A batch's sum of sample values T and its rounds' residuals T_r - (T / n) n_r."""
    t = float(b.out_sum.sum())
    rounds = b.out_sum.size
    n_r = np.full(rounds, ROUND, np.float64)
    n_r[-1] = b.n - ROUND * (rounds - 1)
    return t, b.out_sum - (t / b.n) * n_r


def _batch_mean_and_variance(b):
    """A batch's mean sample value and the variance of that mean (cluster-sample,
    over its rounds)."""
    t, resid = _round_residuals(b)
    rounds = resid.size
    return t / b.n, rounds / (rounds - 1) * float(resid @ resid) / (b.n * b.n)


def _batch_disagreement(batches) -> str | None:
    """A sentence when the batch means differ by more than their standard errors
    allow (chi-square test of equal means, p < :data:`BATCH_AGREEMENT_P`): batches
    of one estimate sample the same thing, so they disagree only when the walks
    (or the trawled counts) do."""
    stats = [_batch_mean_and_variance(b) for b in batches if b.out_sum.size > 1]
    if len(stats) < 2 or min(v for _, v in stats) <= 0:
        return None
    w = np.array([1.0 / v for _, v in stats])
    m = np.array([mean for mean, _ in stats])
    chi2 = float(w @ (m - (w @ m) / w.sum()) ** 2)
    p = _chi2_sf(chi2, len(stats) - 1)
    if p >= BATCH_AGREEMENT_P:
        return None
    return (f"the {len(stats)} batches disagree: their means differ by more than their "
            f"standard errors allow (chi-square {chi2:.1f} on {len(stats) - 1} degrees of "
            f"freedom, p = {p:.1g})")


def _chi2_sf(x: float, k: int) -> float:
    """P(X > x) for X chi-square with k degrees of freedom (Wilson-Hilferty: within a
    few percent of the exact tail where it matters here)."""
    if x <= 0:
        return 1.0
    c = 2.0 / (9.0 * k)
    z = ((x / k) ** (1.0 / 3.0) - (1.0 - c)) / math.sqrt(c)
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _combine(batches, total):
    """(estimate, standard error, valid samples): the mean over all samples of
    their values. Rounds are the independent units (inheritance ties the
    samples of a round together); the variance is the cluster-sample one,
    per batch: R / (R - 1) * sum over rounds of (T_r - mean_b * n_r)^2. A trawled
    sample's value (W_d times its exact count, or times a fresh walk estimate when
    its enumeration was cut off) is part of its round's sum, so the variance of
    the cut-off estimates is counted with the rest."""
    s = 0.0
    var = 0.0
    valid = 0
    for b in batches:
        t, resid = _round_residuals(b)
        s += t
        valid += int(b.out_valid.sum())
        rounds = resid.size
        if rounds > 1:
            var += rounds / (rounds - 1) * float(resid @ resid)
    return s / total, math.sqrt(var) / total, valid

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
from types import SimpleNamespace

import numpy as np

import gthinker
from gthinker.extending import positive_int, say_skeleton

from ..matching.labeled import ISOMORPHISM, needs_labeled
from ..matching.patterns import as_query
from ..matching.planner import match_labels, quicksi_order
from .candidates import MAX_QUERY, CandidateGraph, candidate_graph, kept_candidate_graph
from .cpu import CPUSampler
from .options import CPU_TRAWL_WINDOW, MODES, SMALL_SAMPLES, GSwordOptions
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
from .stop_rule import Z95, Deadline, StopRule, batch_sizes
from .trawl import (
    MIN_TRAWL_WINDOW,
    Trawl,
    TrawlJob,
    finish_trawl,
    provisional_trawl,
    settle_trawl,
    stopped_slots,
    trawl_records,
    trawl_records_of,
)

__all__ = ["Alley", "CandidateGraph", "Estimator", "GSwordOptions", "GSwordResult", "HELPERS",
           "MAX_QUERY", "WanderJoin", "candidate_graph", "diagnose", "estimate", "estimators",
           "check_samples", "quicksi_order", "summary"]


# ---- the estimate -------------------------------------------------------------------


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
    #: What ended the run before every sample was drawn (the estimate is over the
    #: batches completed by then): "stop" (a stop token, Ctrl-C), "target_error"
    #: (the interval got that tight) or "time_limit"; None when all were drawn.
    stopped: str | None = None
    #: Per completed batch ``(first sample, samples, round sums, valid per round)``:
    #: what estimates merge from (:mod:`gthinker.cluster`).
    rounds: list = field(default_factory=list, repr=False)
    #: On the GPUs: ``{"gpu": the samplers' figures summed, "gpus": each device's}``
    #: (launches, rounds, kernel seconds), as every app's ``stats`` has them.
    stats: dict = field(default_factory=dict)
    #: Why the estimate is the exact count (``stderr`` 0), or None: with
    #: ``target_error``, the plan's cost model put the exact count below the time the
    #: samples would take to reach it (:func:`exact_is_cheaper`).
    exact: str | None = None
    #: What became of vertex labels (:func:`gthinker.apps.matching.planner.match_labels`):
    #: "" when neither graph has any, "honoured", or "ignored: why".
    labels: str = ""

    @property
    def reliable(self) -> bool:
        """False when :attr:`warnings` says the interval may miss the count."""
        return not self.warnings

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in (
            "query", "estimate", "samples", "valid_ratio", "stderr", "seconds",
            "compile_seconds", "samples_per_second", "sampling_seconds", "build_seconds",
            "estimator", "mode", "trawl", "batches", "seed", "inheritance", "streaming",
            "order", "candidates", "threads", "reliable", "warnings", "stopped", "exact",
            "labels")}
        d["ci95"] = list(self.ci95) if self.ci95 is not None else None
        d["trawl_stats"] = dict(self.trawl_stats)
        d["stats"] = dict(self.stats)
        return d


#: Bytes an estimate keeps per round of ROUND samples (its sum and its valid count),
#: for every batch until the end.
ROUND_BYTES = 16


def check_samples(samples, batches) -> tuple[int, int | None]:
    """``samples`` (1 to ``MAX_SAMPLES``) and ``batches`` (None, or 1 to ``samples``) by their
    rules, and the samples against memory: their round sums must fit in half the
    free memory, else ValueError says how many would."""
    samples = positive_int("samples", samples, MAX_SAMPLES)
    if batches is not None:  # None: the stopping rule's growing batches, or one
        batches = positive_int("batches", batches, samples)
    need = -(-samples // ROUND) * ROUND_BYTES
    free = gthinker.memory.available_bytes()
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
        return estimators()[estimator]  # a name of ESTIMATORS: the option's rule checked it
    if isinstance(estimator, type) and issubclass(estimator, Estimator):
        return estimator
    raise TypeError(f"estimator must be a name or an Estimator subclass, got {estimator!r}")


def estimate(data, query, estimator=None, *, progress=None,
             stop: gthinker.StopToken | None = None, first_sample: int = 0,
             **options) -> GSwordResult:
    """Estimates the number of embeddings of ``query`` in ``data`` by sampling.

    Parameters
    ----------
    data, query : gthinker.Graph, or anything :func:`gthinker.as_graph` takes
        ``query`` may also be a pattern name (see :func:`gthinker.apps.sm.pattern`).
    estimator : "wj", "alley", or an :class:`Estimator` subclass
        The option ``estimator`` (default: :class:`GSwordOptions`').
    progress : callable, optional
        Called after each batch with ``{"batch", "batches", "samples", "estimate"}``.
    stop : gthinker.StopToken, optional
        Once set, the run ends after cutting off the batch in progress: the
        estimate is over the batches completed by then (``stopped == "stop"``).
        On the GPU, where the batches already launched are not cut short, they
        are waited for and counted.
    first_sample : int
        Global index of the first sample: sample ``i``'s value depends on the
        seed and its index only, so runs of consecutive samples split one
        estimate over processes (:mod:`gthinker.cluster`).
    **options
        The options of :class:`GSwordOptions`, each with its default and rule (as
        ``gthinker gsword --help`` lists them), ``threads`` and ``gpus``:

        - ``mode``: where to sample, the CPU workers or the GPUs; ``"auto"``: the GPUs
          where a CUDA GPU is usable, else the CPU (and for fewer than
          :data:`SMALL_SAMPLES` samples).
        - ``gpus``: the GPUs to sample on (``--gpus``; default all), each batch's
          rounds shared evenly among them: the estimate is the same on any number of
          GPUs.
        - ``samples``: samples to draw (split over the batches); with ``target_error``
          or ``time_limit``, at most.
        - ``trawl``: stop some samples after d vertices and count the rest of their
          matches exactly on the CPU workers while the next batch is sampled
          (``trawl_samples`` per batch; the last batch has none, its time is the last
          one's enumeration window). An enumeration still running at the end of the
          next batch is cut off; its sample's value is then a fresh sampled estimate of
          its matches (``cutoff_walks`` walks from the same prefix) instead of the exact
          count, so that the estimate stays unbiased. Needs ``batches >= 2``.
        - ``trawl_window``: seconds the CPU workers may enumerate a batch's prefixes.
        - ``batches``: batches the samples are split into (the trawling pipeline runs
          over them, the stopping rule is checked after each).
        - ``target_error``: stop once the 95% interval's half-width is at most this
          share of the estimate (0.01: within 1%), checked after each batch
          (``stopped == "target_error"``); the samples then drawn may be fewer than
          ``samples``.
        - ``exact_if_cheaper``: with ``target_error``, count exactly (``gthinker sm``'s
          count, ``stderr`` 0, the result's ``exact`` saying why) where the plan's cost
          model puts that below the time the samples would take to reach the target
          (:func:`exact_is_cheaper`; unlabeled graphs).
        - ``time_limit``: stop drawing batches once this many seconds have passed
          since the call began (``stopped == "time_limit"``); on the CPU the batch in
          progress then is cut off and left out (the first is always finished), on the
          GPU it is finished.
        - ``seed``: the same seed, data, query and options give the same estimate
          (trawl enumerations that get cut off depend on timing).
        - ``inheritance``, ``streaming``: the GPU's sample inheritance and warp
          streaming (for ablation).
        - ``order``: ``"quicksi"``, ``"sm"`` or a list of query vertices.
        - ``name``: the query's name in the result.

    The result's ``warnings`` (``reliable`` is False when there are some) say
    when the estimator's diagnostics doubt the interval: see :func:`diagnose`.
    """
    t0 = time.perf_counter()
    compiled_before = gthinker.compiler.compile_seconds()
    opts, options = GSwordOptions.split({"estimator": estimator, **options})
    est = _resolve_estimator(opts.estimator)
    samples, batches = check_samples(opts.samples, opts.batches)
    rule = StopRule(opts.target_error, opts.time_limit)
    threads = options.get("threads") or gthinker.default_threads()
    run_options = gthinker.RunOptions.from_keywords(gpus=options.get("gpus"))
    mode, _why = gthinker.gpu.resolve_mode(
        opts.mode, allowed=MODES, auto="gpu",
        cpu_because=f"few samples (< {SMALL_SAMPLES:,})" if samples < SMALL_SAMPLES else "")
    data = gthinker.as_graph(data)
    data, query_graph, labels = match_labels(data, as_query(query), opts.ignore_labels)
    if needs_labeled(data, query_graph, ISOMORPHISM):
        raise ValueError("gsword does not estimate queries with edge labels or directions "
                         "yet; `gthinker sm` counts them exactly")
    say_skeleton(data, "gsword")
    tb = time.perf_counter()
    cg = kept_candidate_graph(data, query_graph, opts.order)
    build_seconds = time.perf_counter() - tb
    if batches is None and not opts.trawl and not rule.active:
        batches = 1  # batches exist for the trawling pipeline and the stopping rule
    sizes = batch_sizes(samples, batches, rule)
    plan_params = _trawl_plan(opts.trawl, sizes, cg, data, query_graph)
    run = _Pipeline(est, cg, data, mode, threads, plan_params, rule, t0, opts, run_options)
    if rule.target_error is not None and opts.exact_if_cheaper:
        run.exact_check = _exact_check(data, query_graph, threads, samples, rule)
    done = run.batches(sizes, first_sample, opts.trawl_samples, stop, progress)
    total = sum(x.n for x in done)
    fields = summary(done)
    if run.exact is not None:
        exact = _exactly(data, query_graph, threads, stop)
        if exact is None:  # stopped while counting: the estimate of the first batch
            run.exact, run.stopped = None, "stop"
        else:
            fields, run.stopped = exact, None
    compile_seconds = gthinker.compiler.compile_seconds() - compiled_before
    seconds = time.perf_counter() - t0 - compile_seconds
    name = opts.name
    return GSwordResult(
        query=name if name is not None else (query if isinstance(query, str) else "query"),
        samples=total, **fields, seconds=seconds,
        samples_per_second=None if cg.empty() or run.sampling_seconds <= 0 or not total else (
            total / run.sampling_seconds),
        sampling_seconds=run.sampling_seconds, build_seconds=build_seconds, estimator=est.name,
        mode=mode, trawl=plan_params is not None, batches=len(done), seed=opts.seed,
        inheritance=opts.inheritance and mode == "gpu",
        streaming=opts.streaming and mode == "gpu" and bool(est.refines),
        order=[int(u) for u in cg.order], candidates=[len(c) for c in cg.candidates],
        trawl_stats=run.stats, threads=threads, compile_seconds=compile_seconds,
        stopped=run.stopped, stats=run.gpu_stats(), exact=run.exact, labels=labels,
        rounds=[(b.first, b.n, b.out_sum, b.out_valid) for b in done])


#: Search steps per second per thread that the exact count is reckoned at when weighed
#: against sampling (:func:`exact_is_cheaper`): the cost model's steps ran at 4e6 to 1.4e9
#: a second per thread (house, 4-cycle, diamond on Enron, house and 4-clique on R-MAT 16;
#: 2-core dev machine), so this low one switches only where the exact count is clearly
#: cheaper.
EXACT_STEPS_PER_SECOND = 2e7


def exact_is_cheaper(steps: float, threads: int, estimate: float, stderr: float, drawn: int,
                     seconds: float, samples: int, target_error: float) -> str | None:
    """Why the exact count is cheaper than sampling to ``target_error`` (a sentence), or
    None: the samples still needed (``drawn * (Z95 stderr / (target * estimate))^2``, at
    most ``samples``) at the rate of the ``drawn`` ones (``seconds``) against ``steps``
    search steps at :data:`EXACT_STEPS_PER_SECOND` per thread."""
    if drawn <= 0 or seconds <= 0:
        return None
    rel = Z95 * stderr / estimate if estimate > 0 else math.inf
    need = samples if rel == math.inf else min(samples, drawn * (rel / target_error) ** 2)
    sampling = max(0.0, need - drawn) * seconds / drawn
    exact = steps / (EXACT_STEPS_PER_SECOND * max(1, threads))
    if exact >= sampling:
        return None
    return (f"counted exactly: the plan's cost model puts the exact count at about "
            f"{exact:.3g}s ({steps:.3g} search steps), less than the {sampling:.3g}s the "
            f"samples would take to reach the target error {target_error:g}")


def _exact_check(data, query_graph, threads, samples, rule):
    """What the pipeline asks after its first batch (see :func:`exact_is_cheaper`), or
    None where the cost model does not weigh the query (labeled graphs)."""
    if data.labels is not None or query_graph.labels is not None:
        return None
    from ..matching import costs
    from ..matching.pattern_plan import pattern_plan

    plan = pattern_plan(query_graph)
    weighed = costs.costs(data, plan)
    steps = min(weighed.search, weighed.formula or math.inf)
    return lambda est, err, drawn, seconds: exact_is_cheaper(
        steps, threads, est, err, drawn, seconds, samples, rule.target_error)


def _exactly(data, query_graph, threads, stop) -> dict | None:
    """The estimate's fields of :func:`summary` for the exact count (the matching search's
    distinct matches times ``|Aut(q)|``, as ``gthinker sm`` counts on the CPU), or None
    when it was stopped."""
    from ..matching.dispatch import run_plan
    from ..matching.planner import plan

    p = plan(data, query_graph, unique=True)
    res, _, _ = run_plan(data, p, "cpu", threads=threads, stop=stop)
    if res.stopped:
        return None
    n = res.counters["matches"] * p.automorphisms
    return {"estimate": float(n), "stderr": 0.0, "ci95": (float(n), float(n)),
            "valid_ratio": None, "warnings": []}


def _trawl_plan(trawl, sizes, cg, data, query_graph):
    """The plan's params that trawling enumerates with (its Task compiled now, before
    the clock runs), or None where there is no trawling."""
    if not (trawl and len(sizes) >= 2 and cg.num_positions > 1 and not cg.empty()):
        return None
    Trawl.compiled()  # compile before the clock runs (and not inside a window)
    return cg.plan_params(data, query_graph)


class _Pipeline:
    """The batches of one estimate, and its trawling.

    On the CPU each batch is sampled, then its trawled samples are enumerated on
    the CPU workers (they sample and enumerate in turn). On the GPU the trawled
    samples of every batch are drawn first (with their cut-off estimates); the
    batches are then launched one after another without waiting, and one
    enumeration of all the trawled prefixes runs on the CPU workers while the
    GPU samples (gSWORD's Algorithm 4), cut off when the last batch is done. A
    stop token, the progress callback and the stopping rule see each batch as
    it completes (on the GPU one batch behind the launches)."""

    def __init__(self, est, cg, data, mode, threads, plan_params, rule, started,
                 opts: GSwordOptions, options):
        self.cg, self.data, self.mode, self.threads, self.seed = cg, data, mode, threads, opts.seed
        self.plan_params, self.rule, self.started = plan_params, rule, started
        self.trawl_window, self.cutoff_walks = opts.trawl_window, opts.cutoff_walks
        self.refines = bool(est.refines)
        if mode == "gpu":
            from .gpu import GPUSampler

            self.sampler = GPUSampler(est, cg, inheritance=opts.inheritance,
                                      streaming=opts.streaming, options=options,
                                      samples=opts.samples)
        else:
            self.sampler = CPUSampler(est, cg, data, threads)
        self.ns_cpu = namespace(est, "cpu") if plan_params is not None else None
        self.stats = {"records": 0, "finished": 0, "cut_off": 0, "matches": 0,
                      "trawl_seconds": 0.0}
        self.cpu_seconds = 0.0
        self.done = []
        self.stopped = None  # what ended the run early (see GSwordResult.stopped)
        #: after the first batch, (estimate, stderr, drawn, seconds) -> why the exact
        #: count is cheaper, or None (see exact_is_cheaper); the reason, once it said so
        self.exact_check = None
        self.exact = None

    def gpu_stats(self) -> dict:
        """The GPU samplers' figures: ``{"gpu": totals, "gpus": per device}`` (empty on
        the CPU)."""
        return dict(zip(("gpu", "gpus"), self.sampler.stats(), strict=True)) \
            if self.mode == "gpu" else {}

    @property
    def sampling_seconds(self) -> float:
        """The samplers' time: the CPU workers', or the GPUs' from their first kernel
        to their last one's end."""
        return self.sampler.sampling_seconds if self.mode == "gpu" else self.cpu_seconds

    def batches(self, sizes, first, trawl_samples, stop, progress):
        """Runs batches of ``sizes`` samples from global sample ``first`` on; returns
        the batches completed (all, unless the run stopped early)."""
        todo = []
        for b, n in enumerate(sizes):
            every = 0
            if self.plan_params is not None and b < len(sizes) - 1:
                every = max(1, n // trawl_samples)
            todo.append(Batch(first, n, every, self.cg.num_positions))
            first += n
        if self.mode == "gpu":
            self._on_gpu(todo, stop, progress)
        else:
            self._on_cpu(todo, stop, progress)
        return self.done

    def _completed(self, batch, more, total, stop, progress):
        """Adds a completed batch; True when the run stops after it (``more``: batches
        are left to draw)."""
        self.done.append(batch)
        drawn = sum(x.n for x in self.done)
        if progress is None and not (more and self.rule.active):
            return self._stop_set(more, stop)
        est, err, _ = _combine(self.done, drawn)
        if progress is not None:
            progress({"batch": len(self.done), "batches": total, "samples": drawn,
                      "estimate": est})
        if more and self.stopped is None and self.rule.active:
            self.stopped = self.rule.reason(est, err, time.perf_counter() - self.started)
        if more and self.stopped is None and self.exact_check is not None \
                and len(self.done) == 1:
            self.exact = self.exact_check(est, err, drawn, self.sampling_seconds)
            if self.exact is not None:
                self.stopped = "exact"
        return self._stop_set(more, stop)

    def _stop_set(self, more, stop):
        if more and self.stopped is None and stop is not None and stop.is_set():
            self.stopped = "stop"
        return self.stopped is not None

    # ---- on the CPU ---------------------------------------------------------------------

    def _on_cpu(self, todo, stop, progress):
        limit = self.rule.time_limit
        for b, batch in enumerate(todo):
            if b and limit is not None:  # cut off at the time limit (not the first batch)
                deadline = Deadline(self.started + limit, stop)
                with deadline as token:
                    took = self._sample(batch, token)
                if deadline.expired:
                    self.stopped = "time_limit"
                    break  # cut short: left out
            else:
                took = self._sample(batch, stop)
            if stop is not None and stop.is_set():
                self.stopped = "stop"
                break  # this batch may be cut short: it is left out
            self._trawl(batch, took)
            if self._completed(batch, b < len(todo) - 1, len(todo), stop, progress):
                break

    def _sample(self, batch, stop):
        """Samples ``batch``; returns the seconds it took, compiling left out."""
        ts = time.perf_counter()
        cs = gthinker.compiler.compile_seconds()
        self.sampler.run(batch, self.seed, stop)
        took = time.perf_counter() - ts - (gthinker.compiler.compile_seconds() - cs)
        self.cpu_seconds += took
        return took

    def _trawl(self, batch, took):
        """Enumerates ``batch``'s trawled samples for the time the batch took to
        sample (at least 0.05 s, or ``trawl_window``), then cuts them off and adds
        their values."""
        if batch.every <= 0:
            return
        slots, recs = trawl_records(self.cg, batch)
        if not len(slots):
            return
        job = TrawlJob(self.data, self.plan_params, recs, slots, self.threads)
        window = self.trawl_window if self.trawl_window is not None else max(took,
                                                                            CPU_TRAWL_WINDOW)
        if self.rule.time_limit is not None:  # no enumeration past the time limit
            left = self.started + self.rule.time_limit - time.perf_counter()
            window = max(0.0, min(window, left))
        job.wait(window)
        matches, finished = job.cut()
        self.stats["trawl_seconds"] += time.perf_counter() - job.started
        finish_trawl(self.ns_cpu, self.cg, batch, slots, matches, finished, self.seed,
                     self.cutoff_walks, self.refines, self.stats)

    # ---- on the GPU ---------------------------------------------------------------------

    def _on_gpu(self, todo, stop, progress):
        sampler = self.sampler
        if self.plan_params is not None:
            sampler.trawl(todo, self.seed, self.cutoff_walks)
        sampler.start(todo)
        # Without anything to see each batch as it ends, every batch is launched at
        # once; else one ahead of the batch waited for.
        checks = stop is not None or progress is not None or self.rule.active
        ahead = 1 if checks else len(todo)
        job = parts = None
        launched = waited = 0
        while waited < launched or launched < len(todo):
            while launched < len(todo) and launched - waited <= ahead:
                sampler.launch(todo[launched], self.seed)
                launched += 1
            if self.plan_params is not None and job is None:
                job, parts = self._start_trawl(todo)
            # Seen one by one where something watches each batch, else all in one copy.
            ready = todo[waited:waited + 1] if checks else todo[waited:launched]
            sampler.collect(ready)
            ends = False
            for batch in ready:
                waited += 1
                ends = self._count(batch, waited < len(todo), len(todo), stop, progress)
            if ends:
                left = todo[waited:launched]  # launched already: counted
                sampler.collect(left)
                for batch in left:
                    self._count(batch, False, len(todo), stop, progress)
                break
        if job:
            self._settle(job, parts)
        elif job is False:  # no enumeration: every trawled sample was cut off at once
            cut = sum(int(stopped_slots(self.cg, b).sum()) for b in self.done if b.every > 0)
            self.stats["records"] += cut
            self.stats["cut_off"] += cut

    def _count(self, batch, more, total, stop, progress):
        """Adds a batch whose round sums are in (with its trawled samples' provisional
        values); True when the run stops after it."""
        if self.plan_params is not None:
            provisional_trawl(self.cg, batch)
        return self._completed(batch, more, total, stop, progress)

    def _start_trawl(self, todo):
        """One enumeration of the trawled prefixes of every batch (a TrawlJob and the
        parts for :meth:`_settle`), or False where there are none, or where the
        batches after the first will sample for less than MIN_TRAWL_WINDOW (going by
        the first one's GPU time; without ``trawl_window``): then every trawled
        sample is cut off before it starts (its value is its cut-off estimate) and
        no CPU job is started. (The first batch's time does not depend on the
        trawled samples, drawn apart: the estimate stays unbiased.)"""
        first = self.sampler.batch_seconds(todo[0])
        if (self.trawl_window is None and first is not None
                and first * (len(todo) - 1) < MIN_TRAWL_WINDOW):
            return False, None
        records, parts = trawl_records_of(self.cg, todo)
        slots = np.concatenate([s + off for _, s, off in parts]) if parts else np.zeros(0)
        if not len(slots):
            return False, None
        return TrawlJob(self.data, self.plan_params, records, slots, self.threads), parts

    def _settle(self, job, parts):
        """Cuts the enumeration off (after ``trawl_window`` at least, when given)
        and corrects the trawled samples whose enumeration finished."""
        if self.trawl_window is not None:
            job.wait(self.trawl_window)
        matches, finished = job.cut()
        self.stats["trawl_seconds"] += time.perf_counter() - job.started
        done = {id(b) for b in self.done}
        at = 0
        for batch, slots, _ in parts:
            part = slice(at, at + len(slots))
            at += len(slots)
            if id(batch) in done:  # a batch never sampled is left out, its trawls too
                settle_trawl(batch, slots, matches[part], finished[part], self.stats)


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
#: A tail index of the round sums below this (the largest ones fall off as a power
#: law ``P(T > t) ~ t^-alpha``, Hill's estimate over the top ``sqrt(rounds)``, at least
#: TAIL_ROUNDS): the variance may be infinite, and the interval misses far more often
#: than 5% (WanderJoin and Alley on house queries of power-law graphs: alpha 0.6 to
#: 1.9, 80% covered; triangles and 4-cycles with Alley: alpha 2.1 to 4.2, 95%).
MIN_TAIL_INDEX = 2.0
TAIL_ROUNDS = 10
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
    (effective rounds ``(sum T)^2 / sum T^2``), the largest round sums falling off
    as a power law of index below :data:`MIN_TAIL_INDEX` (:func:`tail_index`: the
    variance may be infinite; rare heavy samples that were never drawn then leave
    the estimate and its standard error both low), and batch means (the two halves
    of a single batch) further apart than their standard errors allow
    (:func:`_batch_disagreement`). A clean result is not a guarantee."""
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
    alpha = tail_index(sums)
    if alpha is not None and alpha < MIN_TAIL_INDEX:
        out.append(f"heavy-tailed weights: the largest round sums fall off with tail index "
                   f"{alpha:.2f} (below {MIN_TAIL_INDEX:g}: the variance may be infinite and "
                   "the rarest, heaviest walks unseen)")
    disagree = _batch_disagreement(batches if len(batches) > 1 else _halves(batches))
    if disagree:
        out.append(disagree)
    return out


def tail_index(sums: np.ndarray) -> float | None:
    """Hill's estimate of the tail index of the round sums ``sums`` over the top
    ``k = max(TAIL_ROUNDS, sqrt(rounds))`` (``k / sum log(T_(i) / T_(k+1))``), or None
    where fewer than ``k + 1`` are positive."""
    k = max(TAIL_ROUNDS, int(math.sqrt(sums.size)))
    if int(np.count_nonzero(sums > 0)) <= k:
        return None
    top = -np.partition(-sums, k)[:k + 1]
    top.sort()
    logs = float(np.log(top[1:] / top[0]).sum())
    return k / logs if logs > 0 else None


def _halves(batches) -> list:
    """One batch as its two halves of rounds (whose means must agree as batches'
    do)."""
    if not batches or batches[0].out_sum.size < 4:
        return []
    b = batches[0]
    cut = b.out_sum.size // 2
    first = SimpleNamespace(n=cut * ROUND, out_sum=b.out_sum[:cut])
    return [first, SimpleNamespace(n=b.n - first.n, out_sum=b.out_sum[cut:])]


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

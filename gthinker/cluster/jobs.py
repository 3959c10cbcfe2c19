"""What the cluster runs: one class per app, each saying how its work splits into
ranges of roots, how a node runs one range, and how the ranges' parts merge into
exactly the result one process gives.

A job object is pickled to every node: it holds the app's options, never a graph
(graphs travel once, through Ray's object store). ``weights(graph)`` (on the
driver) estimates the work of each root, in the order the app's deque holds
them; ``run_range`` (on a node) runs the app on roots ``[lo, hi)`` and returns a
small dict; ``merge`` (on the driver) adds up the parts of the completed ranges,
in root order, so the sum does not depend on which node ran what.

Jobs whose ``movable`` is true (mce, sm, a user's Task, k-cliques counted on the
CPU) also run batches taken out of another node's running unit: roots that no
thread had started there (``run_roots``) or task records from its spill stack
(``run_records``; the records are in the ids of the graph the app runs on, the
same on every node). Their parts merge like a range's. gSWORD is not movable
(its rounds are even work), nor are counts of other patterns.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import numpy as np

from .node import arange

#: A unit of records only: no roots of its own.
NO_ROOTS = np.empty(0, np.int32)


def later_degrees(graph) -> np.ndarray:
    """Neighbours of each vertex that come later in degeneracy order (the
    out-degree of the oriented graph), in the graph's own vertex order."""
    order, _ = graph.degeneracy_order()
    n = graph.num_vertices
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    src = np.repeat(np.arange(n, dtype=np.int32), np.diff(graph.indptr))
    later = rank[graph.indices] > rank[src]
    return np.bincount(src[later], minlength=n)


def _squared(d) -> np.ndarray:
    d = np.asarray(d, np.float64)
    return d * d + 1.0


def _max_compile(parts) -> float:
    """Nodes compile at the same time: the slowest one's compiling."""
    return max((p["compile_seconds"] for p in parts), default=0.0)


class Job:
    """The part every app shares: options, output, and the parts' common fields."""

    output = None
    #: Whether a running range's spilled tasks may move to another node (then
    #: ``run_records`` runs them there).
    movable = False

    def __init__(self, mode="auto", time_budget=None, output=None, options=None):
        self.mode = mode
        self.time_budget = time_budget
        self.output = None if output is None else os.fspath(output)
        self.options = dict(options or {})

    def local(self, graph):
        """The whole result computed on the driver (trivial jobs), or None."""
        return None

    def prepare(self, graph, threads) -> None:
        """Prepares the app's forms of ``graph`` on a node (its degeneracy order, an
        oriented or renumbered copy: kept with the Graph object for the units to
        come) and loads its compiled code, by running it on no roots."""
        self.run_range(graph, 0, 0, threads, None, None)

    def run_range(self, graph, lo, hi, threads, output, stop):
        """Runs the app on roots ``[lo, hi)`` (on a node); returns its part."""
        return self.run_on(graph, threads, output, stop, vertices=arange(lo, hi))

    def run_roots(self, graph, roots, threads, output, stop):
        """Runs the app on the roots ``roots`` (another node's unstarted ones) and
        returns their part, as :meth:`run_range` does for a range."""
        if not self.movable:
            raise NotImplementedError(f"{type(self).__name__} does not move roots between nodes")
        return self.run_on(graph, threads, output, stop, vertices=roots)

    def run_records(self, graph, data, starts, threads, output, stop):
        """Runs task records ``(data, starts)`` (another node's spilled tasks) and
        returns their part, as :meth:`run_range` does for roots."""
        if not self.movable:
            raise NotImplementedError(f"{type(self).__name__} does not move tasks between nodes")
        return self.run_on(graph, threads, output, stop, vertices=NO_ROOTS,
                           records=(data, starts))

    def run_on(self, graph, threads, output, stop, **inputs):
        """The app run on ``inputs`` (``vertices=``, ``records=``); its part."""
        raise NotImplementedError

    def common(self, res, threads) -> dict:
        return {"seconds": res.seconds, "compile_seconds": res.compile_seconds,
                "mode": res.mode, "threads": threads, "stopped": getattr(res, "stopped", None)}


class MCEJob(Job):
    """Maximal cliques: roots are the degeneracy-ordered graph's vertices (the app
    renumbers the graph the same way on every node, so records move as they are)."""

    movable = True

    def __init__(self, min_size=1, gpu_engine="auto", chunk=None, **kw):
        super().__init__(**kw)
        self.min_size, self.gpu_engine, self.chunk = min_size, gpu_engine, chunk

    def local(self, graph):
        if graph.num_vertices == 0:
            from ..apps import mce

            return mce.run(graph, mode=self.mode, threads=1, output=self.output)
        return None

    def weights(self, graph):
        order, _ = graph.degeneracy_order()
        return _squared(later_degrees(graph)[order])

    def run_on(self, graph, threads, output, stop, **inputs):
        from ..apps import mce

        res = mce.run(graph, mode=self.mode, threads=threads, time_budget=self.time_budget,
                      chunk=self.chunk, output=output, min_size=self.min_size,
                      gpu_engine=self.gpu_engine, stop=stop, **inputs, **self.options)
        return {"histogram": res.histogram, "mode_reason": res.mode_reason,
                **self.common(res, res.threads)}

    def merge(self, parts, seconds, threads, stats):
        from ..apps import mce

        hist: dict[int, int] = {}
        for p in parts:
            for size, n in p["histogram"].items():
                hist[size] = hist.get(size, 0) + n
        hist = dict(sorted(hist.items()))
        return mce.MCEResult(count=sum(hist.values()), max_size=max(hist, default=0),
                             histogram=hist, seconds=seconds, mode=parts[0]["mode"],
                             threads=threads, stats=stats, compile_seconds=_max_compile(parts),
                             mode_reason=parts[0]["mode_reason"])


def _as_query(query):
    """A query as it travels to the nodes: a pattern name as it is, a file as its graph
    (the path may not exist on the nodes)."""
    if isinstance(query, str) and not os.path.exists(query):
        return query
    from ..apps import sm

    return sm.as_query(query)


class CountJob(Job):
    """Pattern counts: roots are the vertices a subgraph is counted from (its first
    vertex in degeneracy order; for other patterns, the data vertex of the first
    query vertex in the matching order)."""

    def __init__(self, pattern="triangle", **kw):
        super().__init__(**kw)
        from ..apps import count

        self.name = pattern if isinstance(pattern, str) else "pattern"
        self.pattern = _as_query(pattern)
        # k-cliques on the CPU run as range records of first vertices (and prefix
        # cliques once those split): records that any node can run.
        self.k = count.clique_size(self.pattern)
        self.movable = self.mode == "cpu" and self.k is not None and self.k >= 3

    def local(self, graph):
        from ..apps import count

        k = count.clique_size(self.pattern)
        if graph.num_vertices == 0 or (k is not None and k < 3):
            return count.count(graph, self.pattern, mode=self.mode, threads=1)
        return None

    def weights(self, graph):
        """Later-degree squared, off the oriented graph that every range counts on
        (kept with the graph, it goes to the nodes with it)."""
        from ..apps import count

        return _squared(np.diff(count.oriented(graph).indptr))

    def run_range(self, graph, lo, hi, threads, output, stop):
        from ..apps import count

        res = count.count(graph, self.pattern, mode=self.mode, threads=threads,
                          time_budget=self.time_budget, vertices=range(lo, hi), stop=stop,
                          **self.options)
        return {"count": res.count, "counts": res.counts, "method": res.method,
                "prepare_seconds": res.prepare_seconds, "mode_reason": res.mode_reason,
                **self.common(res, res.threads)}

    def run_on(self, graph, threads, output, stop, **inputs):
        """k-clique records (another node's) on the oriented graph, as
        :func:`gthinker.apps.count.count` runs its own; the part of a range's form
        (the merge reads the method and the mode's reason off the first range)."""
        from ..apps import count
        from ..runtime import run

        options = {"cpu_task_batch": 1, **self.options}
        res = run(count.CliqueCount, count.oriented(graph), mode="cpu", threads=threads,
                  time_budget=self.time_budget, params=[self.k], stop=stop, **inputs,
                  **options)
        return {"count": res.counters["cliques"], "counts": None, "method": None,
                "prepare_seconds": 0.0, "mode_reason": None, **self.common(res, res.threads)}

    def merge(self, parts, seconds, threads, stats):
        from ..apps import count

        counts = None
        if parts[0]["counts"] is not None:
            counts = {}
            for p in parts:
                for k, n in p["counts"].items():
                    counts[k] = counts.get(k, 0) + n
            counts = dict(sorted(counts.items()))
        first = parts[0]
        return count.CountResult(
            self.name, sum(p["count"] for p in parts), seconds, first["mode"], threads,
            first["method"], counts=counts,
            prepare_seconds=max(p["prepare_seconds"] for p in parts),
            compile_seconds=_max_compile(parts), mode_reason=first["mode_reason"], stats=stats)


class SMJob(Job):
    """Embeddings (or distinct subgraphs) of a query: roots are the data vertices
    that the first query vertex of the matching order is matched to."""

    movable = True

    def __init__(self, query, unique=False, gpu_mode="auto", **kw):
        super().__init__(**kw)
        self.query, self.unique, self.gpu_mode = _as_query(query), unique, gpu_mode

    def local(self, graph):
        if graph.num_vertices == 0:
            from ..apps import sm

            return sm.count(graph, self.query, unique=self.unique, mode=self.mode, threads=1,
                            output=self.output)
        return None

    def weights(self, graph):
        return _squared(graph.degrees())

    def run_on(self, graph, threads, output, stop, **inputs):
        from ..apps import sm

        res = sm.count(graph, self.query, unique=self.unique, mode=self.mode, threads=threads,
                       time_budget=self.time_budget, gpu_mode=self.gpu_mode, output=output,
                       stop=stop, **inputs, **self.options)
        return {"count": res.count, "automorphisms": res.automorphisms, "order": res.order,
                "candidates": res.candidates, "gpu_mode": res.gpu_mode,
                "mode_reason": res.mode_reason, **self.common(res, res.threads)}

    def merge(self, parts, seconds, threads, stats):
        from ..apps import sm

        first = parts[0]
        return sm.SMResult(count=sum(p["count"] for p in parts), unique=self.unique,
                           automorphisms=first["automorphisms"], seconds=seconds,
                           mode=first["mode"], threads=threads, order=first["order"],
                           candidates=first["candidates"], gpu_mode=first["gpu_mode"],
                           stats=stats, compile_seconds=_max_compile(parts),
                           mode_reason=first["mode_reason"])


class GSwordJob(Job):
    """gSWORD estimates: roots are rounds of ``ROUND`` samples. Sample ``i``'s value
    depends only on the seed and ``i``, so a range of rounds gives the same round
    sums on any node, and the merged rounds give the estimate (and standard
    error) of one process bit for bit (without trawling, whose cut-offs depend
    on timing; with it, each range trawls on its own and the estimate is as
    valid, not the same)."""

    def __init__(self, query, estimator="alley", samples=1_000_000, trawl=True, batches=6,
                 seed=0, order="quicksi", name=None, **kw):
        super().__init__(**kw)
        self.label = name if name is not None else (query if isinstance(query, str)
                                                    else "query")
        self.query, self.estimator, self.samples = _as_query(query), estimator, samples
        self.trawl, self.batches, self.seed, self.order = trawl, batches, seed, order

    def prepare(self, graph, threads) -> None:
        """Nothing: a range of no rounds is no job (each range builds what it samples)."""

    def weights(self, graph):
        from ..apps.gsword.sampling import ROUND

        return np.ones((self.samples + ROUND - 1) // ROUND)

    def run_range(self, graph, lo, hi, threads, output, stop):
        from ..apps import gsword
        from ..apps.gsword.sampling import ROUND

        first = lo * ROUND
        n = min(hi * ROUND, self.samples) - first
        options = dict(self.options)
        if self.time_budget is not None:
            options["time_budget"] = self.time_budget
        res = gsword.estimate(graph, self.query, self.estimator, samples=n, mode=self.mode,
                              trawl=self.trawl, batches=min(self.batches, n), seed=self.seed,
                              threads=threads, order=self.order, first_sample=first, stop=stop,
                              **options)
        return {"rounds": res.rounds, "result": res, "stopped": res.stopped,
                "seconds": res.seconds, "compile_seconds": res.compile_seconds,
                "threads": res.threads}

    def merge(self, parts, seconds, threads, stats):
        from ..apps import gsword

        first = parts[0]["result"]
        batches = [SimpleNamespace(first=f, n=n, out_sum=s, out_valid=v)
                   for p in parts for (f, n, s, v) in p["rounds"]]
        if not self.trawl:  # one batch, as one process samples it
            batches.sort(key=lambda b: b.first)
            batches = [SimpleNamespace(
                first=0, n=sum(b.n for b in batches),
                out_sum=np.concatenate([b.out_sum for b in batches]),
                out_valid=np.concatenate([b.out_valid for b in batches]))] if batches else []
        total = sum(b.n for b in batches)
        estimate, stderr, valid = combine(batches, total)
        sampling = sum(p["result"].sampling_seconds for p in parts)
        return gsword.GSwordResult(
            query=self.label, estimate=estimate, samples=total,
            valid_ratio=valid / total if total else 0.0, stderr=stderr,
            ci95=(max(0.0, estimate - 1.96 * stderr), estimate + 1.96 * stderr),
            seconds=seconds, samples_per_second=(
                None if first.samples_per_second is None or seconds <= 0 else total / seconds),
            sampling_seconds=sampling, build_seconds=max(p["result"].build_seconds
                                                         for p in parts),
            estimator=first.estimator, mode=first.mode, trawl=first.trawl,
            batches=len(batches), seed=self.seed, inheritance=first.inheritance,
            streaming=first.streaming, order=first.order, candidates=first.candidates,
            trawl_stats=_summed([p["result"].trawl_stats for p in parts]), threads=threads,
            compile_seconds=_max_compile(parts), warnings=gsword.diagnose(batches, valid),
            rounds=[(b.first, b.n, b.out_sum, b.out_valid) for b in batches])


def combine(batches, total):
    """(estimate, standard error, valid samples) over batches of round sums, with the
    operations of gSWORD's own merge in the same order (the same floats come out):
    the mean of the sample values, and per batch the cluster-sample variance
    ``R / (R - 1) * sum_r (T_r - mean_b * n_r)^2`` over its R rounds."""
    from ..apps.gsword.sampling import ROUND

    s = var = 0.0
    valid = 0
    for b in batches:
        t = float(b.out_sum.sum())
        s += t
        valid += int(b.out_valid.sum())
        rounds = b.out_sum.size
        if rounds > 1:
            n_r = np.full(rounds, ROUND, np.float64)
            n_r[-1] = b.n - ROUND * (rounds - 1)
            resid = b.out_sum - (t / b.n) * n_r
            var += rounds / (rounds - 1) * float(resid @ resid)
    if total <= 0:
        return 0.0, 0.0, 0
    return s / total, float(np.sqrt(var)) / total, valid


def _summed(dicts):
    out: dict = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


class TaskJob(Job):
    """A user's own Task (``gthinker.run``): roots are the graph's vertices 0..n-1;
    counters add up, maxima take the largest, histograms add up."""

    movable = True

    def __init__(self, task, **kw):
        super().__init__(**kw)
        self.task = task

    def weights(self, graph):
        return _squared(graph.degrees())

    def local(self, graph):
        if graph.num_vertices == 0:
            from ..runtime import run

            return run(self.task, graph, mode=self.mode, threads=1, output=self.output,
                       **self.options)
        return None

    def run_on(self, graph, threads, output, stop, **inputs):
        from ..runtime import run

        res = run(self.task, graph, mode=self.mode, threads=threads,
                  time_budget=self.time_budget, output=output, stop=stop, **inputs,
                  **self.options)
        return {"counters": res.counters, "maxima": res.maxima, "histograms": res.histograms,
                **self.common(res, res.threads)}

    def merge(self, parts, seconds, threads, stats):
        from ..runtime import JobResult

        first = parts[0]
        counters = {k: sum(p["counters"][k] for p in parts) for k in first["counters"]}
        maxima = {}
        for k in first["maxima"]:
            seen = [p["maxima"][k] for p in parts if p["maxima"][k] is not None]
            maxima[k] = max(seen) if seen else None
        histograms = {k: sum(p["histograms"][k] for p in parts) for k in first["histograms"]}
        return JobResult(counters, maxima, histograms, stats, seconds, threads,
                         mode=first["mode"], compile_seconds=_max_compile(parts))

"""What an app was asked to do: a :class:`Request`, run whole in this process or split
into ranges of roots over a cluster, with the same result either way.

An app's command (:mod:`gthinker.registry`) turns a command line, or the keywords of
``gthinker.cluster.<app>(...)``, into a request: the app's options (its
:class:`gthinker.options.AppOptions`, checked), the rest of its function's keywords and
its inputs. ``request.run(graph, ...)`` calls the app's function with them (the one
method an app's request must write, :meth:`Request.call`) and returns the app's own
result. On a cluster (:mod:`gthinker.cluster`), ``weights(graph)`` (on the driver)
estimates the work of each root, in the order the app's deque holds them; ``run_range``
(on a node) runs roots ``[lo, hi)`` and returns its :meth:`~Request.part` (a small
dict); ``merge`` (on the driver) adds up the parts of the completed ranges, in root
order, so the sum does not depend on which node ran what.

A request holds the app's options, never a graph: it is pickled to every node (graphs
travel once, through Ray's object store). Requests whose ``movable`` is true (mce, sm,
a :class:`JobRequest`: a user's Task, k-cliques counted on the CPU) also run batches
taken out of another node's running unit: roots that no thread had started there
(:meth:`~Request.run_roots`)
or task records from its spill stack (:meth:`~Request.run_records`; the records are in
the ids of the graph the app runs on, the same on every node).
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["Request", "JobRequest", "TaskRequest", "NO_ROOTS", "roots", "squared", "max_compile"]

#: A unit of records only: no roots of its own.
NO_ROOTS = np.empty(0, np.int32)


def roots(lo: int, hi: int) -> np.ndarray:
    """Roots ``[lo, hi)`` as the runtime's ``vertices``."""
    return np.arange(lo, hi, dtype=np.int32)


def squared(d) -> np.ndarray:
    """Work estimates ``d^2 + 1`` of per-root sizes ``d`` (degrees, later degrees)."""
    d = np.asarray(d, np.float64)
    return d * d + 1.0


def max_compile(parts) -> float:
    """Nodes compile at the same time: the slowest one's compiling."""
    return max((p["compile_seconds"] for p in parts), default=0.0)


class Request:
    """One app's request: the keywords of its function (its options, checked, and
    :func:`gthinker.run`'s) and its inputs, and how it runs.

    Subclasses give :meth:`call` and, to run on a cluster, :meth:`weights`,
    :meth:`part` and :meth:`merge` (and :meth:`local` for results computed on the
    driver, :meth:`run_range` where a range is not "these roots as ``vertices=``").
    """

    #: Whether a running range's spilled tasks and unstarted roots may move to another
    #: node (then :meth:`run_roots` and :meth:`run_records` run them there).
    movable = False
    #: The query's name on the command line (its file's name, or the pattern), if any.
    label: str | None = None

    def __init__(self, *inputs, options=None, **keywords):
        """``inputs``: what the function takes after the graph (a query); ``options``:
        the app's :class:`~gthinker.options.AppOptions`, or None; ``keywords``: the rest
        of the function's keywords (:func:`gthinker.run`'s)."""
        self.inputs = inputs
        self.options = options
        self.rest = keywords

    def keywords(self) -> dict:
        """Every keyword the function gets: the app's options, then the rest."""
        own = {} if self.options is None else self.options.keywords()
        return {**own, **self.rest}

    @property
    def mode(self) -> str | None:
        return self.keywords().get("mode")

    @property
    def output(self) -> str | None:
        """Where listed results go (the ``output`` option), or None."""
        out = self.keywords().get("output")
        return None if out is None else os.fspath(out)

    # ---- in this process ------------------------------------------------------------

    def call(self, graph, *inputs, **keywords):
        """The app's function: ``function(graph, *inputs, **keywords)``."""
        raise NotImplementedError

    def run(self, graph, *, threads=None, output=None, stop=None, progress=None, **inputs):
        """Runs the app on ``graph`` and returns its result (``inputs``: ``vertices=``
        or ``records=`` for a part of the work; ``output``: where listed results go,
        by default the request's own)."""
        keywords = {**self.keywords(), "threads": threads, "stop": stop,
                    "progress": progress, **inputs}
        out = output if inputs else output or self.output
        if out is not None:
            keywords["output"] = out
        else:
            keywords.pop("output", None)
        return self.call(graph, *self.inputs, **keywords)

    # ---- on a cluster ---------------------------------------------------------------

    def local(self, graph):
        """The whole result computed on the driver (trivial jobs), or None."""
        return None

    def weights(self, graph) -> np.ndarray:
        """The estimated work of each root (on the driver)."""
        raise NotImplementedError(f"{type(self).__name__} does not run on a cluster")

    def prepare(self, graph, threads) -> None:
        """Prepares the app's forms of ``graph`` on a node (its degeneracy order, an
        oriented or renumbered copy: kept with the Graph object for the units to come)
        and loads its compiled code, by running it on no roots."""
        self.run_range(graph, 0, 0, threads, None, None)

    def run_range(self, graph, lo, hi, threads, output, stop) -> dict:
        """Runs the app on roots ``[lo, hi)`` (on a node); returns its part."""
        return self.part(self.run(graph, threads=threads, output=output, stop=stop,
                                  vertices=roots(lo, hi)))

    def run_roots(self, graph, roots, threads, output, stop) -> dict:
        """Runs the app on the roots ``roots`` (another node's unstarted ones) and
        returns their part, as :meth:`run_range` does for a range."""
        if not self.movable:
            raise NotImplementedError(f"{type(self).__name__} does not move roots between nodes")
        return self.part(self.run(graph, threads=threads, output=output, stop=stop,
                                  vertices=roots))

    def run_records(self, graph, data, starts, threads, output, stop) -> dict:
        """Runs task records ``(data, starts)`` (another node's spilled tasks) and
        returns their part, as :meth:`run_range` does for roots."""
        if not self.movable:
            raise NotImplementedError(f"{type(self).__name__} does not move tasks between nodes")
        return self.part(self.run(graph, threads=threads, output=output, stop=stop,
                                  vertices=NO_ROOTS, records=(data, starts)))

    def part(self, result) -> dict:
        """The small dict a node sends back for ``result``."""
        raise NotImplementedError

    def merge(self, parts, seconds, threads, stats):
        """The app's result for the parts of every range (in root order)."""
        raise NotImplementedError

    @staticmethod
    def common(res, threads) -> dict:
        """The fields of a part that every app's has."""
        return {"seconds": res.seconds, "compile_seconds": res.compile_seconds,
                "mode": res.mode, "threads": threads, "stopped": getattr(res, "stopped", None)}


class JobRequest(Request):
    """A request whose app returns a :class:`~gthinker.runtime.job.JobResult` (its job's
    named counters, maxima and histograms): a node's part is those, and the merge adds
    the counters and histograms up and keeps the largest maxima. Roots are the graph's
    vertices 0..n-1, weighted by squared degree: a subclass gives :meth:`call` (and
    :meth:`weights` where its roots are another form of the graph, e.g.
    :meth:`~gthinker.Graph.degeneracy_ordered`)."""

    movable = True

    def weights(self, graph):
        return squared(graph.degrees())

    def local(self, graph):
        if graph.num_vertices == 0:
            return self.run(graph, threads=1)
        return None

    def part(self, res):
        return {"counters": res.counters, "maxima": res.maxima, "histograms": res.histograms,
                **self.common(res, res.threads)}

    def merge(self, parts, seconds, threads, stats):
        from gthinker.runtime.job import JobResult

        first = parts[0]
        counters = {k: sum(p["counters"][k] for p in parts) for k in first["counters"]}
        maxima = {}
        for k in first["maxima"]:
            seen = [p["maxima"][k] for p in parts if p["maxima"][k] is not None]
            maxima[k] = max(seen) if seen else None
        histograms = {k: sum(p["histograms"][k] for p in parts) for k in first["histograms"]}
        return JobResult(counters, maxima, histograms, stats, seconds, threads,
                         mode=first["mode"], compile_seconds=max_compile(parts))


class TaskRequest(JobRequest):
    """A user's own Task (:func:`gthinker.run`) on the graph as it is: ``TaskRequest(task,
    **keywords)``, ``keywords`` being :func:`gthinker.run`'s."""

    def __init__(self, task, **keywords):
        super().__init__(**keywords)
        self.task = task

    def call(self, graph, **keywords):
        from gthinker.runtime.job import run

        return run(self.task, graph, **keywords)

"""The per-node worker: one Ray actor per node runs the local runtime (all of the
node's cores and GPUs) on the ranges of roots the driver hands it, and on batches
moved to it from another node's running unit: roots no thread had started there,
or spilled task records.

Nothing here imports Ray at import time; :mod:`gthinker.cluster.driver` turns
:class:`NodeWorker` into an actor.
"""

from __future__ import annotations

import os
import socket
import threading
import time

from gthinker.graphs.graph import Graph
from gthinker.runtime import stream

from ..stopping import StopToken


def graph_payload(graph: Graph, derived: bool = True) -> dict:
    """What goes into Ray's object store for a graph: its CSR arrays (read zero-copy
    as numpy on every node), the little else a Graph holds and, with ``derived``,
    the prepared forms of it that the driver made (:meth:`Graph.derived_graphs
    <gthinker.Graph.derived_graphs>`: counting's oriented graph, computed there
    for the work estimates), so that no node prepares them again."""
    return {"indptr": graph.indptr, "indices": graph.indices, "ids": graph.ids,
            "labels": graph.labels, "node_names": graph.node_names, "report": graph.report,
            "derived": {key: graph_payload(g, False)
                        for key, g in graph.derived_graphs().items()} if derived else {}}


def graph_from_payload(p: dict) -> Graph:
    graph = Graph(p["indptr"], p["indices"], ids=p["ids"], labels=p["labels"],
                  report=p["report"], node_names=p["node_names"])
    for key, form in p["derived"].items():
        graph.derived(key, lambda _, form=form: graph_from_payload(form))
    return graph


class JobHandle(StopToken):
    """A range's stop token that also keeps the runtime job it is attached to, so
    that another actor thread can take spilled tasks out of it while it runs."""

    def __init__(self):
        super().__init__()
        self.job = None

    def attach(self, job) -> None:
        super().attach(job)
        self.job = job

    def detach(self, job) -> None:
        if self.job is job:
            self.job = None
        super().detach(job)


class NodeWorker:
    """Runs units of a job on this node, one at a time (a second call waits): ranges
    of roots, and batches of task records moved here from another node's spill
    stack. Keeps the graphs it was sent (so each unit reuses the node's Graph
    object, with its degeneracy order computed once). While a unit runs, the
    driver may take tasks out of it (:meth:`give_tasks`) from another actor
    thread."""

    def __init__(self):
        self._graphs: dict[str, Graph] = {}
        self._lock = threading.Lock()
        self._stops: set[StopToken] = set()
        self._running: tuple[int, object, JobHandle] | None = None  # (unit, request, handle)

    def describe(self) -> dict:
        from gthinker.runtime.job import default_threads

        return {"host": socket.gethostname(), "pid": os.getpid(), "cores": default_threads(),
                "cache": os.environ.get("GTHINKER_CACHE_DIR", "")}

    def _graph(self, ref) -> Graph:
        key = ref.hex()
        graph = self._graphs.get(key)
        if graph is None:
            import ray

            if len(self._graphs) >= 2:  # a new job's graph: drop the oldest
                self._graphs.pop(next(iter(self._graphs)))
            graph = self._graphs[key] = graph_from_payload(ray.get(ref))
        return graph

    def prepare(self, request, graph_ref: list, threads) -> float:
        """Loads the request's graph (once) and prepares the app's forms of it before
        any unit runs (:meth:`Request.prepare <gthinker.runtime.request.Request.prepare>`); the
        seconds it took."""
        with self._lock:
            t0 = time.perf_counter()
            request.prepare(self._graph(graph_ref[0]), threads)
            return time.perf_counter() - t0

    def run_range(self, request, graph_ref: list, lo: int, hi: int, threads, node_output,
                  unit: int = -1) -> dict:
        """Runs ``request`` on roots ``[lo, hi)``; returns its part of the result. With an
        output, the range's lines stream out of its job into the part (``node_output``
        None: the driver gathers them) or are appended to ``node_output`` on this node
        once the range is done. ``unit``: the driver's name for this range, which
        :meth:`give_tasks` reports with the tasks it takes out of it."""
        return self._run(request, graph_ref, unit, node_output,
                         lambda graph, out, stop: request.run_range(graph, lo, hi, threads,
                                                                    out, stop))

    def run_roots(self, request, graph_ref: list, roots, threads, node_output,
                  unit: int = -1) -> dict:
        """Runs ``request`` on the roots ``roots`` (taken from another node's running
        unit, unstarted, by :meth:`give_roots`); the part comes back as a range's
        does."""
        return self._run(request, graph_ref, unit, node_output,
                         lambda graph, out, stop: request.run_roots(graph, roots, threads,
                                                                    out, stop))

    def run_batch(self, request, graph_ref: list, data, starts, threads, node_output,
                  unit: int = -1) -> dict:
        """Runs ``request`` on task records ``(data, starts)`` (taken from another node's
        spill stack by :meth:`give_tasks`) instead of roots; the part comes back as
        a range's does."""
        return self._run(request, graph_ref, unit, node_output,
                         lambda graph, out, stop: request.run_records(graph, data, starts,
                                                                      threads, out, stop))

    def _run(self, request, graph_ref, unit, node_output, call) -> dict:
        with self._lock:
            graph = self._graph(graph_ref[0])
            stop = JobHandle()
            self._stops.add(stop)
            self._running = (unit, request, stop)
            try:
                if not request.output:
                    return call(graph, None, stop)
                return _streamed(lambda output, stop: call(graph, output, stop), stop,
                                 node_output)
            finally:
                self._running = None
                self._stops.discard(stop)

    def _movable_job(self):
        """The runtime job of the unit running here, with the driver's name for the
        unit, if its work may move to another node; else None."""
        running = self._running
        if running is None or not running[1].movable:
            return None
        unit, _, handle = running
        job = handle.job
        return None if job is None else (unit, job)

    def spilled(self, want: int = 0, seconds: float = 0.0) -> tuple[int, int]:
        """``(tasks, roots)``: the tasks in the spill stack of the unit running here
        and its roots that no thread has started ((0, 0) when none runs, or when
        its job cannot hand work out). ``want`` > 0: for the next ``seconds``,
        its tasks split early while the spill stack holds fewer than ``want``
        (another node waits for some)."""
        found = self._movable_job()
        if found is None:
            return 0, 0
        job = found[1]
        if want > 0:
            job.request_tasks(int(want), float(seconds))
        return int(job.spill_tasks()), int(job.unstarted_vertices())

    def give_tasks(self, max_records: int):
        """Takes up to ``max_records`` tasks out of the spill stack of the unit
        running here (the oldest, largest ones): that unit's job will not run
        them. Returns ``(unit, data, starts)`` (:meth:`run_batch`'s records), or
        None when nothing could be taken (no unit runs, or its job ended)."""
        found = self._movable_job()
        if found is None:
            return None
        unit, job = found
        data, starts = job.take_tasks(int(max_records))
        if starts.size <= 1:
            return None
        return unit, data, starts

    def give_roots(self, max_roots: int):
        """Takes up to ``max_roots`` roots that no thread of the unit running here
        has started: that unit's job will not run them. Returns ``(unit,
        roots)`` (:meth:`run_roots`'s roots), or None when there were none."""
        found = self._movable_job()
        if found is None:
            return None
        unit, job = found
        roots = job.take_vertices(int(max_roots))
        if roots.size == 0:
            return None
        return unit, roots

    def stop(self) -> None:
        """Stops the unit in progress (its part comes back marked stopped)."""
        for token in list(self._stops):
            token.set()


def _streamed(call, stop: JobHandle, node_output) -> dict:
    """Runs ``call(output, stop)`` (a unit whose request lists results) with its
    results streamed out of its job (:func:`gthinker.runtime.stream.text`: the text
    lines, as the job writes them) into memory, and returns its part with them
    (``node_output`` None: the driver gathers them) or, once the unit has ended,
    appends them to ``node_output`` on this node (so a unit that fails, or whose
    node dies, adds no line there)."""
    part: dict = {}

    def run(output, stop):
        part.update(call(output, stop))

    lines = b"".join(stream.text(run, stop))
    if node_output is None:
        part["output"] = lines
    else:
        with open(node_output, "ab") as out:
            out.write(lines)
    return part

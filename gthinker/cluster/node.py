"""The per-node worker: one Ray actor per node runs the local runtime (all of the
node's cores and GPUs) on the ranges of roots the driver hands it.

Nothing here imports Ray at import time; :mod:`gthinker.cluster.driver` turns
:class:`NodeWorker` into an actor.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading

import numpy as np

from ..graph import Graph
from ..stopping import StopToken


def graph_payload(graph: Graph) -> dict:
    """What goes into Ray's object store for a graph: its CSR arrays (read zero-copy
    as numpy on every node) and the little else a Graph holds."""
    return {"indptr": graph.indptr, "indices": graph.indices, "ids": graph.ids,
            "labels": graph.labels, "node_names": graph.node_names, "report": graph.report}


def graph_from_payload(p: dict) -> Graph:
    return Graph(p["indptr"], p["indices"], ids=p["ids"], labels=p["labels"],
                 report=p["report"], node_names=p["node_names"])


class NodeWorker:
    """Runs ranges of a job on this node, one at a time (a second call waits), and
    keeps the graphs it was sent (so each range reuses the node's Graph object,
    with its degeneracy order computed once)."""

    def __init__(self):
        self._graphs: dict[str, Graph] = {}
        self._lock = threading.Lock()
        self._stops: set[StopToken] = set()

    def describe(self) -> dict:
        from ..runtime import default_threads

        return {"host": socket.gethostname(), "pid": os.getpid(), "cores": default_threads(),
                "cache": os.environ.get("GTHINKER_CACHE_DIR", "")}

    def _graph(self, ref) -> Graph:
        import ray

        key = ref.hex()
        graph = self._graphs.get(key)
        if graph is None:
            if len(self._graphs) >= 2:  # a new job's graph: drop the oldest
                self._graphs.pop(next(iter(self._graphs)))
            graph = self._graphs[key] = graph_from_payload(ray.get(ref))
        return graph

    def run_range(self, job, graph_ref: list, lo: int, hi: int, threads, node_output) -> dict:
        """Runs ``job`` on roots ``[lo, hi)``; returns its part of the result. With an
        output, the range's lines come back in the part (``node_output`` None: the
        driver gathers them) or are appended to ``node_output`` on this node once
        the range is done."""
        with self._lock:
            graph = self._graph(graph_ref[0])
            stop = StopToken()
            self._stops.add(stop)
            tmp = tempfile.mkdtemp(prefix="gthinker-range-") if job.output else None
            try:
                out = None if tmp is None else os.path.join(tmp, "out.txt")
                part = job.run_range(graph, lo, hi, threads, out, stop)
                if out is not None:
                    if node_output is None:
                        with open(out, "rb") as fh:
                            part["output"] = fh.read()
                    else:
                        with open(out, "rb") as src, open(node_output, "ab") as dst:
                            shutil.copyfileobj(src, dst)
                return part
            finally:
                self._stops.discard(stop)
                if tmp is not None:
                    shutil.rmtree(tmp, ignore_errors=True)

    def stop(self) -> None:
        """Stops the range in progress (its part comes back marked stopped)."""
        for token in list(self._stops):
            token.set()


def arange(lo: int, hi: int) -> np.ndarray:
    """Roots ``[lo, hi)`` as the runtime's ``vertices``."""
    return np.arange(lo, hi, dtype=np.int32)

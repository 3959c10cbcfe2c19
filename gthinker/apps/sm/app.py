"""Subgraph matching: count (or list) the embeddings of a query graph in a data graph.

An *embedding* is an injective map of the query's vertices to data vertices
that keeps labels (when the graphs are labeled) and maps every query edge to a
data edge (non-induced matching, the convention of the subgraph-matching
literature). ``unique=True`` counts distinct subgraphs instead: embeddings
that differ only by an automorphism of the query count once, so
``embeddings == unique * |Aut(q)|``.

How the search works: :mod:`gthinker.apps.matching.planner` filters the candidates,
picks the matching order and the symmetry-breaking constraints on the host and
packs them into the job's ``params`` (:func:`plan`); the compiled search runs
on the CPU workers (:mod:`gthinker.apps.sm.search`: intersections of the
backward neighbours' lists, reused along the order, and timed-out branches
handed to other workers as partial matches) or on the GPU
(:mod:`gthinker.apps.sm.gpu`). This module chooses where, and runs it.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

import numpy as np

import gthinker

from ..matching.patterns import PATTERNS, as_query, is_pattern, pattern
from ..matching.planner import (
    Plan,
    check_query,
    checked_order,
    edges_between,
    filter_candidates,
    is_candidate,
    matching_order,
    plan,
    symmetry_constraints,
)
from .search import SubgraphMatching, search

__all__ = ["PATTERNS", "Plan", "SMResult", "SubgraphMatching", "as_query", "check_query",
           "checked_order", "choose_gpu_mode", "count", "filter_candidates", "is_candidate",
           "is_pattern", "match", "matching_order", "pattern", "plan", "search",
           "symmetry_constraints"]


# ---- the Python API ------------------------------------------------------------------

#: GPU record layout: expand once some partial match of the first level has at
#: least this many candidates (see :func:`choose_gpu_mode`). Measured on an
#: H200 (docs/benchmarks.md): prefix was faster on email-Enron (largest fanout
#: 1,383), expand on an R-MAT graph with hubs of tens of thousands; the value
#: between them is a choice, not a measured optimum.
EXPAND_FANOUT = 8192


def fanouts(data: gthinker.Graph, p: Plan) -> np.ndarray:
    """For every candidate v of the first position, its number of candidates at
    the second: the fanout of the first level of the search tree."""
    c0 = p.candidates[int(p.order[0])]
    if len(p.order) < 2 or not len(c0):
        return np.zeros(len(c0), np.int64)
    return edges_between(data, c0, p.candidates[int(p.order[1])])


def choose_gpu_mode(data: gthinker.Graph, p: Plan) -> tuple[str, str]:
    """``("prefix" | "expand", why)`` from the fanouts of the first level:
    prefix (one warp extends a partial match with all its candidates, sharing
    the work) unless some partial match has EXPAND_FANOUT candidates or more:
    such a record would keep one warp busy while the others idle, and expand
    (one record per candidate) spreads it over all warps."""
    f = fanouts(data, p)
    if not len(f):
        return "prefix", "no candidates"
    top = int(f.max())
    why = f"largest first-level fanout {top} (expand from {EXPAND_FANOUT})"
    return ("expand" if top >= EXPAND_FANOUT else "prefix"), why


#: In auto mode a query whose candidates allow fewer partial matches than this
#: (the sum over positions of the product of candidate counts so far) runs on the
#: CPU: the GPU's set-up costs more than such a search.
SMALL_SEARCH = 100_000


def _small_search(p: Plan) -> str:
    """Why the search of plan ``p`` is too small for the GPU, or ''."""
    bound = 0
    product = 1
    for u in p.order:
        product *= max(len(p.candidates[int(u)]), 1)
        bound += product
        if bound >= SMALL_SEARCH:
            return ""
    return f"a small search (at most {bound:,} partial matches)"


@dataclass
class SMResult:
    count: int  # embeddings, or distinct subgraphs when unique
    unique: bool
    automorphisms: int
    seconds: float
    mode: str
    threads: int
    order: list
    candidates: list  # |C(u)| per query vertex
    gpu_mode: str | None = None  # prefix or expand (gpu and hybrid modes)
    stopped: str | None = None  # "limit" when the run stopped at its limit
    stats: dict = field(default_factory=dict, repr=False)
    compile_seconds: float = 0.0  # not in seconds; 0 when the compile cache had the code
    mode_reason: str = ""  # why mode="auto" chose this mode

    def to_dict(self) -> dict:
        return {"count": self.count, "unique": self.unique, "automorphisms": self.automorphisms,
                "seconds": self.seconds, "compile_seconds": self.compile_seconds,
                "mode": self.mode, "mode_reason": self.mode_reason, "gpu_mode": self.gpu_mode,
                "threads": self.threads, "order": self.order, "candidates": self.candidates,
                "stopped": self.stopped}


def count(data, query, unique: bool = False, mode: str = "auto", threads: int | None = None,
          time_budget: float | None = None, gpu_mode: str = "auto", limit: int | None = None,
          output=None, progress=None, **options) -> SMResult:
    """Counts the embeddings of ``query`` in ``data`` (or, with ``unique``, the
    distinct subgraphs).

    Parameters
    ----------
    data, query : gthinker.Graph, or anything :func:`gthinker.as_graph` takes
        ``query`` may also be a pattern name (see :func:`pattern`). Both
        labeled, or neither.
    mode : {"auto", "cpu", "gpu", "hybrid"}
        ``"auto"``: the GPU alone where a CUDA GPU is usable (G-ThinkerCG's
        advice for SM, measured in docs/benchmarks.md), else the CPU; the CPU
        with ``limit`` or ``output``, and for a search smaller than
        :data:`SMALL_SEARCH` partial matches.
    gpu_mode : {"auto", "prefix", "expand"}
        GPU record layout (see :mod:`gthinker.apps.sm.gpu`); ``"auto"`` picks
        it with :func:`choose_gpu_mode`.
    limit : int, optional
        Stop after this many matches (the count is then ``limit``, and
        ``stopped == "limit"``). CPU only.
    output : path, optional
        Write every match (or the first ``limit``) to this file, one per line:
        the data vertices (original ids) matched to query vertices 0, 1, ...
        CPU only.
    **options
        Passed on to :func:`gthinker.run` (``gpu_options``, ``spill_limit``, ...).
    """
    if gpu_mode not in ("auto", "prefix", "expand"):
        raise ValueError(f"gpu_mode must be auto, prefix or expand, got {gpu_mode!r}")
    # The arguments first, before a graph file is read or anything planned.
    threads = gthinker.options.check("threads", threads)
    time_budget = gthinker.options.check("time_budget", time_budget)
    gthinker.gpu.check_mode(mode)
    if limit is not None:
        limit = gthinker.options.positive_int("limit", limit)
    listing = limit is not None or output is not None
    if mode in ("gpu", "hybrid") and listing:
        raise ValueError("limit and output (--limit, --output) run on the CPU only; use "
                         "mode='cpu' (--mode cpu)")
    gthinker.outputs.check_output(output, [data, query])  # before a graph file is read
    data = gthinker.as_graph(data)
    p = plan(data, query, unique, limited=limit is not None)
    mode, why = gthinker.gpu.resolve_mode(mode, auto="gpu", cpu_because=(
        "listing matches runs on the CPU" if listing else _small_search(p)))
    chosen = None
    if mode in ("gpu", "hybrid"):
        from .gpu import SubgraphMatchingExpandGPU, SubgraphMatchingPrefixGPU

        chosen = gpu_mode if gpu_mode != "auto" else choose_gpu_mode(data, p)[0]
        options["gpu"] = (SubgraphMatchingPrefixGPU if chosen == "prefix"
                          else SubgraphMatchingExpandGPU)
    res = gthinker.run(SubgraphMatching, data, mode=mode, threads=threads,
                       time_budget=time_budget, params=p.params, limit=limit, output=output,
                       progress=progress, **options)
    return SMResult(count=res.counters["matches"], unique=unique,
                    automorphisms=p.automorphisms, seconds=res.seconds, mode=res.mode,
                    threads=res.threads, order=[int(u) for u in p.order],
                    candidates=[len(c) for c in p.candidates], gpu_mode=chosen,
                    stopped=res.stopped, stats=res.stats, compile_seconds=res.compile_seconds,
                    mode_reason=why)


def match(data, query, unique: bool = False, limit: int | None = None,
          threads: int | None = None, **options) -> np.ndarray:
    """Lists the matches: an int64 array with one row per match (at most
    ``limit``) and one column per query vertex, holding the data vertex (its
    original id) matched to it. Row order differs from run to run. For a
    networkx graph whose nodes are not integers, an object array of node names
    (of the same shape, whatever the names are: tuples, strings, mixed).

    >>> import networkx as nx
    >>> match(nx.complete_graph(3), "triangle", unique=True, threads=1).tolist()
    [[0, 1, 2]]
    """
    data = gthinker.as_graph(data)
    query = as_query(query)
    nq = query.num_vertices
    with tempfile.TemporaryDirectory(prefix="gthinker-") as tmp:
        path = os.path.join(tmp, "matches.txt")
        count(data, query, unique=unique, mode="cpu", threads=threads, limit=limit,
              output=path, **options)
        rows = np.fromfile(path, dtype=np.int64, sep=" ").reshape(-1, nq)
    names = data.node_names
    if names is not None:  # one element per name: tuple names must not become rows
        return np.fromiter(names, dtype=object, count=len(names))[rows]
    return rows

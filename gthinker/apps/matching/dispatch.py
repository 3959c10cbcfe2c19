"""Running the matching search: where (the CPU workers, the GPU or both), and how.

:func:`run_plan` takes a plan of :func:`gthinker.apps.matching.planner.plan`, picks
the mode (a search the plan says is small stays on the CPU: :func:`small_search`)
and the GPU record layout (:func:`choose_gpu_mode`), and runs the job. Shared by
:mod:`gthinker.apps.sm` (embeddings, listing) and :mod:`gthinker.apps.count` (the
patterns no clique engine or formula counts).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import gthinker

from . import partitions
from .dfs_plan import fits
from .planner import Plan, edges_between
from .search import SubgraphMatching

__all__ = ["EXPAND_FANOUT", "SMALL_SEARCH", "SMResult", "choose_gpu_mode",
           "choose_layout", "fanouts", "run_plan", "small_search"]

#: GPU record layout: expand once some partial match of the first level has at
#: least this many candidates (see :func:`choose_layout`). Prefix was faster on
#: email-Enron (largest fanout 1,383), expand on an R-MAT graph with hubs of tens of
#: thousands (docs/benchmarks.md, "Measurements behind the code's constants"); the
#: value between them is a choice, not a measured optimum.
EXPAND_FANOUT = 8192


def fanouts(data: gthinker.Graph, p: Plan) -> np.ndarray:
    """For every candidate v of the first position, its number of candidates at
    the second: the fanout of the first level of the search tree."""
    c0 = p.candidates[int(p.order[0])]
    if len(p.order) < 2 or not len(c0):
        return np.zeros(len(c0), np.int64)
    return edges_between(data, c0, p.candidates[int(p.order[1])])


def choose_gpu_mode(data: gthinker.Graph, p: Plan) -> tuple[str, str]:
    """``("dfs" | "prefix" | "expand", why)``: the depth-first engine
    (:mod:`gthinker.apps.matching.dfs_gpu`) for every plan it takes; for the others, the
    level-by-level engine in the layout :func:`choose_layout` picks."""
    beyond = fits(p.params)
    if not beyond:
        return "dfs", "the depth-first engine takes the plan"
    layout, why = choose_layout(data, p)
    return layout, f"{beyond}; {why}"


def choose_layout(data: gthinker.Graph, p: Plan) -> tuple[str, str]:
    """``("prefix" | "expand", why)``, the level-by-level engine's record layout, from
    the fanouts of the first level: prefix (one warp extends a partial match with all
    its candidates, sharing the work) unless some partial match has EXPAND_FANOUT
    candidates or more: such a record would keep one warp busy while the others idle,
    and expand (one record per candidate) spreads it over all warps."""
    f = fanouts(data, p)
    if not len(f):
        return "prefix", "no candidates"
    top = int(f.max())
    why = f"largest first-level fanout {top} (expand from {EXPAND_FANOUT})"
    return ("expand" if top >= EXPAND_FANOUT else "prefix"), why


#: In auto mode a query whose candidates allow fewer partial matches than this
#: (the sum over the enumerated positions, the count-only tail left out, of the
#: product of candidate counts so far) runs on the CPU: the GPU's set-up costs more
#: than such a search.
SMALL_SEARCH = 100_000


def small_search(p: Plan) -> str:
    """Why the search of plan ``p`` is too small for the GPU, or ''."""
    bound = 0
    product = 1
    enumerated = len(p.order) - (p.pattern.count_only if p.pattern is not None else 0)
    for u in p.order[: max(enumerated, 1)]:
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
    candidates: list  # |C(u)| per query vertex (empty when the count app counted it)
    gpu_mode: str | None = None  # dfs, prefix or expand (gpu and hybrid modes)
    stopped: str | None = None  # "limit" when the run stopped at its limit
    stats: dict = field(default_factory=dict, repr=False)
    compile_seconds: float = 0.0  # not in seconds; 0 when the compile cache had the code
    mode_reason: str = ""  # why mode="auto" chose this mode
    #: How it was counted: "subgraph matching" (the search; with count-only last
    #: levels unless it listed matches), "cliques (oriented)" or "formula (...)".
    method: str = "subgraph matching"
    induced: bool = False  # induced matches (the query's non-edges are data non-edges)
    #: What became of vertex labels (:func:`gthinker.apps.matching.planner.match_labels`):
    #: "" when neither graph has any, "honoured", or "ignored: why".
    labels: str = ""

    def to_dict(self) -> dict:
        return {"count": self.count, "unique": self.unique, "induced": self.induced,
                "labels": self.labels, "automorphisms": self.automorphisms,
                "seconds": self.seconds, "compile_seconds": self.compile_seconds,
                "mode": self.mode, "mode_reason": self.mode_reason, "gpu_mode": self.gpu_mode,
                "threads": self.threads, "order": self.order, "candidates": self.candidates,
                "stopped": self.stopped, "method": self.method}


def gpu_engine(gpu_mode: str, p: Plan):
    """The GPU side of the search for ``gpu_mode`` ("dfs", "prefix" or "expand")."""
    if gpu_mode == "dfs":
        beyond = fits(p.params)
        if beyond:
            raise ValueError(f"gpu_mode='dfs': {beyond}; use gpu_mode='prefix' or 'expand'")
        from .dfs_gpu import DFSEngine

        return DFSEngine
    from .levels_gpu import SubgraphMatchingExpandGPU, SubgraphMatchingPrefixGPU

    return SubgraphMatchingPrefixGPU if gpu_mode == "prefix" else SubgraphMatchingExpandGPU


def run_plan(data: gthinker.Graph, p: Plan, mode: str = "auto", gpu_mode: str = "auto",
             listing: bool = False, gpu_memory: int | None = None,
             **options) -> tuple[gthinker.JobResult, str | None, str]:
    """Runs the search of plan ``p`` on ``data``: ``(job result, GPU layout or None,
    why this mode)``. ``listing``: the run lists or claims matches (CPU only).
    ``gpu_memory``: the GPU memory the graph's copy may take (None: what the device has
    free); a graph larger is searched in parts (:mod:`gthinker.apps.matching.partitions`).
    ``options`` go to :func:`gthinker.run` (threads, time_budget, limit, output, ...);
    the arguments are checked by :func:`gthinker.apps.sm.count` before it plans."""
    mode, why = gthinker.gpu.resolve_mode(mode, auto="gpu", cpu_because=(
        "listing matches runs on the CPU" if listing else small_search(p)))
    chosen = None
    if mode in ("gpu", "hybrid"):
        chosen = gpu_mode if gpu_mode != "auto" else choose_gpu_mode(data, p)[0]
        options["gpu"] = gpu_engine(chosen, p)
        cap = None if "records" in options else partitions.search_cap(data, p, gpu_memory)
        if cap is not None:
            res, parts = partitions.search_in_parts(data, p, cap, mode, **options)
            return res, chosen, "; ".join(filter(None, (
                why, f"the graph matched in {parts} parts of at most {cap:,} bytes")))
    res = gthinker.run(SubgraphMatching, data, mode=mode, params=p.params, **options)
    return res, chosen, why

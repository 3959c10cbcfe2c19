"""Frequent subgraph mining (k-FSM, G2Miner's fifth problem) on vertex-labeled graphs.

:func:`mine` finds every connected labeled pattern of 1 to ``max_edges`` edges whose
domain (minimum image-based, MNI) support reaches ``support``: for each pattern vertex
the number of distinct data vertices it is mapped to by some embedding (an injective map
keeping every pattern edge and its labels), the least over the pattern's vertices.

The search goes level by level (a breadth-first search over patterns, G2Miner's bounded
BFS, with every level bounded by the memory of its batches):

1. Level 1, the single-edge patterns, is counted in one pass over the edges, grouped by
   their labels (numpy: the distinct sources of each labeled edge kind).
2. Level k + 1's candidates are the frequent level-k patterns grown by one frequent edge,
   each in canonical form (minimum DFS code, :mod:`.patterns`) so each is counted once,
   and kept only when every connected sub-pattern of one edge less is frequent
   (anti-monotone pruning).
3. Their supports are counted in batches of patterns: a task per (pattern, pattern
   vertex, range of candidate data vertices) on every CPU worker (:mod:`.cpu`), a GPU
   thread per candidate (:mod:`.gpu`), or both at once (hybrid: the GPU takes a share of
   the ranges). Each search stops at its first embedding and a pattern stops once it
   cannot reach the support (:mod:`.search`).

Edge labels (``graph.edge_labels``, where the graph has them) are part of the patterns;
without them every edge has label 0.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from gthinker.extending import (
    as_graph,
    check_output,
    compile_seconds,
    default_threads,
    gpu,
    run,
)

from .neighbours import LabelFilter
from .options import FSMOptions
from .patterns import (
    Pattern,
    canonical,
    extensions,
    invariant,
    single_edge,
    sub_graphs,
    sub_patterns,
)
from .search import INFREQUENT, MAXV, REACHED, plans

__all__ = ["FSMResult", "mine"]

#: The most bytes of domain marks and candidate lists one batch of patterns holds (one
#: byte per pattern vertex and data vertex, four per candidate).
BATCH_BYTES = 1 << 28
#: Initial task records per CPU thread and level (ranges of candidates are cut so).
RECORDS_PER_THREAD = 8
#: The share of each level's candidate ranges the GPU takes in hybrid mode.
HYBRID_GPU_SHARE = 0.75


@dataclass
class FSMResult:
    """The frequent patterns (each with its support), by level."""

    patterns: list[tuple[Pattern, int]]
    max_edges: int
    support: int
    seconds: float
    mode: str
    threads: int
    candidates: list[int] = field(default_factory=list)  # candidates counted per level
    compile_seconds: float = 0.0
    stopped: str | None = None
    searches: int = 0
    #: Whether the supports are exact (else those of 2 edges or more are at least
    #: ``support``: counting stopped there).
    exact_support: bool = True

    @property
    def count(self) -> int:
        return len(self.patterns)

    def by_level(self) -> list[int]:
        """Frequent patterns of 1, 2, ..., max_edges edges."""
        out = [0] * self.max_edges
        for p, _ in self.patterns:
            out[p.num_edges - 1] += 1
        return out

    def to_dict(self) -> dict:
        return {"frequent": self.count, "by_edges": self.by_level(),
                "candidates": self.candidates, "max_edges": self.max_edges,
                "support": self.support, "exact_support": self.exact_support,
                "patterns": [{"support": s, **p.to_dict()} for p, s in self.patterns],
                "seconds": self.seconds, "compile_seconds": self.compile_seconds,
                "mode": self.mode, "threads": self.threads, "stopped": self.stopped}

    def lines(self) -> list[str]:
        """One line per pattern: its support, then its edges."""
        return [f"{s} {p.text()}" for p, s in self.patterns]


@dataclass
class Batch:
    """The arrays one batch of patterns is searched with (the CPU tasks read them
    through their addresses)."""

    patterns: list[Pattern]
    vlab: np.ndarray
    elab: np.ndarray
    by_label: np.ndarray   # vertices grouped by label (with a filter: see __post_init__)
    label_start: np.ndarray
    support: int
    stride: int            # pattern vertices per pattern in marks
    graph: object = None
    cap: int = 0           # stop a pattern once all its domains reach this (0: exact)
    filter: LabelFilter | None = None
    plans: np.ndarray = None
    marks: np.ndarray = None
    fails: np.ndarray = None
    dead: np.ndarray = None
    cand: np.ndarray = None

    def __post_init__(self):
        """The candidates of pattern ``k``'s vertex ``i`` are ``by_label[lo:hi]``,
        ``(lo, hi) = ranges[k * MAXV + i]``: the vertices of its label or, with a
        ``filter``, those it keeps (``by_label`` then lists them, pattern by pattern). A
        pattern with fewer candidates than the support at some vertex is infrequent."""
        npat = len(self.patterns)
        self.marks = np.zeros(npat * self.stride * self.n, np.uint8)
        self.fails = np.zeros(npat * MAXV, np.int64)
        self.found = np.zeros(npat * MAXV, np.int64)
        self.dead = np.zeros(npat, np.uint8)
        self.ranges = np.zeros((npat * MAXV, 2), np.int64)
        if self.filter is None:
            for k, p in enumerate(self.patterns):
                self.ranges[k * MAXV:k * MAXV + p.num_vertices] = list(
                    map(self.label_range, p.labels))
        else:
            self.by_label = self._filtered()
        self.cand = self.ranges[:, 1] - self.ranges[:, 0]
        for k, p in enumerate(self.patterns):
            if self.cand[k * MAXV:k * MAXV + p.num_vertices].min() < self.support:
                self.dead[k] = INFREQUENT
        self.plans = plans(self.patterns, self.dead == 0)

    def _filtered(self) -> np.ndarray:
        parts, at = [], 0
        for k, p in enumerate(self.patterns):
            needs = [{} for _ in p.labels]
            for i, j, el in p.edges:
                needs[i][(el, p.labels[j])] = needs[i].get((el, p.labels[j]), 0) + 1
                needs[j][(el, p.labels[i])] = needs[j].get((el, p.labels[i]), 0) + 1
            for i, lab in enumerate(p.labels):
                vs = self.filter.vertices(lab, tuple(sorted(needs[i].items())))
                parts.append(vs)
                self.ranges[k * MAXV + i] = at, at + vs.size
                at += vs.size
        return np.concatenate(parts) if parts else np.zeros(0, np.int32)

    @property
    def n(self) -> int:
        return self.vlab.size

    @property
    def num_patterns(self) -> int:
        return len(self.patterns)

    def label_range(self, lab):
        if lab < 0 or lab + 1 >= self.label_start.size:
            return 0, 0
        return int(self.label_start[lab]), int(self.label_start[lab + 1])

    def records(self, pieces: int) -> np.ndarray:
        """``[p, i, lo, hi]`` rows: each (pattern, vertex)'s candidates in ranges, about
        ``pieces`` ranges in all."""
        chunk = max(16, -(-int(self.cand.sum()) // max(1, pieces)))
        rows = []
        for k, p in enumerate(self.patterns):
            if self.dead[k]:
                continue
            for i in range(p.num_vertices):
                lo, hi = self.ranges[k * MAXV + i].tolist()
                rows += [(k, i, a, min(a + chunk, hi)) for a in range(lo, hi, chunk)]
        return np.array(rows, np.int32).reshape(-1, 4)

    def short_of_cap(self) -> np.ndarray:
        """The patterns stopped as having reached the cap whose marked domains fall short
        of it: the workers' unguarded ``found`` increments can count a vertex twice (two
        threads marking it at once), and such a pattern stopped too early."""
        if not self.cap:
            return np.zeros(0, np.int64)
        return np.flatnonzero((self.dead == REACHED) & (self.least_domains() < self.cap))

    def domain_sizes(self, k) -> np.ndarray:
        """The vertices marked in each of pattern ``k``'s domains so far."""
        marks = self.marks.reshape(self.num_patterns, self.stride, self.n)
        return np.count_nonzero(marks[k, :self.patterns[k].num_vertices], axis=1)

    def least_domains(self) -> np.ndarray:
        """Each pattern's smallest marked domain so far (all patterns at once)."""
        marks = self.marks.reshape(self.num_patterns, self.stride, self.n)
        sizes = np.count_nonzero(marks, axis=2)
        nv = np.array([p.num_vertices for p in self.patterns])
        sizes[np.arange(self.stride) >= nv[:, None]] = self.n + 1
        return sizes.min(axis=1)

    def reopen(self, ks) -> None:
        """Patterns ``ks`` searched on from their marks: ``found`` recounted from them,
        failures forgotten (their candidates are searched again)."""
        for k in ks:
            self.dead[k] = 0
            self.fails[k * MAXV : (k + 1) * MAXV] = 0
            sizes = self.domain_sizes(k)
            self.found[k * MAXV : k * MAXV + sizes.size] = sizes

    def supports(self) -> list[int]:
        """Each pattern's support (-1: stopped as infrequent; at least the support, not
        exact, for one stopped once it reached it)."""
        least = self.least_domains()
        return [-1 if self.dead[k] == INFREQUENT else int(least[k])
                for k in range(self.num_patterns)]


def _labels(graph, edge_labels: bool):
    n = graph.num_vertices
    vlab = (np.zeros(n, np.int32) if graph.labels is None
            else np.ascontiguousarray(graph.labels, np.int32))
    if vlab.size and vlab.min() < 0:
        raise ValueError("vertex labels must be non-negative")
    el = getattr(graph, "edge_labels", None) if edge_labels else None
    elab = np.zeros(0, np.int32) if el is None else np.ascontiguousarray(el, np.int32)
    if elab.size != 0 and elab.size != graph.indices.size:
        raise ValueError(f"edge_labels has {elab.size} entries for {graph.indices.size} "
                         f"adjacency entries")
    return vlab, elab


def _single_edges(graph, vlab, elab, support):
    """Level 1: {pattern: support} of the frequent single-edge patterns, from the
    distinct sources of each (source label, edge label, target label) kind."""
    if graph.indices.size == 0:
        return {}
    n = graph.num_vertices
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph.indptr))
    dst = graph.indices
    vnames, vrank = np.unique(vlab, return_inverse=True)
    enames, erank = (np.unique(elab, return_inverse=True) if elab.size
                     else (np.zeros(1, np.int64), np.zeros(dst.size, np.int64)))
    nv, ne = vnames.size, enames.size
    kind = (vrank[src] * ne + erank) * nv + vrank[dst]
    if nv * nv * ne * n < 2**62:  # one int64 key per (kind, source)
        kinds = np.unique(kind * n + src) // n
    else:
        kinds = np.unique(np.stack([kind, src], 1), axis=0)[:, 0]
    kinds, counts = np.unique(kinds, return_counts=True)  # sources of each kind
    a, rest = np.divmod(kinds, ne * nv)
    e, b = np.divmod(rest, nv)
    reverse = (b * ne + e) * nv + a  # the same edge kind read from b to a
    at = np.minimum(np.searchsorted(kinds, reverse), kinds.size - 1)
    sup = np.minimum(counts, np.where(kinds[at] == reverse, counts[at], 0))
    keep = np.flatnonzero((a <= b) & (sup >= support))
    return {single_edge(int(vnames[a[k]]), int(enames[e[k]]), int(vnames[b[k]])): int(sup[k])
            for k in keep.tolist()}


def _candidates(frequent: dict, edges: set, stop=None) -> list[Pattern] | None:
    """The next level's candidates: each frequent pattern grown by a frequent edge, kept
    when every connected sub-pattern of one edge less is frequent; None once ``stop`` is
    set (the canonical forms of a large level take seconds: Ctrl-C must not wait). A
    grown graph one of whose sub-graphs has an invariant no frequent pattern has is
    dropped before any canonical form is computed (most of them)."""
    known = {invariant(p.labels, p.edges) for p in frequent}
    memo: dict = {}
    grown = set()
    for p in frequent:
        if stop is not None and stop.is_set():
            return None
        for g in extensions(p, edges):
            if all(invariant(*s) in known for s in sub_graphs(*g)):
                grown.add(canonical(*g, memo))
    out = []
    for c in grown:
        if stop is not None and stop.is_set():
            return None
        if all(s in frequent for s in sub_patterns(c, memo)):
            out.append(c)
    return sorted(out, key=lambda p: p.code)


def _search_cpu(batch, rows, threads, stop, time_budget):
    """Searches the candidate ranges ``rows`` on the CPU workers; the job's result."""
    from . import cpu

    data = np.ascontiguousarray(rows, np.int32).ravel()
    starts = np.arange(0, data.size + 1, 4, dtype=np.int64)
    keywords = {} if time_budget is None else {"time_budget": time_budget}
    return run(cpu.SupportTask, batch.graph, vertices=np.zeros(0, np.int32),
               records=(data, starts), params=cpu.params(batch), threads=threads,
               histogram_bins=1, stop=stop, **keywords)


def _search_hybrid(batch, rows, threads, stop, time_budget, engine):
    """The GPU searches a share of ``rows`` while the CPU workers search the rest; their
    marks, failures and stops are merged."""
    cut = int(round(rows.shape[0] * HYBRID_GPU_SHARE))
    gpu_rows, cpu_rows = rows[:cut], rows[cut:]
    failure = []

    def on_gpu():
        try:
            engine.search(batch, gpu_rows)
        except BaseException as exc:  # raised again in the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=on_gpu, name="fsm-gpu")
    thread.start()
    try:
        res = _search_cpu(batch, cpu_rows, threads, stop, time_budget) if cpu_rows.size else None
    finally:
        thread.join()
    if failure:
        raise failure[0]
    engine.merge_into(batch)
    return res


class _Search:
    """Counts the supports of a level's candidates, batch by batch, in one mode."""

    def __init__(self, graph, vlab, elab, support, mode, threads, stop, time_budget, exact):
        self.graph, self.vlab, self.elab, self.support = graph, vlab, elab, support
        self.cap = 0 if exact else support
        self.mode, self.threads, self.stop, self.time_budget = mode, threads, stop, time_budget
        self.by_label = np.argsort(vlab, kind="stable").astype(np.int32)
        self.label_start = np.searchsorted(vlab[self.by_label],
                                           np.arange(int(vlab.max(initial=0)) + 2))
        self.filter = LabelFilter(graph, vlab, elab, self.by_label, self.label_start)
        # a batch's candidate lists: int32, at most those of the largest label per vertex
        self.list_bytes = 4 * int(np.diff(self.label_start).max(initial=0))
        self.engine = None
        if mode != "cpu":
            from .gpu import SupportEngine

            self.engine = SupportEngine(graph, vlab, elab)
        self.searches = 0
        self.stopped = None

    def level(self, candidates, stride):
        """{pattern: support} of the frequent ones among ``candidates``."""
        per_batch = max(1, BATCH_BYTES // max(1, stride * (self.vlab.size + self.list_bytes)))
        out = {}
        for lo in range(0, len(candidates), per_batch):
            if self.stop is not None and self.stop.is_set():
                self.stopped = "stop"
                break
            batch = Batch(candidates[lo:lo + per_batch], self.vlab, self.elab, self.by_label,
                          self.label_start, self.support, stride, self.graph, self.cap,
                          self.filter)
            self._search(batch)
            for p, s in zip(batch.patterns, batch.supports(), strict=True):
                if s >= self.support:
                    out[p] = s
        return out

    def _search(self, batch):
        rows = batch.records(RECORDS_PER_THREAD * max(1, self.threads))
        while rows.size:
            self._search_rows(batch, rows)
            again = batch.short_of_cap()
            if self.stopped or not again.size:
                return
            batch.reopen(again)
            rows = rows[np.isin(rows[:, 0], again)]

    def _search_rows(self, batch, rows):
        if self.mode == "gpu":
            self.engine.search(batch, rows)
            self.engine.merge_into(batch)
            self.searches += self.engine.searches
            return
        if self.mode == "hybrid":
            res = _search_hybrid(batch, rows, self.threads, self.stop, self.time_budget,
                                 self.engine)
            self.searches += self.engine.searches
        else:
            res = _search_cpu(batch, rows, self.threads, self.stop, self.time_budget)
        if res is not None:
            self.searches += res.counters["searches"]
            if res.stopped:
                self.stopped = res.stopped


def mine(graph, max_edges=None, support=None, *, stop=None, progress=None, **options):
    """The frequent patterns of ``graph`` (anything :func:`gthinker.as_graph` takes; its
    ``labels`` are the vertex labels, all 0 where it has none): an :class:`FSMResult`
    listing every connected labeled pattern of 1 to ``max_edges`` edges whose domain
    (MNI) support is at least ``support``, each once (in canonical form), with its
    support, in the order of levels then canonical codes.

    ``options``: :class:`FSMOptions`' (``mode``, ``exact_support``, ``edge_labels``,
    ``output``) and ``threads``,
    ``time_budget``. ``stop`` (a :class:`gthinker.StopToken`) stops at the next batch
    (``stopped == "stop"``, the levels done so far listed); ``progress`` is called with
    ``{"level": k, "candidates": c, "frequent": f}`` after each level."""
    opts, rest = FSMOptions.split({"max_edges": max_edges, "support": support, **options})
    check_output(opts.output)
    graph = as_graph(graph)
    t0 = time.perf_counter()
    compiled0 = compile_seconds()
    threads = rest.get("threads") or default_threads()
    mode, _why = gpu.resolve_mode(opts.mode, allowed=("cpu", "gpu", "hybrid"))
    vlab, elab = _labels(graph, opts.edge_labels)
    search = _Search(graph, vlab, elab, opts.support, mode, threads, stop,
                     rest.get("time_budget"), opts.exact_support)
    frequent = _single_edges(graph, vlab, elab, opts.support)
    edges = {(p.labels[0], p.edges[0][2], p.labels[1]) for p in frequent}
    edges |= {(b, e, a) for a, e, b in edges}
    found = sorted(frequent.items(), key=lambda ps: ps[0].code)
    candidates = [len(frequent)]
    if progress is not None:
        progress({"level": 1, "candidates": len(frequent), "frequent": len(frequent)})
    for k in range(2, opts.max_edges + 1):
        level = _candidates(frequent, edges, stop)
        if level is None:
            search.stopped = "stop"
        if not level or search.stopped:
            break
        candidates.append(len(level))
        frequent = search.level(level, k + 1)
        found += sorted(frequent.items(), key=lambda ps: ps[0].code)
        if progress is not None:
            progress({"level": k, "candidates": len(level), "frequent": len(frequent)})
    res = FSMResult(found, opts.max_edges, opts.support, time.perf_counter() - t0, mode,
                    threads, candidates, compile_seconds() - compiled0, search.stopped,
                    search.searches, opts.exact_support)
    if opts.output is not None:
        _write(res, opts.output)
    return res


def _write(res: FSMResult, path) -> None:
    text = "".join(line + "\n" for line in res.lines())
    if path == "-":
        print(text, end="")
        return
    with open(path, "w") as f:
        f.write(text)

"""The GPU matching engine's program: which intersections a match needs, when each is
computed, and what every position's candidates are filtered by.

:func:`program` reads the matching plan's ``params`` (:mod:`gthinker.apps.matching.planner`:
the order's backward neighbours, the symmetry-breaking restrictions, the candidate
bitmaps and the count-only tail of the pattern plan) and packs, as int64, what the
kernels of :mod:`gthinker.apps.matching.dfs_gpu` follow.

**Lists and their reuse** (T-DFS's set-intersection reuse, generalised). The candidates of
position d are the data vertices adjacent to the vertex of every backward neighbour of d:
the intersection of their neighbour lists. For a backward set S of two or more positions,
the engine keeps a *list*: the intersection over S, computed once its last position
``max(S)`` is matched (its *depth*), from a list already kept for a subset of S (the largest,
else the chain of S's prefixes, each one more neighbour list), so that an intersection is
done at the shallowest level where its inputs are known and shared by every position and
list that needs it. A wheel's rim vertices, for instance (backward set {hub, a, b}), intersect
the hub's and a's lists once per a, then only that short list with b's row per b. A position
with one backward neighbour takes that neighbour's row of the graph as it is. An empty list
ends its subtree at once: every position after it needs it.

**Filters** of position d, applied when its candidates are read from its source: the
restrictions (``m[p] < m[d]``, ``m[p] > m[d]``: a range of the sorted list), injectivity
against the matched positions that are not backward neighbours (a backward neighbour's
vertex is never in its own row) and, where it prunes (enumerated positions; count-only
positions of labeled queries), the candidate bitmap.

**The count-only tail** (the pattern plan's ``count_only`` r): at the last enumerated
position the matches are counted from sizes: r = 1, the filtered size; r = 2, ``|A| |B| -
|A & B|``, or pairs ``x < y`` when a restriction joins them, or ``C(|A|, 2)`` for twins; r >= 3
twins, ``C(|A|, r)`` under their chain of restrictions, ``|A| (|A| - 1) ... (|A| - r + 1)``
without.

>>> from gthinker.apps.matching.planner import plan
>>> from gthinker.apps.matching.patterns import pattern
>>> import networkx as nx
>>> prog = program(plan(nx.complete_graph(6), "4-wheel", unique=True).params)
>>> prog.lists, prog.sources       # (parent, position, depth): {0,1} then {0,1} & row(2)
([(-1, 1, 1), (0, 2, 2)], [0, -1, -1, 1, 1])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .gpu_modes import DFS_MAX_QUERY
from .planner import (
    H_BACK,
    H_BACK_PTR,
    H_BITMAP,
    H_LESS,
    H_LESS_PTR,
    H_MORE,
    H_MORE_PTR,
    H_NQ,
    H_TAIL,
    H_TAIL_CHAIN,
    H_TAIL_FILTER,
    H_WORDS,
)

__all__ = ["HEADER", "MAX_LISTS", "MAX_QUERY", "Program", "fits", "intersections", "program",
           "G_NQ", "G_S", "G_TAIL", "G_NLISTS", "G_NBUF", "G_TWINS", "G_JOINED", "G_TFILTER",
           "G_CHAIN", "G_SRC", "G_INJ_PTR", "G_INJ", "G_CHECK", "G_SCHED_PTR", "G_SCHED",
           "G_LPAR", "G_LX"]

# ---- the program's header (int64 slots; the offsets are from the program's start) ----
G_NQ, G_S, G_TAIL, G_NLISTS, G_NBUF = 0, 1, 2, 3, 4
G_TWINS, G_JOINED, G_TFILTER, G_CHAIN = 5, 6, 7, 8
G_SRC, G_INJ_PTR, G_INJ, G_CHECK = 9, 10, 11, 12
G_SCHED_PTR, G_SCHED, G_LPAR, G_LX = 13, 14, 15, 16
HEADER = 17

MAX_QUERY = DFS_MAX_QUERY  #: query vertices the engine takes (its per-warp state in shared memory)
MAX_LISTS = 96  #: kept lists of a program the engine takes


@dataclass
class Program:
    """What :func:`program` decided, and its packed form (``array``)."""

    nq: int
    first_counted: int  # s: the first count-only position (nq when none)
    lists: list  # (parent, position, depth) per kept list; parent -1 - p: row of position p
    sources: list  # per position: a list id, or -1 - p (the row of position p)
    array: np.ndarray  # int64, the layout of the G_* slots

    @property
    def buffers(self) -> int:
        """Buffers of a warp: the kept lists, then one candidate list per position."""
        return len(self.lists) + self.nq


def _csr(lists):
    ptr = np.zeros(len(lists) + 1, np.int64)
    ptr[1:] = np.cumsum([len(x) for x in lists])
    flat = np.array([v for x in lists for v in x], np.int64)
    return ptr, flat


def _ranges(P, ptr_slot, flat_slot, nq):
    ptr, flat = P[ptr_slot], P[flat_slot]
    return [[int(x) for x in P[flat + P[ptr + d]: flat + P[ptr + d + 1]]] for d in range(nq)]


def intersections(back) -> tuple[list, list]:
    """The kept lists and every position's source (see the module docstring):
    ``(lists, sources)``, a list being ``(parent, position, depth)``: ``parent`` (a list
    id, or ``-1 - p`` for the row of position p) intersected with the row of
    ``position``, once the match reaches ``depth``; a source a list id or ``-1 - p``."""
    planned: dict[frozenset, int] = {}
    lists: list[tuple[int, int, int]] = []

    def keep(s: frozenset) -> int:
        if len(s) == 1:
            return -1 - next(iter(s))
        if s in planned:
            return planned[s]
        subsets = [t for t in planned if t < s]
        if subsets:
            t = max(subsets, key=lambda t: (len(t), -max(t), sorted(t)))
            code, rest = planned[t], sorted(s - t)
        else:
            first, *rest = sorted(s)
            t, code = frozenset([first]), -1 - first
        for x in rest:  # one more row each, in order: each prefix at its own depth
            t = t | {x}
            if t not in planned:
                lists.append((code, x, max(t)))
                planned[t] = len(lists) - 1
            code = planned[t]
        return code

    wanted = sorted({frozenset(b) for b in back if len(b) >= 2},
                    key=lambda s: (max(s), len(s), sorted(s)))
    for s in wanted:
        keep(s)
    sources = [keep(frozenset(b)) if b else 0 for b in back]
    return lists, sources


def _same_filter(P, less, more, s):
    """Do positions s and s + 1 filter alike, apart from a restriction between them
    (twins: the same backward neighbours, restrictions and candidate bitmap)?"""
    words, at = int(P[H_WORDS]), int(P[H_BITMAP])
    b0 = P[at + s * words: at + (s + 1) * words]
    b1 = P[at + (s + 1) * words: at + (s + 2) * words]
    return (sorted(set(less[s + 1]) - {s}) == sorted(less[s]) and more[s] == more[s + 1]
            and np.array_equal(b0, b1))


def program(params) -> Program:
    """The engine's program for a plan's ``params`` (see the module docstring)."""
    P = np.asarray(params, np.int64)
    nq = int(P[H_NQ])
    tail = int(P[H_TAIL])
    s = nq - tail
    back = _ranges(P, H_BACK_PTR, H_BACK, nq)
    less = _ranges(P, H_LESS_PTR, H_LESS, nq)
    more = _ranges(P, H_MORE_PTR, H_MORE, nq)
    lists, sources = intersections(back)
    inj = [[p for p in range(min(d, s)) if p not in back[d]] for d in range(nq)]
    check = [1 if d < s else int(P[H_TAIL_FILTER] != 0) for d in range(nq)]
    depth = max([dep for _, _, dep in lists], default=0)
    sched = [[i for i, (_, _, dep) in enumerate(lists) if dep == j]
             for j in range(max(depth, nq - 1) + 1)]
    twins = joined = 0
    if tail == 2:
        joined = int(s in less[s + 1] or (s + 1) in more[s])
        twins = int(joined and sources[s] == sources[s + 1] and _same_filter(P, less, more, s))
    header = np.zeros(HEADER, np.int64)
    header[[G_NQ, G_S, G_TAIL, G_NLISTS, G_NBUF]] = nq, s, tail, len(lists), len(lists) + nq
    header[[G_TWINS, G_JOINED, G_TFILTER, G_CHAIN]] = (twins, joined, int(P[H_TAIL_FILTER]),
                                                       int(P[H_TAIL_CHAIN]))
    parts = {G_SRC: np.array(sources, np.int64), G_CHECK: np.array(check, np.int64),
             G_LPAR: np.array([p for p, _, _ in lists], np.int64),
             G_LX: np.array([x for _, x, _ in lists], np.int64)}
    parts[G_INJ_PTR], parts[G_INJ] = _csr(inj)
    parts[G_SCHED_PTR], parts[G_SCHED] = _csr(sched)
    chunks, off = [header], HEADER
    for key in (G_SRC, G_INJ_PTR, G_INJ, G_CHECK, G_SCHED_PTR, G_SCHED, G_LPAR, G_LX):
        header[key] = off
        chunks.append(parts[key])
        off += len(parts[key])
    return Program(nq=nq, first_counted=s, lists=lists, sources=sources,
                   array=np.concatenate(chunks))


def fits(params) -> str:
    """Why the plan of ``params`` is beyond the engine, or '': it takes queries of at
    most ``MAX_QUERY`` vertices whose program keeps at most ``MAX_LISTS`` lists."""
    P = np.asarray(params, np.int64)
    nq = int(P[H_NQ])
    if nq > MAX_QUERY:
        return f"the query has {nq} vertices (the DFS engine takes {MAX_QUERY})"
    lists = len(intersections(_ranges(P, H_BACK_PTR, H_BACK, nq))[0])
    if lists > MAX_LISTS:
        return f"the query needs {lists} kept lists (the DFS engine keeps {MAX_LISTS})"
    return ""

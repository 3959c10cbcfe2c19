"""Domain (MNI) support without listing every embedding: for a pattern vertex ``i`` and
a data vertex ``v``, is there one embedding that maps ``i`` to ``v``?

Each (pattern, vertex ``i``) has a **plan**: the pattern's vertices in breadth-first
order from ``i`` (position 0 is ``i``), each later position with its parent position (an
earlier neighbour), its label and the edge labels to every earlier position. One
backtracking search per (``i``, ``v``) stops at the first embedding it finds and marks
every vertex of it in its domain (so the vertices it covers need no search of their own);
a search that finds none counts a failure, and a pattern vertex with more failures than
its candidates less the support has too small a domain: the pattern is infrequent and
its other searches stop (G2Miner's early stop, in its anti-monotone direction). Without
exact supports, a pattern whose every vertex has S domain vertices found stops too.

The functions here are plain Python over arrays and integers, compiled twice: with
``numba.njit`` for the CPU tasks (:mod:`.cpu`) and as CUDA device functions for the GPU
kernel (:mod:`.gpu`), so both run one search.

A plan row (int32, :data:`PLAN_LEN` entries): ``[nv, slot[MAXV], label[MAXV],
parent[MAXV], degree[MAXV], conn[MAXV * MAXV]]``, ``conn[a * MAXV + b]`` the edge label
plus one between positions ``a`` and ``b`` (0: no edge).
"""

from __future__ import annotations

import numpy as np

from .patterns import Pattern

__all__ = ["INFREQUENT", "MAXV", "PLAN_LEN", "REACHED", "build", "plans"]

#: The most vertices a pattern has (so ``--max-edges`` is at most MAXV - 1).
MAXV = 8
_SLOT, _LABEL, _PARENT, _DEGREE, _CONN = 1, 1 + MAXV, 1 + 2 * MAXV, 1 + 3 * MAXV, 1 + 4 * MAXV
PLAN_LEN = _CONN + MAXV * MAXV
#: ``dead[p]``: pattern p cannot reach the support, or (without exact supports) every
#: one of its vertices has; either stops its searches.
INFREQUENT, REACHED = 1, 2


def _plan(p: Pattern, nbr, root: int, row: np.ndarray) -> None:
    order, parent = [root], {root: -1}
    for t, v in enumerate(order):
        for w in nbr[v]:
            if w not in parent:
                parent[w] = t
                order.append(w)
    pos = {v: t for t, v in enumerate(order)}
    row[0] = p.num_vertices
    for t, v in enumerate(order):
        row[_SLOT + t] = v
        row[_LABEL + t] = p.labels[v]
        row[_PARENT + t] = parent[v]
        row[_DEGREE + t] = len(nbr[v])
        for w, el in nbr[v].items():
            row[_CONN + t * MAXV + pos[w]] = el + 1


def plans(patterns, live=None) -> np.ndarray:
    """The plans of ``patterns``: row ``p * MAXV + i`` is pattern ``p``'s from vertex ``i``
    (zeros for a pattern whose ``live`` entry is False: it is not searched)."""
    out = np.zeros((max(1, len(patterns)) * MAXV, PLAN_LEN), np.int32)
    for k, p in enumerate(patterns):
        if live is not None and not live[k]:
            continue
        nbr = [{} for _ in range(p.num_vertices)]  # neighbours in increasing order
        for i, j, el in sorted(p.edges + tuple((j, i, el) for i, j, el in p.edges)):
            nbr[i][j] = el
        for i in range(p.num_vertices):
            _plan(p, nbr, i, out[k * MAXV + i])
    return out


def build(jit):
    """``check_vertex`` and ``reached`` compiled by ``jit`` (``numba.njit(nogil=True)`` for the CPU,
    ``cuda.jit(device=True)`` for the GPU) with the functions it calls."""

    def _adjacent(indptr, indices, u, w):
        """Position of ``w`` in ``u``'s sorted row, or -1."""
        lo = indptr[u]
        hi = indptr[u + 1]
        while lo < hi:
            mid = (lo + hi) // 2
            if indices[mid] < w:
                lo = mid + 1
            else:
                hi = mid
        if lo < indptr[u + 1] and indices[lo] == w:
            return lo
        return -1


    def _fits(indptr, indices, elab, has_el, plan, mapped, t, e, w):
        """Can position ``t`` take ``w`` (reached by CSR entry ``e`` from its parent)?"""
        if has_el and elab[e] != plan[_CONN + plan[_PARENT + t] * MAXV + t] - 1:
            return False
        if indptr[w + 1] - indptr[w] < plan[_DEGREE + t]:
            return False
        for a in range(t):
            if mapped[a] == w:
                return False
        for a in range(t):
            c = plan[_CONN + a * MAXV + t]
            if c == 0 or a == plan[_PARENT + t]:
                continue
            pos = _adjacent(indptr, indices, mapped[a], w)
            if pos < 0 or (has_el and elab[pos] != c - 1):
                return False
        return True


    def _embeds(indptr, indices, vlab, elab, has_el, plan, v, mapped, cursor):
        """Whether some embedding maps position 0 of ``plan`` to ``v`` (it is left in
        ``mapped``); a depth-first search that stops at the first."""
        nv = plan[0]
        mapped[0] = v
        if indptr[v + 1] - indptr[v] < plan[_DEGREE]:
            return False
        t = 1
        cursor[1] = indptr[mapped[plan[_PARENT + 1]]]
        while t >= 1:
            par = mapped[plan[_PARENT + t]]
            end = indptr[par + 1]
            found = False
            while cursor[t] < end:
                e = cursor[t]
                cursor[t] += 1
                w = indices[e]
                if vlab[w] == plan[_LABEL + t] and _fits(indptr, indices, elab, has_el, plan,
                                                         mapped, t, e, w):
                    mapped[t] = w
                    found = True
                    break
            if not found:
                t -= 1
            elif t == nv - 1:
                return True
            else:
                t += 1
                cursor[t] = indptr[mapped[plan[_PARENT + t]]]
        return False


    def check_vertex(indptr, indices, vlab, elab, has_el, plan, v, marks, base, n, mapped,
                     cursor, found, fbase):
        """Searches an embedding that maps position 0 of ``plan`` to ``v``; on success marks
        its vertices (``marks[base + slot * n + vertex] = 1``), adds the new ones to
        ``found[fbase + slot]`` (unguarded: a lost increment only counts fewer) and
        returns True."""
        if not _embeds(indptr, indices, vlab, elab, has_el, plan, v, mapped, cursor):
            return False
        for t in range(plan[0]):
            at = base + plan[_SLOT + t] * n + mapped[t]
            if marks[at] == 0:
                marks[at] = 1
                found[fbase + plan[_SLOT + t]] += 1
        return True

    def reached(found, fbase, nv, cap):
        """Whether every one of the ``nv`` pattern vertices has ``cap`` domain vertices."""
        for i in range(nv):
            if found[fbase + i] < cap:
                return False
        return True

    _adjacent = jit(_adjacent)
    _fits = jit(_fits)
    _embeds = jit(_embeds)
    return jit(check_vertex), jit(reached)

"""One MCE subtree's exclusion set, made small: shared by the CPU search
(:mod:`gthinker.apps.mce.app`) and the GPU engine's host side
(:mod:`gthinker.apps.mce.bitsets_gpu`).

A subtree is a task record ``(R, P, X)`` (layout ``[|R|, |P|, |X|, R..., P...,
X...]``, P and X sorted): its maximal cliques are R + C for the maximal cliques
C of G[P] that no vertex of X extends. Of a vertex x of X only its *row*,
N(x) ∩ P, matters: x blocks C exactly when C is inside its row. So

* an x with an empty row never blocks anything and is dropped (X', as before);
* X vertices with the same row block the same cliques: the smallest id is kept;
* an x whose row is a single vertex u of P that a kept row of two or more
  vertices also holds blocks nothing that row does not: it is dropped;
* a row that is all of P blocks every clique: the subtree has none ("covered").

The search below a node only ever asks which X vertices are adjacent to the
vertices it adds, always vertices of P, so a subtree searched with the kept
vertices as its X finds the same maximal cliques. On a hub's subtree, X (the
hub's earlier neighbours, up to millions) shrinks to the distinct rows over P,
and |P| is at most the degeneracy. The rows come from the P side (each P vertex's
neighbours looked up in X) when that is cheaper, else from the X side (each X
vertex's neighbours looked up in P, one pass over X): neither scans a hub's whole
neighbourhood once per P vertex, and memory stays within a few times the
record's own size (:data:`ROW_WORDS_LIMIT`).

The module also builds the records the GPU engine hands around: a root's
record (:func:`initial_record`), a record with its X made small
(:func:`compact_records`) and a record's first-level branches
(:func:`first_level`).
"""

from __future__ import annotations

import math

import numpy as np

import gthinker
from gthinker.extending import popcount
from gthinker.setops import GALLOP_RATIO, intersect, intersect_positions, put

__all__ = ["CHEAPER", "FROM_P", "FROM_X", "ROW_WORDS_LIMIT", "compact_records", "first_level",
           "initial_record", "initial_records", "merge", "x_rows"]

#: The rows of X' are built from the P side only while they take at most this many
#: int64 words (32 MiB): beyond it, one pass over X keeps only the distinct rows.
ROW_WORDS_LIMIT = 1 << 22


@gthinker.compiler.jit("MCE functions", nogil=True)
def initial_record(indptr, indices, v):
    """R = {v}, P = later neighbours, X = earlier ones (ids are degeneracy ranks)."""
    nb = indices[indptr[v] : indptr[v + 1]]
    split = np.searchsorted(nb, v)
    rec = np.empty(4 + nb.size, np.int32)
    rec[0] = 1
    rec[1] = nb.size - split
    rec[2] = split
    rec[3] = v
    put(rec, put(rec, 4, nb[split:]), nb[:split])
    return rec


@gthinker.compiler.jit("MCE functions", nogil=True)
def initial_records(indptr, indices, verts):
    """:func:`initial_record` of each of ``verts``, as ``(data, starts)``."""
    starts = np.zeros(verts.size + 1, np.int64)
    for i in range(verts.size):
        v = verts[i]
        starts[i + 1] = starts[i] + 4 + indptr[v + 1] - indptr[v]
    data = np.empty(starts[-1], np.int32)
    for i in range(verts.size):
        put(data, starts[i], initial_record(indptr, indices, verts[i]))
    return data, starts


@gthinker.compiler.jit("MCE functions", nogil=True, inline="always")
def _search_cost(a, b):
    """Steps of :func:`gthinker.setops.intersect_positions` on lists of ``a`` and
    ``b`` elements: a merge, or a binary search of the longer per element of the
    shorter."""
    lo = min(a, b)
    hi = max(a, b)
    if lo == 0:
        return 0
    if lo * GALLOP_RATIO < hi:
        return lo * (1 + int(math.log2(hi / lo)))
    return a + b


@gthinker.compiler.jit("MCE functions", nogil=True, inline="always")
def _row_hash(row, pw):
    h = np.uint64(0xCBF29CE484222325)
    for t in range(pw):
        h = (h ^ np.uint64(row[t])) * np.uint64(0x100000001B3)
        h ^= h >> np.uint64(29)
    return h


@gthinker.compiler.jit("MCE functions", nogil=True)
def _grown(rows, reps, n, pw, cap):
    """``rows``, ``reps`` with room for twice as many (or ``cap``), and a hash table of
    their first ``n`` rows (int32 slots, -1 empty) with room for as many again. Sizes are
    powers of two (a probe's position is its hash masked). Every call passes variables
    (no literal 0), so that Numba compiles it once, not once per literal."""
    need = max(16, 2 * rows.shape[0], cap)
    cap = 16
    while cap < need:
        cap *= 2
    new_rows = np.empty((cap, pw), np.int64)
    for k in range(n):
        for t in range(pw):
            new_rows[k, t] = rows[k, t]
    new_reps = np.empty(cap, np.int32)
    put(new_reps, 0, reps[:n])
    table = np.full(2 * cap, -1, np.int32)
    mask = table.size - 1
    for k in range(n):
        h = np.int64(_row_hash(new_rows[k], pw) & np.uint64(mask))
        while table[h] >= 0:
            h = (h + 1) & mask
        table[h] = k
    return new_rows, new_reps, table


@gthinker.compiler.jit("MCE functions", nogil=True)
def _add_row(rows, reps, table, n, row, x, pw):
    """Adds ``row`` (of X vertex ``x``) unless an equal row is there; returns the
    new count. ``table`` has a free slot; ``rows`` room for one more."""
    mask = table.size - 1
    h = np.int64(_row_hash(row, pw) & np.uint64(mask))
    while True:
        k = table[h]
        if k < 0:
            break
        same = True
        for t in range(pw):
            if rows[k, t] != row[t]:
                same = False
                break
        if same:
            return n
        h = (h + 1) & mask
    table[h] = n
    for t in range(pw):
        rows[n, t] = row[t]
    reps[n] = x
    return n + 1


@gthinker.compiler.jit("MCE functions", nogil=True)
def _kept(rows, reps, n, pw):
    """The rows and their vertices (added in increasing vertex order), without the
    single-vertex rows that a kept row of two or more vertices holds."""
    cover = np.zeros(pw, np.int64)
    for k in range(n):
        c = 0
        for t in range(pw):
            c += popcount(rows[k, t])
        if c >= 2:
            for t in range(pw):
                cover[t] |= rows[k, t]
    keep = np.empty(n, np.bool_)
    for k in range(n):
        c = 0
        inside = False
        for t in range(pw):
            c += popcount(rows[k, t])
            inside = inside or (rows[k, t] & cover[t]) != 0
        keep[k] = not (c == 1 and inside)
    idx = np.flatnonzero(keep)  # in the order X was read: by vertex
    return reps[idx], rows[idx]


@gthinker.compiler.jit("MCE functions", nogil=True)
def _rows_from_x(indptr, indices, pglob, xall):
    """The distinct nonzero rows of X, found by one pass over X; ``covered`` as in
    :func:`x_rows`."""
    p = pglob.size
    pw = (p + 63) >> 6
    rows = np.empty((0, pw), np.int64)
    reps = np.empty(0, np.int32)
    n = 0
    rows, reps, table = _grown(rows, reps, n, pw, n)
    pos = np.empty(max(p, 1), np.int32)
    row = np.zeros(pw, np.int64)
    for j in range(xall.size):
        x = xall[j]
        c = intersect_positions(indices[indptr[x] : indptr[x + 1]], pglob, pos)
        if c == 0:
            continue
        if c == p:
            return reps[:0].copy(), rows[:0].copy(), True
        row[:] = 0
        for t in range(c):
            i = pos[t]
            row[i >> 6] |= np.int64(1) << (i & 63)
        if n == rows.shape[0] or 2 * (n + 1) > table.size:
            rows, reps, table = _grown(rows, reps, n, pw, n)
        n = _add_row(rows, reps, table, n, row, x, pw)
    r, w = _kept(rows, reps, n, pw)
    return r, w, False


@gthinker.compiler.jit("MCE functions", nogil=True)
def _rows_from_p(indptr, indices, pglob, xall):
    """The rows of the X vertices that have a neighbour in P, built from the
    P side (two lookups of each P vertex's neighbours in X), then made distinct."""
    p = pglob.size
    nx = xall.size
    pw = (p + 63) >> 6
    pos = np.empty(max(nx, 1), np.int32)
    xloc = np.full(nx, -1, np.int32)
    for i in range(p):
        v = pglob[i]
        c = intersect_positions(indices[indptr[v] : indptr[v + 1]], xall, pos)
        for t in range(c):
            xloc[pos[t]] = 0
    q = 0
    for j in range(nx):
        if xloc[j] == 0:
            xloc[j] = q
            q += 1
    full = np.zeros((q, pw), np.int64)
    for i in range(p):
        v = pglob[i]
        c = intersect_positions(indices[indptr[v] : indptr[v + 1]], xall, pos)
        for t in range(c):
            full[xloc[pos[t]], i >> 6] |= np.int64(1) << (i & 63)
    rows = np.empty((0, pw), np.int64)
    reps = np.empty(0, np.int32)
    n = 0
    rows, reps, table = _grown(rows, reps, n, pw, q)
    for j in range(nx):
        k = xloc[j]
        if k < 0:
            continue
        c = 0
        for t in range(pw):
            c += popcount(full[k, t])
        if c == p:
            return reps[:0].copy(), rows[:0].copy(), True
        if n == rows.shape[0] or 2 * (n + 1) > table.size:
            rows, reps, table = _grown(rows, reps, n, pw, n)
        n = _add_row(rows, reps, table, n, full[k], xall[j], pw)
    r, w = _kept(rows, reps, n, pw)
    return r, w, False


#: How :func:`x_rows` finds the rows: the cheaper way, from the P side or from the X side.
CHEAPER, FROM_P, FROM_X = 0, 1, 2


@gthinker.compiler.jit("MCE functions", nogil=True, inline="always")
def x_rows(indptr, indices, pglob, xall, side=CHEAPER):
    """The X vertices that matter to the subtree of P = ``pglob``, X = ``xall``
    (sorted global ids), and their rows over P (see the module docstring).

    Returns ``(xglob, rows, covered)``: ``xglob`` the kept vertices (sorted int32),
    ``rows[k]`` the row of ``xglob[k]`` as ``(|P| + 63) // 64`` int64 words (bit i:
    adjacent to ``pglob[i]``); ``covered`` True (and nothing kept) if an X vertex is
    adjacent to all of P (with P empty: if X is not empty). Costs min(the P side,
    the X side) lookups, where the P side is the sum over P of searching each one's
    neighbours in X and the X side the sum over X of searching each one's neighbours
    in P (``side``: FROM_P or FROM_X to choose; the results are the same)."""
    p = pglob.size
    nx = xall.size
    pw = (p + 63) >> 6
    if p == 0:  # the one clique below is R itself, which any X vertex extends
        return np.empty(0, np.int32), np.empty((0, 0), np.int64), nx > 0
    if side != CHEAPER:
        if side == FROM_P:
            return _rows_from_p(indptr, indices, pglob, xall)
        return _rows_from_x(indptr, indices, pglob, xall)
    from_p = 0
    hits = 0  # a bound on the X vertices with a neighbour in P
    for i in range(p):
        d = indptr[pglob[i] + 1] - indptr[pglob[i]]
        from_p += 2 * _search_cost(d, nx)
        hits += min(d, nx)
    use_p = from_p <= nx
    if not use_p:
        from_x = 0
        for j in range(nx):
            x = xall[j]
            from_x += _search_cost(indptr[x + 1] - indptr[x], p)
        use_p = from_p <= from_x
    if use_p and min(hits, nx) * pw <= ROW_WORDS_LIMIT:
        return _rows_from_p(indptr, indices, pglob, xall)
    return _rows_from_x(indptr, indices, pglob, xall)


@gthinker.compiler.jit("MCE functions", nogil=True)
def _compact_one(indptr, indices, rec, out, k):
    """Writes ``rec`` with its X made small to ``out[k:]``; returns the position after
    it, ``k`` itself if the subtree is covered (no maximal clique below), and the
    sizes of X before and after."""
    nr = rec[0]
    p = rec[1]
    nx = rec[2]
    pglob = rec[3 + nr : 3 + nr + p]
    xall = rec[3 + nr + p : 3 + nr + p + nx]
    xglob, _rows, covered = x_rows(indptr, indices, pglob, xall)
    if covered:
        return k, nx, 0
    out[k] = nr
    out[k + 1] = p
    out[k + 2] = xglob.size
    return put(out, put(out, k + 3, rec[3 : 3 + nr + p]), xglob), nx, xglob.size


@gthinker.compiler.jit("MCE functions", nogil=True)
def compact_records(indptr, indices, data, starts):
    """The records ``data[starts[i]:starts[i + 1]]`` with their X made small
    (:func:`x_rows`), covered ones left out: ``(data, starts, x_before, x_after)``,
    the last two the total sizes of X."""
    out = np.empty(data.size, np.int32)
    new_starts = np.zeros(starts.size, np.int64)
    k = 0
    m = 0
    before = 0
    after = 0
    for i in range(starts.size - 1):
        end, b, a = _compact_one(indptr, indices, data[starts[i] : starts[i + 1]], out, k)
        before += b
        after += a
        if end > k:
            k = end
            m += 1
            new_starts[m] = k
    return out[:k].copy(), new_starts[: m + 1].copy(), before, after


@gthinker.compiler.jit("MCE functions", nogil=True)
def merge(a, na, b, nb, out, k):
    """Writes the sorted ``a[:na]`` and ``b[:nb]`` (no value in both) merged, in order,
    into ``out`` from position ``k``; returns the position after the last."""
    i = 0
    j = 0
    while i < na or j < nb:
        if j == nb or (i < na and a[i] < b[j]):
            out[k] = a[i]
            i += 1
        else:
            out[k] = b[j]
            j += 1
        k += 1
    return k


@gthinker.compiler.jit("MCE functions", nogil=True)
def _branch(indptr, indices, rec, i, out, k, buf):
    """Writes the branch of ``rec`` at its i-th P vertex w: ``(R + w, P[i+1:] ∩ N(w),
    (X ∪ P[:i]) ∩ N(w))``; returns the position after it."""
    nr = rec[0]
    p = rec[1]
    nx = rec[2]
    pv = rec[3 + nr : 3 + nr + p]
    xv = rec[3 + nr + p : 3 + nr + p + nx]
    w = pv[i]
    nb = indices[indptr[w] : indptr[w + 1]]
    out[k] = nr + 1
    put(out, k + 3, rec[3 : 3 + nr])
    out[k + 3 + nr] = w
    at = k + 4 + nr
    np_ = intersect(pv[i + 1 :], p - i - 1, nb, out[at:])
    m = merge(xv, nx, pv, i, buf, 0)  # X ∪ P[:i], then cut down to N(w)
    nx_ = intersect(buf, m, nb, out[at + np_ :])
    out[k + 1] = np_
    out[k + 2] = nx_
    return at + np_ + nx_


@gthinker.compiler.jit("MCE functions", nogil=True)
def first_level(indptr, indices, data, starts):
    """The first-level branches of each record (Bron-Kerbosch without a pivot: the
    branch at P's i-th vertex w has P = P[i+1:] ∩ N(w), X = (X ∪ P[:i]) ∩ N(w)), as
    ``(data, starts)``; each branch has a smaller P than its record."""
    size = 0
    count = 0
    widest = 0
    for r in range(starts.size - 1):
        rec = data[starts[r] : starts[r + 1]]
        p = rec[1]
        size += p * (3 + rec[0] + 1 + p + rec[2])
        count += p
        widest = max(widest, p + rec[2])
    out = np.empty(size, np.int32)
    new_starts = np.zeros(count + 1, np.int64)
    buf = np.empty(widest, np.int32)
    k = 0
    m = 0
    for r in range(starts.size - 1):
        rec = data[starts[r] : starts[r + 1]]
        for i in range(rec[1]):
            k = _branch(indptr, indices, rec, i, out, k, buf)
            m += 1
            new_starts[m] = k
    return out[:k].copy(), new_starts

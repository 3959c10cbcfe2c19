"""Cliques of every size without listing them: Pivoter's succinct clique tree.

Jain and Seshadhri's Pivoter [1]_ walks the pivot tree of the oriented graph
(the tree that MCE walks, without the excluded set X). A node ``(h, q, P)``
holds ``h`` vertices that every clique below it contains and ``q`` pivots of
which a clique may take any subset; its children are the vertices of P outside
the pivot's neighbourhood (the pivot itself a *pivot* child, ``q + 1``, the
others *held*, ``h + 1``), each later sibling's P without the earlier ones. A
node with empty P is a leaf and stands for ``C(q, k - h)`` k-cliques. Tasks
only tally the leaves by ``(h, q)`` in a histogram; :func:`clique_counts`
sums them in Python integers, exact past 2**64.

Shortcuts keep the walk short (facebook_combined: 2.0 billion tree nodes walked
without them, 1.2 billion with the first two, 0.6 billion with the next two, 0.17
billion with the split, 0.14 billion with a table of 6 vertices instead of 5, 0.07
billion with polynomials of up to 9):

- a node whose P is a clique is one leaf ``(h, q + |P|)`` (every vertex a pivot);
- a node with at most ``_DIRECT`` vertices in P is tallied from its clique
  polynomial: ``c_j`` j-cliques of G[P] add ``c_j`` to bin ``(h + j, q)`` (the held
  vertices grow by j, the pivots stay). The polynomial comes one vertex at a time,
  ``P(G) = P(G - v) + x P(G[N(v)])``, down to graphs of ``_SMALL`` vertices, looked up
  in a table of every graph that small;
- the universal vertices of P (adjacent to all the others) join the pivots at
  once, ``(h, q + u, P - U)``: Pivoter would pick them as pivots one level each;
  a P of at most ``_POLY`` other vertices is then tallied from its polynomial too;
- the split: when the complement of G[P] falls apart into components, every
  vertex of one is adjacent to every vertex of the others, so the cliques of P are
  the unions of one clique of each (its clique polynomial is the product of
  theirs). The components besides the largest (at most ``_SIDE`` vertices) have
  their cliques listed, and their polynomial multiplies every leaf below the
  node, which walks the largest alone (Pivoter walks the others again below each
  leaf of the largest's subtree). A leaf ``(h, q)`` under the multiplier
  ``sum_j m_j x^j`` adds ``m_j`` to ``(h + j, q)``.

Subtrees with at most 64 candidates run on one-word bitsets (each row of the
local graph one int64): the whole walk is register and popcount work. A root
with more candidates starts on multi-word rows and moves each child to one
word as soon as its P fits.

Task records (int32): ``[h, q, P...]``, a subtree with ``P`` sorted (a spawned
vertex ``v`` is ``[1, 0, out(v)...]``); a subtree under a split carries the vertices
split off above it back in its P, so a record needs no multiplier.

References
----------
.. [1] S. Jain, C. Seshadhri, "The power of pivoting for exact clique
   counting", WSDM 2020 (Pivoter).

>>> import networkx as nx
>>> from gthinker.apps import count
>>> count.count(nx.complete_graph(5), "cliques", threads=1).counts
{1: 5, 2: 10, 3: 10, 4: 5, 5: 1}
"""

from __future__ import annotations

import itertools
import math

import numpy as np

import gthinker
from gthinker.extending import gather, lowest_bit, pop_lowest, popcount, put, unowned

from ..matching.local_graphs import local_graph, one_word_rows

__all__ = ["CliqueTree", "clique_counts", "tally_bins"]

#: Levels of a one-word walk: a subtree of 64 candidates is at most 64 deep.
_DEPTH = 66
#: The clique counts of every graph on this many vertices are in a table (32,768
#: graphs): :func:`_packed` looks a P this small up by its edges.
_SMALL = 6
#: A node with at most this many vertices in P is tallied from its clique polynomial
#: (:func:`_polynomial`, one vertex at a time down to table lookups), without looking
#: for universal vertices first; with none, one more (every count then fits a byte:
#: at most C(9, 4) = 126, no clique over 8). facebook_combined, one thread: 9% faster
#: than walking a P of 7 to 9 further.
_DIRECT = 8
_POLY = 9
#: The column of a multiplier row that holds its degree (a multiplier has degree <= 64).
_DEG = _DEPTH - 1
#: Nodes with at least this many vertices in P (besides universal ones) look for
#: components of the complement of G[P]; facebook_combined, one thread: 12-16 best
#: (6.4 s; 10: 7.0 s, 24: 7.0 s).
_SPLIT_FROM = 16
#: Bins past the last of the tally: :func:`_tally` adds (zeros) to 8 bins past a
#: polynomial's degree.
_PAD = 8
#: At most this many vertices are split off a node (their cliques are listed).
_SIDE = 20


@gthinker.compiler.jit("counting functions", nogil=True, inline="always")
def _one_leaf(tally, width, h, q):
    """Adds one leaf ``(h, q)``: bin ``q * width + h`` (in range: see :func:`_leaf`)."""
    tally[q * width + h] += 1


@gthinker.compiler.jit("counting functions", nogil=True, inline="always")
def _leaf(tally, width, h, q, n, mul, mi):
    """Adds ``n`` leaves ``(h, q)`` times the multiplier ``mul[mi]`` (the clique polynomial
    ``sum_j mul[mi, j] x^j`` of the vertices split off above, degree ``mul[mi, _DEG]``):
    ``n * mul[mi, j]`` to bin ``(h + j, q)``. Always in range: h + j + q never exceeds the
    root's candidates plus one, at most the degeneracy plus one (< width)."""
    base = q * width + h
    for j in range(mul[mi, _DEG] + 1):
        tally[base + j] += n * mul[mi, j]


@gthinker.compiler.jit("counting functions", nogil=True)
def _spill_word(ctx, P, rows, ps, branch, hs, qs, piv, sides, depth):
    """Every child not yet visited at levels 0..depth of a one-word walk becomes
    a task ``[h, q, P']`` (``P`` maps bits to vertices); the vertices split off
    above a level (``sides[d]``) go back into its children's P' (they are
    adjacent to all of them: the task splits them off again)."""
    for d in range(depth + 1):
        b = branch[d]
        while b != 0:
            x = lowest_bit(b)
            b &= b - 1
            child = (ps[d] & rows[x]) | sides[d]
            ps[d] &= ~(1 << x)
            task = np.empty(2 + popcount(child), np.int32)
            task[0] = hs[d] + (0 if x == piv[d] else 1)
            task[1] = qs[d] + (1 if x == piv[d] else 0)
            k = 2
            while child != 0:
                task[k] = P[lowest_bit(child)]
                child &= child - 1
                k += 1
            ctx.add_task(task)


@gthinker.compiler.jit("counting functions", nogil=True, inline="always")
def _scan(rows, s, m):
    """The universal vertices of ``s`` (``m`` of them; adjacent to all the others) as a
    bitset, and the vertex with the most neighbours in ``s`` among the rest (-1 if none)."""
    universal = 0
    best = -1
    best_count = -1
    w = s
    while w != 0:
        u = lowest_bit(w)
        w &= w - 1
        c = popcount(s & rows[u])
        if c == m - 1:
            universal |= 1 << u
        elif c > best_count:
            best_count = c
            best = u
    return universal, best


@gthinker.compiler.jit("counting functions", nogil=True, inline="always")
def _pivot_word(rows, s):
    """The vertex of ``s`` with the most neighbours in ``s`` (the lowest of ties):
    :func:`_scan` with no vertex counted as universal."""
    return _scan(rows, s, 0)[1]


@gthinker.compiler.jit("counting functions", nogil=True, inline="always")
def _split(rows, s):
    """``s`` split into its largest component in the complement of G[s] and the rest:
    every vertex of the rest is adjacent to every vertex of the first."""
    rest = s
    main = 0
    main_size = 0
    while rest != 0:
        comp = rest & -rest
        front = comp
        while front != 0:
            u = lowest_bit(front)
            front &= front - 1
            new = s & ~rows[u] & ~comp
            comp |= new
            front |= new
        rest &= ~comp
        c = popcount(comp)
        if c > main_size:
            main_size = c
            main = comp
    return main, s & ~main


@gthinker.compiler.jit("counting functions", nogil=True, inline="always")
def _cliques_of(rows, s, stack, out):
    """``out[j]`` = the j-cliques of G[s] (``out[0] = 1``), each listed once from its
    lowest vertex (``stack``: scratch of ``popcount(s) + 1`` words); returns the
    largest j."""
    out[0] = 1
    out[1] = popcount(s)
    top = 1 if s != 0 else 0
    w = s
    while w != 0:
        x = lowest_bit(w)
        w &= w - 1
        stack[0] = w & rows[x]  # the later neighbours of x
        d = 0
        while d >= 0:
            r = stack[d]
            if r == 0:
                d -= 1
                continue
            y = lowest_bit(r)
            stack[d] = r & (r - 1)
            if d + 2 > top:
                top = d + 2
                out[top] = 0
            out[d + 2] += 1
            if stack[d] & rows[y] != 0:
                stack[d + 1] = stack[d] & rows[y]
                d += 1
    return top


def _clique_table(m):
    """The clique counts of every graph on ``m`` vertices, for :func:`_packed`: entry
    ``e`` (bit k of ``e``: the k-th pair ``(i, j)``, ``i < j``, in lexicographic order,
    is an edge) packs the j-cliques, j >= 2, in byte ``j - 1``."""
    pairs = {pair: k for k, pair in enumerate(itertools.combinations(range(m), 2))}
    edges = np.arange(1 << len(pairs), dtype=np.int64)
    packed = np.zeros(edges.size, np.int64)
    for j in range(2, m + 1):
        c = np.zeros(edges.size, np.int64)
        for clique in itertools.combinations(range(m), j):
            need = sum(1 << pairs[pair] for pair in itertools.combinations(clique, 2))
            c += (edges & need) == need
        packed |= c << (8 * (j - 1))
    return packed


_TABLE = _clique_table(_SMALL)


@gthinker.compiler.jit("counting functions", nogil=True, inline="always")
def _packed(rows, t, stack):
    """The clique polynomial of G[t] (``t`` not empty, at most ``_SMALL`` vertices),
    packed: byte ``j - 1`` holds the j-cliques. Without branches: t's vertices padded
    with isolated ones (``stack``: scratch of ``2 * _SMALL`` words)."""
    w = t
    first = lowest_bit(t)
    for i in range(_SMALL):
        stack[i] = lowest_bit(w) if w != 0 else first
        stack[_SMALL + i] = 1 if w != 0 else 0  # a vertex of t, not padding
        w &= w - 1
    e = 0
    k = 0
    for i in range(_SMALL):
        r = rows[stack[i]] & -stack[_SMALL + i]
        for j in range(i + 1, _SMALL):
            e |= ((r >> stack[j]) & stack[_SMALL + j]) << k
            k += 1
    return _TABLE[e] | popcount(t)


@gthinker.compiler.jit("counting functions", nogil=True, inline="always")
def _polynomial(rows, s, stack, pend):
    """The clique polynomial of G[s] (at most ``_DIRECT`` vertices, or ``_POLY`` and
    none universal), packed as in :func:`_packed`: a vertex ``v`` at a time,
    ``P(G) = P(G - v) + x P(G[N(v)])``, down to graphs :func:`_packed` looks up
    (``pend``: scratch of 16 words)."""
    acc = 0
    pend[0] = s
    pend[1] = 0
    n = 1
    while n > 0:  # pending (vertex set, the vertices taken above it)
        n -= 1
        t = pend[2 * n]
        taken = pend[2 * n + 1]
        if popcount(t) <= _SMALL:
            if taken > 0:
                acc += 1 << (8 * (taken - 1))  # the clique of the taken vertices alone
            if t != 0:
                acc += _packed(rows, t, stack) << (8 * taken)
            continue
        v = lowest_bit(t)
        pend[2 * n] = t & (t - 1)
        pend[2 * n + 2] = t & rows[v]
        pend[2 * n + 3] = taken + 1
        n += 2
    return acc


@gthinker.compiler.jit("counting functions", nogil=True, inline="always")
def _tally(tally, width, h, q, packed, mul, mi):
    """Tallies the node ``(h, q, P)`` from the clique polynomial of G[P] (``packed``, as
    in :func:`_packed`): ``c_j`` j-cliques add ``c_j`` to ``(h + j, q)``, times the
    multiplier ``mul[mi]``. Adds 9 bins of one row at a time, the ones past the
    polynomial's degree zeros (the tally has ``_PAD`` bins past its end)."""
    base = q * width + h
    for a in range(mul[mi, _DEG] + 1):
        f = mul[mi, a]
        b = base + a
        tally[b] += f
        for j in range(_PAD):  # the 8 bytes of the packed polynomial
            tally[b + 1 + j] += f * ((packed >> (8 * j)) & 255)


@gthinker.compiler.jit("counting functions", nogil=True, inline="always")
def _times(mul, mi, ni, poly, top):
    """``mul[ni]`` = ``mul[mi]`` times the polynomial ``poly[:top + 1]``."""
    deg = mul[mi, _DEG]
    for j in range(deg + top + 1):
        mul[ni, j] = 0
    for a in range(deg + 1):
        for b in range(top + 1):
            mul[ni, a + b] += mul[mi, a] * poly[b]
    mul[ni, _DEG] = deg + top


@gthinker.compiler.jit("counting functions", nogil=True, inline="always")
def _settle(tally, width, rows, s, h, q, stack, poly, mul, mi, sides, ni):
    """Tallies the node ``(h, q, s)`` (multiplier ``mul[mi]``) when it needs no walk below
    it and returns pivot -1; else returns ``(pivot, s, q, mi)`` of the node to branch on:
    its universal vertices moved to the pivots and, when the complement of G[s] falls
    apart, the components besides the largest split off (their clique polynomial times
    the multiplier: a new one in slot ``ni``, their vertices added to ``sides[ni]``)."""
    m = popcount(s)
    if m == 0:
        _leaf(tally, width, h, q, 1, mul, mi)
        return -1, 0, 0, mi
    if m <= _DIRECT:
        _tally(tally, width, h, q, _polynomial(rows, s, stack, poly), mul, mi)
        return -1, 0, 0, mi
    universal, p = _scan(rows, s, m)
    if universal == s:  # a clique
        _leaf(tally, width, h, q + m, 1, mul, mi)
        return -1, 0, 0, mi
    s &= ~universal
    q += popcount(universal)
    m -= popcount(universal)
    if m <= _POLY:
        _tally(tally, width, h, q, _polynomial(rows, s, stack, poly), mul, mi)
        return -1, 0, 0, mi
    if m >= _SPLIT_FROM:
        main, side = _split(rows, s)
        if side != 0 and popcount(side) <= _SIDE:
            _times(mul, mi, ni, poly, _cliques_of(rows, side, stack, poly))
            sides[ni] = sides[mi] | side
            mi = ni
            s = main
            if popcount(s) <= _POLY:  # none universal: they were moved to the pivots
                _tally(tally, width, h, q, _polynomial(rows, s, stack, poly), mul, mi)
                return -1, 0, 0, mi
            p = _pivot_word(rows, s)
    return p, s, q, mi


@gthinker.compiler.jit("counting functions", nogil=True)
def _word_scratch():
    """Scratch of :func:`_tree_word`: seven rows of words and the multipliers, and two
    rows of levels."""
    return np.empty((7 + _DEPTH + 1, _DEPTH), np.int64), np.empty((2, _DEPTH), np.int64)


@gthinker.compiler.jit("counting functions", nogil=True)
def _tree_word(ctx, P, rows, s0, h0, q0, ints, levels):
    """Walks the subtree ``(h0, q0, s0)`` on one-word rows (bit i = ``P[i]``). Universal
    vertices of a node's P join its pivots at once (Pivoter takes them one level
    each), the components of the complement of G[P] besides the largest are split
    off as a multiplier of the rest's leaves, and a P of at most ``_POLY`` other
    vertices is tallied from its clique polynomial. ``ints`` and ``levels``: scratch
    from :func:`_word_scratch`, held by the caller for the call (the walk uses views
    without reference counts)."""
    tally = ctx.histograms[0]
    width = ctx.params[0]
    rows = unowned(rows)  # the helpers inlined below take it at every node
    mul = unowned(ints[7:])  # slot 0: the multiplier 1; slot d + 1: level d's
    mul[0, 0] = 1
    mul[0, _DEG] = 0
    stack, poly, ps, branch = unowned(ints[0]), unowned(ints[1]), unowned(ints[2]), unowned(ints[3])
    hs, qs, piv = unowned(ints[4]), unowned(ints[5]), unowned(ints[6])
    mref = unowned(levels[0])  # the multiplier slot of each level
    sides = unowned(levels[1])  # by slot: the vertices split off above it
    sides[0] = 0
    d = -1
    s, h, q, mi = s0, h0, q0, 0
    while True:
        p, s, q, mi = _settle(tally, width, rows, s, h, q, stack, poly, mul, mi, sides, d + 2)
        if p >= 0:
            d += 1
            ps[d], branch[d], hs[d], qs[d], piv[d], mref[d] = s, s & ~rows[p], h, q, p, mi
        while d >= 0 and branch[d] == 0:
            d -= 1
        if d < 0:
            return
        b = branch[d]
        x = lowest_bit(b)
        if ctx.timed_out():
            _spill_word(ctx, P, rows, ps, branch, hs, qs, piv, sides[mref[: d + 1]], d)
            return
        branch[d] = b & (b - 1)
        h = hs[d] + (0 if x == piv[d] else 1)
        q = qs[d] + (1 if x == piv[d] else 0)
        s = ps[d] & rows[x]
        ps[d] &= ~(1 << x)
        mi = mref[d]


@gthinker.compiler.jit("counting functions", nogil=True)
def _pivot(rows, s, words):
    """The vertex of ``s`` with the most neighbours in ``s``; -1 when ``s`` is a clique
    (multi-word rows)."""
    size = 0
    for t in range(words):
        size += popcount(s[t])
    best = -1
    best_count = -1
    clique = True
    for w in range(words):
        word = s[w]
        while word != 0:
            u = (w << 6) + lowest_bit(word)
            word &= word - 1
            c = 0
            for t in range(words):
                c += popcount(s[t] & rows[u, t])
            if c > best_count:
                best_count = c
                best = u
            if c != size - 1:
                clique = False
                if best_count == size - 1:
                    return best
    return -1 if clique else best


@gthinker.compiler.jit("counting functions", nogil=True)
def _spill_subtree(ctx, P, ps, rows, branch, hq, piv, depth, words):
    """:func:`_spill_word` on multi-word rows."""
    child = np.empty(words, np.int64)
    for d in range(depth + 1):
        for w in range(words):
            word = branch[d, w]
            while word != 0:
                x = (w << 6) + lowest_bit(word)
                word &= word - 1
                n = 0
                for t in range(words):
                    child[t] = ps[d, t] & rows[x, t]
                    n += popcount(child[t])
                ps[d, x >> 6] &= ~(1 << (x & 63))
                task = np.empty(2 + n, np.int32)
                task[0] = hq[d, 0] + (0 if x == piv[d] else 1)
                task[1] = hq[d, 1] + (1 if x == piv[d] else 0)
                gather(child, words, P, task, 2)
                ctx.add_task(task)


@gthinker.compiler.jit("counting functions", nogil=True)
def _tree_words(ctx, P, rows, h0, q0):
    """Walks the subtree ``(h0, q0, P)`` of more than 64 candidates on multi-word
    rows; every child whose P fits in one word goes on in :func:`_tree_word`."""
    tally = ctx.histograms[0]
    width = ctx.params[0]
    c = P.size
    words = rows.shape[1]
    ps = np.zeros((c + 1, words), np.int64)
    branch = np.zeros((c + 1, words), np.int64)
    hq = np.zeros((c + 1, 2), np.int64)
    piv = np.empty(c + 1, np.int64)
    small_rows = np.empty(64, np.int64)
    small_P = np.empty(64, np.int32)
    ints, levels = _word_scratch()
    for i in range(c):
        ps[0, i >> 6] |= 1 << (i & 63)
    piv[0] = _pivot(rows, ps[0], words)
    if piv[0] < 0:  # P is a clique: every vertex a pivot
        _one_leaf(tally, width, h0, q0 + c)
        return
    hq[0, 0] = h0
    hq[0, 1] = q0
    for t in range(words):
        branch[0, t] = ps[0, t] & ~rows[piv[0], t]
    d = 0
    while d >= 0:
        x = pop_lowest(branch[d], words)
        if x < 0:
            d -= 1
            continue
        if ctx.timed_out():
            branch[d, x >> 6] |= 1 << (x & 63)
            _spill_subtree(ctx, P, ps, rows, branch, hq, piv, d, words)
            return
        h = hq[d, 0] + (0 if x == piv[d] else 1)
        q = hq[d, 1] + (1 if x == piv[d] else 0)
        size = 0
        for t in range(words):
            ps[d + 1, t] = ps[d, t] & rows[x, t]
            size += popcount(ps[d + 1, t])
        ps[d, x >> 6] &= ~(1 << (x & 63))
        if size <= 64:
            m = one_word_rows(rows, ps[d + 1], P, small_rows, small_P)
            full = -1 if m == 64 else (1 << m) - 1
            _tree_word(ctx, small_P[:m], small_rows[:m], full, h, q, ints, levels)
            continue
        p = _pivot(rows, ps[d + 1], words)
        if p < 0:
            _one_leaf(tally, width, h, q + size)
            continue
        d += 1
        hq[d, 0] = h
        hq[d, 1] = q
        piv[d] = p
        for t in range(words):
            branch[d, t] = ps[d, t] & ~rows[p, t]


@gthinker.compiler.jit("counting functions", nogil=True)
def _spawn_tree(ctx, v):
    nb = ctx.neighbors(v)
    rec = np.empty(2 + nb.size, np.int32)
    rec[0] = 1
    rec[1] = 0
    put(rec, 2, nb)
    return rec


@gthinker.compiler.jit("counting functions", nogil=True)
def _compute_tree(ctx, rec):
    h, q, P = np.int64(rec[0]), np.int64(rec[1]), rec[2:]  # as in _tree_words: one compilation
    c = P.size
    if c == 0:
        _one_leaf(ctx.histograms[0], ctx.params[0], h, q)
        return
    rows = local_graph(ctx, P, True)
    if c > 64:
        _tree_words(ctx, P, rows, h, q)
    else:
        ints, levels = _word_scratch()
        _tree_word(ctx, P, rows.reshape(c), -1 if c == 64 else (1 << c) - 1, h, q, ints, levels)


class CliqueTree(gthinker.Task):
    """Tallies the leaves of Pivoter's clique tree of an oriented graph by
    ``(h, q)``: histogram bin ``q * params[0] + h`` (a bin may take several
    leaves at once, see the module's notes), of :func:`tally_bins` bins."""

    histograms = ("leaves",)

    @staticmethod
    def spawn(ctx, v):
        return _spawn_tree(ctx, v)

    @staticmethod
    def compute(ctx, record):
        _compute_tree(ctx, record)


def tally_bins(width: int) -> int:
    """The histogram bins :class:`CliqueTree` needs, for ``params = [width]`` (``width``:
    more than the largest clique's size)."""
    return width * width + _PAD


def clique_counts(leaves: np.ndarray, width: int) -> dict[int, int]:
    """k -> number of k-cliques, from the tally of leaves ``(h, q)`` at bin
    ``q * width + h``: a leaf holds C(q, k - h) k-cliques. Python integers."""
    counts: dict[int, int] = {}
    for b in np.flatnonzero(leaves).tolist():
        q, h = divmod(b, width)
        n = int(leaves[b])
        for j in range(q + 1):
            counts[h + j] = counts.get(h + j, 0) + n * math.comb(q, j)
    return dict(sorted(counts.items()))

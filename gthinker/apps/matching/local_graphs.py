"""Local graphs as bitsets: the candidates of a task, renumbered 0..c-1, with one
row of int64 words per candidate (bit j of row i: ``cand[i]`` and ``cand[j]``
are adjacent). Clique counting and Pivoter search them with word operations.
"""

from __future__ import annotations

import numpy as np

import gthinker
from gthinker.extending import intersect_positions, lowest_bit

__all__ = ["local_graph", "one_word_rows"]


@gthinker.compiler.jit("counting functions", nogil=True)
def local_graph(ctx, cand, symmetric):
    """Bitset rows over the positions of ``cand`` (sorted vertex ids): row i holds
    the neighbours of ``cand[i]`` among the candidates that ``ctx.neighbors``
    lists (on an oriented graph its out-neighbours), and with ``symmetric`` the
    other direction too (pivot rules need undirected neighbourhoods)."""
    c = cand.size
    words = (c + 63) >> 6
    rows = np.zeros((c, words), np.int64)
    pos = np.empty(c, np.int32)
    for i in range(c):
        hits = intersect_positions(ctx.neighbors(cand[i]), cand, pos)
        for t in range(hits):
            j = pos[t]
            rows[i, j >> 6] |= 1 << (j & 63)
            if symmetric:
                rows[j, i >> 6] |= 1 << (i & 63)
    return rows


@gthinker.compiler.jit("counting functions", nogil=True)
def one_word_rows(rows, s, cand, out_rows, out_cand):
    """The local graph induced by the bitset ``s`` (at most 64 bits) of the
    multi-word ``rows``, renumbered by bit order into one word per row:
    ``out_rows[i]``, ``out_cand[i]`` (the vertex of bit i); returns its size."""
    words = s.size
    m = 0
    for w in range(words):
        x = s[w]
        while x != 0:
            i = (w << 6) + lowest_bit(x)
            x &= x - 1
            out_cand[m] = i  # the old position for now
            m += 1
    for a in range(m):
        row = rows[out_cand[a]]
        r = 0
        for b in range(m):
            j = out_cand[b]
            r |= ((row[j >> 6] >> (j & 63)) & 1) << b
        out_rows[a] = r
    for a in range(m):
        out_cand[a] = cand[out_cand[a]]
    return m

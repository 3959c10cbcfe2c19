"""CSR arrays: built from endpoint pairs, peeled, permuted (compiled kernels).

The pieces :class:`gthinker.Graph` is made of: :func:`remap_ids` maps any
non-negative ids to ``0..n-1``; :func:`canonical_keys` and :func:`fill_csr`
turn endpoint pairs into sorted, symmetric, duplicate- and loop-free rows;
:func:`degeneracy_order` peels them; :func:`permute_csr` renumbers them.
"""

from __future__ import annotations

import numpy as np

from gthinker import cache

__all__ = ["readonly", "remap_ids", "canonical_keys", "fill_csr", "degeneracy_order",
           "permute_csr"]


def readonly(arr, dtype):
    """``arr`` as a C-contiguous, read-only array of ``dtype``."""
    arr = np.ascontiguousarray(arr, dtype=dtype)
    if arr.flags.writeable:
        arr.flags.writeable = False
    return arr


def remap_ids(u: np.ndarray, v: np.ndarray):
    """Map arbitrary non-negative int64 ids to 0..n-1 by increasing id."""
    if u.size == 0:
        return np.empty(0, np.int64), u.astype(np.int64), v.astype(np.int64)
    top = int(max(u.max(), v.max()))
    if top < 4 * (u.size + v.size) + 1024:
        present = np.zeros(top + 1, dtype=bool)
        present[u] = True
        present[v] = True
        ids = np.flatnonzero(present).astype(np.int64)
        newid = np.cumsum(present, dtype=np.int64) - 1
        return ids, newid[u], newid[v]
    # sort-based (np.unique(return_inverse=True) is much slower in numpy 2.4)
    both = np.concatenate([u, v])
    perm = np.argsort(both, kind="stable")
    srt = both[perm]
    new = np.empty(srt.size, dtype=bool)
    new[0] = True
    np.not_equal(srt[1:], srt[:-1], out=new[1:])
    ids = srt[new]
    inv = np.empty(both.size, dtype=np.int64)
    inv[perm] = np.cumsum(new, dtype=np.int64) - 1
    return ids, inv[: u.size], inv[u.size :]


@cache.jit("graph functions")
def canonical_keys(u, v, n):
    """Keys ``min*n + max`` of the non-loop pairs, and the number of loops."""
    m = u.shape[0]
    keys = np.empty(m, dtype=np.int64)
    k = 0
    for i in range(m):
        a = u[i]
        b = v[i]
        if a == b:
            continue
        if a > b:
            a, b = b, a
        keys[k] = a * n + b
        k += 1
    return keys[:k], m - k


@cache.jit("graph functions")
def fill_csr(keys, n):
    """CSR of the undirected graph given sorted unique keys ``a*n + b``, ``a < b``.

    Because the pairs are sorted by ``(a, b)`` every row receives first its
    smaller neighbours in increasing order, then its larger ones, so rows come
    out sorted without a further sort. Duplicate keys are skipped; returns the
    number of distinct pairs as well.
    """
    m = keys.shape[0]
    deg = np.zeros(n, dtype=np.int64)
    distinct = 0
    for k in range(m):
        if k > 0 and keys[k] == keys[k - 1]:
            continue
        a = keys[k] // n
        deg[a] += 1
        deg[keys[k] - a * n] += 1
        distinct += 1
    indptr = np.empty(n + 1, dtype=np.int64)
    indptr[0] = 0
    for v in range(n):
        indptr[v + 1] = indptr[v] + deg[v]
    pos = indptr[:-1].copy()
    indices = np.empty(2 * distinct, dtype=np.int32)
    for k in range(m):
        if k > 0 and keys[k] == keys[k - 1]:
            continue
        u = keys[k] // n
        v = keys[k] - u * n
        indices[pos[u]] = v
        pos[u] += 1
        indices[pos[v]] = u
        pos[v] += 1
    return indptr, indices, distinct


@cache.jit("graph functions")
def degeneracy_order(indptr, indices):
    """Batagelj-Zaversnik bucket peeling; returns (order, core)."""
    n = indptr.shape[0] - 1
    deg = np.empty(n, dtype=np.int64)
    maxdeg = 0
    for v in range(n):
        deg[v] = indptr[v + 1] - indptr[v]
        maxdeg = max(maxdeg, deg[v])
    bin_start = np.zeros(maxdeg + 2, dtype=np.int64)
    for v in range(n):
        bin_start[deg[v] + 1] += 1
    for d in range(1, maxdeg + 2):
        bin_start[d] += bin_start[d - 1]
    pos = np.empty(n, dtype=np.int64)
    vert = np.empty(n, dtype=np.int32)
    nxt = bin_start.copy()
    for v in range(n):
        pos[v] = nxt[deg[v]]
        vert[pos[v]] = v
        nxt[deg[v]] += 1
    # bin_start[d] = first position of degree-d bucket
    for i in range(n):
        v = vert[i]
        for k in range(indptr[v], indptr[v + 1]):
            u = indices[k]
            if deg[u] > deg[v]:
                du = deg[u]
                pu = pos[u]
                pw = bin_start[du]
                w = vert[pw]
                if u != w:
                    pos[u] = pw
                    vert[pu] = w
                    pos[w] = pu
                    vert[pw] = u
                bin_start[du] += 1
                deg[u] = du - 1
    core = np.empty(n, dtype=np.int32)
    for v in range(n):
        core[v] = deg[v]
    return vert, core


@cache.jit("graph functions")
def permute_csr(indptr, indices, order, inv):
    """The rows renumbered so that ``order[i]`` becomes ``i`` (``inv`` its inverse),
    each row sorted again."""
    n = order.shape[0]
    new_indptr = np.empty(n + 1, dtype=np.int64)
    new_indptr[0] = 0
    for i in range(n):
        v = order[i]
        new_indptr[i + 1] = new_indptr[i] + (indptr[v + 1] - indptr[v])
    new_indices = np.empty(indices.shape[0], dtype=np.int32)
    for i in range(n):
        v = order[i]
        s = new_indptr[i]
        for k in range(indptr[v], indptr[v + 1]):
            new_indices[s + k - indptr[v]] = inv[indices[k]]
        new_indices[s : new_indptr[i + 1]].sort()
    return new_indptr, new_indices

"""CSR arrays: built from endpoint pairs, peeled, oriented, permuted, checked, on
all cores (the C++ kernels of ``gthinker._core``: ``csrc/csr_kernels.cpp``).

The pieces :class:`gthinker.Graph` is made of: :func:`remap_ids` maps any
non-negative ids to ``0..n-1``; :func:`build` turns endpoint pairs into sorted,
symmetric, duplicate- and loop-free rows; :func:`degeneracy_order` peels them;
:func:`orient` keeps each row's later neighbours; :func:`permute` renumbers
them; :func:`check_rows` checks rows that come from a file. Each call releases
the GIL, runs on :func:`threads` threads, gives the same arrays whatever their
number, and stops at Ctrl-C (or SIGTERM, where a handler turns it into an
exception) within a few milliseconds, raising the handler's exception.
"""

from __future__ import annotations

import numpy as np

from gthinker import _core
from gthinker.options import available_cores

__all__ = ["readonly", "threads", "remap_ids", "build", "build_in_place", "degeneracy_order",
           "orient", "permute", "in_rows", "check_rows"]

#: Ids up to this many times the number of endpoints are renumbered through a table.
_DENSE_FACTOR = 4


def threads() -> int:
    """Threads of the graph kernels: every core this process may run on."""
    return available_cores()


def readonly(arr, dtype):
    """``arr`` as a C-contiguous, read-only array of ``dtype``."""
    arr = np.ascontiguousarray(arr, dtype=dtype)
    if arr.flags.writeable:
        arr.flags.writeable = False
    return arr


def remap_ids(ends: np.ndarray, extra=None, top=None) -> np.ndarray:
    """Renumbers the non-negative ids in ``ends`` (int64 or int32, a writable C-contiguous
    array, changed in place) as ``0..n-1`` by increasing id; returns the ``n`` ids.
    The ids in ``extra`` (vertices without edges) are numbered too. ``top``: the largest
    id of ``ends`` when the caller knows it (a reader's scanner does), saving a pass.
    Ids that are already ``0..n-1`` (each present) are left as they are, unwritten."""
    extra = np.zeros(0, np.int64) if extra is None else np.asarray(extra, np.int64)
    flat = ends.reshape(-1)
    if flat.size + extra.size == 0:
        return np.empty(0, np.int64)
    if top is None:
        top = _core.min_max(flat, threads())[1] if flat.size else 0
    top = max(int(top), int(extra.max()) if extra.size else 0)
    if top < min(_DENSE_FACTOR * (flat.size + extra.size) + 1024, np.iinfo(np.int32).max - 1):
        return _core.remap_dense(flat, extra, int(top), threads())
    ids = np.unique(np.concatenate([flat, extra]))  # sparse ids: sort them
    flat[:] = np.searchsorted(ids, flat)
    return ids


def build(u: np.ndarray, v: np.ndarray, n: int):
    """``(indptr, indices, loops, duplicates)`` of the undirected graph on
    ``0..n-1`` with the pairs ``(u[i], v[i])`` (int64 or int32, any stride):
    rows sorted, loops and repeated pairs dropped and counted (``v u`` after
    ``u v`` is a repeat)."""
    indptr, indices, loops, dups = _core.build_csr(u, v, int(n), threads())
    return indptr, indices, int(loops), int(dups)


def build_in_place(pairs: np.ndarray, n: int):
    """:func:`build` of the rows of ``pairs``, an ``(m, 2)`` int32 array (writable,
    C-contiguous) that is no longer needed: ``indices`` are written over it (a view of
    its memory), through the upper rows (half the entries), so building holds 12
    bytes an edge instead of 16."""
    indptr, entries, loops, dups = _core.build_csr_in_place(pairs, int(n), threads())
    return indptr, pairs.reshape(-1)[:entries], int(loops), int(dups)


def degeneracy_order(indptr, indices):
    """``(order, core)``, int32: level-synchronous peeling on all cores. Level ``k``
    (rising from the smallest degree) removes, in rounds, every remaining vertex
    whose remaining degree is at most ``k``; a round's vertices take the next ranks
    by increasing id, so the order is the same for any number of threads. ``core``
    holds the exact core numbers, and each vertex has at most ``core[v]``
    neighbours later in ``order``."""
    return _core.degeneracy_order(indptr, indices, threads())


def orient(indptr, indices, rank, renumber: bool = False):
    """``(indptr, indices)`` keeping in row ``v`` the neighbours ``u`` with
    ``rank[u] > rank[v]`` (sorted by id); with ``renumber``, row ``rank[v]``
    holds those ``rank[u]``, sorted."""
    return _core.orient(indptr, indices, np.asarray(rank, np.int32), bool(renumber), threads())


def permute(indptr, indices, order, inv):
    """The rows renumbered so that ``order[i]`` becomes ``i`` (``inv`` its inverse),
    each row sorted again."""
    return _core.permute(indptr, indices, order, inv, threads())


def in_rows(indptr, indices):
    """The in-rows of a directed CSR (e.g. an oriented graph): ``(in_ptr, in_src,
    in_pos, after)``, for each target ``u`` the sources of its edges in increasing
    order (``in_src[in_ptr[u]:in_ptr[u + 1]]``), each edge's place in its source's
    row, and ``after[u]``: the entries that follow ``u`` in those rows."""
    return _core.in_rows(indptr, indices, threads())


def check_rows(indptr, indices, n: int) -> str:
    """``""`` when ``indptr`` runs monotonically from 0 to ``indices.size`` and
    every row holds ids in ``[0, n)`` in strictly increasing order; else what is
    wrong, naming the first bad row."""
    return _core.check_rows(indptr, indices, int(n), threads())

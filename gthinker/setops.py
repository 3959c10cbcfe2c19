"""Operations on sorted vertex lists, written once for every app and both targets.

Each function is plain Python compiled by Numba: called from CPU task code it is
the ``@compiler.jit`` dispatcher below; GPU code compiles the same source as a CUDA
device function (``numba.cuda.jit(device=True)(setops.lower_bound.py_func)``), so
the rule lives in one place. The inputs are sorted, duplicate-free int32 arrays
(CSR rows).

Which variant runs is chosen by the list sizes: a merge when they are alike, a
galloping search of the long list (each search starting where the last ended)
when one side is more than ``GALLOP_RATIO`` times longer, e.g. a hub's row.

>>> import numpy as np
>>> a = np.array([1, 3, 5, 7], np.int32); b = np.array([3, 4, 5, 6, 7], np.int32)
>>> intersect_size(a, b)
3
"""

from gthinker import compiler

__all__ = ["GALLOP_RATIO", "lower_bound", "contains", "intersect_size", "intersect",
           "intersect_positions", "put"]

#: One list is galloped through when it is this many times longer than the other.
GALLOP_RATIO = 16


@compiler.jit("set operations", nogil=True)
def lower_bound(a, lo, hi, x):
    """First index ``i`` in ``[lo, hi)`` with ``a[i] >= x`` (``hi`` if none).
    CPU and CUDA (no numpy calls)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@compiler.jit("set operations", nogil=True)
def contains(a, lo, hi, x):
    """Whether sorted ``a[lo:hi]`` holds ``x``: ``contains(indices, indptr[u], indptr[u +
    1], v)`` is whether ``u`` and ``v`` are adjacent (the device's twin is
    ``gthinker.gpu.contains``)."""
    i = lower_bound(a, lo, hi, x)
    return i < hi and a[i] == x


@compiler.jit("set operations", nogil=True)
def _gallop_size(short, long):
    k = 0
    lo = 0
    n = long.size
    for i in range(short.size):
        lo = lower_bound(long, lo, n, short[i])
        if lo == n:
            break
        if long[lo] == short[i]:
            k += 1
            lo += 1
    return k


@compiler.jit("set operations", nogil=True)
def intersect_size(a, b):
    """``|a & b|``, never materialised (a count-only last level)."""
    na, nb = a.size, b.size
    if na == 0 or nb == 0:
        return 0
    if na * GALLOP_RATIO < nb:
        return _gallop_size(a, b)
    if nb * GALLOP_RATIO < na:
        return _gallop_size(b, a)
    k = 0
    i = 0
    j = 0
    while i < na and j < nb:
        x = a[i]
        y = b[j]
        if x < y:
            i += 1
        elif y < x:
            j += 1
        else:
            k += 1
            i += 1
            j += 1
    return k


@compiler.jit("set operations", nogil=True)
def _gallop_values(short, ns, long, nl, out):
    """``short[:ns] & long[:nl]`` into ``out`` by searching ``long``; safe when
    ``out`` is either input (the k-th hit is written at k, never ahead of a read)."""
    k = 0
    lo = 0
    for i in range(ns):
        x = short[i]
        lo = lower_bound(long, lo, nl, x)
        if lo == nl:
            break
        if long[lo] == x:
            out[k] = x
            k += 1
            lo += 1
    return k


@compiler.jit("set operations", nogil=True)
def intersect(a, na, b, out):
    """Writes ``a[:na] & b`` to ``out`` and returns its length. ``out`` may be
    ``a`` itself: the k-th common element sits at index >= k of ``a`` and is
    read before it is overwritten."""
    nb = b.size
    if nb > GALLOP_RATIO * na:
        return _gallop_values(a, na, b, nb, out)
    if na > GALLOP_RATIO * nb:
        return _gallop_values(b, nb, a, na, out)
    k = 0
    i = j = 0
    while i < na and j < nb:
        x, y = a[i], b[j]
        if x < y:
            i += 1
        elif y < x:
            j += 1
        else:
            out[k] = x
            k += 1
            i += 1
            j += 1
    return k


@compiler.jit("set operations", nogil=True)
def _gallop_positions(short, long, out, report_long):
    k = 0
    lo = 0
    n = long.size
    for i in range(short.size):
        lo = lower_bound(long, lo, n, short[i])
        if lo == n:
            break
        if long[lo] == short[i]:
            out[k] = lo if report_long else i
            k += 1
            lo += 1
    return k


@compiler.jit("set operations", nogil=True)
def intersect_positions(a, b, out):
    """Writes to ``out`` the positions in ``b`` of the elements of ``a`` that
    ``b`` holds, in order, and returns how many."""
    na, nb = a.size, b.size
    if na == 0 or nb == 0:
        return 0
    if na * GALLOP_RATIO < nb:
        return _gallop_positions(a, b, out, True)
    if nb * GALLOP_RATIO < na:
        return _gallop_positions(b, a, out, False)
    k = 0
    i = 0
    j = 0
    while i < na and j < nb:
        if a[i] < b[j]:
            i += 1
        elif a[i] > b[j]:
            j += 1
        else:
            out[k] = j
            k += 1
            i += 1
            j += 1
    return k


@compiler.jit("set operations", nogil=True)
def put(dst, at, src):
    """``dst[at:at + src.size] = src``; returns ``at + src.size``. A loop, not the slice
    assignment: Numba's checks the shapes with an error message formatted at run time,
    whose string code is compiled into every function that assigns a slice and again
    into every function that calls it (it was about half of MCE's compile time)."""
    for i in range(src.size):
        dst[at + i] = src[i]
    return at + src.size

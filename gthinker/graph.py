"""Undirected simple graphs in CSR form, with fast readers and writers.

The central class is :class:`Graph`. Its adjacency is stored as two
C-contiguous, read-only NumPy arrays that can be handed to compiled code
unchanged:

``indptr``
    ``int64`` array of length ``n + 1``.
``indices``
    ``int32`` array of length ``2 * m``; the neighbours of ``v`` are
    ``indices[indptr[v]:indptr[v + 1]]``, sorted ascending, without
    duplicates or self-loops, and the structure is symmetric.

Vertices are numbered ``0 .. n-1`` internally; ``Graph.ids[v]`` is the
original (file) id of internal vertex ``v`` so that every result can be
reported in the user's ids.

Supported file formats
----------------------
SNAP edge list (any extension except ``.graph``)
    ``#`` or ``%`` lines are comments, blank lines are ignored, fields are
    separated by spaces, tabs (and a trailing ``\\r`` is tolerated). The
    first two fields of a line are the endpoints ``u v``; any further
    fields (weights, timestamps, ...) are ignored without being parsed.
    Ids are arbitrary non-negative 64-bit integers and are remapped to
    ``0 .. n-1`` in increasing order of original id. An edge list cannot
    hold a vertex without edges: :meth:`Graph.write` lists those in leading
    comment lines ``# isolated vertices: id id ...``, which the reader adds
    back (other SNAP readers skip them as comments).
Labeled ``.graph`` format (subgraph-matching literature)
    ``t N M`` header, ``v id label degree`` lines (ids ``0 .. N-1``) and
    ``e u v [edge-label]`` lines; edge labels are ignored.

Either format may be gzip-compressed (name ending in ``.gz``).
"""

from __future__ import annotations

import gzip
import itertools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gthinker import cache
from gthinker.errors import GraphFormatError

__all__ = ["Graph", "LoadReport"]

_INT64_MAX = np.iinfo(np.int64).max
_INT32_MAX = np.iinfo(np.int32).max

# Error kinds reported by the byte scanner.
_OK = 0
_ERR_NONINT = 1
_ERR_NEGATIVE = 2
_ERR_OVERFLOW = 3
_ERR_FEW_FIELDS = 4
_ERR_BAD_TAG = 5


# ---------------------------------------------------------------------------
# Compiled kernels
# ---------------------------------------------------------------------------


@cache.jit("graph functions")
def _is_space(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@cache.jit("graph functions")
def _scan(buf, nfields, required, tagged, keep_meta, max_records):
    """Tokenise a whole text buffer into integer records.

    Parameters
    ----------
    buf : uint8 array
        File contents.
    nfields : int
        Number of integer fields stored per record (at most).
    required : int8 array of length 256
        Number of integer fields that must be present and valid for a record
        whose tag byte is the index (tag 0 for untagged lines); -1 marks an
        unknown tag.
    tagged : bool
        Whether each record starts with a one-character tag (``v``, ``e``...).
    keep_meta : bool
        Whether to store each record's tag and 1-based line number.
    max_records : int
        Upper bound on the number of records (number of lines).

    Returns
    -------
    vals : (R, nfields) int64 array
    tags : (R,) uint8 array (empty unless ``keep_meta``)
    linenos : (R,) int64 array (empty unless ``keep_meta``)
    nlines : int
        Physical lines seen (up to the error line, if any).
    err_kind, err_line, err_field : int
        First error found (``err_kind == 0`` when none).
    """
    n = buf.shape[0]
    vals = np.empty((max_records, nfields), dtype=np.int64)
    nmeta = max_records if keep_meta else 0
    tags = np.empty(nmeta, dtype=np.uint8)
    linenos = np.empty(nmeta, dtype=np.int64)
    r = 0
    line = 0
    i = 0
    while i < n:
        line += 1
        # skip leading blanks
        while i < n and _is_space(buf[i]):
            i += 1
        if i >= n:
            break
        c = buf[i]
        if c == 10:  # blank line
            i += 1
            continue
        if c == 35 or c == 37:  # '#' or '%' comment
            while i < n and buf[i] != 10:
                i += 1
            i += 1
            continue
        tag = 0
        if tagged:
            tag = c
            i += 1
            if i < n and not (_is_space(buf[i]) or buf[i] == 10):
                return vals[:0], tags[:0], linenos[:0], line, _ERR_BAD_TAG, line, 0
            if required[tag] < 0:
                return vals[:0], tags[:0], linenos[:0], line, _ERR_BAD_TAG, line, 0
        need = required[tag]
        f = 0
        while f < nfields:
            while i < n and _is_space(buf[i]):
                i += 1
            if i >= n or buf[i] == 10:
                break
            if f >= need:
                break  # optional trailing fields are not parsed
            neg = False
            if buf[i] == 45:  # '-'
                neg = True
                i += 1
            start = i
            val = 0
            overflow = False
            while i < n and buf[i] >= 48 and buf[i] <= 57:
                d = buf[i] - 48
                if val > (9223372036854775807 - d) // 10:
                    overflow = True
                else:
                    val = val * 10 + d
                i += 1
            if i == start or not (i >= n or buf[i] == 10 or _is_space(buf[i])):
                return vals[:0], tags[:0], linenos[:0], line, _ERR_NONINT, line, f
            if neg and val != 0:
                return vals[:0], tags[:0], linenos[:0], line, _ERR_NEGATIVE, line, f
            if overflow:
                return vals[:0], tags[:0], linenos[:0], line, _ERR_OVERFLOW, line, f
            vals[r, f] = val
            f += 1
        if f < need:
            return vals[:0], tags[:0], linenos[:0], line, _ERR_FEW_FIELDS, line, f
        if keep_meta:
            tags[r] = tag
            linenos[r] = line
        r += 1
        # skip rest of line
        while i < n and buf[i] != 10:
            i += 1
        i += 1
    return vals[:r], tags[:r], linenos[:r], line, _OK, 0, 0


@cache.jit("graph functions")
def _canonical_keys(u, v, n):
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
def _fill_csr(keys, n):
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
def _degeneracy(indptr, indices):
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
def _permute_csr(indptr, indices, order, inv):
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


@cache.jit("graph functions")
def _format_rows(mat, prefix, sep):
    """ASCII lines ``prefix f0 sep f1 sep ... \\n`` for non-negative int rows."""
    rows, cols = mat.shape
    plen = prefix.shape[0]
    size = 0
    for r in range(rows):
        size += plen + cols  # separators + newline
        for c in range(cols):
            x = mat[r, c]
            nd = 1
            while x >= 10:
                x //= 10
                nd += 1
            size += nd
    out = np.empty(size, dtype=np.uint8)
    p = 0
    for r in range(rows):
        for k in range(plen):
            out[p] = prefix[k]
            p += 1
        for c in range(cols):
            x = mat[r, c]
            nd = 1
            y = x
            while y >= 10:
                y //= 10
                nd += 1
            for k in range(nd - 1, -1, -1):
                out[p + k] = 48 + x % 10
                x //= 10
            p += nd
            out[p] = sep if c < cols - 1 else 10
            p += 1
    return out


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _readonly(arr, dtype):
    arr = np.ascontiguousarray(arr, dtype=dtype)
    if arr.flags.writeable:
        arr.flags.writeable = False
    return arr


def _read_bytes(path: Path) -> bytes:
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rb") as fh:
                return fh.read()
        return path.read_bytes()
    except FileNotFoundError:
        raise GraphFormatError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise GraphFormatError(f"{path}: is a directory, not a graph file") from None
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        raise GraphFormatError(f"{path}: cannot read: {exc}") from None


def _line_text(data: bytes, lineno: int, limit: int = 60) -> str:
    """The text of 1-based physical line ``lineno`` (for error messages)."""
    start = 0
    for _ in range(lineno - 1):
        start = data.index(b"\n", start) + 1
    end = data.find(b"\n", start)
    text = data[start : end if end >= 0 else len(data)]
    text = text.decode("utf-8", "replace").strip()
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def _token(text: str, field: int, tagged: bool) -> str:
    parts = text.split()
    idx = field + (1 if tagged else 0)
    return parts[idx] if idx < len(parts) else text


def _format_name(path: Path, fmt: str | None) -> str:
    if fmt is None:
        name = path.name.removesuffix(".gz")
        return "graph" if name.endswith(".graph") else "edgelist"
    fmt = fmt.lower()
    if fmt in ("edgelist", "snap", "txt", "edges"):
        return "edgelist"
    if fmt in ("graph", "labeled"):
        return "graph"
    raise ValueError(f"unknown graph format {fmt!r}; use 'edgelist' or 'graph'")


_ISOLATED = b"# isolated vertices:"


def _isolated_ids(path, data: bytes) -> np.ndarray:
    """The ids on the ``# isolated vertices:`` lines of the leading comment block."""
    found = []
    start = 0
    lineno = 0
    while start < len(data) and data[start:start + 1] in (b"#", b"%"):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        lineno += 1
        if data.startswith(_ISOLATED, start):
            text = data[start + len(_ISOLATED):end].decode("ascii", "replace").split()
            if not all(t.isdigit() for t in text):
                raise GraphFormatError(f"{path}:{lineno}: expected non-negative vertex ids "
                                       f"after '# isolated vertices:'")
            found.extend(int(t) for t in text)
        start = end + 1
    if any(i > np.iinfo(np.int64).max for i in found):
        raise GraphFormatError(f"{path}: an isolated vertex id does not fit in int64")
    return np.array(found, np.int64)


def _isolated_lines(ids: np.ndarray, per_line: int = 64) -> list[bytes]:
    """``# isolated vertices: ...`` comment lines for :func:`_isolated_ids`."""
    return [(_ISOLATED.decode() + " " + " ".join(map(str, ids[i:i + per_line].tolist()))
             + "\n").encode() for i in range(0, ids.size, per_line)]


def _remap(u: np.ndarray, v: np.ndarray):
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


@dataclass
class LoadReport:
    """What happened while a graph was built.

    Attributes
    ----------
    source : str
        File name or a description such as ``"from_edges"``.
    lines : int
        Physical lines read (0 when not built from a file).
    edges_read : int
        Edge records (or input pairs) seen.
    self_loops : int
        Self-loops dropped.
    duplicates : int
        Repeated edges dropped; ``v u`` after ``u v`` counts as a duplicate.
    num_vertices, num_edges : int
        Size of the resulting simple undirected graph.
    """

    source: str
    lines: int
    edges_read: int
    self_loops: int
    duplicates: int
    num_vertices: int
    num_edges: int

    def __str__(self) -> str:
        where = f"{self.lines:,} lines, " if self.lines else ""
        return (
            f"{self.source}: {where}{self.edges_read:,} edges read, "
            f"{self.self_loops:,} self-loops and {self.duplicates:,} duplicates removed "
            f"-> {self.num_vertices:,} vertices, {self.num_edges:,} edges"
        )


# ---------------------------------------------------------------------------
# Graph
# ---------------------------------------------------------------------------


class Graph:
    """An undirected simple graph in CSR form.

    Build one with :meth:`read`, :meth:`from_edges`, :meth:`from_scipy` or
    :meth:`from_networkx` rather than calling the constructor.

    Parameters
    ----------
    indptr : array_like of int64, shape (n + 1,)
    indices : array_like of int32, shape (2 m,)
        Sorted, symmetric, loop-free, duplicate-free rows (not checked here;
        call :meth:`check`).
    ids : array_like of int64, shape (n,), optional
        Original id of each vertex; identity when omitted.
    labels : array_like of int32, shape (n,), optional
        Vertex labels.
    report : LoadReport, optional
    node_names : list, optional
        Original hashable node names when built from a networkx graph whose
        nodes are not all non-negative integers (``node_names[v]`` names
        vertex ``v``).

    Attributes
    ----------
    indptr, indices, ids, labels, report, node_names
        The arrays are C-contiguous and read-only.
    """

    def __init__(self, indptr, indices, ids=None, labels=None, report=None, node_names=None):
        self.indptr = _readonly(indptr, np.int64)
        self.indices = _readonly(indices, np.int32)
        n = self.indptr.shape[0] - 1
        if n < 0:
            raise ValueError("indptr must have at least one element")
        self.ids = _readonly(np.arange(n, dtype=np.int64) if ids is None else ids, np.int64)
        if self.ids.shape != (n,):
            raise ValueError(f"ids must have length {n}, got {self.ids.shape}")
        self.labels = None if labels is None else _readonly(labels, np.int32)
        if self.labels is not None and self.labels.shape != (n,):
            raise ValueError(f"labels must have length {n}, got {self.labels.shape}")
        self.node_names = None if node_names is None else list(node_names)
        if report is None:
            report = LoadReport("arrays", 0, self.num_edges, 0, 0, n, self.num_edges)
        self.report = report
        self._core = None
        self._order = None

    # -- basic properties -------------------------------------------------

    @property
    def num_vertices(self) -> int:
        """Number of vertices ``n``."""
        return int(self.indptr.shape[0] - 1)

    @property
    def num_edges(self) -> int:
        """Number of undirected edges ``m``."""
        return int(self.indices.shape[0] // 2)

    def degrees(self) -> np.ndarray:
        """Degree of every vertex (``int64`` array of length ``n``)."""
        return np.diff(self.indptr)

    @property
    def max_degree(self) -> int:
        """Largest vertex degree (0 for an empty graph)."""
        return int(self.degrees().max()) if self.num_vertices else 0

    def neighbors(self, v: int) -> np.ndarray:
        """Sorted neighbours of internal vertex ``v`` (read-only view)."""
        if not 0 <= v < self.num_vertices:
            raise IndexError(f"vertex {v} out of range [0, {self.num_vertices})")
        return self.indices[self.indptr[v] : self.indptr[v + 1]]

    def __repr__(self) -> str:
        lab = ""
        if self.labels is not None:
            srt = np.sort(self.labels)
            lab = f", labels={int(np.count_nonzero(srt[1:] != srt[:-1])) + 1}"
        return (
            f"Graph(n={self.num_vertices:,}, m={self.num_edges:,}, "
            f"max_degree={self.max_degree:,}{lab}, source={self.report.source!r})"
        )

    def __eq__(self, other) -> bool:
        if not isinstance(other, Graph):
            return NotImplemented
        if (self.labels is None) != (other.labels is None):
            return False
        return (
            np.array_equal(self.indptr, other.indptr)
            and np.array_equal(self.indices, other.indices)
            and np.array_equal(self.ids, other.ids)
            and (self.labels is None or np.array_equal(self.labels, other.labels))
        )

    __hash__ = None

    # -- construction ---------------------------------------------------------

    @classmethod
    def _build(cls, u, v, n, ids, labels, source, lines, node_names=None):
        """Graph from int64 endpoint arrays already in ``0..n-1``."""
        m_read = int(u.size)
        keys, n_loops = _canonical_keys(u, v, np.int64(n))
        keys.sort()
        indptr, indices, m = _fill_csr(keys, np.int64(n))
        n_loops = int(n_loops)
        n_dup = int(keys.size - m)
        report = LoadReport(source, lines, m_read, n_loops, n_dup, int(n), int(m))
        return cls(indptr, indices, ids=ids, labels=labels, report=report, node_names=node_names)

    @classmethod
    def from_edges(cls, edges, num_vertices=None, labels=None) -> Graph:
        """Build a graph from an ``(m, 2)`` integer array of edges.

        Parameters
        ----------
        edges : array_like of int, shape (m, 2)
            Endpoint pairs; loops and repeated edges (in either direction) are
            dropped and counted in :attr:`report`.
        num_vertices : int, optional
            If given, ids must lie in ``[0, num_vertices)`` and are kept as
            they are (isolated vertices are allowed). Otherwise the distinct
            ids are remapped to ``0 .. n-1`` in increasing order and kept in
            :attr:`ids`.
        labels : array_like of int, optional
            One label per internal vertex (after remapping, i.e. in increasing
            order of original id).

        Returns
        -------
        Graph

        Raises
        ------
        GraphFormatError
            Wrong shape or dtype, negative ids, ids out of range, bad labels.

        Examples
        --------
        >>> g = Graph.from_edges([(10, 20), (20, 30), (30, 10), (30, 40), (40, 30)])
        >>> g.num_vertices, g.num_edges, g.report.duplicates
        (4, 4, 1)
        >>> g.ids.tolist()  # original id of each internal vertex 0..3
        [10, 20, 30, 40]
        >>> g.neighbors(2).tolist()  # internal ids: 30's neighbours 10, 20, 40
        [0, 1, 3]
        """
        try:
            arr = np.asarray(edges)
        except (ValueError, TypeError) as exc:
            raise GraphFormatError(f"edges could not be converted to an array: {exc}") from None
        if arr.size == 0:
            arr = np.empty((0, 2), dtype=np.int64)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise GraphFormatError(f"edges must have shape (m, 2), got shape {arr.shape}")
        if arr.dtype.kind not in "iu" and arr.dtype != bool:
            raise GraphFormatError(f"edges must be integers, got dtype {arr.dtype}")
        if arr.dtype.kind == "u" and arr.size and int(arr.max()) > _INT64_MAX:
            raise GraphFormatError("edge ids must fit in int64")
        arr = arr.astype(np.int64, copy=False)
        if arr.size and int(arr.min()) < 0:
            row = int(np.flatnonzero((arr < 0).any(axis=1))[0])
            raise GraphFormatError(
                f"edges[{row}] = {arr[row].tolist()}: vertex ids must be non-negative"
            )
        u = np.ascontiguousarray(arr[:, 0])
        v = np.ascontiguousarray(arr[:, 1])
        if num_vertices is None:
            ids, u, v = _remap(u, v)
            n = ids.size
        else:
            n = int(num_vertices)
            if n < 0 or n > _INT32_MAX:
                raise GraphFormatError(f"num_vertices must be in [0, 2**31), got {num_vertices}")
            if arr.size and int(arr.max()) >= n:
                row = int(np.flatnonzero((arr >= n).any(axis=1))[0])
                raise GraphFormatError(
                    f"edges[{row}] = {arr[row].tolist()}: vertex id out of range "
                    f"[0, {n}) for num_vertices={n}"
                )
            ids = None
        if n > _INT32_MAX:
            raise GraphFormatError(f"too many vertices ({n}) for int32 indices")
        labels = cls._check_labels(labels, n)
        return cls._build(u, v, n, ids, labels, "from_edges", 0)

    @staticmethod
    def _check_labels(labels, n):
        if labels is None:
            return None
        lab = np.asarray(labels)
        if lab.shape != (n,):
            raise GraphFormatError(f"labels must have shape ({n},), got {lab.shape}")
        if lab.size and lab.dtype.kind not in "iu":
            raise GraphFormatError(f"labels must be integers, got dtype {lab.dtype}")
        if lab.size and (int(lab.min()) < np.iinfo(np.int32).min or int(lab.max()) > _INT32_MAX):
            raise GraphFormatError("labels must fit in int32")
        return lab.astype(np.int32)

    @classmethod
    def from_scipy(cls, matrix) -> Graph:
        """Build a graph from the nonzero pattern of a square scipy.sparse matrix.

        The pattern is symmetrised (``A + A.T``), explicit zeros are ignored and
        diagonal entries are dropped (counted as self-loops in :attr:`report`).
        Vertex ``i`` is row/column ``i``.
        """
        import scipy.sparse as sp

        if not sp.issparse(matrix):
            raise GraphFormatError(f"expected a scipy.sparse matrix, got {type(matrix).__name__}")
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise GraphFormatError(f"matrix must be square, got shape {matrix.shape}")
        coo = sp.coo_array(matrix, copy=True)
        coo.eliminate_zeros()
        n = int(coo.shape[0])
        g = cls._build(
            coo.row.astype(np.int64), coo.col.astype(np.int64), n, None, None, "from_scipy", 0
        )
        return g

    @classmethod
    def from_networkx(cls, G) -> Graph:
        """Build a graph from a networkx graph (directed ones are symmetrised).

        If every node is a non-negative integer, those integers become
        :attr:`ids` (internal order = increasing id). Otherwise ids are
        ``0 .. n-1`` in ``G.nodes`` order and :attr:`node_names` holds the
        nodes. A node attribute ``label`` that is an integer on every node
        becomes :attr:`labels`.
        """
        nodes = list(G.nodes)
        n = len(nodes)
        flat = itertools.chain.from_iterable(G.edges())
        int_nodes = all(
            isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 0 <= x <= _INT64_MAX
            for x in nodes
        )
        node_names = None
        if int_nodes:
            orig = np.fromiter(nodes, dtype=np.int64, count=n)
            perm = np.argsort(orig, kind="stable")
            ids = orig[perm]
            ends = np.fromiter(flat, dtype=np.int64, count=2 * G.number_of_edges())
            ends = np.searchsorted(ids, ends)
            ordered_nodes = [nodes[i] for i in perm]
        else:
            ids = None
            node_names = nodes
            index = {x: i for i, x in enumerate(nodes)}
            ends = np.fromiter(
                map(index.__getitem__, flat), dtype=np.int64, count=2 * G.number_of_edges()
            )
            ordered_nodes = nodes
        labels = None
        lab = G.nodes(data="label")
        values = [lab[x] for x in ordered_nodes]
        if n and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in values):
            labels = cls._check_labels(np.array(values, dtype=np.int64), n)
        return cls._build(
            ends[0::2].copy(), ends[1::2].copy(), n, ids, labels, "from_networkx", 0, node_names
        )

    @classmethod
    def read(cls, path, format=None) -> Graph:
        """Read a graph file.

        Parameters
        ----------
        path : str or pathlib.Path
            File to read; ``.gz`` files are decompressed on the fly.
        format : {None, 'edgelist', 'graph'}
            ``None`` picks ``'graph'`` for names ending in ``.graph`` or
            ``.graph.gz`` and ``'edgelist'`` (SNAP) otherwise.

        Returns
        -------
        Graph

        Raises
        ------
        GraphFormatError
            Missing file or malformed content; the message is
            ``"{path}:{line}: ..."`` with a 1-based physical line number.
        """
        path = Path(os.fspath(path))
        fmt = _format_name(path, format)
        data = _read_bytes(path)
        if fmt == "graph":
            return cls._read_labeled(path, data)
        return cls._read_edgelist(path, data)

    @staticmethod
    def _scan_or_raise(path, data, nfields, required, tagged, keep_meta, expect):
        buf = np.frombuffer(data, dtype=np.uint8)
        max_records = data.count(b"\n") + 1
        vals, tags, linenos, nlines, kind, line, field = _scan(
            buf, nfields, required, tagged, keep_meta, max_records
        )
        if kind != _OK:
            text = _line_text(data, line)
            tok = _token(text, field, tagged)
            if kind == _ERR_NEGATIVE and tagged:
                msg = f"negative value {tok!r} (ids, labels and degrees must be non-negative)"
            elif kind == _ERR_NEGATIVE:
                msg = f"negative vertex id {tok!r} (ids must be non-negative)"
            elif kind == _ERR_OVERFLOW:
                msg = f"integer {tok!r} does not fit in int64"
            elif kind == _ERR_BAD_TAG:
                msg = f"unknown line type, got {text!r} (expected lines starting with t, v or e)"
            elif kind == _ERR_FEW_FIELDS:
                msg = f"{expect(text)}, got {text!r}"
            else:
                msg = f"{expect(text)}, got {tok!r}"
            raise GraphFormatError(f"{path}:{line}: {msg}")
        return vals, tags, linenos, nlines

    @classmethod
    def _read_edgelist(cls, path, data):
        required = np.full(256, -1, dtype=np.int8)
        required[0] = 2
        vals, _, _, nlines = cls._scan_or_raise(
            path, data, 2, required, False, False,
            lambda text: "expected two integer vertex ids",
        )
        u = np.ascontiguousarray(vals[:, 0])
        v = np.ascontiguousarray(vals[:, 1])
        del vals
        ids, u, v = _remap(u, v)
        isolated = _isolated_ids(path, data)
        if isolated.size:
            every = np.union1d(ids, isolated)
            u = np.searchsorted(every, ids[u])
            v = np.searchsorted(every, ids[v])
            ids = every
        n = ids.size
        if n > _INT32_MAX:
            raise GraphFormatError(f"{path}: too many vertices ({n}) for int32 indices")
        return cls._build(u, v, n, ids, None, path.name, nlines)

    @classmethod
    def _read_labeled(cls, path, data):
        required = np.full(256, -1, dtype=np.int8)
        required[ord("t")] = 2
        required[ord("v")] = 3
        required[ord("e")] = 2

        def expect(text):
            tag = text[:1]
            return {
                "t": "expected header 't <num_vertices> <num_edges>'",
                "v": "expected 'v <id> <label> <degree>' with integer fields",
                "e": "expected 'e <u> <v>' with integer vertex ids",
            }.get(tag, "malformed line")

        # labels may be negative in principle, but the scanner rejects
        # negatives everywhere; the format uses non-negative labels.
        vals, tags, linenos, nlines = cls._scan_or_raise(
            path, data, 3, required, True, True, expect
        )
        if vals.shape[0] == 0:
            raise GraphFormatError(f"{path}:1: missing header 't <num_vertices> <num_edges>'")
        if tags[0] != ord("t"):
            raise GraphFormatError(
                f"{path}:{linenos[0]}: expected header 't <num_vertices> <num_edges>' first, "
                f"got {_line_text(data, int(linenos[0]))!r}"
            )
        is_t = tags == ord("t")
        if np.count_nonzero(is_t) > 1:
            ln = int(linenos[np.flatnonzero(is_t)[1]])
            raise GraphFormatError(f"{path}:{ln}: second header line (one graph per file)")
        head_line = int(linenos[0])
        N, M = int(vals[0, 0]), int(vals[0, 1])
        if N > _INT32_MAX:
            raise GraphFormatError(f"{path}:{head_line}: too many vertices ({N})")
        vsel = np.flatnonzero(tags == ord("v"))
        esel = np.flatnonzero(tags == ord("e"))

        # --- vertices
        if vsel.size > N:
            ln = int(linenos[vsel[N]])
            raise GraphFormatError(
                f"{path}:{ln}: more 'v' lines than the {N} declared on line {head_line}"
            )
        vid = vals[vsel, 0]
        bad = np.flatnonzero(vid >= N)
        if bad.size:
            ln = int(linenos[vsel[bad[0]]])
            raise GraphFormatError(
                f"{path}:{ln}: vertex id {int(vid[bad[0]])} out of range [0, {N})"
            )
        seen = np.bincount(vid, minlength=N)
        if np.any(seen > 1):
            dupv = int(np.flatnonzero(seen > 1)[0])
            where = np.flatnonzero(vid == dupv)[1]
            ln = int(linenos[vsel[where]])
            raise GraphFormatError(f"{path}:{ln}: vertex {dupv} defined twice")
        if vsel.size < N:
            raise GraphFormatError(
                f"{path}:{head_line}: header declares {N} vertices but the file has "
                f"{vsel.size} 'v' lines"
            )
        labels_raw = np.empty(N, dtype=np.int64)
        labels_raw[vid] = vals[vsel, 1]
        if N and int(labels_raw.max()) > _INT32_MAX:
            k = int(np.flatnonzero(vals[vsel, 1] > _INT32_MAX)[0])
            raise GraphFormatError(f"{path}:{int(linenos[vsel[k]])}: label does not fit in int32")
        declared = np.empty(N, dtype=np.int64)
        declared[vid] = vals[vsel, 2]
        vline = np.empty(N, dtype=np.int64)
        vline[vid] = linenos[vsel]

        # --- edges
        eu = vals[esel, 0]
        ev = vals[esel, 1]
        bad = np.flatnonzero((eu >= N) | (ev >= N))
        if bad.size:
            k = int(bad[0])
            ln = int(linenos[esel[k]])
            raise GraphFormatError(
                f"{path}:{ln}: edge endpoint out of range [0, {N}): "
                f"{_line_text(data, ln)!r}"
            )
        if esel.size != M:
            if esel.size > M:
                ln = int(linenos[esel[M]])
                raise GraphFormatError(
                    f"{path}:{ln}: more 'e' lines than the {M} declared on line {head_line}"
                )
            raise GraphFormatError(
                f"{path}:{head_line}: header declares {M} edges but the file has "
                f"{esel.size} 'e' lines"
            )
        g = cls._build(
            np.ascontiguousarray(eu), np.ascontiguousarray(ev), N, None,
            labels_raw.astype(np.int32), path.name, nlines,
        )
        deg = g.degrees()
        bad = np.flatnonzero(deg != declared)
        if bad.size:
            v0 = int(bad[0])
            raise GraphFormatError(
                f"{path}:{int(vline[v0])}: vertex {v0} declares degree {int(declared[v0])} "
                f"but has {int(deg[v0])} distinct neighbours"
            )
        return g

    # -- output ----------------------------------------------------------------

    def edge_array(self) -> np.ndarray:
        """Each undirected edge once as an ``(m, 2)`` int64 array of internal ids ``u < v``."""
        rows = np.repeat(np.arange(self.num_vertices, dtype=np.int64), self.degrees())
        cols = self.indices.astype(np.int64)
        keep = rows < cols
        return np.column_stack([rows[keep], cols[keep]])

    def to_networkx(self):
        """A :class:`networkx.Graph` on the original ids (or :attr:`node_names`).

        Labels, if any, become the node attribute ``label``.
        """
        import networkx as nx

        names = self.node_names if self.node_names is not None else self.ids.tolist()
        G = nx.Graph()
        if self.labels is not None:
            G.add_nodes_from(
                zip(names, ({"label": x} for x in self.labels.tolist()), strict=True)
            )
        else:
            G.add_nodes_from(names)
        e = self.edge_array()
        if self.node_names is None:
            G.add_edges_from(self.ids[e].tolist())
        else:
            first = map(names.__getitem__, e[:, 0].tolist())
            second = map(names.__getitem__, e[:, 1].tolist())
            G.add_edges_from(zip(first, second, strict=True))
        return G

    def write(self, path, format=None) -> None:
        """Write the graph to ``path``.

        Parameters
        ----------
        path : str or pathlib.Path
            Output file; gzip-compressed if the name ends in ``.gz``.
        format : {None, 'edgelist', 'graph'}
            ``None`` chooses from the extension like :meth:`read`. The edge
            list holds each edge once as ``u<TAB>v`` in original ids; the
            ``.graph`` format renumbers vertices ``0 .. n-1`` (internal ids)
            and writes label 0 for unlabeled graphs.
        """
        path = Path(os.fspath(path))
        fmt = _format_name(path, format)
        e = self.edge_array()
        if fmt == "edgelist":
            if np.any(self.ids < 0):  # pragma: no cover - ids are never negative
                raise ValueError("negative ids cannot be written")
            payload = _format_rows(self.ids[e] if e.size else e, np.empty(0, np.uint8), 9)
            header = (
                f"# gthinker edge list: {self.num_vertices} vertices, "
                f"{self.num_edges} undirected edges\n"
            ).encode()
            chunks = [header, *_isolated_lines(self.ids[self.degrees() == 0]), payload]
        else:
            n = self.num_vertices
            lab = np.zeros(n, np.int64) if self.labels is None else self.labels.astype(np.int64)
            if np.any(lab < 0):
                raise ValueError("negative labels cannot be written in .graph format")
            vmat = np.column_stack([np.arange(n, dtype=np.int64), lab, self.degrees()])
            chunks = [
                f"t {n} {self.num_edges}\n".encode(),
                _format_rows(vmat, np.frombuffer(b"v ", np.uint8), 32),
                _format_rows(e, np.frombuffer(b"e ", np.uint8), 32),
            ]
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "wb") as fh:
            for c in chunks:
                fh.write(c if isinstance(c, bytes) else memoryview(c))

    # -- algorithms --------------------------------------------------------------

    def degeneracy_order(self):
        """Degeneracy (smallest-last) order and core numbers.

        Returns
        -------
        order : int32 array of length n
            Vertices in the order they are peeled (each removed vertex has
            minimum degree among the remaining ones), so every vertex has at
            most :attr:`degeneracy` neighbours later in ``order``.
        core : int32 array of length n
            Core number of each vertex.
        """
        if self._order is None:
            order, core = _degeneracy(self.indptr, self.indices)
            self._order = _readonly(order, np.int32)
            self._core = _readonly(core, np.int32)
        return self._order, self._core

    @property
    def degeneracy(self) -> int:
        """Largest core number (0 for graphs without edges)."""
        _, core = self.degeneracy_order()
        return int(core.max()) if core.size else 0

    def reorder(self, order) -> Graph:
        """Relabel vertices so that ``order[i]`` becomes vertex ``i``.

        Parameters
        ----------
        order : array_like of int, shape (n,)
            A permutation of ``0 .. n-1``.

        Returns
        -------
        Graph
            Same graph with sorted rows; ``new.ids[i] == self.ids[order[i]]``,
            labels and node names permuted alike, report kept.
        """
        n = self.num_vertices
        order = np.asarray(order)
        if order.shape != (n,) or (n and order.dtype.kind not in "iu"):
            raise ValueError(f"order must be an integer array of shape ({n},)")
        order = order.astype(np.int64)
        if n and (order.min() < 0 or order.max() >= n):
            raise ValueError("order must be a permutation of 0..n-1")
        inv = np.full(n, -1, dtype=np.int64)
        inv[order] = np.arange(n, dtype=np.int64)
        if np.any(inv < 0):
            raise ValueError("order must be a permutation of 0..n-1 (repeated vertex)")
        indptr, indices = _permute_csr(self.indptr, self.indices, order, inv)
        names = None if self.node_names is None else [self.node_names[i] for i in order.tolist()]
        return Graph(
            indptr,
            indices,
            ids=self.ids[order],
            labels=None if self.labels is None else self.labels[order],
            report=self.report,
            node_names=names,
        )

    def check(self) -> None:
        """Verify the CSR invariants; raise ``AssertionError`` naming the first violation."""
        n = self.num_vertices

        def fail(msg):
            raise AssertionError(f"Graph invariant violated: {msg}")

        ip, ix = self.indptr, self.indices
        if ip.dtype != np.int64 or ix.dtype != np.int32:
            fail(f"dtypes {ip.dtype}/{ix.dtype}, expected int64/int32")
        if not (ip.flags.c_contiguous and ix.flags.c_contiguous):
            fail("arrays not C-contiguous")
        if ip[0] != 0 or ip[-1] != ix.size or np.any(np.diff(ip) < 0):
            fail("indptr not a monotone offset array")
        if ix.size % 2:
            fail("odd number of adjacency entries")
        if ix.size and (ix.min() < 0 or ix.max() >= n):
            fail("neighbour index out of range")
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ip))
        if np.any(rows == ix):
            fail("self-loop")
        same = rows[1:] == rows[:-1]
        if np.any(same & (ix[1:] <= ix[:-1])):
            fail("row not strictly increasing (unsorted or duplicate)")
        fwd = rows * n + ix
        bwd = np.sort(ix.astype(np.int64) * n + rows)
        if not np.array_equal(fwd, bwd):
            fail("adjacency not symmetric")
        sid = np.sort(self.ids)
        if self.ids.shape != (n,) or np.any(sid[1:] == sid[:-1]):
            fail("ids not unique")
        if self.labels is not None and self.labels.shape != (n,):
            fail("labels length")


def as_graph(obj) -> Graph:
    """Any graph a user may hold, as a :class:`Graph`.

    Accepts a :class:`Graph` (returned as is), a path (``str`` or ``os.PathLike``,
    read with :meth:`Graph.read`), a networkx graph, a scipy.sparse matrix or
    array, or an integer edge array of shape (m, 2).

    >>> import networkx as nx
    >>> as_graph(nx.path_graph(3)).num_edges
    2
    """
    if isinstance(obj, Graph):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return Graph.read(obj)
    module = type(obj).__module__ or ""
    if module.startswith("networkx"):
        return Graph.from_networkx(obj)
    if module.startswith("scipy.sparse"):
        return Graph.from_scipy(obj)
    if isinstance(obj, (np.ndarray, list, tuple)):
        return Graph.from_edges(obj)
    raise TypeError(
        f"cannot make a graph from {type(obj).__name__}: pass a gthinker.Graph, a file path, "
        "a networkx graph, a scipy.sparse matrix or an (m, 2) integer edge array"
    )

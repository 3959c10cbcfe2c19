"""Graph files: the byte scanner, the readers and the writer behind
:meth:`gthinker.Graph.read` and :meth:`gthinker.Graph.write`.

The readers return what the caller's ``build(u, v, n, ids, labels, source, lines)``
makes of the endpoint arrays (``Graph._build``), so this module needs no Graph.

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
import os
from pathlib import Path

import numpy as np

from gthinker import cache
from gthinker.csr import remap_ids
from gthinker.errors import GraphFormatError

__all__ = ["read_graph", "write_graph", "format_name"]

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
# Reading
# ---------------------------------------------------------------------------


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


def format_name(path: Path, fmt: str | None) -> str:
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
            tokens = data[start + len(_ISOLATED):end].split()
            if tokens and not b"".join(tokens).isdigit():
                raise GraphFormatError(f"{path}:{lineno}: expected non-negative vertex ids "
                                       f"after '# isolated vertices:'")
            found.extend(tokens)
        start = end + 1
    if any(len(t) >= 19 for t in found) and max(map(int, found)) > np.iinfo(np.int64).max:
        raise GraphFormatError(f"{path}: an isolated vertex id does not fit in int64")
    return np.array(found, dtype=bytes).astype(np.int64) if found else np.empty(0, np.int64)


def _isolated_lines(ids: np.ndarray, per_line: int = 64) -> list[bytes]:
    """``# isolated vertices: ...`` comment lines for :func:`_isolated_ids`."""
    return [(_ISOLATED.decode() + " " + " ".join(map(str, ids[i:i + per_line].tolist()))
             + "\n").encode() for i in range(0, ids.size, per_line)]


def read_graph(path, format, build):
    """The graph in file ``path`` (see :meth:`gthinker.Graph.read`), made by ``build``."""
    path = Path(os.fspath(path))
    fmt = format_name(path, format)
    data = _read_bytes(path)
    if fmt == "graph":
        return _read_labeled(path, data, build)
    return _read_edgelist(path, data, build)


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


def _read_edgelist(path, data, build):
    required = np.full(256, -1, dtype=np.int8)
    required[0] = 2
    vals, _, _, nlines = _scan_or_raise(
        path, data, 2, required, False, False,
        lambda text: "expected two integer vertex ids",
    )
    u = np.ascontiguousarray(vals[:, 0])
    v = np.ascontiguousarray(vals[:, 1])
    del vals
    ids, u, v = remap_ids(u, v)
    isolated = _isolated_ids(path, data)
    if isolated.size:
        every = np.concatenate([ids, isolated])  # ids: sorted, distinct
        every.sort()
        if np.any(every[1:] == every[:-1]):  # an isolated vertex with edges, or listed twice
            every = np.unique(every)
        moved = np.searchsorted(every, ids).astype(u.dtype)  # old index -> new, per vertex
        u = moved[u]
        v = moved[v]
        ids = every
    n = ids.size
    if n > _INT32_MAX:
        raise GraphFormatError(f"{path}: too many vertices ({n}) for int32 indices")
    return build(u, v, n, ids, None, path.name, nlines)


def _read_labeled(path, data, build):
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
    vals, tags, linenos, nlines = _scan_or_raise(
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
    g = build(
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


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------


def write_graph(graph, path, format=None) -> None:
    """Writes ``graph`` to ``path`` (see :meth:`gthinker.Graph.write`)."""
    path = Path(os.fspath(path))
    fmt = format_name(path, format)
    e = graph.edge_array()
    if fmt == "edgelist":
        if np.any(graph.ids < 0):  # pragma: no cover - ids are never negative
            raise ValueError("negative ids cannot be written")
        payload = _format_rows(graph.ids[e] if e.size else e, np.empty(0, np.uint8), 9)
        header = (
            f"# gthinker edge list: {graph.num_vertices} vertices, "
            f"{graph.num_edges} undirected edges\n"
        ).encode()
        chunks = [header, *_isolated_lines(graph.ids[graph.degrees() == 0]), payload]
    else:
        n = graph.num_vertices
        lab = np.zeros(n, np.int64) if graph.labels is None else graph.labels.astype(np.int64)
        if np.any(lab < 0):
            raise ValueError("negative labels cannot be written in .graph format")
        vmat = np.column_stack([np.arange(n, dtype=np.int64), lab, graph.degrees()])
        chunks = [
            f"t {n} {graph.num_edges}\n".encode(),
            _format_rows(vmat, np.frombuffer(b"v ", np.uint8), 32),
            _format_rows(e, np.frombuffer(b"e ", np.uint8), 32),
        ]
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wb") as fh:
        for c in chunks:
            fh.write(c if isinstance(c, bytes) else memoryview(c))

"""SNAP edge lists: one edge ``u v`` per line.

``#`` or ``%`` lines are comments, blank lines are ignored, fields are separated
by spaces, tabs or commas (a trailing ``\\r`` is tolerated). The first two fields of
a line are the endpoints; numbers after them (weights, timestamps) are allowed and
ignored, anything else after them is an error naming the line. So KONECT's ``out.*``
files (``%`` header lines, weight and time columns) and Network Repository's
``.edges`` files (``%`` headers, ``u v`` or ``u,v`` lines) read as they are; a
KONECT *bipartite* file's two id columns are numbered separately there, and read as
one graph they share ids (the larger side's count of vertices), as the seed
paper's tools read them (``docs/generating.md``). Ids are arbitrary
non-negative 64-bit integers, renumbered ``0 .. n-1`` in increasing order of id.
Ids that are not all integers (names, e-mail addresses: a file whose first edge line
has one, or any line of a file that can be read twice; a field that is a number, such as
``-3`` or ``1.5``, is no name but the error it was) are *names*: vertex ``v`` has the
``v``-th name in sorted order, kept in :attr:`gthinker.Graph.node_names` (outputs name
it back). Such a file is read in Python, a block of lines at a time (split at once where
every line is two plain fields), its fields split at whitespace or commas (a field in
double quotes, as a CSV writes it, may hold either). A ``.csv`` file's first line is its
header (column names) unless its first two fields are integers.
An edge list cannot hold a vertex without edges: :func:`write` lists those in
leading comment lines ``# isolated vertices: id id ...``, which :func:`read` adds
back (other SNAP readers skip them as comments).
"""

from __future__ import annotations

import csv
import re
import shlex

import numpy as np

from gthinker import _core
from gthinker.errors import GraphFormatError
from gthinker.graphs import csr, edges
from gthinker.graphs.formats import text

__all__ = ["read", "write", "row_blocks"]

_INT32_MAX = np.iinfo(np.int32).max
_ISOLATED = "# isolated vertices:"
#: Neighbour entries formatted per write.
_WRITE_BLOCK = 1 << 24


def _describe(kind, line, token):
    return text.message(kind, line, token, "expected two integer vertex ids")


#: What separates the fields of an edge line.
_FIELDS = re.compile(rb"[\s,]+")
#: Bytes peeked at to see whether a file's ids are names.
_PEEK = 1 << 16


def _fields(line: bytes) -> list:
    """The fields of a line: split at whitespace or commas; a field in double quotes (as
    a CSV writes it) may hold either."""
    if b'"' not in line:
        return [f for f in _FIELDS.split(line.strip()) if f]
    row = line.decode("utf-8", "replace").strip()
    try:
        parts = next(csv.reader([row], skipinitialspace=True)) if "," in row else \
            shlex.split(row)
    except ValueError:  # a quote left open: the quote is part of the field
        return [f for f in _FIELDS.split(line.strip()) if f]
    return [p.strip().encode() for p in parts if p.strip()]


def _is_id(field: bytes) -> bool:
    return field.isdigit()


def _is_name(field) -> bool:
    """Whether a field is a name: no number (a negative or fractional number stays the
    error it is in an edge list of ids)."""
    try:
        float(field)
    except ValueError:
        return True
    return False


def _data_lines(path):
    """The first lines of a file, peeked at (standard input too): (the fields of the
    first edge line, or None; whether a ``.csv`` header comes first)."""
    lines = text.peek(path, _PEEK).split(b"\n")[:-1] or [b""]
    csv = text.without_compression(path.name.lower()).endswith(".csv")
    header = False
    for k, line in enumerate(lines):
        if line.lstrip()[:1] in (b"#", b"%") or not line.strip():
            continue
        fields = _fields(line)
        if csv and k == 0 and not (len(fields) >= 2 and all(map(_is_id, fields[:2]))):
            header = True
            continue
        return fields, header
    return None, header


def read(path, graph_cls, edge_labels: bool = False, directed: bool = False):
    """The graph of a SNAP edge list (``graph_cls.from_owned_pairs`` builds it); one
    whose ids are names: :func:`read_named`. ``edge_labels``: the third field of every
    line is the edge's label (a non-negative integer); ``directed``: each line is an edge
    from its first vertex to its second (the formats ``edgelist-labeled``,
    ``edgelist-directed`` and ``edgelist-directed-labeled``, whose ids are integers)."""
    first, header = _data_lines(path)
    named = first is not None and len(first) >= 2 and any(map(_is_name, first[:2]))
    if edge_labels or directed:
        if named:
            raise GraphFormatError(f"{path}: vertex names in an edge list with edge labels or "
                                   "directions: give integer ids")
        return _read_keyed(path, graph_cls, edge_labels, directed, header)
    if named:
        return read_named(path, graph_cls, header)
    bad = []

    def describe(kind, line, token):
        bad.append(kind == text.NONINT and _is_name(token))
        return _describe(kind, line, token)

    try:
        rec = text.scan(path, 2, {0: 2}, isolated=True, describe=describe, narrow=True,
                        header=_header(header))
    except GraphFormatError:
        if bad == [True] and not text.is_stdin(path):  # a name further on
            return read_named(path, graph_cls, header)
        raise
    pairs = rec.vals
    ids = _ids(path, pairs, rec)
    return graph_cls.from_owned_pairs(pairs, ids.size, ids=ids, source=path.name,
                                      lines=rec.lines)


def _header(header: bool):
    """The ``header`` argument of :func:`text.scan`: skip the first line, or None."""
    return (lambda line: True) if header else None


def _read_keyed(path, graph_cls, edge_labels, directed, header):
    """:func:`read` of an edge list with edge labels or directions."""
    k = 3 if edge_labels else 2
    rec = text.scan(path, k, {0: k}, isolated=True, describe=_describe_labeled if edge_labels
                    else _describe, header=_header(header))
    pairs = np.ascontiguousarray(rec.vals[:, :2])
    ids = _ids(path, pairs, rec)
    labels = None
    if edge_labels:
        labels = rec.vals[:, 2]
        if labels.size and int(labels.max()) > _INT32_MAX // 2:
            raise GraphFormatError(f"{path}: an edge label above {_INT32_MAX // 2}")
    return graph_cls.from_pairs(pairs[:, 0], pairs[:, 1], ids.size, ids=ids, source=path.name,
                                lines=rec.lines, edge_labels=labels, directed=directed)


def _describe_labeled(kind, line, token):
    return text.message(kind, line, token, "expected two integer vertex ids and an integer "
                        "edge label")


def _ids(path, pairs, rec):
    ids = csr.remap_ids(pairs, rec.isolated, rec.top)
    if ids.size > _INT32_MAX:
        raise GraphFormatError(f"{path}: too many vertices ({ids.size:,}) for int32 indices")
    return ids


def read_named(path, graph_cls, header: bool = False):
    """The graph of an edge list whose vertex ids are names (any text but ``#`` or
    ``%`` at the start of a line, and without whitespace or commas): vertex ``v`` has
    the ``v``-th name in sorted order; ``header``: the first line is a header. Comment
    lines, and fields after the first two, are skipped."""
    ends = []
    lines = [0]
    with text.open_input(path) as fh:
        for block in text.blocks(path, fh, lambda: lines[0] + 1):
            data = bytes(block)
            if header:
                data, header = data[data.find(b"\n") + 1 if b"\n" in data else len(data):], False
                lines[0] += 1
            ends.extend(_block_ends(path, data, lines[0]))
            lines[0] += data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))
    if not ends:
        return graph_cls.from_pairs(np.zeros(0, np.int64), np.zeros(0, np.int64), 0,
                                    source=path.name, lines=lines[0], node_names=[])
    names, inverse = np.unique(np.array(ends), return_inverse=True)
    if names.size > _INT32_MAX:
        raise GraphFormatError(f"{path}: too many vertices ({names.size:,}) for int32 indices")
    pairs = inverse.astype(np.int32).reshape(-1, 2)
    return graph_cls.from_pairs(pairs[:, 0], pairs[:, 1], names.size, source=path.name,
                                lines=lines[0],
                                node_names=[x.decode("utf-8", "replace") for x in names])


def _block_ends(path, data: bytes, before: int) -> list:
    """The first two fields of every edge line of a block of whole lines: split at once
    where every line is two plain fields, else line by line."""
    tokens = data.replace(b",", b" ").split()
    rows = data.count(b"\n") + (bool(data) and not data.endswith(b"\n"))
    if len(tokens) == 2 * rows and not any(c in data for c in (b"#", b"%", b'"')):
        return tokens
    out = []
    for k, line in enumerate(data.split(b"\n"), before + 1):
        if line.lstrip()[:1] in (b"#", b"%") or not line.strip():
            continue
        fields = _fields(line)
        if len(fields) < 2:
            raise GraphFormatError(f"{path}:{k}: expected two vertex ids (numbers or names), "
                                   f"got {text.shown(line)!r}")
        out += fields[:2]
    return out


def row_blocks(indptr, entries: int = _WRITE_BLOCK):
    """Row ranges ``(begin, end)`` of about ``entries`` neighbour entries each."""
    n = indptr.size - 1
    if n == 0:
        return []
    cuts = np.searchsorted(indptr, np.arange(0, int(indptr[-1]) + entries, entries))
    cuts = np.unique(np.clip(np.concatenate([[0], cuts, [n]]), 0, n))
    return list(zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True))


def write(graph, fh) -> None:
    """Each edge once as ``u<TAB>v`` in original ids (``u`` the smaller internal
    number), after a header comment and the isolated-vertex comments. A directed or
    edge-labeled graph: each edge once as ``u<TAB>v[<TAB>label]`` (from ``u`` to ``v``
    when directed), read back with the format :func:`read` names for it."""
    if not graph.plain:
        _write_arcs(graph, fh)
        return
    fh.write(f"# gthinker edge list: {graph.num_vertices} vertices, "
             f"{graph.num_edges} undirected edges\n".encode())
    if graph.node_names is not None:
        _write_named(graph, fh)
        return
    lonely = graph.ids[graph.degrees() == 0]
    for i in range(0, lonely.size, 64):
        fh.write((_ISOLATED + " " + " ".join(map(str, lonely[i:i + 64].tolist())) + "\n").encode())
    for b, e in row_blocks(graph.indptr):
        fh.write(_core.format_edges(graph.indptr, graph.indices, graph.ids, 0, True, "", "\t",
                                    b, e, csr.threads()))


def _write_arcs(graph, fh) -> None:
    src, dst, lab = edges.arcs(graph)
    kind = ("directed " if graph.directed else "") + ("edge-labeled " if lab is not None else "")
    fh.write(f"# gthinker {kind}edge list: {graph.num_vertices} vertices, {src.size} "
             f"edges\n".encode())
    lonely = graph.ids[graph.degrees() == 0]
    for i in range(0, lonely.size, 64):
        fh.write((_ISOLATED + " " + " ".join(map(str, lonely[i:i + 64].tolist())) + "\n").encode())
    cols = [graph.ids[src], graph.ids[dst]] + ([] if lab is None else [lab.astype(np.int64)])
    rows = np.column_stack(cols)
    for b in range(0, rows.shape[0], _WRITE_BLOCK):
        fh.write(_core.format_rows(np.ascontiguousarray(rows[b:b + _WRITE_BLOCK]), "", "\t",
                                   csr.threads()))


def _write_named(graph, fh) -> None:
    """Each edge once as ``name<TAB>name`` (a graph with :attr:`node_names`), in
    Python; no vertex without edges (a name that is not an id cannot be listed in the
    isolated-vertex comment that :func:`read` reads as ids)."""
    names = [str(x) for x in graph.node_names]
    rows = np.repeat(np.arange(graph.num_vertices), np.diff(graph.indptr))
    keep = rows < graph.indices
    for u, v in zip(rows[keep].tolist(), graph.indices[keep].tolist(), strict=True):
        fh.write(f"{names[u]}\t{names[v]}\n".encode())

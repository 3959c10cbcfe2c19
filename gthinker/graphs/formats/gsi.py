"""GSI's ``.g`` format (SGSI's public code, pkumod/GSI, ``data/readme``): one directed,
vertex- and edge-labeled graph::

    t # 0
    <num_vertices> <num_edges> <vertex_label_count> <edge_label_count>
    v <id> <label>          (ids 0 .. num_vertices-1)
    e <from> <to> <label>
    t # -1

Read as a directed graph with edge labels (:mod:`gthinker.graphs.edges`); a line
starting ``t # -1`` ends it. Repeated edges keep their first label.
"""

from __future__ import annotations

import numpy as np

from gthinker import _core
from gthinker.errors import GraphFormatError
from gthinker.graphs import csr
from gthinker.graphs import edges as graph_edges
from gthinker.graphs.formats import text

__all__ = ["read", "write"]

_INT32_MAX = np.iinfo(np.int32).max
_FIRST, _FOOTER = b"t # 0", b"t # -1"
#: Lines formatted per write.
_BLOCK = 1 << 22
_EXPECT = {
    "v": "expected 'v <id> <label>' with integer fields",
    "e": "expected 'e <from> <to> <label>' with integer fields",
}


def _describe(kind, line, token):
    if kind == text.BAD_TAG and line.startswith("t #"):
        return (f"{line!r} starts a second graph: gthinker reads one graph per .g file "
                "(split the file)")
    if kind == text.NEGATIVE:
        return f"negative value {token!r} (ids and labels must be non-negative)"
    return text.message(kind, line, token, _EXPECT.get(line[:1], "malformed line"))


def read(path, graph_cls):
    """The directed, edge-labeled graph of a ``.g`` file (its first graph: a second
    ``t # k`` line is an error)."""
    head: list = []

    def header(line):
        if line is None:
            raise GraphFormatError(f"{path}: expected '{_FIRST.decode()}' and a line of counts")
        line = line.strip()
        if not line or line.startswith(b"#"):
            return False
        if not head:
            if not line.startswith(b"t #"):
                raise GraphFormatError(f"{path}:1: expected '{_FIRST.decode()}' first, got "
                                       f"{line[:60].decode('utf-8', 'replace')!r}")
            head.append(line)
            return False
        try:
            counts = [int(x) for x in line.split()]
        except ValueError:
            counts = []
        if len(counts) != 4 or min(counts) < 0:
            raise GraphFormatError(f"{path}:2: expected '<num_vertices> <num_edges> "
                                   f"<vertex_labels> <edge_labels>', got {line[:60]!r}")
        head.append(counts)
        return True

    rec = text.scan(path, 3, {ord("v"): 2, ord("e"): 3}, tagged=True, keep_meta=True,
                    describe=_describe, header=header, footer=_FOOTER)
    n, m = head[1][0], head[1][1]
    if n > _INT32_MAX:
        raise GraphFormatError(f"{path}:2: too many vertices ({n})")
    tags, vals, lines = rec.tags, rec.vals, rec.linenos
    vsel, esel = np.flatnonzero(tags == ord("v")), np.flatnonzero(tags == ord("e"))
    vid = vals[vsel, 0]
    bad = np.flatnonzero(vid >= n)
    if bad.size:
        raise GraphFormatError(f"{path}:{int(lines[vsel[bad[0]]])}: vertex id "
                               f"{int(vid[bad[0]])} out of range [0, {n})")
    if vsel.size != n or np.unique(vid).size != n:
        raise GraphFormatError(f"{path}:2: the header declares {n} vertices; the file has "
                               f"{np.unique(vid).size} distinct 'v' lines of {vsel.size}")
    if esel.size != m:
        raise GraphFormatError(f"{path}:2: the header declares {m} edges; the file has "
                               f"{esel.size} 'e' lines")
    ends = vals[esel, :2]
    bad = np.flatnonzero((ends >= n).any(axis=1))
    if bad.size:
        ln = int(lines[esel[bad[0]]])
        raise GraphFormatError(f"{path}:{ln}: edge endpoint out of range [0, {n}): "
                               f"{text.line_text(path, ln)!r}")
    labels = np.empty(n, np.int64)
    labels[vid] = vals[vsel, 1]
    elab = vals[esel, 2]
    if (n and int(labels.max()) > _INT32_MAX) or (m and int(elab.max()) > _INT32_MAX // 2):
        raise GraphFormatError(f"{path}: a label does not fit in int32")
    return graph_cls.from_pairs(ends[:, 0], ends[:, 1], n, labels=labels.astype(np.int32),
                                source=path.name, lines=rec.lines, edge_labels=elab,
                                directed=True)


def write(graph, fh) -> None:
    """The graph in ``.g`` form, vertices numbered ``0 .. n-1`` (internal ids): vertex
    label 1 and edge label 1 where the graph has none (GSI numbers labels from 1: an edge
    label 0 is refused); the header's label counts are the largest labels, as GSI sizes
    its tables by them; an undirected edge is written once, from its smaller vertex."""
    n = graph.num_vertices
    src, dst, lab = graph_edges.arcs(graph)
    vl = np.ones(n, np.int64) if graph.labels is None else graph.labels.astype(np.int64)
    if np.any(vl < 0):
        raise ValueError("negative labels cannot be written in the .g format")
    el = np.ones(src.size, np.int64) if lab is None else lab.astype(np.int64)
    if el.size and el.min() < 1:
        raise ValueError("GSI's .g format numbers edge labels from 1; this graph has edge "
                         "label 0")
    top_v, top_e = (int(a.max()) if a.size else 0 for a in (vl, el))
    fh.write(f"t # 0\n{n} {src.size} {top_v} {top_e}\n".encode())
    threads = csr.threads()
    for b in range(0, n, _BLOCK):
        rows = np.column_stack([np.arange(b, min(n, b + _BLOCK), dtype=np.int64), vl[b:b + _BLOCK]])
        fh.write(_core.format_rows(rows, "v ", " ", threads))
    for b in range(0, src.size, _BLOCK):
        rows = np.column_stack([src[b:b + _BLOCK], dst[b:b + _BLOCK], el[b:b + _BLOCK]])
        fh.write(_core.format_rows(rows, "e ", " ", threads))
    fh.write(_FOOTER + b"\n")

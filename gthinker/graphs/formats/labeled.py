"""The labeled ``.graph`` format of the subgraph-matching literature: a header
``t N M``, one ``v id label degree`` line per vertex (ids ``0 .. N-1``) and one
``e u v [edge-label]`` line per edge. The edge labels are read when every ``e`` line
has one (:attr:`Graph.edge_labels <gthinker.Graph.edge_labels>`), else none is."""

from __future__ import annotations

import numpy as np

from gthinker import _core
from gthinker.errors import GraphFormatError
from gthinker.graphs import csr, edges
from gthinker.graphs.formats import snap, text

__all__ = ["read", "write"]

#: The most bytes of standard input peeked at for its first ``e`` line.
_PEEK_MAX = 1 << 26

_INT32_MAX = np.iinfo(np.int32).max
_EXPECT = {
    "t": "expected header 't <num_vertices> <num_edges>'",
    "v": "expected 'v <id> <label> <degree>' with integer fields",
    "e": "expected 'e <u> <v>' with integer vertex ids",
}


def _describe(kind, line, token):
    if kind == text.NEGATIVE:
        return f"negative value {token!r} (ids, labels and degrees must be non-negative)"
    return text.message(kind, line, token, _EXPECT.get(line[:1], "malformed line"))


def read(path, graph_cls):
    """The graph of a labeled ``.graph`` file, its labels checked against its header
    and each vertex's declared degree."""
    rec, labeled = _scan(path)
    vals, tags, linenos = rec.vals, rec.tags, rec.linenos
    if vals.shape[0] == 0:
        raise GraphFormatError(f"{path}:1: missing header 't <num_vertices> <num_edges>'")
    if tags[0] != ord("t"):
        raise GraphFormatError(
            f"{path}:{linenos[0]}: expected header 't <num_vertices> <num_edges>' first, "
            f"got {text.line_text(path, int(linenos[0]))!r}")
    is_t = tags == ord("t")
    if np.count_nonzero(is_t) > 1:
        ln = int(linenos[np.flatnonzero(is_t)[1]])
        raise GraphFormatError(f"{path}:{ln}: second header line (one graph per file)")
    head = int(linenos[0])
    N, M = int(vals[0, 0]), int(vals[0, 1])
    if N > _INT32_MAX:
        raise GraphFormatError(f"{path}:{head}: too many vertices ({N})")
    vsel = np.flatnonzero(tags == ord("v"))
    esel = np.flatnonzero(tags == ord("e"))
    labels, declared, vline = _vertices(path, vals, linenos, vsel, N, head)
    eu, ev = _edges(path, vals, linenos, esel, N, M, head)
    elab = None
    if labeled:
        elab = vals[esel, 2]
        if elab.size and int(elab.max()) > _INT32_MAX // 2:
            raise GraphFormatError(f"{path}: an edge label above {_INT32_MAX // 2}")
    g = graph_cls.from_pairs(eu, ev, N, labels=labels, source=path.name, lines=rec.lines,
                             edge_labels=elab)
    bad = np.flatnonzero(g.degrees() != declared)
    if bad.size:
        v0 = int(bad[0])
        raise GraphFormatError(
            f"{path}:{int(vline[v0])}: vertex {v0} declares degree {int(declared[v0])} "
            f"but has {int(g.degrees()[v0])} distinct neighbours")
    return g


def _scan(path):
    """(records, whether the e lines carry labels): scanned with a label on every e line,
    and again without when an e line has none (standard input, read once: as its first
    e line says)."""
    short = []

    def describe(kind, line, token):
        short.append(kind == text.FEW_FIELDS and line.startswith("e"))
        return _describe(kind, line, token)

    spec = {ord("t"): 2, ord("v"): 3, ord("e"): 3}
    stdin = text.is_stdin(path)  # read once: its first e line, peeked at, decides
    if not (stdin and _first_edge_labeled(path) is False):
        try:
            return text.scan(path, 3, spec, tagged=True, keep_meta=True,
                             describe=describe), True
        except GraphFormatError:
            if stdin or not (short and short[-1]):
                raise
    spec[ord("e")] = 2
    return text.scan(path, 3, spec, tagged=True, keep_meta=True, describe=_describe), False


def _first_edge_labeled(path) -> bool | None:
    """Whether the first ``e`` line of standard input has a label, peeked at (up to
    :data:`_PEEK_MAX` bytes, kept to be read); None when no e line is there."""
    size = 1 << 16
    while True:
        head = text.peek(path, size)
        lines = head.split(b"\n")
        for line in lines[:-1] if len(head) == size else lines:  # whole lines
            if line[:1] == b"e" and line[1:2].isspace():
                return len(line.split()) >= 4
        if len(head) < size or size >= _PEEK_MAX:
            return None
        size *= 4


def _vertices(path, vals, linenos, vsel, N, head):
    """(labels int32, declared degrees, line of each vertex) from the v lines."""
    if vsel.size > N:
        raise GraphFormatError(f"{path}:{int(linenos[vsel[N]])}: more 'v' lines than the "
                               f"{N} declared on line {head}")
    vid = vals[vsel, 0]
    bad = np.flatnonzero(vid >= N)
    if bad.size:
        raise GraphFormatError(f"{path}:{int(linenos[vsel[bad[0]]])}: vertex id "
                               f"{int(vid[bad[0]])} out of range [0, {N})")
    seen = np.bincount(vid, minlength=N)
    if np.any(seen > 1):
        dupv = int(np.flatnonzero(seen > 1)[0])
        ln = int(linenos[vsel[np.flatnonzero(vid == dupv)[1]]])
        raise GraphFormatError(f"{path}:{ln}: vertex {dupv} defined twice")
    if vsel.size < N:
        raise GraphFormatError(f"{path}:{head}: header declares {N} vertices but the file "
                               f"has {vsel.size} 'v' lines")
    labels = np.empty(N, dtype=np.int64)
    labels[vid] = vals[vsel, 1]
    if N and int(labels.max()) > _INT32_MAX:
        k = int(np.flatnonzero(vals[vsel, 1] > _INT32_MAX)[0])
        raise GraphFormatError(f"{path}:{int(linenos[vsel[k]])}: label does not fit in int32")
    declared = np.empty(N, dtype=np.int64)
    declared[vid] = vals[vsel, 2]
    vline = np.empty(N, dtype=np.int64)
    vline[vid] = linenos[vsel]
    return labels.astype(np.int32), declared, vline


def _edges(path, vals, linenos, esel, N, M, head):
    eu = np.ascontiguousarray(vals[esel, 0])
    ev = np.ascontiguousarray(vals[esel, 1])
    bad = np.flatnonzero((eu >= N) | (ev >= N))
    if bad.size:
        ln = int(linenos[esel[int(bad[0])]])
        raise GraphFormatError(f"{path}:{ln}: edge endpoint out of range [0, {N}): "
                               f"{text.line_text(path, ln)!r}")
    if esel.size > M:
        raise GraphFormatError(f"{path}:{int(linenos[esel[M]])}: more 'e' lines than the "
                               f"{M} declared on line {head}")
    if esel.size < M:
        raise GraphFormatError(f"{path}:{head}: header declares {M} edges but the file has "
                               f"{esel.size} 'e' lines")
    return eu, ev


def write(graph, fh) -> None:
    """``t``, ``v`` and ``e`` lines; vertices numbered ``0 .. n-1`` (internal ids),
    label 0 for an unlabeled graph; ``e u v label`` lines for an edge-labeled one."""
    if graph.directed:
        raise ValueError("the .graph format is undirected; write a directed graph as .g")
    n = graph.num_vertices
    lab = np.zeros(n, np.int64) if graph.labels is None else graph.labels.astype(np.int64)
    if np.any(lab < 0):
        raise ValueError("negative labels cannot be written in .graph format")
    fh.write(f"t {n} {graph.num_edges}\n".encode())
    for b in range(0, n, 1 << 22):
        e = min(n, b + (1 << 22))
        rows = np.column_stack([np.arange(b, e, dtype=np.int64), lab[b:e],
                                np.diff(graph.indptr[b:e + 1])])
        fh.write(_core.format_rows(rows, "v ", " ", csr.threads()))
    if graph.edge_labels is not None:
        src, dst, lab = edges.arcs(graph)
        for b in range(0, src.size, 1 << 22):
            rows = np.column_stack([src[b:b + (1 << 22)], dst[b:b + (1 << 22)],
                                    lab[b:b + (1 << 22)].astype(np.int64)])
            fh.write(_core.format_rows(rows, "e ", " ", csr.threads()))
        return
    for b, e in snap.row_blocks(graph.indptr):
        fh.write(_core.format_edges(graph.indptr, graph.indices, None, 0, True, "e ", " ",
                                    b, e, csr.threads()))

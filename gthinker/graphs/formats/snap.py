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
An edge list cannot hold a vertex without edges: :func:`write` lists those in
leading comment lines ``# isolated vertices: id id ...``, which :func:`read` adds
back (other SNAP readers skip them as comments).
"""

from __future__ import annotations

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


def read(path, graph_cls, edge_labels: bool = False, directed: bool = False):
    """The graph of a SNAP edge list (``graph_cls.from_owned_pairs`` builds it).
    ``edge_labels``: the third field of every line is the edge's label (a non-negative
    integer); ``directed``: each line is an edge from its first vertex to its second
    (the formats ``edgelist-labeled``, ``edgelist-directed`` and
    ``edgelist-directed-labeled``)."""
    if not (edge_labels or directed):
        rec = text.scan(path, 2, {0: 2}, isolated=True, describe=_describe, narrow=True)
        pairs = rec.vals
        ids = _ids(path, pairs, rec)
        return graph_cls.from_owned_pairs(pairs, ids.size, ids=ids, source=path.name,
                                          lines=rec.lines)
    k = 3 if edge_labels else 2
    rec = text.scan(path, k, {0: k}, isolated=True, describe=_describe_labeled if edge_labels
                    else _describe)
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

"""Conversions between :class:`gthinker.Graph` and the graphs users hold: edge
arrays, edge columns (numpy, pandas, pyarrow), scipy.sparse matrices and networkx
graphs, each converted without a Python loop over the edges.

The ``*_arrays`` functions check their input and return the endpoint arrays,
vertex count, ids, labels and node names that ``Graph._build`` turns into CSR;
:func:`to_networkx` goes the other way.
"""

from __future__ import annotations

import itertools

import numpy as np

from gthinker.errors import GraphFormatError
from gthinker.graphs.csr import remap_ids

__all__ = ["edge_arrays", "column_arrays", "scipy_arrays", "networkx_arrays", "check_labels",
           "to_networkx"]

_INT64_MAX = np.iinfo(np.int64).max
_INT32_MAX = np.iinfo(np.int32).max


def edge_arrays(edges, num_vertices=None):
    """``(u, v, n, ids)`` of an ``(m, 2)`` integer edge array (see
    :meth:`gthinker.Graph.from_edges`)."""
    try:
        arr = np.asarray(edges)
    except (ValueError, TypeError) as exc:
        raise GraphFormatError(f"edges could not be converted to an array: {exc}") from None
    if arr.size == 0:
        arr = np.empty((0, 2), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise GraphFormatError(f"edges must have shape (m, 2), got shape {arr.shape}")
    _check_ids(arr, "edges")
    if arr.size and int(arr.min()) < 0:
        row = int(np.flatnonzero((arr < 0).any(axis=1))[0])
        raise GraphFormatError(
            f"edges[{row}] = {arr[row].tolist()}: vertex ids must be non-negative"
        )
    return _numbered(arr, num_vertices, lambda row: f"edges[{row}] = {arr[row].tolist()}")


def column_arrays(src, dst, num_vertices=None):
    """``(u, v, n, ids)`` of two columns of endpoint ids: numpy arrays, pandas
    Series, pyarrow arrays (see :meth:`gthinker.Graph.from_columns`)."""
    u, v = _column(src, "src"), _column(dst, "dst")
    if u.size != v.size:
        raise GraphFormatError(f"src and dst must have the same length, got {u.size} and {v.size}")
    for name, col in (("src", u), ("dst", v)):
        _check_ids(col, name)
        if col.size and int(col.min()) < 0:
            row = int(np.flatnonzero(col < 0)[0])
            raise GraphFormatError(f"{name}[{row}] = {col[row]}: vertex ids must be non-negative")
    arr = np.empty((u.size, 2), np.int64)
    arr[:, 0] = u
    arr[:, 1] = v
    return _numbered(arr, num_vertices, lambda row: f"edge {row} = {arr[row].tolist()}", own=True)


def _column(x, name):
    """One column as a 1-d numpy array (pyarrow and pandas through ``to_numpy``)."""
    if not isinstance(x, np.ndarray) and hasattr(x, "to_numpy"):
        try:
            x = x.to_numpy(zero_copy_only=False)  # pyarrow
        except TypeError:
            x = x.to_numpy()  # pandas
    try:
        arr = np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise GraphFormatError(f"{name} could not be converted to an array: {exc}") from None
    if arr.ndim != 1:
        raise GraphFormatError(f"{name} must be one column (1-d), got shape {arr.shape}")
    return arr


def _check_ids(arr, name):
    if arr.dtype.kind not in "iu" and arr.dtype != bool:
        raise GraphFormatError(f"{name} must be integers (no missing values), got dtype "
                               f"{arr.dtype}")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > _INT64_MAX:
        raise GraphFormatError(f"{name}: vertex ids must fit in int64")


def _numbered(arr, num_vertices, show, own=False):
    """``(u, v, n, ids)``: the columns of ``arr`` (non-negative ids) renumbered
    ``0..n-1`` by increasing id, or checked against ``num_vertices``."""
    if num_vertices is None:
        ends = arr if own else np.array(arr, dtype=np.int64, order="C")
        ids = remap_ids(ends)
        n = ids.size
        u, v = ends[:, 0], ends[:, 1]
    else:
        n = int(num_vertices)
        if n < 0 or n > _INT32_MAX:
            raise GraphFormatError(f"num_vertices must be in [0, 2**31), got {num_vertices}")
        if arr.size and int(arr.max()) >= n:
            row = int(np.flatnonzero((arr >= n).any(axis=1))[0])
            raise GraphFormatError(f"{show(row)}: vertex id out of range [0, {n}) for "
                                   f"num_vertices={n}")
        if arr.dtype not in (np.int64, np.int32):
            arr = arr.astype(np.int64)
        ids = None
        u, v = arr[:, 0], arr[:, 1]
    if n > _INT32_MAX:
        raise GraphFormatError(f"too many vertices ({n}) for int32 indices")
    return u, v, n, ids


def check_labels(labels, n):
    """``labels`` as int32, one per vertex, or GraphFormatError."""
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


def scipy_arrays(matrix):
    """``(u, v, n)`` of the nonzero pattern of a square scipy.sparse matrix."""
    import scipy.sparse as sp

    if not sp.issparse(matrix):
        raise GraphFormatError(f"expected a scipy.sparse matrix, got {type(matrix).__name__}")
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise GraphFormatError(f"matrix must be square, got shape {matrix.shape}")
    coo = sp.coo_array(matrix, copy=True)
    coo.eliminate_zeros()
    n = int(coo.shape[0])
    if n > _INT32_MAX:
        raise GraphFormatError(f"too many vertices ({n}) for int32 indices")
    row, col = coo.row, coo.col
    if row.dtype != col.dtype or row.dtype not in (np.int32, np.int64):
        row, col = row.astype(np.int64), col.astype(np.int64)
    return row, col, n


def networkx_arrays(G):
    """``(u, v, n, ids, labels, node_names)`` of a networkx graph (see
    :meth:`gthinker.Graph.from_networkx`)."""
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
        labels = check_labels(np.array(values, dtype=np.int64), n)
    return ends[0::2], ends[1::2], n, ids, labels, node_names


def to_networkx(graph):
    """``graph`` as a :class:`networkx.Graph` (see :meth:`gthinker.Graph.to_networkx`)."""
    import networkx as nx

    names = graph.node_names if graph.node_names is not None else graph.ids.tolist()
    G = nx.Graph()
    if graph.labels is not None:
        G.add_nodes_from(
            zip(names, ({"label": x} for x in graph.labels.tolist()), strict=True)
        )
    else:
        G.add_nodes_from(names)
    e = graph.edge_array()
    if graph.node_names is None:
        G.add_edges_from(graph.ids[e].tolist())
    else:
        first = map(names.__getitem__, e[:, 0].tolist())
        second = map(names.__getitem__, e[:, 1].tolist())
        G.add_edges_from(zip(first, second, strict=True))
    return G

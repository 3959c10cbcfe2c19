"""Edge labels and directions on the undirected skeleton (see docs/formats.md, "Edge
labels and directed graphs").

A :class:`~gthinker.graphs.graph.Graph` is always stored as its undirected skeleton:
``indptr``/``indices`` hold ``w`` in ``v``'s row whenever an edge joins them either
way, so every app that needs only the skeleton (cliques, counting shapes, gSWORD)
runs on it unchanged. On top of it, aligned with ``indices``:

``edge_labels`` (int32, or None)
    The label of entry ``(v, w)``: of the edge ``v -> w`` when there is one, else of
    ``w -> v`` (undirected: of the edge; both entries of an edge carry the same label).
``directions`` (int8, or None for an undirected graph)
    :data:`OUT` (only ``v -> w``), :data:`IN` (only ``w -> v``) or :data:`BOTH`. Where
    both edges exist, the label of ``w -> v`` is the one of the mirror entry ``(w, v)``.

One label per directed pair (per pair when undirected): a repeated edge keeps the
label of its first occurrence and counts as a duplicate.

Matching finds the neighbours over one label and one direction without scanning a
row (:func:`keyed_rows`, SGSI's PCSR idea): each row of a derived CSR is sorted by
``(key, neighbour)``, the key being the label (undirected) or ``2 label`` for an
out-edge and ``2 label + 1`` for an in-edge (directed), so the neighbours with one
key are one sorted run, found by binary search and intersected as they are.
"""

from __future__ import annotations

import sys

import numpy as np

from gthinker.errors import GraphFormatError

__all__ = ["OUT", "IN", "BOTH", "build", "positions", "check_edge_labels", "keyed_rows", "mirror",
           "arcs", "key_of", "skewed_labels", "say_skeleton", "DEFAULT_SKEW"]

#: Direction codes of :attr:`Graph.directions <gthinker.Graph.directions>`.
OUT, IN, BOTH = 1, 2, 3
_INT32_MAX = np.iinfo(np.int32).max


def check_edge_labels(labels, m: int) -> np.ndarray | None:
    """``labels`` as non-negative int32, one per edge record, or GraphFormatError."""
    if labels is None:
        return None
    lab = np.asarray(labels)
    if lab.shape != (m,):
        raise GraphFormatError(f"edge_labels must have one label per edge ({m}), got shape "
                               f"{lab.shape}")
    if lab.size and lab.dtype.kind not in "iu":
        raise GraphFormatError(f"edge labels must be integers, got dtype {lab.dtype}")
    if lab.size and (int(lab.min()) < 0 or int(lab.max()) > _INT32_MAX // 2):
        raise GraphFormatError(f"edge labels must lie in [0, {_INT32_MAX // 2}]")
    return lab.astype(np.int32)


def _rows(indptr: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(indptr.size - 1, dtype=np.int64), np.diff(indptr))


def positions(indptr, indices, u, v) -> np.ndarray:
    """The entry of ``v`` in ``u``'s row, for pairs known to be edges of the skeleton."""
    n = indptr.size - 1
    keys = _rows(indptr) * n + indices
    return np.searchsorted(keys, np.asarray(u, np.int64) * n + np.asarray(v, np.int64))


def mirror(indptr, indices) -> np.ndarray:
    """For every entry ``(v, w)``, the position of its mirror entry ``(w, v)``."""
    return positions(indptr, indices, indices, _rows(indptr))


def build(indptr, indices, u, v, labels, directed: bool):
    """``(edge_labels, directions, duplicates)`` on the skeleton ``indptr``/``indices``
    built from the pairs ``(u[i], v[i])``: the labels (None when ``labels`` is None) and
    directions (None unless ``directed``) as the module describes, and the repeated
    (directed, when ``directed``) pairs among the pairs that are not loops."""
    u = np.asarray(u, np.int64)
    v = np.asarray(v, np.int64)
    keep = u != v
    u, v = u[keep], v[keep]
    lab = None if labels is None else np.asarray(labels)[keep]
    if not directed:
        a, b = np.minimum(u, v), np.maximum(u, v)
        pos = positions(indptr, indices, a, b)
        first_pos, first = np.unique(pos, return_index=True)
        out = None
        if lab is not None:
            out = np.zeros(indices.size, np.int32)
            out[first_pos] = lab[first]
            out[positions(indptr, indices, b[first], a[first])] = lab[first]
        return out, None, int(u.size - first_pos.size)
    pos = positions(indptr, indices, u, v)
    first_pos, first = np.unique(pos, return_index=True)
    dirs = np.zeros(indices.size, np.int8)
    dirs[first_pos] |= OUT
    back = positions(indptr, indices, v[first], u[first])
    dirs[back] |= IN
    out = None
    if lab is not None:
        out = np.zeros(indices.size, np.int32)
        out[first_pos] = lab[first]
        only_in = np.flatnonzero(dirs == IN)
        out[only_in] = out[mirror(indptr, indices)[only_in]]
    return out, dirs, int(u.size - first_pos.size)


def key_of(label: int, direction: int | None) -> int:
    """The key of :func:`keyed_rows` for an edge of ``label`` seen from a row: the label
    (``direction`` None: undirected), ``2 label`` (``OUT``) or ``2 label + 1`` (``IN``)."""
    if direction is None:
        return int(label)
    return 2 * int(label) + (1 if direction == IN else 0)


def keyed_rows(g) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, neighbours, keys)``: every row of ``g`` sorted by ``(key, neighbour)``
    (:func:`key_of`); an entry with both directions appears twice, once per key."""
    indptr, indices = g.indptr, g.indices
    rows = _rows(indptr)
    lab = (np.zeros(indices.size, np.int64) if g.edge_labels is None
           else g.edge_labels.astype(np.int64))
    if g.directions is None:
        r, nb, key = rows, indices.astype(np.int64), lab
    else:
        d = g.directions
        out = np.flatnonzero(d & OUT)
        inn = np.flatnonzero(d & IN)
        in_lab = lab[mirror(indptr, indices)[inn]]
        r = np.concatenate([rows[out], rows[inn]])
        nb = np.concatenate([indices[out], indices[inn]]).astype(np.int64)
        key = np.concatenate([2 * lab[out], 2 * in_lab + 1])
    order = np.lexsort((nb, key, r))
    kptr = np.zeros(indptr.size, np.int64)
    np.cumsum(np.bincount(r, minlength=indptr.size - 1), out=kptr[1:])
    return kptr, nb[order].astype(np.int32), key[order].astype(np.int32)


def arcs(g) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(src, dst, labels)``: each directed edge once (``directions`` OUT bit), or each
    undirected edge once as ``src < dst``; ``labels`` None when ``g`` has none."""
    rows = _rows(g.indptr)
    sel = (np.flatnonzero(g.directions & OUT) if g.directions is not None
           else np.flatnonzero(rows < g.indices))
    lab = None if g.edge_labels is None else g.edge_labels[sel]
    return rows[sel], g.indices[sel].astype(np.int64), lab


#: The share of the edges that label 1 takes in generated labels unless told otherwise
#: (``rdf:type`` is on about a third of the triples of common RDF benchmarks).
DEFAULT_SKEW = 0.3


def skewed_labels(m: int, count: int, skew: float = DEFAULT_SKEW, seed: int = 0) -> np.ndarray:
    """``m`` edge labels in ``1 .. count`` (GSI's format numbers them from 1): label 1 on a
    share ``skew`` of the edges (as ``rdf:type`` in RDF graphs), the rest uniform over
    the others (all uniform when ``skew`` is ``1 / count``)."""
    if count < 1:
        raise ValueError(f"edge label count must be at least 1, got {count}")
    if not 0.0 <= skew <= 1.0:
        raise ValueError(f"edge label skew must lie in [0, 1], got {skew}")
    rng = np.random.default_rng([seed, 0xED6E])
    if count == 1:
        return np.ones(m, np.int32)
    lab = rng.integers(2, count + 1, size=m, dtype=np.int32)
    lab[rng.random(m) < skew] = 1
    return lab


_said: set = set()


def say_skeleton(g, who: str) -> None:
    """Says once on stderr that ``who`` uses the undirected skeleton of ``g`` (its edge
    labels and directions left out), when ``g`` has either."""
    if g.plain:
        return
    what = " and ".join(w for w, has in (("edge labels", g.edge_labels is not None),
                                         ("directions", g.directed)) if has)
    line = f"gthinker: {who} uses the graph's undirected skeleton; its {what} are not used"
    if line not in _said:
        _said.add(line)
        print(line, file=sys.stderr, flush=True)

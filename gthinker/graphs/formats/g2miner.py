"""G2Miner's binary labeled format (the ``inputs/`` of chenxuhao/GraphMiner): a graph is
a prefix ``P`` (``inputs/citeseer/graph``) and the files

- ``P.meta.txt``: whitespace-separated integers: the vertices ``n``, the adjacency
  entries ``m`` (both directions of each edge), the byte widths of a vertex id, an edge
  offset, a vertex label and an edge label, the maximum degree, the feature length, the
  vertex classes and the edge classes (lines after these, e.g. cora's mask ranges, are
  ignored);
- ``P.vertex.bin``: ``n + 1`` row offsets (little-endian, the edge-offset width);
- ``P.edge.bin``: ``m`` neighbour ids (the vertex-id width);
- ``P.vlabel.bin`` (optional): ``n`` vertex labels (the vertex-label width);
- ``P.elabel.bin`` (optional): ``m`` edge labels, aligned with ``P.edge.bin``.

:func:`read` takes the meta file, the prefix or the folder holding ``graph.meta.txt``.
Rows need not be sorted or symmetric: the graph is built from the pairs (loops and
repeats dropped) and the edge labels follow their pairs into the graph's
``edge_labels``. :func:`write` writes a graph in this format (for tests and for
G2Miner's binaries as a peer).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gthinker.errors import GraphFormatError

__all__ = ["META_SUFFIX", "prefix_of", "read", "write"]

META_SUFFIX = ".meta.txt"
#: The meta file of a folder given as the graph.
FOLDER_META = "graph" + META_SUFFIX
_META_FIELDS = ("vertices", "adjacency entries", "vertex id bytes", "edge offset bytes",
                "vertex label bytes", "edge label bytes", "maximum degree", "feature length",
                "vertex classes", "edge classes")
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SIGNED = {4: np.int32, 8: np.int64}


def prefix_of(path) -> Path | None:
    """The prefix of the G2Miner graph ``path`` names (its meta file, its prefix, or
    its folder), or None when it names none."""
    path = Path(path)
    name = str(path)
    if name.endswith(META_SUFFIX):
        return Path(name[:-len(META_SUFFIX)])
    if path.is_dir() and (path / FOLDER_META).is_file():
        return path / "graph"
    if not path.exists() and Path(name + META_SUFFIX).is_file():
        return path
    return None


def _meta(meta: Path) -> dict:
    try:
        tokens = meta.read_text().split()
    except OSError as exc:
        raise GraphFormatError(f"{meta}: {exc.strerror or exc}") from None
    if len(tokens) < len(_META_FIELDS):
        raise GraphFormatError(f"{meta}: expected {len(_META_FIELDS)} numbers "
                               f"({', '.join(_META_FIELDS)}), got {len(tokens)}")
    try:
        values = [int(t) for t in tokens[:len(_META_FIELDS)]]
    except ValueError:
        raise GraphFormatError(f"{meta}: expected integers, got {tokens[:10]}") from None
    out = dict(zip(_META_FIELDS, values, strict=True))
    for name, table in (("vertex id bytes", _SIGNED), ("edge offset bytes", _SIGNED),
                        ("vertex label bytes", _UNSIGNED), ("edge label bytes", _UNSIGNED)):
        if out[name] not in table:
            raise GraphFormatError(f"{meta}: {name} must be one of {sorted(table)}, "
                                   f"got {out[name]}")
    if out["vertices"] < 0 or out["adjacency entries"] < 0:
        raise GraphFormatError(f"{meta}: negative sizes")
    return out


def _array(path: Path, dtype, count: int, what: str, optional=False):
    if optional and not path.is_file():
        return None
    try:
        data = np.fromfile(path, dtype=np.dtype(dtype).newbyteorder("<"))
    except OSError as exc:
        raise GraphFormatError(f"{path}: {exc.strerror or exc}") from None
    if data.size != count:
        raise GraphFormatError(f"{path}: expected {count} {what} "
                               f"({count * np.dtype(dtype).itemsize} bytes), found {data.size}")
    return data


def read(path, graph_cls):
    """The graph of G2Miner files (``path``: the meta file, the prefix or the folder);
    its ``labels`` from ``.vlabel.bin`` and ``edge_labels`` from ``.elabel.bin``."""
    prefix = prefix_of(path)
    if prefix is None:
        raise GraphFormatError(f"{path}: not a G2Miner graph (no {META_SUFFIX})")
    meta = _meta(Path(str(prefix) + META_SUFFIX))
    n, m = meta["vertices"], meta["adjacency entries"]
    base = str(prefix)
    offsets = _array(Path(base + ".vertex.bin"), _SIGNED[meta["edge offset bytes"]], n + 1,
                     "row offsets").astype(np.int64)
    if offsets[0] != 0 or offsets[-1] != m or np.any(np.diff(offsets) < 0):
        raise GraphFormatError(f"{base}.vertex.bin: row offsets must rise from 0 to {m}")
    dst = _array(Path(base + ".edge.bin"), _SIGNED[meta["vertex id bytes"]], m,
                 "neighbour ids").astype(np.int64)
    if dst.size and (dst.min() < 0 or dst.max() >= n):
        raise GraphFormatError(f"{base}.edge.bin: neighbour ids must be in 0..{n - 1}")
    vlab = _array(Path(base + ".vlabel.bin"), _UNSIGNED[meta["vertex label bytes"]], n,
                  "vertex labels", optional=True)
    elab = _array(Path(base + ".elabel.bin"), _UNSIGNED[meta["edge label bytes"]], m,
                  "edge labels", optional=True)
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    g = graph_cls.from_pairs(src, dst, n, labels=None if vlab is None else vlab.astype(np.int32),
                             source=Path(base).name, lines=0)
    if elab is not None:
        g.edge_labels = _aligned_labels(g, src, dst, elab.astype(np.int32))
    return g


def _aligned_labels(g, src, dst, elab):
    """``elab`` (of the pairs ``(src, dst)``) in the order of ``g``'s adjacency entries;
    a pair stored one way only gives its label to both directions."""
    n = max(1, g.num_vertices)
    keys = np.concatenate([src * n + dst, dst * n + src])
    labels = np.concatenate([elab, elab])
    order = np.argsort(keys, kind="stable")
    keys, labels = keys[order], labels[order]
    gsrc = np.repeat(np.arange(g.num_vertices, dtype=np.int64), np.diff(g.indptr))
    pos = np.searchsorted(keys, gsrc * n + g.indices)
    return np.ascontiguousarray(labels[pos], np.int32)


def write(graph, prefix) -> None:
    """Writes ``graph`` as G2Miner's files ``prefix.meta.txt``, ``.vertex.bin``,
    ``.edge.bin``, ``.vlabel.bin`` (labels, 0 where it has none) and, where it has edge
    labels, ``.elabel.bin`` (4-byte ids, 8-byte offsets, 1-byte vertex labels, 2-byte
    edge labels: G2Miner's widths)."""
    base = str(prefix)
    n = graph.num_vertices
    labels = (np.zeros(n, np.int64) if graph.labels is None
              else np.asarray(graph.labels, np.int64))
    if labels.size and (labels.min() < 0 or labels.max() > 255):
        raise ValueError("G2Miner's vertex labels are one byte: 0..255")
    el = getattr(graph, "edge_labels", None)
    if el is not None and el.size and (el.min() < 0 or el.max() > 65535):
        raise ValueError("G2Miner's edge labels are two bytes: 0..65535")
    np.asarray(graph.indptr, "<i8").tofile(base + ".vertex.bin")
    np.asarray(graph.indices, "<i4").tofile(base + ".edge.bin")
    labels.astype(np.uint8).tofile(base + ".vlabel.bin")
    if el is not None:
        np.asarray(el, "<u2").tofile(base + ".elabel.bin")
    classes = len(np.unique(labels)) if n else 0
    edge_classes = 0 if el is None else len(np.unique(el))
    fields = [n, int(graph.indices.size), 4, 8, 1, 2, max(1, graph.max_degree), 0, classes,
              edge_classes]
    Path(base + META_SUFFIX).write_text(
        f"{fields[0]}\n{fields[1]}\n{fields[2]} {fields[3]} {fields[4]} {fields[5]}\n"
        + "".join(f"{x}\n" for x in fields[6:]))

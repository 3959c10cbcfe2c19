"""Matrix Market coordinate files (``.mtx``: SuiteSparse, Network Repository).

The first line is ``%%MatrixMarket matrix coordinate FIELD SYMMETRY`` with FIELD
``pattern``, ``integer`` or ``real`` and SYMMETRY ``general``, ``symmetric`` or
``skew-symmetric``; ``%`` comment lines follow, then the size line ``rows cols
entries`` (a square matrix) and one ``i j [value]`` line per entry (1-based).
Every entry is an edge whatever its value (the graph is the matrix's pattern,
made symmetric); row ``i`` is the vertex with id ``i - 1``, as
``scipy.io.mmread`` numbers it. Dense (``array``) and ``complex`` files are
refused with a message. :func:`write` writes the lower triangle of a symmetric
pattern matrix, with ``% gthinker ids:`` and ``% gthinker labels:`` comment lines
where the graph has ids other than ``0 .. n-1`` or labels, which :func:`read`
restores.
"""

from __future__ import annotations

import numpy as np

from gthinker import _core
from gthinker.errors import GraphFormatError
from gthinker.graphs import csr
from gthinker.graphs.formats import snap, text

__all__ = ["read", "write"]

_FIELDS = ("pattern", "integer", "real")
_SYMMETRIES = ("general", "symmetric", "skew-symmetric")
_IDS = b"% gthinker ids:"
_LABELS = b"% gthinker labels:"


class _Header:
    """The banner, the comment lines and the size line, fed one line at a time."""

    def __init__(self, path):
        self.path = path
        self.line = 0
        self.size = None
        self.ids: list = []
        self.labels: list = []

    def __call__(self, line) -> bool:
        if line is None:
            raise GraphFormatError(f"{self.path}:{self.line + 1}: missing the size line "
                                   "'rows columns entries'")
        self.line += 1
        if self.line == 1:
            self._banner(line)
            return False
        stripped = line.strip()
        if not stripped or stripped.startswith(b"%"):
            for prefix, into in ((_IDS, self.ids), (_LABELS, self.labels)):
                if stripped.startswith(prefix):
                    into.extend(stripped[len(prefix):].split())
            return False
        fields = stripped.split()
        if len(fields) != 3 or not all(f.isdigit() for f in fields):
            raise GraphFormatError(f"{self.path}:{self.line}: expected the size line "
                                   f"'rows columns entries', got {_show(stripped)!r}")
        rows, cols, entries = map(int, fields)
        if rows != cols:
            raise GraphFormatError(f"{self.path}:{self.line}: a graph needs a square matrix, "
                                   f"got {rows} x {cols}")
        if rows > np.iinfo(np.int32).max:
            raise GraphFormatError(f"{self.path}:{self.line}: too many vertices ({rows:,})")
        self.size = (rows, entries)
        return True

    def _banner(self, line):
        words = line.strip().lower().split()
        if len(words) != 5 or words[0] != b"%%matrixmarket" or words[1] != b"matrix":
            raise GraphFormatError(f"{self.path}:1: expected '%%MatrixMarket matrix coordinate "
                                   f"FIELD SYMMETRY', got {_show(line)!r}")
        fmt, field, symmetry = (w.decode("ascii", "replace") for w in words[2:])
        if fmt != "coordinate":
            raise GraphFormatError(f"{self.path}:1: a dense ('{fmt}') Matrix Market file is not "
                                   "a graph; expected 'coordinate'")
        if field not in _FIELDS:
            raise GraphFormatError(f"{self.path}:1: field '{field}' is not supported (a graph "
                                   f"reads {', '.join(_FIELDS)})")
        if symmetry not in _SYMMETRIES:
            raise GraphFormatError(f"{self.path}:1: symmetry '{symmetry}' is not supported "
                                   f"(a graph reads {', '.join(_SYMMETRIES)})")


def _show(line: bytes, limit: int = 60) -> str:
    s = line.decode("utf-8", "replace").strip()
    return s[: limit - 3] + "..." if len(s) > limit else s


def _describe(kind, line, token):
    return text.message(kind, line, token, "expected an entry 'row column [value]'")


def read(path, graph_cls):
    """The graph of a Matrix Market coordinate file."""
    head = _Header(path)
    rec = text.scan(path, 2, {0: 2}, describe=_describe, header=head, narrow=True)
    n, entries = head.size
    pairs = rec.vals
    if pairs.shape[0] != entries:
        raise GraphFormatError(f"{path}:{head.line}: the size line declares {entries:,} entries "
                               f"but the file has {pairs.shape[0]:,}")
    if pairs.size:
        lo, hi = _core.min_max(pairs.reshape(-1), csr.threads())
        if lo < 1 or hi > n:
            bad = int(np.flatnonzero(((pairs < 1) | (pairs > n)).any(axis=1))[0])
            raise GraphFormatError(f"{path}: entry {bad + 1} ({pairs[bad, 0]}, {pairs[bad, 1]}) "
                                   f"is outside the {n} x {n} matrix")
        pairs -= 1
    ids = _restored(path, head.ids, n, "ids", np.int64)
    labels = _restored(path, head.labels, n, "labels", np.int32)
    if ids is not None and np.unique(ids).size != n:
        raise GraphFormatError(f"{path}: the '% gthinker ids:' lines repeat an id")
    return graph_cls.from_owned_pairs(pairs, n, ids=ids, labels=labels, source=path.name,
                                      lines=rec.lines)


def _restored(path, tokens, n, what, dtype):
    if not tokens:
        return None
    try:
        values = np.array(tokens, dtype=bytes).astype(np.int64)
    except (ValueError, OverflowError):
        raise GraphFormatError(f"{path}: the '% gthinker {what}:' lines hold a token that is "
                               "not an integer") from None
    if values.size != n or (what == "ids" and values.min() < 0):
        raise GraphFormatError(f"{path}: the '% gthinker {what}:' lines hold {values.size:,} "
                               f"values for {n:,} vertices")
    if dtype == np.int32 and (values.min() < -(2**31) or values.max() >= 2**31):
        raise GraphFormatError(f"{path}: a label does not fit in int32")
    return values.astype(dtype)


def write(graph, fh) -> None:
    """The lower triangle of the symmetric pattern matrix; ids and labels in comments."""
    n = graph.num_vertices
    fh.write(b"%%MatrixMarket matrix coordinate pattern symmetric\n"
             b"% written by gthinker: row i is vertex i - 1\n")
    identity = np.array_equal(graph.ids, np.arange(n))
    for prefix, values in ((_IDS, None if identity else graph.ids), (_LABELS, graph.labels)):
        if values is None:
            continue
        for i in range(0, n, 64):
            fh.write(prefix + b" " + " ".join(map(str, values[i:i + 64].tolist())).encode() + b"\n")
    fh.write(f"{n} {n} {graph.num_edges}\n".encode())
    for b, e in snap.row_blocks(graph.indptr):
        fh.write(_core.format_edges(graph.indptr, graph.indices, None, 1, False, "", " ",
                                    b, e, csr.threads()))

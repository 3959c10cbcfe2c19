"""Graph files: the registry of formats behind :meth:`gthinker.Graph.read`,
:meth:`gthinker.Graph.write` and every command that takes a graph file.

A format is one reader function ``read(path, graph_cls) -> Graph`` (and
optionally a writer ``write(graph, fh)``), registered with :func:`register`
under a name, the file-name suffixes it owns and the first bytes that give it
away. A file is read as the format its first bytes identify (a gthinker binary
graph, a ``.npz`` zip, a Matrix Market banner, the ``t`` line that starts a ``.graph``
file or GSI's ``t #``, inside gzip, bzip2, xz or zstandard too), else by its name
(``.graph``, ``.g``, ``.mtx``, ``.npz``, ``.csr``, a ``.gz``, ``.bz2``, ``.xz`` or
``.zst`` suffix aside), else as a SNAP edge list. ``-`` reads standard
input (a text format: its first bytes found by peeking). Bundled formats (one module
each in :mod:`gthinker.graphs.formats`):

============  =====================================  ============================
name          what                                   suffixes
============  =====================================  ============================
edgelist      SNAP edge list (``u v`` lines)          any other
edgelist-...  ``-labeled``: ``u v label`` lines;      (asked for by name)
              ``-directed``, ``-directed-labeled``
graph         labeled ``t``/``v``/``e`` format        ``.graph``
gsi           GSI's directed, edge-labeled format     ``.g``
mtx           Matrix Market coordinate               ``.mtx``
npz           scipy.sparse ``save_npz``              ``.npz``
binary        gthinker's memory-mapped binary graph  ``.csr``
g2miner       G2Miner's binary labeled files         ``.meta.txt`` (or the prefix,
                                                     or its folder)
============  =====================================  ============================

Writers go through a temporary file in the same folder that is renamed at the
end, so a failed or interrupted write leaves the old file (or none), never a
partial one; a ``.gz``, ``.bz2``, ``.xz`` or ``.zst`` name compresses (text formats).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gthinker.errors import GraphFormatError
from gthinker.graphs.formats import binary, g2miner, gsi, labeled, mtx, npz, snap, text

__all__ = ["GraphFormat", "EDGE_LIST_SUFFIXES", "register", "formats", "format_name",
           "is_graph_name", "natural_key", "output_format", "read_graph", "write_graph",
           "writing"]

#: The names an edge list's file usually has (read as edge lists anyway, as any name no
#: format owns): what a folder of graph files holds besides the formats' own suffixes.
EDGE_LIST_SUFFIXES = (".txt", ".edges", ".el", ".csv", ".tsv", ".snap")


@dataclass(frozen=True)
class GraphFormat:
    """A file format: ``read(path, graph_cls)``, ``write(graph, fh)`` (or None),
    the suffixes it owns (after any ``.gz``), the first bytes that identify it,
    other names it answers to, and whether it may be gzip-compressed."""

    name: str
    read: Callable
    write: Callable | None = None
    suffixes: tuple = ()
    magic: tuple = ()
    aliases: tuple = ()
    text: bool = True


_FORMATS: dict[str, GraphFormat] = {}


def register(fmt: GraphFormat) -> GraphFormat:
    """Adds (or replaces) a format; returns it."""
    _FORMATS[fmt.name] = fmt
    return fmt


def formats() -> dict[str, GraphFormat]:
    """The registered formats by name."""
    return dict(_FORMATS)


register(GraphFormat("edgelist", snap.read, snap.write, aliases=("snap", "txt", "edges")))
register(GraphFormat("graph", labeled.read, labeled.write, suffixes=(".graph",),
                     magic=(b"t ", b"t\t"), aliases=("labeled",)))  # its header line
register(GraphFormat("edgelist-labeled", functools.partial(snap.read, edge_labels=True),
                     snap.write))
register(GraphFormat("edgelist-directed", functools.partial(snap.read, directed=True),
                     snap.write))
register(GraphFormat("edgelist-directed-labeled",
                     functools.partial(snap.read, edge_labels=True, directed=True), snap.write))
register(GraphFormat("gsi", gsi.read, gsi.write, suffixes=(".g",), magic=(b"t #",),
                     aliases=("g",)))  # its first line, "t # 0"
register(GraphFormat("mtx", mtx.read, mtx.write, suffixes=(".mtx",),
                     magic=(b"%%MatrixMarket", b"%%matrixmarket"), aliases=("matrixmarket",)))
register(GraphFormat("npz", npz.read, npz.write, suffixes=(".npz",), magic=(b"PK\x03\x04",),
                     text=False))
register(GraphFormat("g2miner", g2miner.read, suffixes=(g2miner.META_SUFFIX,), text=False))
register(GraphFormat("binary", binary.load, binary.write_graph, suffixes=(".csr",),
                     magic=(binary.MAGIC,), aliases=("csr",), text=False))


def _lookup(fmt: str) -> GraphFormat:
    key = fmt.lower()
    for f in _FORMATS.values():
        if key == f.name or key in f.aliases:
            return f
    names = ", ".join(repr(n) for n in _FORMATS)
    raise ValueError(f"unknown graph format {fmt!r}; use one of {names}")


def _by_name(path: Path) -> GraphFormat:
    name = text.without_compression(path.name.lower())
    for f in _FORMATS.values():
        if any(name.endswith(s) for s in f.suffixes):
            return f
    return _FORMATS["edgelist"]


def format_name(path, fmt: str | None) -> str:
    """The format a file is read as: ``fmt`` if given, else from its first bytes (a
    regular file's, or standard input's, peeked at: another pipe or a device is not
    read twice), else from its name."""
    path = Path(os.fspath(path))
    if fmt is not None:
        return _lookup(fmt).name
    if (not text.is_stdin(path) and not path.is_file()
            and g2miner.prefix_of(path) is not None):  # a prefix or a folder
        return "g2miner"
    head = text.peek(path, 16)
    found = [(len(m), f.name) for f in _FORMATS.values() for m in f.magic if head.startswith(m)]
    if found:  # the longest magic: GSI's "t #" before the labeled format's "t "
        return max(found)[1]
    return _by_name(path).name


def is_graph_name(name: str) -> bool:
    """Whether a file name looks like a graph file's: not hidden, and ending (a
    compression suffix aside) with a format's suffix or one of
    :data:`EDGE_LIST_SUFFIXES` (a README, notes or ``.gitignore`` do not)."""
    bare = text.without_compression(name.lower())
    suffixes = EDGE_LIST_SUFFIXES + tuple(s for f in _FORMATS.values() for s in f.suffixes)
    return not name.startswith(".") and bare.endswith(suffixes)


def natural_key(name: str) -> tuple:
    """The key that sorts names as people number them: ``q_2`` before ``q_10``."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.split(r"(\d+)", name) if part)


def output_format(path, fmt: str | None = None) -> str:
    """The format a file is written in: ``fmt`` if given, else the one whose suffix
    the name has (a name no format owns: an edge list)."""
    return _lookup(fmt).name if fmt is not None else _by_name(Path(os.fspath(path))).name


def read_graph(path, fmt, graph_cls):
    """The graph in file ``path`` (see :meth:`gthinker.Graph.read`)."""
    path = Path(os.fspath(path))
    f = _FORMATS[format_name(path, fmt)]
    if text.is_stdin(path) and not f.text:
        raise GraphFormatError(f"standard input holds a {f.name!r} graph, which is read from "
                               "a file, not a stream: give its path")
    return f.read(path, graph_cls)


def write_graph(graph, path, fmt=None) -> None:
    """Writes ``graph`` to ``path`` in format ``fmt`` (default: from the name; a
    name no format owns is an edge list), through a temporary file renamed at the end."""
    path = Path(os.fspath(path))
    f = _FORMATS[output_format(path, fmt)]
    if f.write is None:
        raise ValueError(f"cannot write the {f.name!r} format")
    bare = text.without_compression(path.name)
    if bare != path.name and not f.text:
        raise ValueError(f"the {f.name!r} format is not compressed; drop the "
                         f"{path.name[len(bare):]} suffix")
    with writing(path) as fh:
        packed = text.compressed_writer(fh, path.name)
        if packed is not None:
            with packed:
                f.write(graph, packed)
        else:
            f.write(graph, fh)


@contextlib.contextmanager
def writing(path: Path):
    """A binary file object whose content replaces ``path`` only once the block
    ends without an exception (a temporary file in the same folder, renamed)."""
    path = Path(os.fspath(path))
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{path.parent}: no such folder")
    if path.exists() and not path.is_file():  # a device or a pipe: written in place
        with open(path, "wb") as fh:
            yield fh
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


"""gthinker's binary graph files: a CSR that loads by memory-mapping (page faults,
not parsing), with its ids, labels, node names and load report, and the prepared
forms computed from it (degeneracy order and core numbers, oriented and reordered
graphs), so that a later run prepares nothing.

Layout (version 1; every number little-endian)::

    0   magic  b"\\x93GTHINK\\n"            8 bytes
    8   version                           uint32
    12  length L of the metadata          uint32
    16  CRC-32 of the metadata            uint32
    20  reserved (0)                      uint32
    24  metadata: UTF-8 JSON, L bytes
    ... sections, each at a multiple of 4096 bytes: raw C-order arrays

The metadata gives ``n``, ``m``, the load report, the node names (JSON; tuples
as ``{"tuple": [...]}``), each section's dtype, shape, offset, size and the CRC-32
of each 64 MiB block of it, the stored prepared forms by key, and ``revisions``:
for the forms the graph class names in ``FORM_REVISIONS`` (those an older gthinker
computed differently), the revision stored. A stored form whose revision is not
the reader's is not restored: the run computes it again, as on any other copy of
the graph (so a file from before the parallel degeneracy order gives the same
order as a fresh one, not the older one).

What is checked when: opening a file checks the magic, the version, the
metadata's CRC and that every section lies inside the file with the size its
shape says (so a truncated file is refused at once). Every section is checked
against its CRCs before it is first used, so before any result that depends on it:
a graph's sections (the main graph, and a stored graph form such as the oriented
one, when it is asked for) all at once, on all cores, then its rows (offsets
monotone from 0, neighbour ids in range and strictly increasing), so corrupt rows
are an error, never a crash; a stored array (an order, in-rows) when it is first
asked for. A section that fails is named in the error. The CRCs cost 0.08 s for
the 135 MiB of a 16.8M-edge graph's sections, against 0.11-0.2 s for the load
itself (page cache warm; 2-core dev machine). Every section's CRCs are read with
``verify=True`` (``gthinker convert --verify``), a full pass over the file. A
section written through the writer (:meth:`_Writer.section`) gets its CRCs
without more code; one stored without them (no ``crc32`` in its metadata) is
read unchecked.

Forms made later are kept (:func:`keep`): a graph loaded while its class's
``KEEP_FORMS`` is on (the ``gthinker`` app commands) remembers which file it came
from, and a prepared form a run makes for it goes into a new copy of that file (its
old sections copied in the kernel, their checksums kept; the new ones after them),
written beside it, flushed to disk and renamed over it: a reader sees the old file or
the new one, never a mix, and an interrupted or failed write leaves the old one as it
was. A file this process may not write, or one that changed since it was loaded, is
left alone (the form is made again by the next run).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import mmap
import os
import struct
import tempfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gthinker.errors import GraphFormatError
from gthinker.graphs import csr
from gthinker.graphs.formats.text import opening

__all__ = ["MAGIC", "VERSION", "Origin", "is_binary", "keep", "load", "write", "write_graph"]

MAGIC = b"\x93GTHINK\n"
VERSION = 1
_PREFIX = struct.Struct("<8sIIII")
_ALIGN = 4096
_CRC_BLOCK = 64 << 20
_DTYPES = {"<i8": np.int64, "<i4": np.int32, "|i1": np.int8}
_SCALARS = (bool, int, float, str)
#: A graph's arrays besides its rows and ids, each in a section of its name when present.
_OPTIONAL = ("labels", "edge_labels", "directions")


def is_binary(head: bytes) -> bool:
    """Whether a file starting with ``head`` is a gthinker binary graph."""
    return head.startswith(MAGIC)


# ---- writing ----------------------------------------------------------------------------


def _spans(arr: np.ndarray) -> list[memoryview]:
    """``arr``'s bytes in blocks of 64 MiB (each has its CRC-32)."""
    data = memoryview(np.ascontiguousarray(arr)).cast("B")
    return [data[i:i + _CRC_BLOCK] for i in range(0, len(data), _CRC_BLOCK)]


def _crc_all(spans: list) -> list[int]:
    """CRC-32 of each span, on all cores (zlib releases the GIL: threads)."""
    if len(spans) <= 1:
        return [zlib.crc32(s) for s in spans]
    with ThreadPoolExecutor(min(len(spans), csr.threads())) as pool:
        return list(pool.map(zlib.crc32, spans))


def _crcs(arr: np.ndarray) -> list[int]:
    """CRC-32 of each 64 MiB block of ``arr``'s bytes."""
    return _crc_all(_spans(arr))


class _Writer:
    """Collects sections and the metadata that names them."""

    def __init__(self):
        self.arrays: list[tuple[str, np.ndarray]] = []

    def section(self, name: str, arr: np.ndarray) -> str:
        arr = np.ascontiguousarray(arr)
        if arr.dtype.str not in _DTYPES:
            arr = arr.astype(np.int64)
        self.arrays.append((name, arr))
        return name

    def graph(self, prefix: str, g) -> dict:
        out = {"indptr": self.section(prefix + "indptr", g.indptr),
               "indices": self.section(prefix + "indices", g.indices),
               "ids": self.section(prefix + "ids", g.ids),
               "report": vars(g.report).copy(),
               "node_names": _encode_names(g.node_names)}
        for name in _OPTIONAL:
            if getattr(g, name, None) is not None:
                out[name] = self.section(prefix + name, getattr(g, name))
        return out

    def value(self, prefix: str, value):
        """The metadata of a prepared form, or None when it cannot be stored."""
        if isinstance(value, np.ndarray) and value.dtype.kind in "iu":
            return {"array": self.section(prefix, value)}
        if hasattr(value, "indptr") and hasattr(value, "report"):
            return {"graph": self.graph(prefix + "/", value)}
        if isinstance(value, tuple):
            parts = [self.value(f"{prefix}/{i}", v) for i, v in enumerate(value)]
            return None if any(p is None for p in parts) else {"tuple": parts}
        if isinstance(value, _SCALARS):
            return {"value": value}
        return None


def _align(x: int) -> int:
    return -(-x // _ALIGN) * _ALIGN


def _describe(w: _Writer, sections: dict) -> list[tuple[str, np.ndarray]]:
    """The metadata of ``w``'s sections (offsets 0 for now) added to ``sections``."""
    for name, arr in w.arrays:
        sections[name] = {"dtype": arr.dtype.str, "shape": list(arr.shape), "nbytes": arr.nbytes,
                          "crc32": _crcs(arr), "offset": 0}
    return w.arrays


def _lay_out(meta: dict, place) -> bytes:
    """The metadata as JSON, after ``place(start)`` has set the section offsets for the
    first aligned byte after it (offsets depend on the metadata's length, which
    depends on them)."""
    text = b""
    for _ in range(8):  # two rounds, as a rule
        place(_align(_PREFIX.size + len(text)))
        new = json.dumps(meta, separators=(",", ":")).encode()
        if new == text:
            return text
        text = new
    raise RuntimeError("the binary file's metadata did not settle on its sections' offsets")


def _write_sections(fh, pos: int, body, sections: dict) -> int:
    for name, arr in body:
        fh.write(b"\0" * (sections[name]["offset"] - pos))
        if arr.nbytes:
            fh.write(memoryview(arr).cast("B"))
        pos = sections[name]["offset"] + arr.nbytes
    return pos


def write(graph, fh, forms: dict) -> None:
    """Writes ``graph`` and its prepared ``forms`` (key -> value; the values that are
    not graphs, integer arrays, numbers or tuples of them are left out)."""
    w = _Writer()
    meta = {"n": graph.num_vertices, "m": graph.num_edges, **w.graph("", graph), "derived": {}}
    for key, value in forms.items():
        enc = w.value(f"derived/{key}", value)
        if enc is not None:
            meta["derived"][key] = enc
    revisions = getattr(type(graph), "FORM_REVISIONS", {})
    meta["revisions"] = {key: revisions[key] for key in meta["derived"] if key in revisions}
    sections = meta["sections"] = {}
    body = _describe(w, sections)

    def place(start):
        for name, arr in body:
            sections[name]["offset"] = start
            start += _align(arr.nbytes)

    text = _lay_out(meta, place)
    fh.write(_PREFIX.pack(MAGIC, VERSION, len(text), zlib.crc32(text), 0))
    fh.write(text)
    _write_sections(fh, _PREFIX.size + len(text), body, sections)


def write_graph(graph, fh) -> None:
    """:func:`write` with every prepared form the graph holds (the registry's writer)."""
    write(graph, fh, graph.prepared())


def _encode_names(names):
    if names is None:
        return None
    return [_encode_name(x) for x in names]


def _encode_name(x):
    if x is None or isinstance(x, _SCALARS):
        return x
    if isinstance(x, tuple):
        return {"tuple": [_encode_name(y) for y in x]}
    if isinstance(x, np.generic):
        return _encode_name(x.item())
    raise ValueError(f"node name {x!r} ({type(x).__name__}) cannot be stored in a gthinker "
                     "binary file (names may be strings, numbers, None or tuples of them)")


def _decode_name(x):
    if isinstance(x, dict):
        return tuple(_decode_name(y) for y in x["tuple"])
    return x


# ---- reading ----------------------------------------------------------------------------


class _File:
    """An open binary graph: its metadata and memory-mapped sections."""

    def __init__(self, path: Path):
        self.path = path
        with opening(path), open(path, "rb") as fh:
            self.stat = os.fstat(fh.fileno())
            size = self.stat.st_size
            prefix = fh.read(_PREFIX.size)
            self.meta = self._metadata(fh, prefix, size)
            self.map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        self.size = size
        self._check_sections()

    def fail(self, why: str) -> GraphFormatError:
        return GraphFormatError(f"{self.path}: {why}")

    def _metadata(self, fh, prefix: bytes, size: int) -> dict:
        if len(prefix) < _PREFIX.size or not is_binary(prefix):
            raise self.fail("not a gthinker binary graph file (no magic number)")
        _, version, length, crc, _ = _PREFIX.unpack(prefix)
        if version != VERSION:
            raise self.fail(f"binary graph format version {version}; this gthinker reads version "
                            f"{VERSION} (convert the graph again with this gthinker)")
        if length > size - _PREFIX.size:
            raise self.fail(f"truncated: the metadata needs {length:,} bytes, the file has "
                            f"{size - _PREFIX.size:,} after its prefix")
        text = fh.read(length)
        if zlib.crc32(text) != crc:
            raise self.fail("corrupt: the metadata does not match its checksum")
        try:
            meta = json.loads(text)
            int(meta["n"]), int(meta["m"]), dict(meta["sections"])
        except (ValueError, KeyError, TypeError) as exc:
            raise self.fail(f"corrupt metadata: {exc}") from None
        return meta

    def _check_sections(self) -> None:
        for name, s in self.meta["sections"].items():
            try:
                dtype = np.dtype(_DTYPES[s["dtype"]])
                count = int(np.prod(s["shape"], dtype=np.int64))
                ok = s["nbytes"] == count * dtype.itemsize and s["offset"] >= 0
            except (KeyError, TypeError, ValueError):
                ok = False
            if not ok:
                raise self.fail(f"corrupt metadata: section {name!r} is malformed")
            if s["offset"] + s["nbytes"] > self.size:
                end = s["offset"] + s["nbytes"]
                raise self.fail(f"truncated: section {name!r} ends at byte {end:,} but the "
                                f"file has {self.size:,} bytes")

    def array(self, name: str) -> np.ndarray:
        s = self.meta["sections"].get(name)
        if s is None:
            raise self.fail(f"corrupt metadata: no section {name!r}")
        dtype = _DTYPES[s["dtype"]]
        count = s["nbytes"] // np.dtype(dtype).itemsize
        if count == 0:
            return np.empty(s["shape"], dtype)
        return np.frombuffer(self.map, dtype, count, s["offset"]).reshape(s["shape"])

    def verify(self, names=None) -> None:
        """Sections (default: every one) against their per-block CRCs, all blocks of all
        of them at once on all cores. A section stored without CRCs (a file of an older
        writer) is not checked."""
        names = [name for name in (self.meta["sections"] if names is None else names)
                 if self.meta["sections"][name].get("crc32") is not None]
        spans = [_spans(self.array(name)) for name in names]
        got = iter(_crc_all([s for each in spans for s in each]))
        for name, each in zip(names, spans, strict=True):
            if [next(got) for _ in each] != self.meta["sections"][name]["crc32"]:
                raise self.fail(f"corrupt: section {name!r} does not match its checksum "
                                "(the file was damaged after it was written: convert the "
                                "graph again from its source)")


def load(path, graph_cls, verify: bool = False):
    """The graph in a binary file, its prepared forms offered to
    :meth:`Graph.derived <gthinker.Graph.derived>` (each restored, and checked, when
    first asked for), but those of another revision than ``graph_cls.FORM_REVISIONS``
    says (computed again when asked for)."""
    f = _File(Path(os.fspath(path)))
    if verify:
        f.verify()
    meta = f.meta
    g = _graph(f, meta, graph_cls)
    if g.num_vertices != meta["n"] or g.num_edges != meta["m"]:
        raise f.fail("corrupt metadata: the graph's size does not match its sections")
    current, stored = getattr(graph_cls, "FORM_REVISIONS", {}), meta.get("revisions", {})
    for key, enc in meta.get("derived", {}).items():
        if key not in current or stored.get(key) == current[key]:
            g.offer(key, lambda enc=enc: _value(f, enc, graph_cls))
    if getattr(graph_cls, "KEEP_FORMS", False):
        g.origin = Origin(f.path, _identity(f.stat))
    return g


def _graph(f: _File, enc: dict, graph_cls):
    # every section of the graph (those a newer writer adds too) against its checksums
    # before it is used: a flipped bit that leaves the rows well-formed is caught here
    f.verify([name for name in enc.values() if isinstance(name, str)
              and name in f.meta["sections"]])
    indptr, indices, ids = f.array(enc["indptr"]), f.array(enc["indices"]), f.array(enc["ids"])
    labels, edge_labels, directions = (f.array(enc[k]) if k in enc else None
                                       for k in _OPTIONAL)
    n = indptr.size - 1
    if n < 0 or indptr.ndim != 1 or indices.ndim != 1 or ids.shape != (n,) \
            or (labels is not None and labels.shape != (n,)) \
            or any(a is not None and a.shape != indices.shape for a in (edge_labels, directions)):
        raise f.fail("corrupt metadata: array shapes do not fit together")
    why = csr.check_rows(indptr, indices, n)
    if why:
        raise f.fail(f"corrupt graph: {why}")
    names = enc.get("node_names")
    try:
        names = None if names is None else [_decode_name(x) for x in names]
        if names is not None and len(names) != n:
            raise ValueError("node names do not fit the graph")
        return graph_cls(indptr, indices, ids=ids, labels=labels, report=enc["report"],
                         node_names=names, edge_labels=edge_labels, directions=directions)
    except (TypeError, KeyError, ValueError) as exc:
        raise f.fail(f"corrupt metadata: {exc}") from None


def _value(f: _File, enc: dict, graph_cls):
    if "array" in enc:  # nothing to check its values against: its checksum, when restored
        f.verify([enc["array"]])
        return f.array(enc["array"])
    if "graph" in enc:
        return _graph(f, enc["graph"], graph_cls)
    if "tuple" in enc:
        return tuple(_value(f, e, graph_cls) for e in enc["tuple"])
    if "value" in enc:
        return enc["value"]
    raise f.fail("corrupt metadata: a prepared form of unknown kind")


# ---- keeping forms made later ------------------------------------------------------------


@dataclass
class Origin:
    """The binary file a graph was loaded from, as it was then (:func:`keep` adds to it
    only while it is still that file)."""

    path: Path
    identity: tuple


def _identity(st: os.stat_result) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _room(folder: Path, nbytes: int) -> bool:
    """Whether ``folder``'s file system has ``nbytes`` free, and a tenth more."""
    try:
        fs = os.statvfs(folder)
    except OSError:
        return False
    return fs.f_bavail * fs.f_frsize > nbytes * 1.1


def keep(origin: Origin, forms: dict, revisions: dict) -> Origin | None:
    """Adds the prepared ``forms`` (key -> value) to the file ``origin`` names, if it is
    still the file it was then and this process may write it: a new file beside it
    (the old sections copied as they are, offsets moved, checksums kept; the new
    sections after them) renamed over it once on disk. Returns the new file's
    :class:`Origin`, or None when the file was left alone (read-only, changed, another
    process keeping forms in it at this moment, no room, or an error: the form is then
    made again by a later run)."""
    path = origin.path
    try:  # a file made read-only is left so, even for a user who could replace it
        if not (os.stat(path).st_mode & 0o222 and os.access(path, os.W_OK)):
            return None
    except OSError:
        return None
    try:
        old = _File(path)
    except GraphFormatError:
        return None
    with open(path, "rb") as src:
        try:  # one keeper at a time; another one's new file is not ours to replace
            fcntl.flock(src.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None
        if _identity(os.fstat(src.fileno())) != origin.identity:
            return None
        return _rewrite(old, src, forms, revisions)


def _rewrite(old: _File, src, forms: dict, revisions: dict) -> Origin | None:
    meta = json.loads(json.dumps(old.meta))
    sections, derived = meta["sections"], meta.setdefault("derived", {})
    serial = 1 + sum(1 for name in sections if name.startswith("kept"))
    w = _Writer()
    for key, value in forms.items():
        enc = w.value(f"kept{serial}/{key}", value)
        if enc is not None:
            derived[key] = enc
            if key in revisions:
                meta.setdefault("revisions", {})[key] = revisions[key]
    body = _describe(w, sections)
    if not body:
        return None
    first = min(s["offset"] for s in old.meta["sections"].values())
    end = max(s["offset"] + s["nbytes"] for s in old.meta["sections"].values())
    shift = [0]

    def place(start):
        shift[0] = max(0, start - first)
        for name, s in old.meta["sections"].items():
            sections[name]["offset"] = s["offset"] + shift[0]
        at = _align(end + shift[0])
        for name, arr in body:
            sections[name]["offset"] = at
            at += _align(arr.nbytes)

    text = _lay_out(meta, place)
    size = max(s["offset"] + s["nbytes"] for s in sections.values())
    folder = old.path.parent
    if not _room(folder, size):
        return None
    fd, tmp = tempfile.mkstemp(prefix=f".{old.path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(_PREFIX.pack(MAGIC, VERSION, len(text), zlib.crc32(text), 0))
            fh.write(text)
            fh.write(b"\0" * (first + shift[0] - _PREFIX.size - len(text)))
            fh.flush()
            _copy(src.fileno(), fh.fileno(), first, end - first)
            fh.seek(end + shift[0])
            _write_sections(fh, end + shift[0], body, sections)
            fh.flush()
            os.fchmod(fh.fileno(), old.stat.st_mode & 0o7777)
            os.fsync(fh.fileno())
        if _identity(os.stat(old.path)) != _identity(old.stat):
            raise OSError("changed while its forms were kept")
        os.replace(tmp, old.path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            return None
        raise
    return Origin(old.path, _identity(os.stat(old.path)))


def _copy(src: int, dst: int, offset: int, count: int) -> None:
    """``count`` bytes of ``src`` from ``offset`` to ``dst`` at its position, in the
    kernel where it can (copy_file_range: no trip through this process, shared
    blocks on file systems that share them)."""
    at = offset
    while count > 0:
        try:
            got = os.copy_file_range(src, dst, min(count, 1 << 30), at)
        except (OSError, AttributeError):
            got = 0
        if got <= 0:  # not supported here: read and write
            os.lseek(src, at, os.SEEK_SET)
            while count > 0:
                chunk = memoryview(os.read(src, min(count, 64 << 20)))
                if not chunk:
                    raise OSError("the file ended before its sections did")
                count -= len(chunk)
                while chunk:
                    chunk = chunk[os.write(dst, chunk):]
            return
        at += got
        count -= got

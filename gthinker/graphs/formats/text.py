"""Streaming text input for the text readers: a file (plain, or compressed with gzip,
bzip2, xz or zstandard, found by its first bytes; a pipe, a device, or standard input
named ``-``) is read in blocks of whole lines that the C++ scanner
(``csrc/text_scanner.cpp``) splits among all cores.

Bounded and interruptible: no line may be longer than :data:`MAX_LINE_BYTES` (so
a binary or endless input such as ``/dev/zero`` stops at once with a message), the
records read must fit in the memory available, and a signal is handled between
blocks and every few milliseconds inside one (Ctrl-C raises KeyboardInterrupt,
nothing native runs after it).
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gthinker import _core, memory
from gthinker.errors import GraphFormatError
from gthinker.graphs import csr

__all__ = ["BLOCK_BYTES", "COMPRESSIONS", "MAX_LINE_BYTES", "STDIN", "Records", "blocks", "scan",
           "line_text", "shown", "open_input", "opening", "is_stdin", "peek", "compressed_writer",
           "without_compression"]

#: The longest line a text graph file may have (an edge line is tens of bytes).
MAX_LINE_BYTES = 1 << 20
#: Bytes read and scanned at a time.
BLOCK_BYTES = 32 << 20

# Error kinds of the scanner (csrc/text_scanner.hpp).
NONINT, NEGATIVE, OVERFLOW, FEW_FIELDS, BAD_TAG, EXTRA, ISOLATED = range(1, 8)
#: The path that names standard input.
STDIN = "-"
#: The compressions read (and written): name -> (the first bytes, the file-name suffix).
COMPRESSIONS = {
    "gzip": (b"\x1f\x8b", ".gz"),
    "bzip2": (b"BZh", ".bz2"),
    "xz": (b"\xfd7zXZ\x00", ".xz"),
    "zstandard": (b"\x28\xb5\x2f\xfd", ".zst"),
}
#: What :data:`COMPRESSIONS` says in a message.
_READ_HERE = "plain text, or gzip, bzip2, xz or zstandard (.zst) compressed"


@dataclass
class Records:
    """What :func:`scan` read: ``vals`` (records x fields, int64, writable; int32
    with ``narrow`` when every value fits), and with ``keep_meta`` each record's
    ``tags`` and 1-based ``linenos``;
    ``isolated``: the ids of leading ``# isolated vertices:`` lines; ``lines``:
    physical lines; ``top``: the largest value (0: none)."""

    vals: np.ndarray
    tags: np.ndarray
    linenos: np.ndarray
    isolated: np.ndarray
    lines: int
    top: int = 0


@contextlib.contextmanager
def opening(path: Path):
    """Turns the errors of opening ``path`` into GraphFormatErrors that name it."""
    try:
        yield
    except FileNotFoundError:
        raise GraphFormatError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise GraphFormatError(f"{path}: is a directory, not a graph file") from None
    except OSError as exc:
        raise GraphFormatError(f"{path}: cannot read: {exc.strerror or exc}") from None


def is_stdin(path) -> bool:
    """Whether ``path`` names standard input (:data:`STDIN`)."""
    return os.fspath(path) == STDIN


def without_compression(name: str) -> str:
    """A file name without its compression suffix (``g.txt.bz2`` -> ``g.txt``)."""
    for _, suffix in COMPRESSIONS.values():
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _compression(head: bytes) -> str | None:
    for name, (magic, _) in COMPRESSIONS.items():
        if head.startswith(magic):
            return name
    return None


def _zstandard():
    try:
        import zstandard
    except ImportError:
        raise GraphFormatError(
            "a zstandard-compressed (.zst) file needs the zstandard package: pip install "
            "zstandard (or gthinker[zstd])") from None
    return zstandard


def open_input(path: Path):
    """``path`` opened for binary reading, decompressed if it starts like a compressed
    file (:data:`COMPRESSIONS`); ``-``: standard input (read once: every later call
    gives the same stream, which closing leaves open)."""
    if is_stdin(path):
        return _Stdin.get()
    with opening(path):
        fh = open(path, "rb")  # noqa: SIM115 - returned to the caller
    try:
        out = _decompressed(fh)
    except GraphFormatError as exc:  # every reading error names the file first
        raise GraphFormatError(f"{path}: {exc}") from None
    name = os.fspath(path)
    bare = without_compression(name)
    if out is fh and bare != name and fh.peek(1):  # (an empty file is an empty graph)
        fh.close()
        raise GraphFormatError(f"{path}: named as a compressed file ({name[len(bare):]}), "
                               "but its content is not compressed")
    return out


def _decompressed(fh):
    """The open file ``fh`` decompressed (closed with what is returned), or ``fh``."""
    try:
        head = fh.peek(6)[:6] if hasattr(fh, "peek") else b""
    except OSError:
        head = b""
    kind = _compression(head)
    try:
        if kind == "gzip":
            return _Decompressing(gzip.GzipFile(fileobj=fh, mode="rb"), fh)
        if kind == "bzip2":
            return _Decompressing(bz2.BZ2File(fh, "rb"), fh)
        if kind == "xz":
            return _Decompressing(lzma.LZMAFile(fh, "rb"), fh)
        if kind == "zstandard":
            raw = _zstandard().ZstdDecompressor().stream_reader(fh, closefd=False)
            return _Decompressing(io.BufferedReader(raw, 1 << 20), fh)
    except BaseException:
        fh.close()
        raise
    return fh


@contextlib.contextmanager
def _corrupt():
    """A decompressor's own error (zstandard's is no OSError) as an OSError."""
    try:
        yield
    except (OSError, EOFError):
        raise
    except Exception as exc:
        raise OSError(f"corrupt compressed data: {exc}") from None


class _Decompressing(io.BufferedIOBase):
    """A decompressing stream that closes the file it reads with itself."""

    def __init__(self, stream, source):
        self.stream, self.source = stream, source

    def readable(self):
        return True

    def read(self, size=-1):
        with _corrupt():
            return self.stream.read(size)

    def readinto(self, view):
        with _corrupt():
            return self.stream.readinto(view)

    def peek(self, size=0):
        with _corrupt():
            return self.stream.peek(size)

    def __iter__(self):
        return iter(self.stream)

    def close(self):
        try:
            self.stream.close()
        finally:
            self.source.close()
            super().close()


class _Stdin(io.BufferedIOBase):
    """Standard input, decompressed as a file is: one stream for the whole process,
    which a ``with`` block does not close (the format is found by peeking at it, then
    it is read). What :meth:`peek` read is kept and read again first."""

    _open = None

    @classmethod
    def get(cls):
        if cls._open is None:
            raw = open(0, "rb", closefd=False)  # noqa: SIM115 - kept for the process
            cls._open = cls(_decompressed(raw))
        return cls._open

    def __init__(self, stream):
        self.stream = stream
        self.kept = b""

    def readable(self):
        return True

    def peek(self, size=1):
        """Up to ``size`` bytes from the start (fewer only at the end), kept to be read."""
        while len(self.kept) < size:
            more = self.stream.read(size - len(self.kept))
            if not more:
                break
            self.kept += more
        return self.kept

    def read(self, size=-1):
        kept, self.kept = self.kept, b""
        if size is None or size < 0:
            return kept + self.stream.read()
        if len(kept) >= size:
            self.kept = kept[size:]
            return kept[:size]
        return kept + self.stream.read(size - len(kept))

    def readinto(self, view):
        if not self.kept:
            return self.stream.readinto(view)
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)

    def __iter__(self):
        head, self.kept = self.kept, b""
        if head and not head.endswith(b"\n"):
            head += self.stream.readline()  # the rest of the last line peeked at
        yield from io.BytesIO(head)
        yield from self.stream

    def close(self):  # the next reader reads on where this one stopped
        pass


def peek(path, size: int) -> bytes:
    """The first ``size`` bytes (or fewer) of a file's content, decompressed, without
    using them up: a regular file's, or standard input's (``-``); b"" for another pipe
    or a device (not read twice), or if unreadable here (the reader then says why)."""
    try:
        if is_stdin(path):
            return _Stdin.get().peek(size)[:size]
        if not os.path.isfile(path):
            return b""
        with open_input(path) as fh:
            return fh.read(size)
    except (GraphFormatError, OSError, EOFError, lzma.LZMAError):
        return b""


def compressed_writer(fh, name: str):
    """A binary stream that compresses into ``fh`` as the suffix of ``name`` says
    (:data:`COMPRESSIONS`), or None for a name without one; closing it leaves ``fh``
    open."""
    lower = name.lower()
    if lower.endswith(".gz"):
        return gzip.GzipFile(fileobj=fh, mode="wb", compresslevel=6, mtime=0)
    if lower.endswith(".bz2"):
        return bz2.BZ2File(fh, "wb")
    if lower.endswith(".xz"):
        return lzma.LZMAFile(fh, "wb")
    if lower.endswith(".zst"):
        return _zstandard().ZstdCompressor().stream_writer(fh, closefd=False)
    return None


def _reader(fh, threads: int):
    """``read(view) -> bytes read`` (0 at the end; fewer than the view holds only at the
    end) of an open input: a plain regular file is read with ``pread`` on all threads
    (one core copying out of the page cache reads about 3 GB/s: a second of a 4 GB file
    on one thread), anything else (gzip, a pipe) with ``readinto`` until the view is
    full, so that its blocks are whole blocks too (split among the threads)."""
    if type(fh) is io.BufferedReader:
        try:
            fd = fh.fileno()
            regular = stat.S_ISREG(os.fstat(fd).st_mode)
        except OSError:
            regular = False
        if regular:
            offset = [fh.tell()]
            with contextlib.suppress(OSError, AttributeError):
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_SEQUENTIAL)

            def read(view):
                got = _core.read_at(fd, view, offset[0], threads)
                offset[0] += got
                return got

            return read

    def fill(view):  # gzip gives a block of ~32 KiB a call: fill the view
        got = 0
        while got < len(view):
            n = fh.readinto(view[got:])
            if not n:
                break
            got += n
        return got

    return fill


#: Text bytes per byte of a compressed file, at most (for the block size of a small one).
_PACKED_RATIO = 8


def _block_bytes(fh) -> int:
    """:data:`BLOCK_BYTES`, or less for a smaller file: the buffer is zeroed when it is
    made (33 MiB cost each small graph's read 10-50 ms)."""
    packed = isinstance(fh, _Decompressing)
    try:
        st = os.fstat((fh.source if packed else fh).fileno())
    except (OSError, AttributeError, ValueError):
        return BLOCK_BYTES
    if not stat.S_ISREG(st.st_mode):
        return BLOCK_BYTES
    return min(BLOCK_BYTES, st.st_size * (_PACKED_RATIO if packed else 1) + 1)


def blocks(path: Path, fh, first_line=lambda: 0, threads: int = 1):
    """The blocks of whole lines of ``fh`` (opened by :func:`open_input`) that
    :func:`scan` scans: memoryviews into one reused buffer of :data:`BLOCK_BYTES`, the
    last may end without a newline. ``first_line()`` numbers the next line, for
    messages; ``threads`` read a plain file."""
    buf = bytearray(_block_bytes(fh) + MAX_LINE_BYTES)
    view = memoryview(buf)
    read = _reader(fh, threads)
    carry = 0
    while True:
        try:
            got = read(view[carry:])
        except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:  # BadGzipFile: OSError
            raise GraphFormatError(f"{path}: cannot read: {exc}") from None
        filled = carry + (got or 0)
        if not got:
            if filled:
                yield view[:filled]
            return
        last = buf.rfind(b"\n", carry, filled)
        if last < 0:
            last = buf.rfind(b"\n", 0, carry)
        if last < 0:
            if filled > MAX_LINE_BYTES:
                raise GraphFormatError(
                    f"{path}:{first_line()}: a line longer than {MAX_LINE_BYTES:,} bytes "
                    f"({_not_text(view[:64]) or 'not a text graph file?'})")
            carry = filled
            continue
        yield view[: last + 1]
        carry = filled - last - 1
        buf[:carry] = buf[last + 1: filled]


def scan(path: Path, nfields: int, required: dict, tagged: bool = False,
         keep_meta: bool = False, isolated: bool = False, describe=None,
         header=None, narrow: bool = False, footer: bytes | None = None) -> Records:
    """The integer records of a text file. ``required[tag]``: the fields a line
    with that tag (0: untagged) needs; further tokens must be numbers (weights,
    timestamps), anything else is an error naming the line. ``describe(kind,
    line_text, token)`` words an error (:func:`message` by default). ``header``:
    called with each line (bytes) before the records start, until it returns
    True (that line is the last of the header). ``narrow``: keep the values as
    int32 while every one fits (half the memory: a graph's pairs, read to be
    renumbered and built into rows). ``footer``: a line that starts with these bytes
    ends the records (the rest of the input is not read)."""
    req = np.full(256, -1, np.int8)
    for tag, k in required.items():
        req[tag] = k
    scanner = _core.TextScanner(nfields, req.tobytes(), tagged, keep_meta, isolated, narrow)
    cores = csr.threads()
    at = [0]  # header lines
    with open_input(path) as fh:
        for block in blocks(path, fh, lambda: at[0] + scanner.lines + 1, cores):
            if header is not None:
                start, done, n = _header_lines(block, header)
                at[0] += n
                if not done:
                    continue
                header = None
                block = block[start:]
            cut = -1 if footer is None else _footer_at(block, footer)
            if cut >= 0:
                block = block[:cut]
            before = scanner.lines
            if not scanner.scan(block, cores):
                kind, line, field = scanner.error
                text = _nth_line(block, line - before)
                msg = _not_text(_nth_line(block, line - before, raw=True)) or \
                    (describe or message)(kind, text, _token(text, field, tagged))
                raise GraphFormatError(f"{path}:{line + at[0]}: {msg}")
            memory.check_fits(scanner.records * nfields * (4 if scanner.narrowed else 8) * 2,
                              f"{path}: the {scanner.records:,} records read so far")
            if cut >= 0:
                break
    if header is not None:
        header(None)  # the input ended before its header did
    vals, tags, linenos, iso = scanner.take()
    if at[0] and linenos.size:
        linenos += at[0]
    return Records(vals, tags, linenos, iso, scanner.lines + at[0], scanner.top)


def _footer_at(block, footer: bytes) -> int:
    """Where in ``block`` the first line starting with ``footer`` begins, or -1."""
    data = bytes(block)
    if data.startswith(footer):
        return 0
    at = data.find(b"\n" + footer)
    return at + 1 if at >= 0 else -1


def _header_lines(block, header):
    """(bytes of block the header used, whether it ended there, its lines)."""
    data = bytes(block)
    pos = 0
    n = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        n += 1
        if header(data[pos:end]):
            return end + 1, True, n
        pos = end + 1
    return pos, False, n


def _not_text(data) -> str:
    """What to say of bytes that are not text (binary data: an unknown compression, a
    binary file), without echoing them; "" for text."""
    data = bytes(data)
    try:
        data.decode("utf-8")
        binary = any(b < 32 and b not in b"\t\r\n\f" for b in data)
    except UnicodeDecodeError as exc:
        binary = exc.start < len(data) - 4  # not a character cut at the end
    if not binary:
        return ""
    return (f"binary data, not text: a text graph file is {_READ_HERE} (docs/formats.md)")


def _nth_line(block, k: int, limit: int = 60, raw: bool = False) -> str:
    """The text of the k-th (1-based) line of a block, shortened for messages (its
    bytes with ``raw``)."""
    data = np.frombuffer(block, np.uint8)
    ends = np.flatnonzero(data == 10)
    start = int(ends[k - 2]) + 1 if k >= 2 else 0
    end = int(ends[k - 1]) if k - 1 < ends.size else data.size
    return bytes(block[start:end]) if raw else shown(bytes(block[start:end]), limit)


def _token(text: str, field: int, tagged: bool) -> str:
    parts = text.split()
    idx = field + (1 if tagged else 0)
    return parts[idx] if idx < len(parts) else text


def message(kind: int, text: str, token: str, expect: str = "expected integer fields") -> str:
    """The words for a bad line of kind ``kind`` (the scanner's error kinds)."""
    if kind == NEGATIVE:
        return f"negative vertex id {token!r} (ids must be non-negative)"
    if kind == OVERFLOW:
        return f"integer {token!r} does not fit in int64"
    if kind == BAD_TAG:
        return f"unknown line type, got {text!r} (expected lines starting with t, v or e)"
    if kind == FEW_FIELDS:
        return f"{expect}, got {text!r}"
    if kind == EXTRA:
        return (f"unexpected {token!r} after the fields of {text!r} (only numbers, such as "
                "weights, may follow them)")
    if kind == ISOLATED:
        return (f"expected non-negative vertex ids after '# isolated vertices:', got {token!r} "
                "(not a non-negative integer, or it does not fit in int64)")
    return f"{expect}, got {token!r}"


def shown(line: bytes, limit: int = 60) -> str:
    """A line of a file as a message shows it: decoded, stripped, shortened."""
    text = line.decode("utf-8", "replace").strip()
    return text[: limit - 3] + "..." if len(text) > limit else text


def line_text(path: Path, lineno: int, limit: int = 60) -> str:
    """The text of 1-based physical line ``lineno`` of a file (read again, for messages)."""
    with open_input(path) as fh:
        for k, line in enumerate(fh, 1):
            if k == lineno:
                return shown(line, limit)
    return ""

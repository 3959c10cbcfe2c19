"""Result files (``output=`` / ``--output``): checked before any work, written
whole or not at all.

:func:`check_output` raises a ValueError that says what is wrong with an output
path before anything is loaded or run: a folder, a missing folder, one that
cannot be written, or a path that is one of the inputs (the same file, however
it is spelled: compared by device and inode). The command line calls it before
it loads a graph; the apps call it too.

:class:`Output` is where a job writes. For a regular file (new or existing) the
results go to a temporary file in the same folder (on Linux an unnamed one,
``O_TMPFILE``, so even a killed process leaves nothing behind; elsewhere a
hidden ``.NAME.*.partial`` file) that :meth:`Output.commit` renames over the
path at the end, so the path holds the previous file or the whole new one,
never part of it: a run that fails or is interrupted leaves the old file as it
was and no temporary file, and two runs writing the same path never mix their
lines (the last to finish wins). Anything else (a FIFO, ``/dev/stdout``, a
terminal, a pipe's ``/proc/self/fd/N``) is written directly, as it streams.

>>> import os, tempfile
>>> from pathlib import Path
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "out.txt")
>>> with Output(path) as out:
...     _ = Path(out.writer_path).write_text("1 2 3\\n")
...     os.path.exists(path)
...     out.commit()
False
>>> Path(path).read_text(), os.listdir(folder)
('1 2 3\\n', ['out.txt'])
>>> check_output(folder)
Traceback (most recent call last):
...
ValueError: output ... is a folder; give a file name
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import threading

__all__ = ["Output", "check_output"]

#: Paths written directly whatever they name: a descriptor or device (``/dev/stdout``
#: may name a regular file, which must then be written in place, not replaced).
_DIRECT_PREFIXES = ("/dev/", "/proc/")


def _source(item):
    """The file an input names: a path, or the ``file`` a graph was read from."""
    return item if isinstance(item, (str, bytes, os.PathLike)) else getattr(item, "file", None)


def _same_file(a, b) -> bool:
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, TypeError, ValueError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _direct(path: str) -> bool:
    """Whether ``path`` is written in place (not a regular file, or a device path)."""
    if os.path.abspath(path).startswith(_DIRECT_PREFIXES):
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return False


def check_output(path, inputs=()) -> None:
    """Raises ValueError, before any work, when results cannot go to ``path``:
    it is empty, a folder, a read-only file, in a folder that does not exist or
    cannot be written, or the same file as one of ``inputs`` (paths, or graphs
    that :meth:`gthinker.Graph.read` read). ``None`` (no output) passes."""
    if path is None:
        return
    path = os.fspath(path)
    if not path:
        raise ValueError("output must be a file name, got ''")
    for item in inputs:
        source = _source(item)
        if isinstance(source, (str, os.PathLike)) and _same_file(path, source):
            raise ValueError(f"output {path!r} is the input file {os.fspath(source)!r}; "
                             "writing results there would destroy it: choose another file")
    if os.path.isdir(path):
        raise ValueError(f"output {path!r} is a folder; give a file name")
    if _direct(path):
        if os.path.exists(path) and not os.access(path, os.W_OK):
            raise ValueError(f"output {path!r} cannot be written (permission denied)")
        return
    # A read-only file would be replaced by the rename: refuse it, as writing would.
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise ValueError(f"output {path!r} is read-only; give another file or make it writable")
    folder = os.path.dirname(os.path.realpath(path)) or "."
    if not os.path.isdir(folder):
        raise ValueError(f"output {path!r}: the folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        why = "read-only file system" if _read_only_fs(folder) else "permission denied"
        raise ValueError(f"output {path!r} cannot be written: its folder {folder!r} is not "
                         f"writable ({why})")


def _read_only_fs(folder: str) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


_umask_lock = threading.Lock()


def _new_file_mode() -> int:
    """The mode a new file gets here (0666 less the umask)."""
    try:
        with open("/proc/self/status") as f:  # Linux: read without changing it
            mask = next(int(ln.split()[1], 8) for ln in f if ln.startswith("Umask:"))
    except (OSError, StopIteration, ValueError, IndexError):
        with _umask_lock:
            mask = os.umask(0o022)
            os.umask(mask)
    return 0o666 & ~mask


class Output:
    """Where a job writes its results for ``path`` (see the module docs).

    ``writer_path`` is what the writer opens. :meth:`commit` puts the results at
    ``path``; leaving the ``with`` block (or :meth:`discard`) without it throws
    them away. ``inputs`` are checked as :func:`check_output` does. ``names``: for a
    graph whose vertices have names (:attr:`gthinker.Graph.node_names`), each original
    id's name (a dict): the writer's lines of ids go to an unnamed temporary file, and
    :meth:`commit` writes them with each id named (so a direct path gets them at the end, not as
    they come)."""

    def __init__(self, path, inputs=(), names=None):
        check_output(path, inputs)
        self.path = os.fspath(path)
        self._fd = -1
        self._temp = None  # a named temporary file (no O_TMPFILE), else None
        self.done = False
        self.names = None if names is None else {k: str(x).encode() for k, x in names.items()}
        self._ids = None
        if self.names is not None:  # the writer's ids, named at the end
            self._ids = tempfile.TemporaryFile()  # noqa: SIM115 - closed by discard
            self.writer_path = f"/proc/self/fd/{self._ids.fileno()}"
        if _direct(self.path):
            if self._ids is None:
                self.writer_path = self.path
            return
        self.target = os.path.realpath(self.path)  # a symlink stays one: its file is replaced
        folder = os.path.dirname(self.target)
        try:
            st = os.stat(self.target)
            mode = stat.S_IMODE(st.st_mode)
        except FileNotFoundError:
            mode = _new_file_mode()
        self._open_temp(folder, mode)
        if self._ids is not None:
            self.writer_path = f"/proc/self/fd/{self._ids.fileno()}"

    def _open_temp(self, folder: str, mode: int) -> None:
        flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
        if hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd"):
            try:
                self._fd = os.open(folder, flags | os.O_TMPFILE, 0o600)
                os.fchmod(self._fd, mode)
                self.writer_path = f"/proc/self/fd/{self._fd}"
                return
            except OSError as exc:  # a file system without unnamed files
                if self._fd >= 0:
                    os.close(self._fd)
                    self._fd = -1
                if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
                    raise
        name = os.path.basename(self.target)
        self._fd, self._temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.",
                                                suffix=".partial")
        os.fchmod(self._fd, mode)
        self.writer_path = self._temp

    def commit(self) -> None:
        """Puts the results at ``path`` (renamed into place, after an fsync)."""
        if self.done:
            return
        self.done = True
        if self._ids is not None:
            if self._fd < 0:  # a direct path: named as it is written
                with open(self.path, "wb") as out:
                    self._write_named(out)
                self.discard()
                return
            with open(self._fd, "wb", closefd=False) as out:
                self._write_named(out)
        if self._fd < 0:  # written directly
            return
        try:
            os.fsync(self._fd)
            if self._temp is None:  # give the unnamed file a name, then rename it
                self._temp = self._link_unnamed()
            os.replace(self._temp, self.target)
            self._temp = None
        finally:
            self.discard()

    def _link_unnamed(self) -> str:
        """Links the unnamed file into its folder under a free temporary name."""
        folder, name = os.path.split(self.target)
        dir_fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            for _ in range(100):
                temp = f".{name}.{os.urandom(6).hex()}.partial"
                try:  # a dir fd makes this linkat(AT_SYMLINK_FOLLOW), not link()
                    os.link(f"/proc/self/fd/{self._fd}", temp, dst_dir_fd=dir_fd,
                            follow_symlinks=True)
                    return os.path.join(folder, temp)
                except FileExistsError:
                    continue
        finally:
            os.close(dir_fd)
        raise FileExistsError(errno.EEXIST, "no free temporary name", folder)

    def _write_named(self, out) -> None:
        """The writer's lines of ids with each id named."""
        names = self.names
        with open(self._ids.fileno(), "rb", closefd=False) as ids:
            ids.seek(0)
            for line in ids:
                out.write(b" ".join([names[int(x)] for x in line.split()]) + b"\n")

    def discard(self) -> None:
        """Throws away what was written (unless committed); idempotent."""
        self.done = True
        if self._ids is not None:
            self._ids.close()
            self._ids = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._temp is not None:
            try:
                os.unlink(self._temp)
            except FileNotFoundError:
                pass
            self._temp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.discard()
        return False

"""The compile cache's files (:mod:`gthinker.compiler`): where they live, what one
holds, and how it is written, checked and thrown away.

**Folders.** Entries live in the cache folder, ``$GTHINKER_CACHE_DIR`` (default:
the platform's user cache folder, e.g. ``~/.cache/gthinker``; ``off`` turns the
cache off), under ``cpu/`` and ``cuda/``. When that folder cannot be written (a
shared, read-only cache filled by ``gthinker warmup``, a read-only home), entries
are still read from it, and new ones go to a per-user fallback: the user cache
folder when ``$GTHINKER_CACHE_DIR`` names another one, else a private folder
``gthinker-cache-<uid>`` in the temporary folder (mode 0700; used only while it
is owned by this user and closed to others, since entries hold machine code).
:func:`write_folder` decides once per process and folder. Entries are read from the
cache folder alone (:func:`folders`), and from the fallback only while the cache
folder cannot be written: a new ``$GTHINKER_CACHE_DIR`` is an empty cache.

**An entry** is one file ``<name>-<digest>.gtc``: a header (``GTC``, a zero
byte and the format number), the SHA-256 of the body, and the body, a pickle of
``(key, payload, not_kept)`` (``payload`` None: code that cannot be kept,
``not_kept`` saying why, so that later processes know they compile it again).
:func:`unpack` checks the header and the checksum before
anything is unpickled, so a damaged entry (flipped bytes that still unpickle,
say, which Numba would otherwise load and crash on) is an error it names
(:class:`BadEntry`), never code that runs. Entries are written to a temporary
file in the same folder and renamed into place (:func:`write_atomically`), so a
reader never sees a partial one.

**Unpickling** rebuilds each Numba environment (one per compiled function, that
names the module the function came from) without importing that module when it is
not imported yet (:class:`_Unpickler`): nopython code never reads an environment's
module globals (only object mode does, which entries never hold), and importing
them cost a run more than its job: an MCE entry named ``numba.np.arraymath``,
whose import loads ``scipy.linalg``, and ``numba.cpython.unicode``.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import pickle
import stat
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["ENV", "FORMAT", "BadEntry", "CompileLock", "cache_dir", "default_dir", "discard",
           "fallbacks", "folders", "pack", "read_entry", "unpack", "write_atomically",
           "write_folder"]

ENV = "GTHINKER_CACHE_DIR"
#: Changes whenever the layout of an entry, or what may be stored, changes (2: no
#: code with recursive calls, which crashed when loaded; 3: a checksummed header).
FORMAT = 3
_MAGIC = b"GTC\x00"
_HEADER = len(_MAGIC) + 2 + 32  # magic, format (2 bytes), SHA-256 of the body
_OFF = ("off", "0", "none", "false")


class BadEntry(Exception):
    """A cache file that is not a usable entry; the message says why (it completes
    "the entry ..."). ``identity`` is the file's, for :func:`discard` (None when
    it could not be read)."""

    identity = None


# ---- where ------------------------------------------------------------------------


def default_dir() -> Path:
    """The platform's user cache folder for gthinker."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local"
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gthinker"


def cache_dir() -> Path | None:
    """The cache folder, or None when ``GTHINKER_CACHE_DIR`` is ``off`` (or ``0``, ``none``)."""
    value = os.environ.get(ENV, "").strip()
    if value.lower() in _OFF:
        return None
    return Path(value).expanduser() if value else default_dir()


def fallbacks(root: Path) -> list[Path]:
    """Where entries go, in order, when ``root`` cannot be written: the user cache
    folder (unless it is ``root``), then a private folder in the temporary folder."""
    out = [] if default_dir() == root else [default_dir()]
    uid = os.geteuid() if hasattr(os, "geteuid") else os.getlogin()
    return [*out, Path(tempfile.gettempdir()) / f"gthinker-cache-{uid}"]


def _private(folder: Path) -> bool:
    """Whether ``folder`` is a real folder of this user that others cannot write
    (for folders in the shared temporary folder)."""
    if not hasattr(os, "geteuid"):  # pragma: no cover - not POSIX
        return True
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def _in_temp(folder: Path) -> bool:
    return folder.parent == Path(tempfile.gettempdir())


def folders(target: str) -> list[Path]:
    """The folders ``target`` entries are read from, in order: the cache folder and,
    only when it cannot be written, the fallback that new entries go to instead
    (:func:`write_folder`). A cache folder that can be written is the only one read:
    ``GTHINKER_CACHE_DIR=/new/folder`` starts from an empty cache."""
    root = cache_dir()
    if root is None:
        return []
    written = write_folder(target)[0]
    if written is None or written.parent == root:
        return [root]
    return [root, written.parent]


def _probe(folder: Path) -> str | None:
    """None when a file can be created in ``folder`` (made if missing), else why not."""
    try:
        if _in_temp(folder.parent):
            folder.parent.mkdir(mode=0o700, exist_ok=True)
            if not _private(folder.parent):
                return "it is not a private folder of this user"
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".probe-")
        os.close(fd)
        os.unlink(tmp)
        return None
    except OSError as exc:
        return exc.strerror or str(exc)


_decided: dict = {}


def write_folder(target: str) -> tuple[Path | None, list[tuple[Path, str]]]:
    """Where new ``target`` ("cpu" or "cuda") entries go: the cache folder's
    ``target`` subfolder, or the first fallback's that can be written (None: no
    folder can be, or the cache is off); and the folders tried before it, each
    with why it could not be written. Decided once per process and cache folder."""
    root = cache_dir()
    if root is None:
        return None, []
    key = (root, target)
    if key not in _decided:
        refused = []
        chosen = None
        for folder in (root, *fallbacks(root)):
            why = _probe(folder / target)
            if why is None:
                chosen = folder / target
                break
            refused.append((folder, why))
        _decided[key] = (chosen, refused)
    return _decided[key]


# ---- what an entry holds ------------------------------------------------------------


def pack(key: str, payload, not_kept: str = "") -> bytes:
    """An entry's bytes: the header, the body's checksum and the body. An entry
    whose code cannot be kept has ``payload`` None and says why in ``not_kept``."""
    body = pickle.dumps((key, payload, not_kept), protocol=4)
    return _MAGIC + FORMAT.to_bytes(2, "little") + hashlib.sha256(body).digest() + body


def unpack(data: bytes):
    """``(key, payload, not_kept)`` of an entry's bytes; :class:`BadEntry` when they are not
    a whole, unchanged entry of this format (checked before unpickling)."""
    if not data:
        raise BadEntry("is empty")
    if len(data) < _HEADER or not data.startswith(_MAGIC):
        raise BadEntry("is not a gthinker cache entry (or its header is damaged)")
    version = int.from_bytes(data[len(_MAGIC):len(_MAGIC) + 2], "little")
    if version != FORMAT:
        raise BadEntry(f"is of format {version}, not {FORMAT} (written by another version "
                       f"of gthinker)")
    body = data[_HEADER:]
    if hashlib.sha256(body).digest() != data[len(_MAGIC) + 2:_HEADER]:
        raise BadEntry("is damaged (its checksum does not match: truncated or changed)")
    try:
        key, payload, not_kept = _Unpickler(io.BytesIO(body)).load()
    except Exception as exc:  # noqa: BLE001 - whole and unchanged, yet not ours
        raise BadEntry(f"cannot be read ({type(exc).__name__}: {exc})") from None
    return key, payload, not_kept


def _rebuild_env(modname, consts, env_name):
    """``numba.core.environment._rebuild_env``, but a module not imported yet is not
    imported: its environment gets a globals dict of its name alone."""
    from numba.core import environment

    env = environment.lookup_environment(env_name)
    if env is not None:
        return env
    module = sys.modules.get(modname)
    env = environment.Environment(module.__dict__ if module is not None
                                  else {"__name__": modname})
    env.consts[:] = consts
    env.env_name = env_name
    environment.Environment._memo[env_name] = env  # noqa: SLF001 - as Numba's own does
    return env


class _Unpickler(pickle.Unpickler):
    """Unpickles an entry, its environments rebuilt by :func:`_rebuild_env`."""

    def find_class(self, module, name):
        if module == "numba.core.environment" and name == "_rebuild_env":
            return _rebuild_env
        return super().find_class(module, name)


def read_entry(path: Path):
    """``((key, payload, not_kept), identity)`` of the entry at ``path``; None when there is
    none; :class:`BadEntry` (with ``identity``, for :func:`discard`, as its
    ``identity`` attribute) when the file is not a usable entry."""
    try:
        with open(path, "rb") as f:
            identity = _identity(os.fstat(f.fileno()))
            data = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise BadEntry(f"cannot be read ({exc.strerror or exc})") from None
    try:
        return unpack(data), identity
    except BadEntry as exc:
        exc.identity = identity
        raise


def _identity(st) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def discard(path: Path, identity) -> bool:
    """Removes ``path`` if it is still the file read with ``identity`` (another
    process may have replaced it with a good entry since); whether it did."""
    try:
        if _identity(os.stat(path)) != identity:
            return False
        os.unlink(path)
        return True
    except OSError:
        return False


class CompileLock:
    """An advisory lock on one entry (``.<entry>.lock`` beside it), held while a
    process compiles it: a process that misses the same entry meanwhile waits, then
    loads what the first saved, instead of compiling it too (test workers, or users,
    starting at once). Where locks cannot be taken (no ``fcntl``, a folder that cannot
    be written), nobody waits."""

    _held: dict = {}  # path -> [fd, holders]: the locks this process holds (re-entrant)

    def __init__(self, folder: Path | None, file: str):
        self.path = None if folder is None else folder / f".{file}.lock"
        self.fd = None

    def acquire(self, timeout: float, waiting=None) -> bool:
        """Takes the lock, waiting at most ``timeout`` seconds; ``waiting()`` is called
        once when it must wait. Whether it waited for another process. A lock this
        process already holds is taken again at once."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return False
        if self.path is None:
            return False
        held = CompileLock._held.get(self.path)
        if held is not None:
            held[1] += 1
            self.fd = held[0]
            return False
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return False
        deadline = time.monotonic() + timeout
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.fd = fd
                CompileLock._held[self.path] = [fd, 1]
                return waited
            except BlockingIOError:
                if not waited and waiting is not None:
                    waiting()
                waited = True
                if time.monotonic() > deadline:  # compile without it
                    os.close(fd)
                    return waited
                time.sleep(0.05)
            except OSError:
                os.close(fd)
                return waited

    def release(self) -> None:
        """Removes the lock file and lets the waiting processes go (a second call
        does nothing)."""
        if self.fd is None:
            return
        self.fd = None
        held = CompileLock._held[self.path]
        held[1] -= 1
        if held[1]:
            return
        del CompileLock._held[self.path]
        try:
            os.unlink(self.path)
        except OSError:
            pass
        os.close(held[0])  # closing releases the lock


def write_atomically(path: Path, data: bytes) -> None:
    """Writes ``data`` to a temporary file beside ``path`` and renames it into
    place (OSError when that fails; no temporary file is left)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".gtc")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise
        raise

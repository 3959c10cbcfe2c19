"""The persistent compile cache: what the framework compiles is kept on disk, so a
new process loads machine code instead of compiling it again.

Everything gthinker compiles goes through :func:`attach`: the native entry point
of every :class:`gthinker.Task` (bundled apps, a user's own, gSWORD's samplers)
and the CUDA kernels of every :class:`gthinker.GPUContext` and of gSWORD. Numba's
own ``cache=True`` cannot serve them: they are closures built by factories, and
Numba keys a cache by the file of the outer function only.

An entry is keyed by all that decides its machine code:

- a deep fingerprint of the Python source it is compiled from (:func:`fingerprint`):
  the bytecode and constants of the function, of every function, Numba dispatcher
  and intrinsic it reaches through its globals and closure cells, and the values
  of the constants it freezes (numbers, strings, tuples, numpy arrays);
- the sources of the gthinker package itself and its C++ core's layout constants;
- the versions of Python, numba, llvmlite, numba-cuda and numpy;
- the signature, and the target: the CPU name and features, or the CUDA driver
  version and the GPU's compute capability.

Change any of them and the entry is compiled again. Entries live under
``$GTHINKER_CACHE_DIR`` (default: the platform's user cache folder, e.g.
``~/.cache/gthinker``; ``GTHINKER_CACHE_DIR=off`` turns the cache off), one file
per entry, written to a temporary file and renamed into place, so processes
filling the cache at once never see a partial entry. An unreadable entry is
compiled again with one warning; a folder that cannot be written means no cache,
never a failure.

What the fingerprint cannot see: functions from installed third-party packages
are keyed by their package version, not their source, and ``@overload``
implementations reached only through Numba's registry are not followed (keep
those in a module whose version or source changes with them, or clear the cache
with ``gthinker warmup --clear``).
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import re
import sys
import tempfile
import threading
import time
import types as pytypes
import warnings
from pathlib import Path

__all__ = ["CacheWarning", "attach", "cache_dir", "clear", "compile_seconds", "compiling",
           "fingerprint", "jit", "set_quiet"]

#: Changes whenever the layout of an entry, or what may be stored, changes (2: no code
#: with recursive calls, which crashed when loaded).
FORMAT = 2
ENV = "GTHINKER_CACHE_DIR"
#: Compiling that lasts longer than this many seconds is announced on stderr.
ANNOUNCE_AFTER = 1.0

_LIBRARIES = frozenset({"numba", "numpy", "llvmlite", "scipy", "cuda"})


class CacheWarning(UserWarning):
    """The compile cache could not be read or written (the job still runs)."""


# ---- where --------------------------------------------------------------------


def _default_dir() -> Path:
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
    if value.lower() in ("off", "0", "none", "false"):
        return None
    return Path(value).expanduser() if value else _default_dir()


def clear() -> int:
    """Removes every cached entry; returns how many files were removed."""
    root = cache_dir()
    removed = 0
    if root is None or not root.is_dir():
        return 0
    for path in root.glob("*/*.gtc"):
        try:
            path.unlink()
            removed += 1
        except OSError:
            pass
    return removed


# ---- what decides the machine code ----------------------------------------------

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _top(module_name: str | None) -> str:
    return (module_name or "").partition(".")[0]


@functools.cache
def _package_version(top: str) -> str:
    module = sys.modules.get(top)
    return str(getattr(module, "__version__", "")) if module is not None else ""


def _is_library(module_name: str | None) -> bool:
    top = _top(module_name)
    return top in _LIBRARIES or top in sys.stdlib_module_names or top == "builtins"


class _Fingerprint:
    """Hashes the code a compiled function is built from (see the module docs)."""

    def __init__(self):
        self.h = hashlib.sha256()
        self.seen: dict[int, int] = {}
        self.keep: list = []  # keeps visited objects alive, so ids stay unique

    def add(self, tag: str, text: str | bytes = b"") -> None:
        data = text.encode() if isinstance(text, str) else text
        self.h.update(f"{tag}:{len(data)}:".encode())
        self.h.update(data)

    def visit(self, obj, names: frozenset = frozenset(), root: bool = False) -> None:
        if isinstance(obj, (bool, int, float, complex, str, bytes, type(None))):
            self.add(type(obj).__name__, repr(obj))
            return
        if isinstance(obj, pytypes.ModuleType):  # not deduplicated: each user reads other names
            self._module(obj, names)
            return
        if id(obj) in self.seen:
            self.add("seen", str(self.seen[id(obj)]))
            return
        self.seen[id(obj)] = len(self.seen)
        self.keep.append(obj)
        if isinstance(obj, (tuple, frozenset)):  # constants Numba may freeze
            items = sorted(obj, key=repr) if isinstance(obj, frozenset) else obj
            self.add(type(obj).__name__, str(len(items)))
            for item in items:
                self.visit(item)
            return
        if isinstance(obj, (list, set, dict)):  # mutable: never frozen into compiled code
            self.add("mutable", type(obj).__name__)
            return
        py_func = getattr(obj, "py_func", None)  # a Numba dispatcher (CPU or CUDA)
        if isinstance(py_func, pytypes.FunctionType):
            self.add("dispatcher", repr(sorted(getattr(obj, "targetoptions", {}).items())))
            self.visit(py_func, root=True)
            return
        defn = getattr(obj, "_defn", None)  # a Numba @intrinsic
        if isinstance(defn, pytypes.FunctionType):
            self.add("intrinsic", getattr(obj, "_name", ""))
            self.visit(defn, root=True)
            return
        if isinstance(obj, pytypes.FunctionType):
            self._function(obj, deep=root)
            return
        self._value(obj)

    def _module(self, module, names) -> None:
        self.add("module", module.__name__ + "@" + _package_version(_top(module.__name__)))
        if _is_library(module.__name__):
            return
        for name in sorted(names):  # the attributes the code may read
            try:  # getattr, not vars(): a lazy module's attributes appear on first use
                value = getattr(module, name)
            except Exception:  # noqa: BLE001 - no such attribute
                continue
            self.add("attr", name)
            self.visit(value)

    def _function(self, fn, deep: bool) -> None:
        """A function's code; with ``deep``, also all it reaches. Compiled code
        calls only compiled functions, so a plain Python function reached from
        one (host code, or an ``@overload``'s target) counts by its own code."""
        module = getattr(fn, "__module__", None)
        self.add("function", f"{module}.{fn.__qualname__}")
        if _is_library(module):
            self.add("version", _package_version(_top(module)))
            return
        names = self._code(fn.__code__)
        if not deep:
            return
        self.visit(fn.__defaults__)
        for cell in fn.__closure__ or ():
            try:
                self.visit(cell.cell_contents, names)
            except ValueError:  # an empty cell
                self.add("empty-cell")
        scope = fn.__globals__
        for name in sorted(names):
            if name in scope:
                self.add("global", name)
                self.visit(scope[name], names)

    def _code(self, code) -> frozenset:
        """Hashes a code object and its nested ones; returns every name they use."""
        self.add("code", code.co_code)
        names = set(code.co_names) | set(code.co_freevars)
        for const in code.co_consts:
            if isinstance(const, pytypes.CodeType):
                names |= self._code(const)
            else:
                self.add("const", repr(const))
        return frozenset(names)

    def _value(self, obj) -> None:
        typ = type(obj)
        self.add("type", f"{typ.__module__}.{typ.__qualname__}")
        if isinstance(obj, type):
            self.add("class", f"{obj.__module__}.{obj.__qualname__}")
            return
        if hasattr(obj, "dtype") and hasattr(obj, "tobytes"):  # a numpy array or scalar
            self.add("array", f"{obj.dtype}{getattr(obj, 'shape', ())}")
            self.add("data", hashlib.sha256(obj.tobytes()).digest())
            return
        if _is_library(typ.__module__):  # Numba types, numpy dtypes, builtin functions
            self.add("repr", repr(obj))
            return
        # Anything else (a lock, a Graph): compiled code cannot freeze such an
        # object, so its repr without addresses is enough to tell it apart.
        self.add("repr", _ADDRESS.sub("", repr(obj)))

    def hexdigest(self) -> str:
        return self.h.hexdigest()


def fingerprint(*objs) -> str:
    """A hex digest of everything in ``objs`` (functions to compile, Numba
    dispatchers, constants) that decides compiled code."""
    fp = _Fingerprint()
    for obj in objs:
        fp.visit(obj, root=True)
    return fp.hexdigest()


#: Parts of gthinker that no compiled code depends on (pure Python front ends: the
#: command line, the registry and each app's command, the cluster, the networkx
#: backend): editing them does not invalidate the compile cache.
_NOT_COMPILED = frozenset({"networkx", "cluster", "cli.py", "app_cli.py", "command.py",
                           "registry.py", "request.py", "text.py", "warmup.py"})


@functools.lru_cache(maxsize=1)
def _framework_key() -> str:
    """gthinker's own sources and core constants, and the compilers' versions."""
    from . import _core

    h = hashlib.sha256()
    root = Path(__file__).parent
    files = sorted(root.rglob("*.py"))  # the bundled apps (gthinker/apps) too
    for path in files:
        if _NOT_COMPILED.intersection(path.parts[-2:]):  # the folder or the file
            continue
        h.update(path.name.encode())
        h.update(path.read_bytes())
    h.update(repr((sorted(_core.HEADER), sorted(_core.ERROR_CODES))).encode())
    versions = [sys.version]
    for name in ("numba", "llvmlite", "numpy"):
        versions.append(_package_version(name) or __import__(name).__version__)
    try:
        from importlib.metadata import version

        versions.append(version("numba-cuda"))
    except Exception:  # noqa: BLE001 - not installed
        versions.append("")
    h.update(repr((FORMAT, versions)).encode())
    return h.hexdigest()


# ---- reading and writing entries ---------------------------------------------------

_lock = threading.Lock()
_warned: set[str] = set()
_state = {"compile_seconds": 0.0, "quiet": False, "said": set()}


def _warn_once(kind: str, message: str) -> None:
    with _lock:
        if kind in _warned:
            return
        _warned.add(kind)
    warnings.warn(message, CacheWarning, stacklevel=2)


def _say_once(key, line: str) -> None:
    """Says ``line`` on stderr, once per ``key`` and process, unless quiet."""
    with _lock:
        if _state["quiet"] or key in _state["said"]:
            return
        _state["said"].add(key)
    print(line, file=sys.stderr, flush=True)


def compile_seconds() -> float:
    """Seconds this process has spent compiling (cache misses), all threads."""
    return _state["compile_seconds"]


def set_quiet(quiet: bool) -> None:
    """Whether a long compile is announced on stderr (on by default)."""
    _state["quiet"] = bool(quiet)


_local = threading.local()


class _Stopwatch:
    """Adds a compile's seconds to :func:`compile_seconds` and announces it once
    per label on stderr when it lasts over ``ANNOUNCE_AFTER`` seconds."""

    def __init__(self, label: str):
        self.label = label
        self.t0 = time.perf_counter()
        self.timer = threading.Timer(ANNOUNCE_AFTER, self._announce)
        self.timer.daemon = True
        self.timer.start()

    def _announce(self) -> None:
        _say_once(("compiling", self.label),
                  f"gthinker: compiling {self.label} for this machine (first run only)")

    def stop(self) -> None:
        self.timer.cancel()
        with _lock:
            _state["compile_seconds"] += time.perf_counter() - self.t0


def _outermost(label: str) -> _Stopwatch | None:
    """A stopwatch, unless a compile of this thread is timed already."""
    return None if getattr(_local, "depth", 0) else _Stopwatch(label)


class compiling:  # noqa: N801 - used as a context manager, like a function
    """Times what compiles inside it (see :class:`_Stopwatch`); the kernels and
    entry points compiled within count as part of it, once."""

    def __init__(self, label: str):
        self.label = label

    def __enter__(self):
        self.watch = _outermost(self.label)
        _local.depth = getattr(_local, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        _local.depth -= 1
        if self.watch is not None:
            self.watch.stop()
        return False


class _Entries:
    """Numba's cache protocol (``load_overload`` / ``save_overload``) over our
    files, for one compiled function; set as the dispatcher's cache by :func:`attach`."""

    def __init__(self, target: str, name: str, fingerprint_source, label: str):
        self.target = target
        self.name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60]
        self._fingerprint_source = fingerprint_source
        self.label = label
        self._pending = None  # (path, key, compiling) between a miss and its save

    @functools.cached_property
    def source_key(self) -> str:
        """The function's fingerprint, taken when first compiled or loaded (its
        module is complete by then: see :func:`jit`)."""
        return self._fingerprint_source()

    def _path_and_key(self, sig, target_context):
        magic = target_context.codegen().magic_tuple()
        key = repr((FORMAT, self.source_key, _framework_key(), str(sig), magic))
        root = cache_dir()
        if root is None:
            return None, key
        digest = hashlib.sha256(key.encode()).hexdigest()[:40]
        return root / self.target / f"{self.name}-{digest}.gtc", key

    def flush(self) -> None:  # part of Numba's cache protocol; nothing is buffered
        pass

    def stored(self, sig, target_context) -> bool:
        """Whether an entry for ``sig`` is on disk (it may still prove unreadable)."""
        path, _ = self._path_and_key(sig, target_context)
        return path is not None and path.is_file()

    def load_overload(self, sig, target_context):
        path, key = self._path_and_key(sig, target_context)
        loaded = self._read(path, key, target_context) if path is not None else None
        if loaded is None:  # Numba compiles now, then calls save_overload
            self._pending = (path, key, _outermost(self.label))
        return loaded

    def _read(self, path, key, target_context):
        try:
            with open(path, "rb") as f:
                stored_key, payload = pickle.load(f)
        except (FileNotFoundError, NotADirectoryError):  # no entry (or no folder) yet
            return None
        except Exception as exc:  # noqa: BLE001 - a truncated or foreign file
            _warn_once("read", f"gthinker: cached code {path} is unreadable "
                               f"({type(exc).__name__}: {exc}); compiling again")
            return None
        if stored_key != key:  # a digest collision, or a file of another layout
            return None
        try:
            return _rebuild(self.target, target_context, payload)
        except Exception as exc:  # noqa: BLE001
            _warn_once("read", f"gthinker: cached code {path} cannot be loaded "
                               f"({type(exc).__name__}: {exc}); compiling again")
            return None

    def save_overload(self, sig, compiled):
        if self._pending is None:
            return
        path, key, timing = self._pending
        self._pending = None
        if timing is not None:
            timing.stop()
        if path is None:
            return
        try:
            data = pickle.dumps((key, _reduce(self.target, compiled)), protocol=4)
        except _Recursive:  # a limit of Numba, not a fault: said once, not warned
            _say_once(("recursive", self.label),
                      f"gthinker: {self.label} calls a recursive function, whose code Numba "
                      f"cannot keep; it is compiled in each process")
            return
        except Exception as exc:  # noqa: BLE001 - e.g. code that holds Python objects
            _warn_once("reduce", f"gthinker: {self.label} cannot be cached "
                                 f"({type(exc).__name__}: {exc}); it is compiled in each process")
            return
        _write_atomically(path, data)


_UNRESOLVED = ".numba.unresolved$"  # Numba's prefix of calls it links at run time


class _Recursive(Exception):
    """The code calls a recursive function whose self-calls Numba links in the
    process that compiled it; loaded into another process they would call
    address 0 (numba#6061)."""


def _reduce(target: str, compiled):
    if target == "cpu":
        if compiled.library.has_dynamic_globals or compiled.lifted:
            raise ValueError("the code refers to objects of this process")
        if _UNRESOLVED in compiled.library.get_llvm_str():
            raise _Recursive
        return compiled._reduce()
    return compiled._reduce_states()


def _rebuild(target: str, target_context, payload):
    if target == "cpu":
        from numba.core.compiler import CompileResult
        from numba.core.runtime import rtsys

        # The one part of Numba's (slow) registry refresh that loaded code needs:
        # its memory-management runtime (idempotent).
        rtsys.initialize(target_context)
        return CompileResult._rebuild(target_context, *payload)
    from numba.cuda.dispatcher import _Kernel

    return _Kernel._rebuild(**payload)


def _write_atomically(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".gtc")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as exc:
        _warn_once("write", f"gthinker: cannot write the compile cache in {path.parent} "
                            f"({exc.strerror or exc}); compiled code is not kept (set "
                            f"{ENV} to a writable folder, or to 'off')")


def attach(dispatcher, *, target: str, label: str, name: str | None = None, extra=()):
    """Makes ``dispatcher`` (a Numba ``CFunc``, ``njit`` or CUDA kernel dispatcher,
    not yet compiled) load its code from the cache and save what it compiles there.
    ``label`` names it in messages, ``name`` its files (default: the function's
    name); ``extra`` adds compile-time values to its key.
    Returns the cache entries object (``stored(sig, target_context)`` says whether
    an entry is on disk)."""
    py_func = getattr(dispatcher, "py_func", None) or dispatcher.__wrapped__
    options = getattr(dispatcher, "targetoptions", None)

    def fingerprint_source():
        return fingerprint(py_func, tuple(extra), repr(sorted((options or {}).items())))

    # Numba's dispatchers call this object's load_overload / save_overload when
    # they compile (the same hook as their own cache=True).
    entries = _Entries(target, name or py_func.__qualname__, fingerprint_source, label)
    dispatcher._cache = entries
    return entries


def jit(label: str, **options):
    """``numba.njit(**options)``, its code kept in this cache: for the
    framework's own functions called from Python (graph readers, generators).
    Unlike Numba's ``cache=True``, loading them does not import Numba's whole
    typing registry (0.2-0.3 s per process)."""

    def decorate(fn):
        from numba import njit

        dispatcher = njit(**options)(fn)
        attach(dispatcher, target="cpu", label=label, name=f"{fn.__module__}.{fn.__name__}")
        return dispatcher

    return decorate

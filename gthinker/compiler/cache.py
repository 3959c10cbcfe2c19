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
- Python's bytecode format, and the versions of numba, llvmlite, numba-cuda and numpy;
- the signature, and the target: the CPU name and features, or the CUDA driver
  version and the GPU's compute capability.

CPU code built for a portable x86-64 level (:data:`LEVELS`) instead of this CPU ships in
the package's own folder (:data:`PREBUILT`, filled by ``gthinker warmup --portable`` or
``GTHINKER_PREBUILD`` at build time); it is read after the cache folder, keyed the same
way with the level in place of the CPU, on machines that have the level's features.

Change any of them and the entry is compiled again. Entries live under
``$GTHINKER_CACHE_DIR`` (default: the platform's user cache folder, e.g.
``~/.cache/gthinker``; ``GTHINKER_CACHE_DIR=off`` turns the cache and shipped code off), one
checksummed file per entry, written to a temporary file and renamed into place
(:mod:`gthinker.compiler.files`). An entry that is damaged, of another format or
cannot be loaded gives one warning, is deleted and compiled again; a folder that
cannot be written is still read, and new entries go to a per-user fallback folder
(said once on stderr); only when no folder can be written is nothing kept (one
warning), never a failure.

What the fingerprint cannot see: functions from installed third-party packages
are keyed by their package version, not their source, and ``@overload``
implementations reached only through Numba's registry are not followed (keep
those in a module whose version or source changes with them, or clear the cache
with ``gthinker warmup --clear``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import re
import sys
import threading
import time
import types as pytypes
import warnings
from pathlib import Path

from gthinker.compiler import files as cache_files

__all__ = ["LEVELS", "PREBUILT", "CacheWarning", "attach", "cache_dir", "clear",
           "compile_seconds", "compiling", "fingerprint", "host_levels", "jit", "set_quiet"]

ENV = cache_files.ENV
FORMAT = cache_files.FORMAT
#: Compiling that lasts longer than this many seconds is announced on stderr.
ANNOUNCE_AFTER = 1.0
#: The longest a process waits for another that compiles the same entry (then it
#: compiles the entry itself).
LOCK_WAIT = 900.0

_LIBRARIES = frozenset({"numba", "numpy", "llvmlite", "scipy", "cuda"})

#: The portable x86-64 levels that shipped code is built for (``gthinker warmup
#: --portable LEVEL``, or ``GTHINKER_PREBUILD=LEVEL`` when building a wheel), each with
#: the CPU features a machine needs to run it; a machine loads the best level it has.
LEVELS = {
    "x86-64-v3": ("avx", "avx2", "bmi", "bmi2", "cx16", "f16c", "fma", "lzcnt", "movbe",
                  "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3", "xsave"),
    "x86-64-v2": ("cx16", "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3"),
}
#: The package's own read-only folder of code built for :data:`LEVELS` (empty unless
#: the package was built with it): read after the cache folder, never written at run time.
PREBUILT = Path(__file__).resolve().parent / "prebuilt"


class CacheWarning(UserWarning):
    """The compile cache could not be read or written (the job still runs)."""


# ---- where --------------------------------------------------------------------

cache_dir = cache_files.cache_dir


def clear() -> int:
    """Removes every cached entry from the folders entries are read from (the cache
    folder, and its fallback while it cannot be written); returns how many files were
    removed."""
    removed = 0
    for root in {*cache_files.folders("cpu"), *cache_files.folders("cuda")}:
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
_NOT_COMPILED = frozenset({"networkx", "cluster", "cli", "command.py", "registry.py",
                           "request.py", "text.py"})


@functools.lru_cache(maxsize=1)
def _framework_key() -> str:
    """gthinker's own sources and core constants, and the compilers' versions."""
    from gthinker import _core

    h = hashlib.sha256()
    root = Path(__file__).parents[1]  # the gthinker package
    files = sorted(root.rglob("*.py"))  # the bundled apps (gthinker/apps) too
    for path in files:
        if _NOT_COMPILED.intersection(path.parts[-2:]):  # the folder or the file
            continue
        h.update(path.name.encode())
        h.update(path.read_bytes())
    h.update(repr((sorted(_core.HEADER), sorted(_core.ERROR_CODES))).encode())
    # The bytecode's format, not the interpreter's build: shipped code loads on any
    # build of the same Python version.
    versions = [sys.implementation.cache_tag, importlib.util.MAGIC_NUMBER.hex()]
    for name in ("numba", "llvmlite", "numpy"):
        versions.append(_package_version(name) or __import__(name).__version__)
    try:
        from importlib.metadata import version

        versions.append(version("numba-cuda"))
    except Exception:  # noqa: BLE001 - not installed
        versions.append("")
    from numba.core import config

    # The optimisation level (NUMBA_OPT): code built at another level is kept apart.
    h.update(repr((FORMAT, versions, int(config.OPT))).encode())
    return h.hexdigest()


# ---- messages and timing -------------------------------------------------------------

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
    """Seconds this process has spent compiling (cache misses), all threads; a
    compile inside another (an ``njit`` helper of a Task's entry point) counts once."""
    return _state["compile_seconds"]


def set_quiet(quiet: bool) -> None:
    """Whether a long compile is announced on stderr (on by default)."""
    _state["quiet"] = bool(quiet)


_local = threading.local()  # depth: this thread's compiles being timed, nested


class _Stopwatch:
    """Times one compile. The outermost of a thread's nested compiles adds its
    seconds to :func:`compile_seconds` (the inner ones are part of it) and is
    announced once per label on stderr when it lasts over ``ANNOUNCE_AFTER``
    seconds, with ``note`` saying whether later runs will compile again."""

    def __init__(self, label: str, note: str):
        self.label, self.note = label, note
        self.outer = getattr(_local, "depth", 0) == 0
        _local.depth = getattr(_local, "depth", 0) + 1
        self.running = True
        self.t0 = time.perf_counter()
        self.timer = None
        if self.outer:
            self.timer = threading.Timer(ANNOUNCE_AFTER, self._announce)
            self.timer.daemon = True
            self.timer.start()

    def _announce(self) -> None:
        _say_once(("compiling", self.label),
                  f"gthinker: compiling {self.label} for this machine ({self.note})")

    def stop(self) -> None:
        """Ends the timing (on the thread that started it); a second call does nothing."""
        if not self.running:
            return
        self.running = False
        _local.depth -= 1
        if self.outer:
            self.timer.cancel()
            with _lock:
                _state["compile_seconds"] += time.perf_counter() - self.t0


_FIRST_RUN = "first run only"


def _note(target: str, why_again: str | None = None) -> str:
    """What the announcement of a ``target`` compile says about later runs."""
    if why_again:
        return why_again
    if cache_files.cache_dir() is None:
        return f"the compile cache is off ({ENV}=off): every run compiles"
    if _write_dir(target) is None:
        return "the compile cache cannot be written: every run compiles"
    return _FIRST_RUN


class compiling:  # noqa: N801 - used as a context manager, like a function
    """Times what compiles inside it (see :class:`_Stopwatch`); the kernels and
    entry points compiled within count as part of it, once."""

    def __init__(self, label: str, target: str = "cpu"):
        self.label, self.target = label, target

    def __enter__(self):
        self.watch = _Stopwatch(self.label, _note(self.target))
        return self

    def __exit__(self, *exc):
        self.watch.stop()
        return False


# ---- the folders ----------------------------------------------------------------------


def _write_dir(target: str) -> Path | None:
    """The folder new ``target`` entries go to (see :func:`cache_files.write_folder`),
    saying once when it is a fallback, or warning once when there is none."""
    folder, refused = cache_files.write_folder(target)
    if refused:
        root, why = refused[0]
        if folder is not None:
            _say_once(("fallback", root), f"gthinker: the compile cache {root} cannot be "
                                          f"written ({why}); compiled code is kept in "
                                          f"{folder.parent} instead")
        else:
            tried = "; ".join(f"{f} ({w})" for f, w in refused)
            _warn_once("write", f"gthinker: cannot write the compile cache in {tried}; "
                                f"compiled code is not kept (set {ENV} to a writable "
                                f"folder, or to 'off')")
    return folder


# ---- the entries of one compiled function -------------------------------------------------

_AGAIN = "again: its cached code could not be used"
_RECURSIVE = "it calls a recursive function, whose code Numba cannot keep: every run compiles it"


class _Entries:
    """Numba's cache protocol (``load_overload`` / ``save_overload``) over our
    files, for one compiled function; set as the dispatcher's cache by :func:`attach`."""

    def __init__(self, target: str, name: str, fingerprint_source, label: str):
        self.target = target
        self.name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60]
        self._fingerprint_source = fingerprint_source
        self.label = label
        self.pending = []  # (file name, key, stopwatch) of each miss until its save

    @functools.cached_property
    def source_key(self) -> str:
        """The function's fingerprint, taken when first compiled or loaded (its
        module is complete by then: see :func:`jit`)."""
        return self._fingerprint_source()

    def _file_and_key(self, sig, target_context, level=None):
        magic = target_context.codegen().magic_tuple()
        if level is not None:  # what a process built for a portable level has
            magic = (magic[0], level, "")
        key = repr((FORMAT, self.source_key, _framework_key(), str(sig), magic))
        digest = hashlib.sha256(key.encode()).hexdigest()[:40]
        return f"{self.name}-{digest}.gtc", key

    def flush(self) -> None:  # part of Numba's cache protocol; nothing is buffered
        pass

    def _paths(self, sig, target_context):
        """(path, key, shipped) of each place an entry for ``sig`` may be, in order:
        the cache folders, then the package's code for each level this machine has."""
        file, key = self._file_and_key(sig, target_context)
        for root in cache_files.folders(self.target):
            yield root / self.target / file, key, False
        if self.target != "cpu" or cache_files.cache_dir() is None:
            return
        for level in host_levels(target_context):
            file, key = self._file_and_key(sig, target_context, level)
            yield PREBUILT / self.target / file, key, True

    def stored(self, sig, target_context) -> bool:
        """Whether an entry for ``sig`` is on disk (it may still prove unusable)."""
        return any(path.is_file() for path, _, _ in self._paths(sig, target_context))

    def claim(self, sig, target_context):
        """The entry's :class:`cache_files.CompileLock`, taken (waiting while another
        process compiles the entry): held, no other process compiles it; release it once
        the code is compiled or loaded."""
        file, _ = self._file_and_key(sig, target_context)
        lock = cache_files.CompileLock(_write_dir(self.target), file)
        lock.acquire(LOCK_WAIT, self._waiting)
        return lock

    def load_overload(self, sig, target_context):
        why_again = None
        for path, key, shipped in self._paths(sig, target_context):
            loaded, why = self._load(path, key, target_context, keep=shipped)
            if loaded is not None:
                return loaded
            why_again = why_again or why
        file, key = self._file_and_key(sig, target_context)
        lock = cache_files.CompileLock(_write_dir(self.target), file)
        if lock.acquire(LOCK_WAIT, self._waiting):  # another process compiled it meanwhile
            for path, key_there, shipped in self._paths(sig, target_context):
                loaded, _ = self._load(path, key_there, target_context, keep=shipped)
                if loaded is not None:
                    lock.release()
                    return loaded
        # Numba compiles now, then calls save_overload (or raises: see attach).
        watch = _Stopwatch(self.label, _note(self.target, why_again))
        self.pending.append((file, key, watch, lock))
        return None

    def _waiting(self) -> None:
        _say_once(("waiting", self.label),
                  f"gthinker: waiting for another process compiling {self.label}")

    def _load(self, path, key, target_context, keep=False):
        """(the compiled code at ``path``, None) or (None, why it must compile again, if
        the entry says so); a bad entry is warned of and deleted (unless ``keep``:
        the package's own)."""
        try:
            got = cache_files.read_entry(path)
        except cache_files.BadEntry as exc:
            self._drop(path, None if keep else exc.identity, str(exc))
            return None, _AGAIN
        if got is None:
            return None, None
        (stored_key, payload, not_kept), identity = got
        if stored_key != key:  # a digest collision: replaced on save
            return None, None
        if payload is None:  # the code cannot be kept: every process compiles it
            return None, not_kept
        try:
            return _rebuild(self.target, target_context, payload), None
        except Exception as exc:  # noqa: BLE001 - code of another build, say
            self._drop(path, None if keep else identity,
                       f"cannot be loaded ({type(exc).__name__}: {exc})")
            return None, _AGAIN

    def _drop(self, path, identity, why) -> None:
        removed = identity is not None and cache_files.discard(path, identity)
        _warn_once("read", f"gthinker: cached code {path} {why}; "
                           f"{'deleted' if removed else 'not used'}")

    def abandon(self, depth: int) -> None:
        """Stops the stopwatches of misses after the first ``depth`` (compiles that
        raised, so Numba never saved them)."""
        while len(self.pending) > depth:
            _, _, watch, lock = self.pending.pop()
            watch.stop()
            lock.release()

    def save_overload(self, sig, compiled):
        if not self.pending:
            return
        file, key, watch, lock = self.pending.pop()
        watch.stop()
        try:
            self._save(file, key, watch, compiled)
        finally:  # saved (or not): the processes waiting for it go on
            lock.release()

    def _save(self, file, key, watch, compiled) -> None:
        folder = _write_dir(self.target)
        if folder is None:
            return
        try:
            payload, not_kept = _reduce(self.target, compiled), ""
        except _Recursive:  # a limit of Numba, not a fault: said once, not warned
            if watch.note != _RECURSIVE:  # not known before this compile
                _say_once(("recursive", self.label),
                          f"gthinker: {self.label} calls a recursive function, whose code "
                          f"Numba cannot keep; it is compiled in each process")
            payload, not_kept = None, _RECURSIVE
        except Exception as exc:  # noqa: BLE001 - e.g. code that holds Python objects
            _warn_once("reduce", f"gthinker: {self.label} cannot be cached "
                                 f"({type(exc).__name__}: {exc}); it is compiled in each process")
            payload, not_kept = None, f"it cannot be cached ({type(exc).__name__})"
        try:  # an entry whose code cannot be kept says so to later processes
            cache_files.write_atomically(folder / file, cache_files.pack(key, payload, not_kept))
        except OSError as exc:
            _warn_once("write", f"gthinker: cannot write the compile cache in {folder} "
                                f"({exc.strerror or exc}); compiled code is not kept (set "
                                f"{ENV} to a writable folder, or to 'off')")


def host_levels(target_context=None) -> list[str]:
    """The :data:`LEVELS` whose code this machine runs, best first (none where this
    process itself builds for a level, or off x86-64)."""
    if target_context is None:
        from numba.core.registry import cpu_target

        target_context = cpu_target.target_context
    codegen = target_context.codegen()
    if not codegen.magic_tuple()[0].startswith("x86_64") or codegen.magic_tuple()[1] in LEVELS:
        return []
    return [level for level, needs in LEVELS.items() if all(_host_features().get(f) for f in needs)]


@functools.cache
def _host_features() -> dict:
    import llvmlite.binding as ll

    return dict(ll.get_host_cpu_features())


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
    compile_ = dispatcher.compile

    @functools.wraps(compile_)
    def compile(*args, **kwargs):  # a compile that raises is never saved: stop its timing
        depth = len(entries.pending)
        try:
            return compile_(*args, **kwargs)
        finally:
            entries.abandon(depth)

    dispatcher.compile = compile
    return entries


def _unliteral_calls(dispatcher) -> None:
    """Makes the calls to ``dispatcher`` from compiled code compile it for the plain
    types of their arguments (int64, not ``Literal[int](0)``). Numba compiles a callee for
    the exact types of a call's arguments, literals included, and its type inference
    calls a callee first with the literal type of a variable's first value (``n = 0``),
    then again with its unified type: each literal was one more compile of the callee and
    of all it calls. A call with a literal argument now uses the plain overload."""
    from numba.core import types

    resolve = dispatcher.get_call_template

    def get_call_template(args, kws):
        return resolve(tuple(types.unliteral(a) for a in args),
                       {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template


def jit(label: str, **options):
    """``numba.njit(**options)``, its code kept in this cache: for the
    framework's own functions called from Python (graph readers, generators).
    Unlike Numba's ``cache=True``, loading them does not import Numba's whole
    typing registry (0.2-0.3 s per process). Calls from compiled code compile it
    once per plain argument types, never per literal value (:func:`_unliteral_calls`)."""

    def decorate(fn):
        from numba import njit

        dispatcher = njit(**options)(fn)
        attach(dispatcher, target="cpu", label=label, name=f"{fn.__module__}.{fn.__name__}")
        _unliteral_calls(dispatcher)
        return dispatcher

    return decorate

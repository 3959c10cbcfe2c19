"""The CPU Task API: subclass :class:`Task`, write ``spawn`` and ``compute`` in plain Python.

The framework compiles both with Numba into native functions that the C++ worker
threads call directly, with the GIL released::

    class TriangleCount(gthinker.Task):
        counters = ("triangles",)

        @staticmethod
        def spawn(ctx, v):                 # initial task of vertex v -> record
            return np.array([v], np.int32)

        @staticmethod
        def compute(ctx, record):          # process one task record
            ...
            ctx.count(0, n)

What compiled code sees as ``ctx`` (a :class:`TaskContext`):

- ``ctx.indptr`` (int64) and ``ctx.indices`` (int32): the graph in CSR form;
  ``ctx.labels`` (int32, empty when unlabeled); ``ctx.neighbors(v)``, ``ctx.degree(v)``;
  ``ctx.params`` (int64, the run's ``params``, empty when none were given). All
  read-only: writing into them is a compile error (copy first).
- ``ctx.timed_out()``: true once the current task has run past the time budget;
  the task should then stop recursing and hand its remaining branches to
  ``ctx.add_task(record)`` (a non-empty int32 array), which other workers pick up.
- Results, per worker and merged at the end: ``ctx.count(i, n=1)`` (summed),
  ``ctx.update_max(i, value)`` (maximum), ``ctx.add_to_histogram(row, bin, n=1)``
  (summed); these check their indices. The raw arrays ``ctx.counters``,
  ``ctx.maxima`` and ``ctx.histograms`` are there too, unchecked.
- ``ctx.emitting()`` and ``ctx.emit(vertices)``: write one result line of vertex
  ids (translated to the graph's original ids) to the job's output file.
- ``ctx.take(n)``: claims ``n`` results from the job's ``limit`` and returns how
  many it got (``n`` when the run has no limit; fewer, then 0, once the limit
  is reached, and the job stops). Count and emit only what was taken.
- ``ctx.params``: the int64 parameters given to the run.

Rules that come from running without the GIL: no ``print``, no Python objects,
no globals that change between runs (module globals are frozen at compile time;
pass per-run values in ``params``). An exception raised in compiled code stops the
job and is reported as :class:`~gthinker.errors.TaskRuntimeError` naming the method.
"""

from __future__ import annotations

import collections
import functools
import inspect
import re
import warnings

import llvmlite.binding as llvm
import numpy as np
from numba import carray, njit, types
from numba.core import cgutils
from numba.core.ccallback import CFunc
from numba.core.errors import NumbaError, NumbaWarning, TypingError
from numba.core.registry import cpu_target
from numba.extending import intrinsic, overload_method

from gthinker import _core, compiler, stopping
from gthinker.errors import TaskDefinitionError

__all__ = ["Task", "TaskContext", "RECORD_TYPE"]

stopping.install()  # where a program defines tasks in its main thread and runs them elsewhere

H = dict(_core.HEADER)
CODES = dict(_core.ERROR_CODES)

# The C callbacks must be known to LLVM before any function that calls them is
# compiled or loaded from Numba's cache (otherwise it links to nothing).
for _name, _addr in _core.callback_addresses().items():
    llvm.add_symbol(_name, _addr)

_check_time = types.ExternalFunction("gt_check_time", types.int32(types.voidptr))
_add_task = types.ExternalFunction(
    "gt_add_task", types.int32(types.voidptr, types.CPointer(types.int32), types.int64)
)
_emit = types.ExternalFunction(
    "gt_emit", types.int32(types.voidptr, types.CPointer(types.int32), types.int64)
)
_take = types.ExternalFunction("gt_take", types.int64(types.voidptr, types.int64))

TaskContext = collections.namedtuple(
    "TaskContext",
    ["header", "indptr", "indices", "labels", "counters", "maxima", "histograms", "params"],
)
TaskContext.__doc__ = "What a compiled task sees of its worker and graph (see module docs)."

#: Numba type of a task record: a contiguous 1-d int32 array.
RECORD_TYPE = types.Array(types.int32, 1, "C")

_HLEN = H["LEN"]
_SELF = H["SELF"]
_COUNTDOWN = H["COUNTDOWN"]
_TIMED_OUT = H["TIMED_OUT"]
_ERROR = H["ERROR"]
_EMITTING = H["EMITTING"]
_WORKER_ID = H["WORKER_ID"]
_NUM_WORKERS = H["NUM_WORKERS"]
_INDPTR, _NUM_VERTICES = H["INDPTR"], H["NUM_VERTICES"]
_INDICES, _NUM_INDICES = H["INDICES"], H["NUM_INDICES"]
_LABELS, _NUM_LABELS = H["LABELS"], H["NUM_LABELS"]
_COUNTERS, _NUM_COUNTERS = H["COUNTERS"], H["NUM_COUNTERS"]
_MAXIMA, _NUM_MAXIMA = H["MAXIMA"], H["NUM_MAXIMA"]
_HIST, _HIST_ROWS, _HIST_BINS = H["HIST"], H["HIST_ROWS"], H["HIST_BINS"]
_PARAMS, _NUM_PARAMS = H["PARAMS"], H["NUM_PARAMS"]
_E_COUNTER = CODES["COUNTER_INDEX"]
_E_MAXIMUM = CODES["MAXIMUM_INDEX"]
_E_HISTOGRAM = CODES["HISTOGRAM_INDEX"]
#: Added to a helper's error code when it failed inside spawn rather than compute.
SPAWN_PHASE = 100


# ---- raw pointer helpers --------------------------------------------------


def pointer_intrinsic(dtype):
    """A compiled-code intrinsic ``f(address) -> CPointer(dtype)``: views an int64
    address (e.g. from a task's ``params``) as a typed pointer, for ``carray``."""
    ptr_type = types.CPointer(dtype)

    @intrinsic
    def to_pointer(typingctx, address):
        sig = ptr_type(types.int64)

        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(ptr_type))

        return sig, codegen

    return to_pointer


_i64_ptr = pointer_intrinsic(types.int64)
_i32_ptr = pointer_intrinsic(types.int32)


@intrinsic
def _void_ptr(typingctx, address):
    sig = types.voidptr(types.int64)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return sig, codegen


@intrinsic
def _address(typingctx, pointer):
    if not isinstance(pointer, (types.CPointer, types.RawPointer)):
        return None
    sig = types.int64(pointer)

    def codegen(context, builder, signature, args):
        return builder.ptrtoint(args[0], cgutils.intp_t)

    return sig, codegen


@intrinsic
def _readonly(typingctx, array):
    """The same array, typed read-only: writing into it fails to compile."""
    if not isinstance(array, types.Array):
        return None
    sig = array.copy(readonly=True)(array)

    def codegen(context, builder, signature, args):
        return args[0]  # same data model; only the type changes

    return sig, codegen


@njit
def _make_context(raw):
    h = carray(_i64_ptr(_address(raw)), _HLEN)
    n = h[_NUM_VERTICES]
    # The graph and the params are shared by every worker: read-only.
    return TaskContext(
        h,
        _readonly(carray(_i64_ptr(h[_INDPTR]), n + 1)),
        _readonly(carray(_i32_ptr(h[_INDICES]), h[_NUM_INDICES])),
        _readonly(carray(_i32_ptr(h[_LABELS]), h[_NUM_LABELS])),
        carray(_i64_ptr(h[_COUNTERS]), h[_NUM_COUNTERS]),
        carray(_i64_ptr(h[_MAXIMA]), h[_NUM_MAXIMA]),
        carray(_i64_ptr(h[_HIST]), (h[_HIST_ROWS], h[_HIST_BINS])),
        _readonly(carray(_i64_ptr(h[_PARAMS]), h[_NUM_PARAMS])),
    )


# ---- methods of TaskContext inside compiled code ----------------------------


def _is_context(t):
    return isinstance(t, types.BaseNamedTuple) and t.instance_class is TaskContext


def _int32_vector(name, arg):
    """Type check for arrays handed to the C++ side, which reads them as int32."""
    if not (isinstance(arg, types.Array) and arg.ndim == 1 and arg.dtype == types.int32):
        raise TypingError(
            f"ctx.{name} takes a 1-d int32 array (build it with np.empty(k, np.int32)), got {arg}"
        )


def _context_method(name, check=None):
    """Registers `fn(ctx, ...)` as method `name` of TaskContext in compiled code;
    `check(name, *arg_types)` may reject argument types with a clear message."""

    def decorate(fn):
        # Numba wants the typing function's signature to equal the implementation's.
        params = str(inspect.signature(fn))
        args = params.strip("()").split(", ")[1:]
        call = ", ".join(a.split("=")[0] for a in args)
        scope = {"_is_context": _is_context, "fn": fn, "check": check, "name": name}
        exec(
            f"def typer{params}:\n"
            f"    if _is_context(ctx):\n"
            f"        if check is not None:\n"
            f"            check(name, {call})\n"
            f"        return fn\n",
            scope,
        )
        overload_method(types.NamedTuple, name)(scope["typer"])
        return fn

    return decorate


@_context_method("timed_out")
def _timed_out(ctx):
    h = ctx.header
    if h[_TIMED_OUT] != 0:
        return True
    h[_COUNTDOWN] -= 1
    if h[_COUNTDOWN] > 0:
        return False
    return _check_time(_void_ptr(h[_SELF])) != 0


@_context_method("add_task", check=_int32_vector)
def _ctx_add_task(ctx, record):
    rec = np.ascontiguousarray(record)
    _add_task(_void_ptr(ctx.header[_SELF]), _i32_ptr(rec.ctypes.data), rec.size)


@_context_method("emitting")
def _emitting(ctx):
    return ctx.header[_EMITTING] != 0


@_context_method("emit", check=_int32_vector)
def _ctx_emit(ctx, vertices):
    if ctx.header[_EMITTING] != 0:
        vals = np.ascontiguousarray(vertices)
        _emit(_void_ptr(ctx.header[_SELF]), _i32_ptr(vals.ctypes.data), vals.size)


@_context_method("take")
def _ctx_take(ctx, n):
    return _take(_void_ptr(ctx.header[_SELF]), n)


@_context_method("count")
def _count(ctx, i, n=1):
    if 0 <= i < ctx.counters.size:
        ctx.counters[i] += n
    else:
        ctx.header[_ERROR] = _E_COUNTER


@_context_method("update_max")
def _update_max(ctx, i, value):
    if 0 <= i < ctx.maxima.size:
        if value > ctx.maxima[i]:
            ctx.maxima[i] = value
    else:
        ctx.header[_ERROR] = _E_MAXIMUM


@_context_method("add_to_histogram")
def _add_to_histogram(ctx, row, b, n=1):
    if 0 <= row < ctx.histograms.shape[0] and 0 <= b < ctx.histograms.shape[1]:
        ctx.histograms[row, b] += n
    else:
        ctx.header[_ERROR] = _E_HISTOGRAM


@_context_method("neighbors")
def _neighbors(ctx, v):
    return ctx.indices[ctx.indptr[v] : ctx.indptr[v + 1]]


@_context_method("degree")
def _degree(ctx, v):
    return ctx.indptr[v + 1] - ctx.indptr[v]


@_context_method("worker_id")
def _worker_id(ctx):
    return ctx.header[_WORKER_ID]


@_context_method("num_workers")
def _num_workers(ctx):
    return ctx.header[_NUM_WORKERS]


@functools.cache
def _context_type():
    """The Numba type of what ``_make_context`` returns (the shared arrays read-only):
    user functions are checked for it, and the entry point reuses that compilation."""
    _make_context.compile((types.voidptr,))
    return _make_context.overloads[(types.voidptr,)].signature.return_type


# ---- the Task base class ------------------------------------------------------


def _default_spawn(ctx, v):
    out = np.empty(1, np.int32)
    out[0] = v
    return out


class Task:
    """Base class of a CPU application. Subclass it and define, as static methods:

    ``spawn(ctx, v)`` (optional)
        Returns the initial task record of vertex ``v``: a 1-d int32 array, or an
        empty one to skip ``v``. The default record is ``[v]``.
    ``compute(ctx, record)``
        Processes one task record, whether spawned or spilled by decomposition.

    Class attributes name the results, merged over workers at the end:
    ``counters`` (summed), ``maxima`` (maximum) and ``histograms`` (summed
    per bin), each a tuple of names; index ``i`` in ``ctx.count(i)`` is the
    i-th name. Set ``boundscheck = True`` while developing an app: out-of-range
    indexing then stops the job with an error instead of corrupting memory.
    """

    counters: tuple[str, ...] = ()
    maxima: tuple[str, ...] = ()
    histograms: tuple[str, ...] = ()
    boundscheck: bool = False

    spawn = staticmethod(_default_spawn)

    @staticmethod
    def compute(ctx, record):  # pragma: no cover - replaced by subclasses
        raise NotImplementedError

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._entry = None
        for name, params in (("spawn", ("ctx", "v")), ("compute", ("ctx", "record"))):
            _check_signature(cls, name, len(params), params)
        for attr in ("counters", "maxima", "histograms"):
            names = getattr(cls, attr)
            if isinstance(names, str) or not all(isinstance(x, str) for x in names):
                raise TaskDefinitionError(
                    f"{cls.__qualname__}.{attr} must be a tuple of names, got {names!r}"
                )

    @classmethod
    def compiled(cls):
        """Compiles ``spawn`` and ``compute`` (once per class and process, or loads
        them from the compile cache, :mod:`gthinker.compiler`) and returns
        the native entry point that the C++ workers call, as a Numba cfunc."""
        if cls is Task:
            raise TaskDefinitionError("subclass gthinker.Task and define compute(ctx, record)")
        if cls.__dict__.get("_entry") is None:
            cls._entry = _compile(cls)
        return cls._entry


def _check_signature(cls, name, nparams, example):
    raw = inspect.getattr_static(cls, name)
    if name == "compute" and raw is inspect.getattr_static(Task, "compute"):
        raise TaskDefinitionError(f"{cls.__qualname__} must define compute(ctx, record)")
    if isinstance(raw, staticmethod):
        fn = raw.__func__
    elif inspect.isfunction(raw):
        raise TaskDefinitionError(
            f"{cls.__qualname__}.{name} must be a @staticmethod "
            f"{name}({', '.join(example)}): it is compiled to native code, which has no `self`"
        )
    else:
        raise TaskDefinitionError(f"{cls.__qualname__}.{name} must be a function, got {raw!r}")
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError) as exc:  # builtins and the like
        raise TaskDefinitionError(f"{cls.__qualname__}.{name}: {exc}") from None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)
    if len(positional) != nparams or variadic:
        got = ", ".join(p.name for p in params)
        raise TaskDefinitionError(
            f"{cls.__qualname__}.{name} must take exactly {nparams} arguments "
            f"({', '.join(example)}), got ({got})"
        )


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _first_lines(exc, n=12):
    lines = [ln for ln in _ANSI.sub("", str(exc)).splitlines() if ln.strip()]
    return "\n".join(lines[:n])


def _user_dispatcher(cls, name):
    fn = inspect.getattr_static(cls, name).__func__
    return njit(boundscheck=bool(cls.boundscheck), nogil=True)(fn)


def _check_compiles(cls, name, dispatcher, argtypes):
    """Compiles a user function alone, for an error message that names it;
    returns its return type."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumbaWarning)
            dispatcher.compile(argtypes)
    except NumbaError as exc:
        _raise_readonly_write(cls, exc)
        raise TaskDefinitionError(
            f"{cls.__qualname__}.{name} does not compile to native code:\n{_first_lines(exc)}"
        ) from None
    return dispatcher.overloads[argtypes].signature.return_type


def _raise_readonly_write(cls, exc):
    """A TaskDefinitionError that says what to do when ``exc`` is a write into one of
    the shared, read-only arrays."""
    if "readonly" in str(exc) and "setitem" in str(exc):
        raise TaskDefinitionError(
            f"{cls.__qualname__}: writes into a read-only array: ctx.indptr, ctx.indices, "
            f"ctx.neighbors(v), ctx.labels and ctx.params are the shared graph and "
            f"parameters; copy first (e.g. ctx.neighbors(v).copy())"
        ) from None


def _check_user_functions(cls, spawn, compute):
    spawn_ret = _check_compiles(cls, "spawn", spawn, (_context_type(), types.int32))
    if not (isinstance(spawn_ret, types.Array) and spawn_ret.dtype == types.int32
            and spawn_ret.ndim == 1):
        raise TaskDefinitionError(
            f"{cls.__qualname__}.spawn must return a 1-d int32 array (the task record), "
            f"but it returns {spawn_ret}; build it with np.empty(k, np.int32)"
        )
    _check_compiles(cls, "compute", compute, (_context_type(), RECORD_TYPE))


_ENTRY_SIGNATURE = types.int32(
    types.voidptr, types.int32, types.CPointer(types.int32), types.int64)


def _entry_point(spawn, compute):
    """The one native function the C++ workers call, for both kinds of task
    (Numba links and optimises a cfunc with all it calls: two would cost twice)."""
    spawn_raised = CODES["SPAWN_RAISED"]
    compute_raised = CODES["COMPUTE_RAISED"]

    def entry(raw, v, ptr, n):
        ctx = _make_context(raw)
        if _address(ptr) != 0:  # a spilled task record
            rec = carray(ptr, n)
        else:  # the initial task of vertex v
            try:
                rec = np.ascontiguousarray(spawn(ctx, v))
            except Exception:  # noqa: BLE001 - turned into an error code for the runtime
                return spawn_raised
            if ctx.header[_ERROR] != 0:  # a checked helper failed inside spawn
                return ctx.header[_ERROR] + SPAWN_PHASE
            if rec.size == 0:
                return 0
        try:
            compute(ctx, rec)
        except Exception:  # noqa: BLE001
            return compute_raised
        return 0

    return entry


def _compile(cls):
    """The entry point of ``cls``, loaded from the compile cache when its code
    is there (nothing is compiled then), else compiled and cached."""
    spawn = _user_dispatcher(cls, "spawn")
    compute = _user_dispatcher(cls, "compute")
    sig = _ENTRY_SIGNATURE
    entry = CFunc(_entry_point(spawn, compute), (sig.args, sig.return_type),
                  locals={}, options={"nopython": True})
    label = f"{cls.__qualname__} (CPU tasks)"
    entries = compiler.attach(entry, target="cpu", label=label, name=cls.__qualname__)
    lock = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumbaWarning)
            if entries.stored(sig, cpu_target.target_context):
                entry.compile()  # loads; an unreadable entry is compiled again
                return entry
            # One process compiles it; others starting meanwhile wait, then load it.
            lock = entries.claim(sig, cpu_target.target_context)
            if entries.stored(sig, cpu_target.target_context):
                entry.compile()
                return entry
            with compiler.compiling(label):
                _check_user_functions(cls, spawn, compute)
                entry.compile()
                return entry
    except NumbaError as exc:
        _raise_readonly_write(cls, exc)
        raise TaskDefinitionError(
            f"{cls.__qualname__}: spawn/compute compiled alone but not inside the runtime's "
            f"entry point:\n{_first_lines(exc)}"
        ) from None
    finally:
        if lock is not None:
            lock.release()

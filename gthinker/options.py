"""The options of a run, each with its default and its rule written once.

Three frozen dataclasses:

* :class:`RunOptions`: the scheduler's (CPU threads, the time budget and demand-driven
  splitting, assignment sizes, the spill limit, the progress interval);
* :class:`GPUOptions`: the GPU worker's (chunk sizes from the master, the device
  subgraph buffer, launch geometry);
* :class:`HybridOptions`: stealing between the GPU worker and the CPU workers.

``RunOptions`` holds the other two (``options.gpu``, ``options.hybrid``). An app declares its
own options the same way, once: a frozen :class:`AppOptions` dataclass of
:func:`option_field` fields (``docs/writing-apps.md``, "Adding an app").
:func:`gthinker.run` takes ``options=RunOptions(...)`` or the same names as keywords
(:meth:`RunOptions.from_keywords`; every field of the three classes is one flat name),
and the command line builds its shared flags and their help from the fields' metadata
(``help``, ``flag``, ``metavar``, ``default_text``), so that what a flag says and what
it checks is what the API says and checks. The module imports nothing heavy: the
command line builds its parser from it before it handles signals.

>>> RunOptions(time_budget=0.5).early_split_seconds
0.025
>>> RunOptions.from_keywords(tau_c=2, gpu_chunk=1024).gpu.gpu_chunk
1024
>>> RunOptions(cpu_chunk=0)
Traceback (most recent call last):
...
ValueError: cpu_chunk must be an integer from 1 to 9,223,372,036,854,775,807, got 0
"""

from __future__ import annotations

import dataclasses
import functools
import numbers
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

__all__ = ["AppOptions", "RunOptions", "GPUOptions", "HybridOptions", "MAX_THREADS", "ALL_GPUS",
           "MODES", "SEED_LIMIT", "available_cores", "boolean", "check", "choice", "mode_field",
           "positive_int", "positive_seconds", "seconds_or_off", "seed", "option_field",
           "describe", "output_path", "path", "JOB_KEYWORDS"]

#: The most CPU worker threads one job starts (each is an OS thread with its own stack).
MAX_THREADS = 4096
_INT64_MAX = 2**63 - 1
#: ``gpus="all"``: a GPU worker on every visible device (the default).
ALL_GPUS = "all"
#: Where a job runs: the CPU workers, the GPU workers alone, or both (``mode="auto"``
#: picks one: :func:`gthinker.gpu.resolve_mode`).
MODES = ("cpu", "gpu", "hybrid")


def available_cores() -> int:
    """CPU cores this process may run on: the default number of CPU worker threads, and
    the threads of the graph kernels."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# ---- the rules ------------------------------------------------------------------------

def positive_int(name, value, maximum=_INT64_MAX):
    """``value`` as an int in 1..maximum, or ValueError naming the range."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
            or not 1 <= value <= maximum):
        raise ValueError(f"{name} must be an integer from 1 to {maximum:,}, got {value!r}")
    return int(value)


def positive_seconds(name, value):
    """``value`` as a float > 0 (``inf``, or any span too long for the clock: never),
    or ValueError."""
    if isinstance(value, bool) or not (isinstance(value, numbers.Real) and value > 0):
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


def seconds_or_off(name, value):
    """``value`` as a float >= 0 (0: off; ``inf``: never), or ValueError."""
    if isinstance(value, bool) or not (isinstance(value, numbers.Real) and value >= 0):
        raise ValueError(f"{name} must be a number of seconds >= 0, got {value!r}")
    return float(value)


#: Seeds are integers in [0, SEED_LIMIT).
SEED_LIMIT = 2**63


def seed(name, value):
    """``value`` as an int seed in [0, 2**63), or ValueError."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
            or not 0 <= value < SEED_LIMIT):
        raise ValueError(f"{name} must be an integer from 0 to 2**63 - 1, got {value!r}")
    return int(value)


def _threads(name, value):
    return positive_int(name, value, MAX_THREADS)


def check(name, value):
    """``value`` checked by the rule of the option ``name`` (a field of
    :class:`RunOptions`, :class:`GPUOptions` or :class:`HybridOptions`): the rule and
    the message of the command line's flag. None (the default) passes. The apps
    check their ``threads`` and ``time_budget`` with it before any work (so
    ``threads=0`` is an error there: only a job with an external worker runs
    without CPU threads).

    >>> check("threads", 2), check("time_budget", None)
    (2, None)
    >>> check("threads", "2")
    Traceback (most recent call last):
    ...
    ValueError: threads must be an integer from 1 to 4,096, got '2'
    """
    if value is None:
        return None
    owner = RunOptions.keywords().get(name)
    if owner is None:
        raise KeyError(f"no option {name!r}")
    return describe(owner, name).metadata["check"](name, value)


def _any_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return int(value)


def boolean(name, value) -> bool:
    """The rule of an on/off option: ``value`` as a bool."""
    return bool(value)


def _gpus(name, value):
    """``"all"``, a number of GPUs N >= 1, or device ids (ints >= 0, or their text
    ``"0,2"``); a device named twice gets two workers (for tests)."""
    if isinstance(value, str):
        text = value.strip().lower()
        if text == ALL_GPUS:
            return ALL_GPUS
        try:
            value = tuple(int(x) for x in text.split(",")) if "," in text else int(text)
        except ValueError:
            value = text
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1:
        return int(value)
    if (isinstance(value, Sequence) and not isinstance(value, str) and value
            and all(isinstance(d, numbers.Integral) and not isinstance(d, bool) and d >= 0
                    for d in value)):
        return tuple(int(d) for d in value)
    raise ValueError(f"{name} must be a number of GPUs from 1, all, or device ids like 0,2; "
                     f"got {value!r}")


def _warp_multiple(name, value):
    value = positive_int(name, value)
    if value % 32:
        raise ValueError(f"{name} (gpu threads per block) must be a multiple of 32, got {value}")
    return value


def choice(*values):
    """The rule of an option that takes one of ``values`` (its ``choices``, which the
    command line offers).

    >>> choice("cpu", "gpu")("mode", "tpu")
    Traceback (most recent call last):
    ...
    ValueError: mode must be one of cpu, gpu; got 'tpu'
    """
    def one_of(name, value):
        if isinstance(value, str) and value in values:
            return value
        raise ValueError(f"{name} must be one of {', '.join(values)}; got {value!r}")

    one_of.choices = values
    return one_of


def path(name, value) -> str:
    """A file's path (a str or any os.PathLike), as a str."""
    try:
        return os.fspath(value)
    except TypeError:
        raise ValueError(f"{name} must be a path, got {value!r}") from None


def output_path(name, value) -> str:
    """A file to write results to: a path, or ``"-"`` for standard output."""
    value = path(name, value)
    return "/dev/stdout" if value == "-" else value


def option_field(default, help, check, *, flag=None, metavar=None, default_text=None):
    """A dataclass field with what the rest of gthinker needs to know of it.

    ``check(name, value)`` returns the value (normalised) or raises ValueError; it
    runs for every value but None (a check with a ``choices`` attribute, as
    :func:`choice` makes, gives the flag its choices). ``help`` is the command line's
    text (with ``default_text``, or the default itself, appended). ``flag`` is its flag:
    ``--name-with-dashes`` when not given; a string or a tuple of them (``("--output",
    "-o")``); for a bool, one flag that sets the other value (``--non-induced`` for a
    default True; without it a bool gets ``--name`` and ``--no-name``); for an option of
    rule :func:`boolean` and default None (on, off, or as the input says), the two flags
    that set True and False (``("--induced", "--non-induced")``); False: no flag (an
    option of the Python API only).
    """
    return field(default=default, metadata={
        "help": help, "check": check, "flag": flag, "metavar": metavar,
        "default_text": default_text})


def mode_field(modes, auto: str):
    """The ``mode`` option of an app that runs in ``modes`` (a subset of :data:`MODES`);
    ``auto`` says what ``"auto"``, its default, picks."""
    return option_field("auto", f"where to run: {', '.join(modes)}; auto: {auto}",
                        choice("auto", *modes))


def _check_fields(obj, skip=()):
    for f in dataclasses.fields(obj):
        check = f.metadata.get("check")
        if f.name in skip:
            continue
        value = getattr(obj, f.name)
        if check is not None and value is not None:
            object.__setattr__(obj, f.name, check(f.name, value))


def describe(cls, name) -> dataclasses.Field:
    """The field ``name`` of an options class (its metadata: help, check, flag, ...)."""
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f
    raise KeyError(name)


# ---- the options ----------------------------------------------------------------------

#: Initial vertices per GPU assignment by default (G-ThinkerCG's).
GPU_CHUNK = 500_000
#: The GPU worker's launches by default (G-ThinkerCG's kernels): blocks per multiprocessor
#: and threads per block of the process and extend kernels.
PROCESS_BLOCKS_PER_SM, EXTEND_BLOCKS_PER_SM = 16, 8
PROCESS_THREADS, EXTEND_THREADS = 128, 256
#: New subgraphs per level and warp of a GPUContext app that says nothing (G-ThinkerCG's).
ETA_PER_WARP = 1000
#: The share of the free GPU memory the GPU worker's subgraph buffer takes by default.
BUFFER_SHARE = 0.85
#: The share of the free host memory the host stack H, and the spill stack S, may take.
HOST_LIMIT_SHARE = SPILL_LIMIT_SHARE = 0.5
#: While a worker starves, tasks split after the time budget over this (demand-driven).
EARLY_SPLIT_DIVISOR = 20


@dataclass(frozen=True)
class GPUOptions:
    """What the master hands the GPU worker, and how the GPU worker uses the device.

    The chunk sizes are G-ThinkerCG's. ``None`` means the GPU worker's or the app's
    own choice (said in each help). ``gpus`` picks the devices: one GPU worker (and
    one master slot) per device, each with its own copy of the graph and buffers.
    """

    gpus: int | str | tuple[int, ...] | None = option_field(
        None, "GPUs to run on, one GPU worker each: N (the first N devices), all, or device "
        "ids like 0,2", _gpus, metavar="N|all", default_text="all")
    gpu_chunk: int | None = option_field(
        None, "initial vertices per GPU assignment, from the front of the vertex order",
        positive_int, metavar="N",
        default_text=f"{GPU_CHUNK}; with several GPUs, chunks of even estimated cost")
    gpu_task_batch: int = option_field(
        100_000, "spilled tasks the idle GPU takes from S at a time once the vertex deque "
        "is empty (CPU-to-GPU stealing)", positive_int, metavar="N")
    eta_per_warp: int | None = option_field(
        None, "new subgraphs per level and warp", positive_int, metavar="N",
        default_text=f"the app's GPUContext.eta_per_warp, {ETA_PER_WARP:,} unless it says")
    buffer_bytes: int | None = option_field(
        None, "cap on the device subgraph buffer; a level that does not fit goes to host "
        "memory", positive_int, metavar="BYTES",
        default_text=f"{BUFFER_SHARE:.0%} of the free GPU memory")
    host_limit_bytes: int | None = option_field(
        None, "cap on the host subgraph stack H", positive_int, metavar="BYTES",
        default_text=f"{HOST_LIMIT_SHARE:.0%} of the free host memory")
    blocks: int | None = option_field(
        None, "thread blocks per kernel launch", positive_int, metavar="N",
        default_text=f"{PROCESS_BLOCKS_PER_SM} (process) and {EXTEND_BLOCKS_PER_SM} (extend) "
                     "per multiprocessor")
    threads_per_block: int | None = option_field(
        None, "threads per block, a multiple of 32", _warp_multiple, metavar="N",
        default_text=f"{PROCESS_THREADS} (process), {EXTEND_THREADS} (extend)")
    fanout: int | None = option_field(
        None, "queue entries one subgraph may need", positive_int, metavar="N",
        default_text="the app's max_fanout, else max degree + 1")

    #: The fields the GPU worker takes (the level-by-level engine of GPUContext apps, with
    #: every field of HybridOptions); the others are the master's, for every GPU engine.
    WORKER_FIELDS = ("eta_per_warp", "buffer_bytes", "host_limit_bytes", "blocks",
                     "threads_per_block", "fanout")

    def __post_init__(self):
        _check_fields(self)

    def chunk_for(self, vertices: int, workers: int, guided: bool = False) -> int:
        """``gpu_chunk``, or its default for ``vertices`` initial vertices and
        ``workers`` GPU workers: G-ThinkerCG's 500,000, but with several GPUs
        at most ``vertices / (2 x workers)``, so that every GPU gets about two
        chunks. Chunks stay large (a GPU fills its warps with a chunk's
        subtrees); the GPUs balance the end by handing work to an idle one
        through S. ``guided``: the runtime cuts the chunks by estimated cost
        (:mod:`gthinker.gpu.sharing`), and this is only their cap, 500,000."""
        if self.gpu_chunk is not None:
            return self.gpu_chunk
        if workers <= 1 or guided:
            return GPU_CHUNK
        return max(1, min(GPU_CHUNK, -(-vertices // (2 * workers))))


@dataclass(frozen=True)
class HybridOptions:
    """Stealing between the GPU worker and the CPU workers (``mode="hybrid"``)."""

    tau_c: int | None = option_field(
        None, "the GPU hands work to the CPUs while more than N CPU workers are idle",
        _any_int, metavar="N", default_text="half of them")
    steal_bound: int = option_field(
        1_000_000, "... and while S holds fewer than N tasks", positive_int, metavar="N")
    steal_batch: int = option_field(
        1_000_000, "subgraphs moved from H to S at a time", positive_int, metavar="N")
    give_back: bool = option_field(
        True, "the GPU hands half of its chunk's unstarted vertices back to idle CPU workers",
        boolean)
    level_steal: bool = option_field(
        True, "idle CPU workers also get unread subgraphs from the GPU's device levels "
        "(not only H and handed-back vertices)", boolean)
    steal_interval: float = option_field(
        0.005, "seconds between the GPU's checks for idle CPU workers", seconds_or_off,
        metavar="SECONDS")

    def __post_init__(self):
        _check_fields(self)


@dataclass(frozen=True)
class RunOptions:
    """How the master schedules a job (G-ThinkerCG's parameters, with its defaults)."""

    threads: int | None = option_field(
        None, "CPU worker threads", _threads, metavar="N", default_text="all cores")
    time_budget: float = option_field(
        0.1, "seconds a task runs before it is decomposed (G-ThinkerCG's tau_time; inf: never)",
        positive_seconds, metavar="SECONDS")
    early_split: float | None = option_field(
        None, "while a worker starves (idle, S empty), tasks split after this long instead "
        "(demand-driven splitting)", seconds_or_off, metavar="SECONDS",
        default_text=f"time budget / {EARLY_SPLIT_DIVISOR}; 0: off")
    gpu_idle_split: float | None = option_field(
        None, "the same while the GPU worker waits for work (hybrid)", seconds_or_off,
        metavar="SECONDS", default_text="early split; 0: off")
    cpu_chunk: int = option_field(
        50, "initial vertices per CPU assignment, from the back of the vertex order",
        positive_int, metavar="N")
    cpu_task_batch: int = option_field(
        8, "spilled tasks per CPU assignment, from the top of S", positive_int, metavar="N")
    flush_batch: int = option_field(
        64, "decomposed tasks a worker buffers before it flushes them to S in one lock",
        positive_int, metavar="N")
    timeout_check_interval: int = option_field(
        64, "ctx.timed_out() reads the clock once every this many calls", positive_int,
        metavar="N")
    spill_limit: int | None = option_field(
        None, "fail if the spill stack S grows past this many bytes", positive_int,
        metavar="BYTES", default_text=f"{SPILL_LIMIT_SHARE:.0%} of the free memory")
    progress_interval: float = option_field(
        2.0, "seconds between progress reports", seconds_or_off, metavar="SECONDS")
    gpu: GPUOptions = field(default_factory=GPUOptions)
    hybrid: HybridOptions = field(default_factory=HybridOptions)

    def __post_init__(self):
        # threads=0 (no CPU workers) is allowed beside an external worker: the job checks.
        _check_fields(self, skip=("threads",) if self.threads == 0 else ())
        for name, cls in (("gpu", GPUOptions), ("hybrid", HybridOptions)):
            if not isinstance(getattr(self, name), cls):
                raise TypeError(f"{name} must be a gthinker.options.{cls.__name__}, "
                                f"got {getattr(self, name)!r}")

    @property
    def early_split_seconds(self) -> float:
        """``early_split``, or its default: the time budget over EARLY_SPLIT_DIVISOR."""
        return (self.time_budget / EARLY_SPLIT_DIVISOR if self.early_split is None
                else self.early_split)

    @property
    def gpu_idle_split_seconds(self) -> float:
        """``gpu_idle_split``, or its default: the early split."""
        return self.early_split_seconds if self.gpu_idle_split is None else self.gpu_idle_split

    def worker_settings(self) -> list[str]:
        """The GPU worker's options (:attr:`GPUOptions.WORKER_FIELDS`, every field of
        :class:`HybridOptions`) set to other than their defaults: the options of the
        level-by-level engine, which no other GPU engine takes."""
        gpu, hybrid = _defaults().gpu, _defaults().hybrid
        return ([n for n in GPUOptions.WORKER_FIELDS
                 if getattr(self.gpu, n) != getattr(gpu, n)]
                + [f.name for f in dataclasses.fields(HybridOptions)
                   if getattr(self.hybrid, f.name) != getattr(hybrid, f.name)])

    @classmethod
    def keywords(cls) -> dict[str, type]:
        """Every flat keyword :meth:`from_keywords` takes, and the class it belongs to."""
        return dict(_keywords())

    @classmethod
    def from_keywords(cls, options: RunOptions | None = None, gpu_options=None,
                      **keywords) -> RunOptions:
        """``options`` (default: all defaults) with ``keywords`` put in.

        A keyword is any field of the three classes by its own name
        (``time_budget=``, ``gpu_chunk=``, ``tau_c=``); None leaves a field as
        it is (so an app can take ``time_budget=None`` to mean gthinker's
        default). ``gpu_options`` is the older dict (or a :class:`GPUOptions`
        or :class:`HybridOptions`) of the GPU worker's and stealing fields.
        TypeError names an unknown keyword.

        >>> RunOptions.from_keywords(time_budget=None, cpu_chunk=4).time_budget
        0.1
        """
        base = _defaults() if options is None else options
        if not isinstance(base, RunOptions):
            raise TypeError(f"options must be a gthinker.RunOptions, got {base!r}")
        if isinstance(gpu_options, GPUOptions):
            base = dataclasses.replace(base, gpu=gpu_options)
        elif isinstance(gpu_options, HybridOptions):
            base = dataclasses.replace(base, hybrid=gpu_options)
        elif gpu_options is not None:
            keywords = {**dict(gpu_options), **keywords}
        owner = _keywords()
        parts: dict[type, dict] = {RunOptions: {}, GPUOptions: {}, HybridOptions: {}}
        for name, value in keywords.items():
            if name not in owner:
                raise TypeError(f"unknown option {name!r}; the options are "
                                f"{', '.join(sorted(owner))}")
            if value is not None:
                parts[owner[name]][name] = value
        if not any(parts.values()):  # each replace checks every field again
            return base
        gpu = dataclasses.replace(base.gpu, **parts[GPUOptions])
        hybrid = dataclasses.replace(base.hybrid, **parts[HybridOptions])
        return dataclasses.replace(base, gpu=gpu, hybrid=hybrid, **parts[RunOptions])


@functools.cache
def _keywords() -> dict[str, type]:
    names = {f.name: RunOptions for f in dataclasses.fields(RunOptions)
             if f.name not in ("gpu", "hybrid")}
    names.update({f.name: GPUOptions for f in dataclasses.fields(GPUOptions)})
    names.update({f.name: HybridOptions for f in dataclasses.fields(HybridOptions)})
    return names


@functools.cache
def _defaults() -> RunOptions:
    """All defaults, made (and checked) once: the options are frozen."""
    return RunOptions()


# ---- an app's options -----------------------------------------------------------------

@dataclass(frozen=True)
class AppOptions:
    """The base of an app's options: a frozen dataclass whose fields (:func:`option_field`,
    each with its default, help and rule) are every option of the app's Python function
    (``mode`` by :func:`mode_field`; ``output``, for an app that lists results, with the
    rule :func:`output_path`). From it come the app's command-line flags and their help,
    the keyword checks of its function (:meth:`split`), its cluster request
    (:class:`gthinker.runtime.request.Request`) and its ``--help``; adding an option is one
    field. A subclass may override :meth:`check`, for rules between fields.

    Class attributes (not fields) say which of the shared options (the fields of
    :class:`RunOptions`, :class:`GPUOptions`, :class:`HybridOptions`) it takes:
    ``scheduler``, those it has as flags; ``gpu``, whether it has every GPU option as a
    flag; ``forwards``, whether its function passes :func:`gthinker.run`'s keywords on
    (every shared option, flag or not; else it takes ``scheduler`` only); ``notes``, its
    own words added to a shared flag's default; ``renamed``, the names its function took
    before and what they are now (the TypeError says so).
    """

    scheduler = ("threads", "time_budget")
    gpu = False
    forwards = True
    notes: ClassVar[dict] = {}
    renamed: ClassVar[dict] = {}

    def __post_init__(self):
        _check_fields(self)
        self.check()

    def check(self) -> None:
        """Rules between fields (ValueError); each field's own rule has run."""

    def keywords(self) -> dict:
        """Every option by its name."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def split(cls, keywords: dict) -> tuple[AppOptions, dict]:
        """``keywords`` (of the app's function) as the app's options, each checked, and
        the rest (:func:`gthinker.run`'s: the shared options, each checked, and
        :data:`JOB_KEYWORDS`). A keyword of None leaves an option's default. TypeError
        names an option the app does not take.

        >>> AppOptions.split({"threads": 2, "stop": None})
        (AppOptions(), {'threads': 2, 'stop': None})
        """
        own = {f.name for f in dataclasses.fields(cls)}
        shared = RunOptions.keywords()
        rest = {k: v for k, v in keywords.items() if k not in own}
        taken = [*shared, *JOB_KEYWORDS] if cls.forwards else cls.scheduler
        renamed = {**_RENAMED, **cls.renamed}
        for name in rest:
            if name not in taken:
                hint = f"; it is {renamed[name]} now" if name in renamed else ""
                raise TypeError(f"unknown option {name!r}{hint}; the options are "
                                f"{', '.join(sorted(own))}, and "
                                + (f"gthinker.run's: {', '.join(shared)}" if cls.forwards
                                   else ", ".join(cls.scheduler)))
        for name, value in rest.items():
            if name in shared:
                check(name, value)  # the flag's rule: threads=0 is not all cores here
        options = cls(**{k: v for k, v in keywords.items() if k in own and v is not None})
        return options, rest


#: The keywords of :func:`gthinker.run`, besides the options, that an app's function takes
#: and passes on as they come: a stop token, a progress callback, the roots or task
#: records of a cluster's unit, the format of a stream's output.
JOB_KEYWORDS = ("stop", "progress", "vertices", "records", "output_format")
#: A name every app's function took before, and what it is now (said in the TypeError).
_RENAMED = {"gpu_options": "one keyword per option (buffer_bytes=, tau_c=, ...)"}

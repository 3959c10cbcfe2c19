"""Everything an app author needs, in one module: ``from gthinker.extending import ...``.

An app (the bundled ones in :mod:`gthinker.apps`, or yours: the top-level ``apps/``
folder of the repository holds examples written on nothing else) imports gthinker's
names from here, never from the modules that define them, and never a private
(``_x``) name. What is here:

=========================  ==============================================================
the work                    :class:`Task` (``spawn``, ``compute``) and :class:`TaskContext`
                            (the ``ctx`` compiled code gets), :func:`run` and its
                            :class:`JobResult`, :class:`RunOptions`, :class:`GPUOptions`,
                            :class:`HybridOptions`, :class:`StopToken`, :func:`default_threads`
the graph                   :class:`Graph`, :func:`as_graph`, :func:`keyed_rows` (rows
                            sorted by edge label and direction, then neighbour),
                            :func:`say_skeleton` (an app that leaves edge labels and
                            directions out says so once)
results                     :func:`iter_results` (any Task's emitted results, while its
                            job runs), :func:`batches` and :class:`Batch` (the same in
                            numpy batches, for any job-running function), :func:`text`
                            (as text lines), :func:`check_output` (an output path, checked
                            before any work)
compiled helpers            :func:`jit` (``@jit(label)``: a Numba function kept in gthinker's
                            compile cache), :func:`compile_seconds`, the sorted-set helpers
                            :func:`lower_bound`, :func:`contains`, :func:`intersect`,
                            :func:`intersect_size`,
                            :func:`intersect_positions`, :func:`put` (a slice copied
                            without Numba's slow-to-compile slice assignment) and the bit helpers
                            :func:`popcount`, :func:`lowest_bit`, :func:`pop_lowest`,
                            :func:`count_bits`, :func:`gather`, :func:`unowned`,
                            :func:`pointer_intrinsic`,
                            :mod:`steps` (a Numba pass over vertex ranges on all cores)
the GPU                     :class:`GPUContext` (a GPU app on the framework's GPU worker),
                            :mod:`gpu` (its device helpers ``gpu.append``, ``gpu.count``, ...,
                            and the device functions: ``gpu.resolve_mode``,
                            ``gpu.resolve_devices``, ``gpu.on_device``,
                            ``gpu.graph_on_device``, ``gpu.device_totals``),
                            :class:`GPUEngine`, :class:`EngineSetup`,
                            :class:`EngineResults`, ``NO_MAXIMUM`` (an engine of your own:
                            one per device of ``gpus``), :mod:`launch` (``launch.kernel``,
                            ``launch.blocks``, ``launch.Launch``: every kernel's compile
                            cache, geometry and relaunch), :class:`SharedCursor`,
                            :func:`guided_cuts`, :func:`deal` and :class:`WorkPool` (work
                            shared among devices by cost),
                            :mod:`simulator` (``simulator.enabled()``, ``fast_switching``),
                            :class:`StopFlag` (a kernel that stops when the job does: the
                            device functions :func:`stop_requested`,
                            :func:`warp_stop_requested`, :func:`block_stop_requested`,
                            polled every ``POLL`` claims; :func:`kernels_done`)
declaring the app           :class:`AppOptions` and :func:`option_field` (its options,
                            declared once: a field each, with its default, help and rule;
                            :func:`mode_field` for ``mode``; ``JOB_KEYWORDS``, what a
                            function that forwards :func:`run`'s keywords takes besides),
                            the rules :func:`positive_int`, :func:`positive_seconds`,
                            :func:`seconds_or_off`, :func:`seed`, :func:`boolean`,
                            :func:`choice`, :func:`path`, :func:`output_path`, and
                            :func:`check_option` (a shared option by its flag's rule);
                            :class:`Request` (what it was asked to do, run here or over a
                            cluster: a subclass writes ``call``), :class:`JobRequest` (one
                            whose result is a :class:`JobResult`), :class:`TaskRequest`,
                            :func:`roots`, ``NO_ROOTS``, :func:`squared`,
                            :func:`max_compile`; :class:`App`, ``GRAPH``,
                            ``DATA_AND_QUERY``, ``GRAPH_AND_PATTERN``, :func:`register`
                            (its command, cluster and warm-up: :mod:`gthinker.registry`);
                            :func:`idle_stats` (the stats of a job that did nothing),
                            :func:`check_fits` (a "would not fit in memory" check)
errors                      :class:`GThinkerError`, :class:`TaskDefinitionError`,
                            :class:`TaskRuntimeError`, :class:`SpillLimitError`,
                            :class:`DeviceUnavailableError`, :class:`GraphFormatError`,
                            :class:`GraphTooLargeError`
=========================  ==============================================================

Importing this module is cheap: each name is imported on first use (``from
gthinker.extending import App, Request`` loads no Numba), so an app's declaration can
import from here too. ``tests/apps/test_user_apps.py`` checks that every name resolves,
``tests/test_imports.py`` that the apps in ``apps/`` import gthinker from nowhere else and
that the bundled apps' import statements name it (but for the exceptions it lists).
"""

from __future__ import annotations

import importlib

#: name -> (module under gthinker, attribute; None: the module itself)
_NAMES = {
    # the work
    "Task": ("runtime.task", "Task"),
    "TaskContext": ("runtime.task", "TaskContext"),
    "pointer_intrinsic": ("runtime.task", "pointer_intrinsic"),
    "run": ("runtime.job", "run"),
    "JobResult": ("runtime.job", "JobResult"),
    "default_threads": ("runtime.job", "default_threads"),
    "idle_stats": ("runtime.job", "idle_stats"),
    "StopToken": ("stopping", "StopToken"),
    "RunOptions": ("options", "RunOptions"),
    "GPUOptions": ("options", "GPUOptions"),
    "HybridOptions": ("options", "HybridOptions"),
    # the graph
    "Graph": ("graphs.graph", "Graph"),
    "as_graph": ("graphs.graph", "as_graph"),
    "keyed_rows": ("graphs.edges", "keyed_rows"),
    "say_skeleton": ("graphs.edges", "say_skeleton"),
    # results
    "iter_results": ("runtime.stream", "iter_results"),
    "batches": ("runtime.stream", "batches"),
    "Batch": ("runtime.stream", "Batch"),
    "text": ("runtime.stream", "text"),
    "check_output": ("runtime.outputs", "check_output"),
    # compiled helpers
    "jit": ("compiler", "jit"),
    "compile_seconds": ("compiler", "compile_seconds"),
    "lower_bound": ("setops", "lower_bound"),
    "contains": ("setops", "contains"),
    "intersect": ("setops", "intersect"),
    "intersect_size": ("setops", "intersect_size"),
    "intersect_positions": ("setops", "intersect_positions"),
    "put": ("setops", "put"),
    "popcount": ("bits", "popcount"),
    "lowest_bit": ("bits", "lowest_bit"),
    "pop_lowest": ("bits", "pop_lowest"),
    "count_bits": ("bits", "count_bits"),
    "gather": ("bits", "gather"),
    "unowned": ("bits", "unowned"),
    "check_fits": ("memory", "check_fits"),
    "steps": ("runtime.steps", None),
    # the GPU
    "GPUContext": ("gpu.context", "GPUContext"),
    "gpu": ("gpu", None),
    "GPUEngine": ("gpu.engine", "GPUEngine"),
    "EngineSetup": ("gpu.engine", "EngineSetup"),
    "EngineResults": ("gpu.engine", "EngineResults"),
    "NO_MAXIMUM": ("gpu.engine", "NO_MAXIMUM"),
    "launch": ("gpu.launch", None),
    "SharedCursor": ("gpu.sharing", "SharedCursor"),
    "guided_cuts": ("gpu.sharing", "guided_cuts"),
    "deal": ("gpu.sharing", "deal"),
    "WorkPool": ("gpu.sharing", "WorkPool"),
    "simulator": ("gpu.simulator", None),
    "StopFlag": ("gpu.stop_flag", "StopFlag"),
    "POLL": ("gpu.stop_flag", "POLL"),
    "stop_requested": ("gpu.stop_flag", "stop_requested"),
    "warp_stop_requested": ("gpu.stop_flag", "warp_stop_requested"),
    "block_stop_requested": ("gpu.stop_flag", "block_stop_requested"),
    "kernels_done": ("gpu.stop_flag", "kernels_done"),
    # declaring the app
    "AppOptions": ("options", "AppOptions"),
    "option_field": ("options", "option_field"),
    "mode_field": ("options", "mode_field"),
    "JOB_KEYWORDS": ("options", "JOB_KEYWORDS"),
    "positive_int": ("options", "positive_int"),
    "positive_seconds": ("options", "positive_seconds"),
    "seconds_or_off": ("options", "seconds_or_off"),
    "seed": ("options", "seed"),
    "boolean": ("options", "boolean"),
    "choice": ("options", "choice"),
    "path": ("options", "path"),
    "output_path": ("options", "output_path"),
    "check_option": ("options", "check"),
    "App": ("registry", "App"),
    "GRAPH": ("registry", "GRAPH"),
    "DATA_AND_QUERY": ("registry", "DATA_AND_QUERY"),
    "GRAPH_AND_PATTERN": ("registry", "GRAPH_AND_PATTERN"),
    "register": ("registry", "register"),
    "Request": ("runtime.request", "Request"),
    "JobRequest": ("runtime.request", "JobRequest"),
    "TaskRequest": ("runtime.request", "TaskRequest"),
    "roots": ("runtime.request", "roots"),
    "NO_ROOTS": ("runtime.request", "NO_ROOTS"),
    "squared": ("runtime.request", "squared"),
    "max_compile": ("runtime.request", "max_compile"),
    # errors
    "GThinkerError": ("errors", "GThinkerError"),
    "TaskDefinitionError": ("errors", "TaskDefinitionError"),
    "TaskRuntimeError": ("errors", "TaskRuntimeError"),
    "SpillLimitError": ("errors", "SpillLimitError"),
    "DeviceUnavailableError": ("errors", "DeviceUnavailableError"),
    "GraphFormatError": ("errors", "GraphFormatError"),
    "GraphTooLargeError": ("errors", "GraphTooLargeError"),
}

__all__ = sorted(_NAMES)


def __getattr__(name):
    found = _NAMES.get(name)
    if found is None:
        raise AttributeError(f"gthinker.extending has no {name!r}; it holds "
                             f"{', '.join(__all__)}")
    module, attribute = found
    value = importlib.import_module(f"gthinker.{module}")
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value  # found directly from now on
    return value


def __dir__():
    return sorted(set(globals()) | set(_NAMES))

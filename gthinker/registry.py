"""The apps gthinker knows: each declares itself once, as an :class:`App`, and the
command line, the cluster and ``gthinker warmup`` loop over them.

An app is found three ways, in this order:

1. the entry point group ``gthinker.apps`` (the bundled apps, declared in
   ``pyproject.toml``, and those of any installed package): ``name =
   "package.module:APP"``;
2. the modules named in ``$GTHINKER_APPS`` (comma-separated), each holding an ``APP``
   (an :class:`App`) or ``APPS`` (a list of them): apps used without packaging them;
3. :func:`register` at run time (``gthinker.cluster`` and ``gthinker.cli.warmup`` then
   know the app in this process; the command line only knows what 1. and 2. give).

:func:`apps` lists them by name. Nothing here imports an app by name: the engine
(everything outside ``gthinker.apps``) never imports one.

An :class:`App` says what its command takes and how to make a
:class:`gthinker.runtime.request.Request` of it (the same request runs in this process and
on a cluster), how its result reads as text, and what ``gthinker warmup`` compiles
(``docs/writing-apps.md``, "Adding an app").
"""

from __future__ import annotations

import argparse
import importlib
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points

__all__ = ["App", "DATA_AND_QUERY", "ENTRY_POINTS", "ENV", "GRAPH", "apps", "get",
           "positive_int_arg", "register"]

#: The entry point group apps are declared in.
ENTRY_POINTS = "gthinker.apps"
#: Modules (comma-separated) whose ``APP`` or ``APPS`` are apps too.
ENV = "GTHINKER_APPS"

#: The inputs an app's command may take, in order: a graph, or a data graph and a query
#: (a query file, a directory of them, or a pattern name: one request per query).
GRAPH = ("graph",)
DATA_AND_QUERY = ("data", "query")


@dataclass(frozen=True)
class App:
    """One app, as the command line, the cluster and ``gthinker warmup`` see it.

    Parameters
    ----------
    name : str
        Its command (``gthinker NAME``) and its name on a cluster
        (``gthinker.cluster.NAME(graph, cluster=..., **keywords)``).
    summary, description, epilog : str
        One line for ``gthinker --help``; the command's description and its
        examples (shown as written).
    request : callable
        ``request(query=None, **keywords) -> Request``: the app's request for the
        keywords of its Python function (``mode=``, ``threads=`` excluded: the
        runner gives those), for one query (``inputs == DATA_AND_QUERY``).
    from_args : callable
        ``from_args(args) -> dict``: the keywords of :attr:`request` that the
        command line ``args`` gave (the app's own flags and the shared ones it takes).
        It may raise ValueError (said before the graph loads).
    describe : callable
        ``describe(result, label) -> list[str]``: the result as text lines (``label``:
        the query's name, or None).
    inputs : tuple
        :data:`GRAPH` or :data:`DATA_AND_QUERY`.
    add_arguments : callable, optional
        ``add_arguments(parser)``: the app's own flags.
    modes : tuple
        Its modes besides ``auto`` (the ``--mode`` choices).
    mode_help : str
        What ``--mode auto`` does for this app.
    options : tuple
        The shared scheduler flags it takes (fields of :mod:`gthinker.options`).
    option_notes : dict
        A command's own words added to a shared flag's default.
    gpu_options : bool
        Whether it takes the GPU worker's and stealing flags.
    lists_results : bool
        Whether it takes ``--output`` (and ``--ray-output``).
    progress : str or callable, optional
        The name of the counter progress lines show, or ``progress(snapshot) ->
        str`` for a line of its own making (None: no progress lines).
    warmup : callable, optional
        ``warmup(graph, gpu) -> [(name, function), ...]``: what ``gthinker warmup``
        runs on a small graph to compile the app (``gpu``: the GPU side too).
    """

    name: str
    summary: str
    description: str
    request: Callable
    from_args: Callable
    describe: Callable
    inputs: tuple = GRAPH
    epilog: str = ""
    add_arguments: Callable | None = None
    modes: tuple = ("cpu", "gpu", "hybrid")
    mode_help: str = "hybrid if a CUDA GPU is usable, else cpu"
    options: tuple = ("threads", "time_budget")
    option_notes: dict = field(default_factory=dict)
    gpu_options: bool = False
    lists_results: bool = False
    progress: str | Callable | None = None
    warmup: Callable | None = None

    def __post_init__(self):
        if not self.name.isidentifier() or self.name.startswith("_"):
            raise ValueError(f"an app's name is its command and a Python name: "
                             f"got {self.name!r}")
        if self.inputs not in (GRAPH, DATA_AND_QUERY):
            raise ValueError(f"inputs must be {GRAPH} or {DATA_AND_QUERY}, got {self.inputs!r}")


def positive_int_arg(text: str) -> int:
    """An argparse ``type`` for an app's own flags that take a count N >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


_lock = threading.Lock()
_apps: dict[str, App] = {}
_found = False


def register(app: App, *, replace: bool = False) -> App:
    """Adds ``app`` to the registry (for this process); returns it. Another app of the
    same name is an error unless ``replace``."""
    if not isinstance(app, App):
        raise TypeError(f"register() takes a gthinker.registry.App, got {app!r}")
    with _lock:
        old = _apps.get(app.name)
        if old is not None and old is not app and not replace:
            raise ValueError(f"an app named {app.name!r} is registered already "
                             f"(from {old.request.__module__})")
        _apps[app.name] = app
    return app


def _declared(obj, where: str) -> Sequence[App]:
    found = obj if isinstance(obj, (list, tuple)) else [obj]
    for app in found:
        if not isinstance(app, App):
            raise TypeError(f"{where} must be a gthinker.registry.App (or a list of them), "
                            f"got {app!r}")
    return found


def _find() -> None:
    """Loads the apps of the entry points and of ``$GTHINKER_APPS`` (once)."""
    global _found
    if _found:
        return
    found: list[App] = []
    for ep in entry_points(group=ENTRY_POINTS):
        found += _declared(ep.load(), f"entry point {ep.name} = {ep.value}")
    for name in filter(None, (m.strip() for m in os.environ.get(ENV, "").split(","))):
        module = importlib.import_module(name)
        obj = getattr(module, "APPS", None) or getattr(module, "APP", None)
        if obj is None:
            raise ImportError(f"{ENV} names {name}, which has no APP or APPS")
        found += _declared(obj, f"{name}.APP")
    for app in found:
        register(app, replace=True)
    _found = True


def apps() -> dict[str, App]:
    """Every known app by name, sorted."""
    _find()
    with _lock:
        return dict(sorted(_apps.items()))


def get(name: str) -> App:
    """The app called ``name``; KeyError listing the known ones otherwise."""
    known = apps()
    if name not in known:
        raise KeyError(f"no app named {name!r}; the apps are {', '.join(known) or 'none'}")
    return known[name]

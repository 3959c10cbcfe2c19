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

An :class:`App` names the app's options (a :class:`gthinker.options.AppOptions`
dataclass: every flag of its command, every keyword of its function, each with its default,
help and rule, declared once) and its :class:`gthinker.runtime.request.Request` (the same
request runs in this process and on a cluster), says how its result reads as text, and
what ``gthinker warmup`` compiles (``docs/writing-apps.md``, "Adding an app").
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points

from gthinker.options import AppOptions
from gthinker.runtime.request import Request

__all__ = ["App", "DATA_AND_QUERY", "ENTRY_POINTS", "ENV", "GRAPH", "GRAPH_AND_PATTERN",
           "apps", "get", "register"]

#: The entry point group apps are declared in.
ENTRY_POINTS = "gthinker.apps"
#: Modules (comma-separated) whose ``APP`` or ``APPS`` are apps too.
ENV = "GTHINKER_APPS"

#: The inputs an app's command may take, in order: a graph; a data graph and a query (a
#: query file, a directory of them, or a pattern name: one request per query); or a graph
#: and a pattern (a name or a file: one request).
GRAPH = ("graph",)
DATA_AND_QUERY = ("data", "query")
GRAPH_AND_PATTERN = ("graph", "pattern")


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
    options : AppOptions subclass
        Its options: the command's flags (with the shared ones it names) and the
        keywords of its function, checked by the same rules.
    request : Request subclass
        Its request: ``request(*inputs, options=..., **keywords)`` runs the app's
        function (:meth:`Request.call`) here or, split into ranges, on a cluster.
    describe : callable
        ``describe(result, label) -> list[str]``: the result as text lines (``label``:
        the query's name, or None).
    inputs : tuple
        :data:`GRAPH`, :data:`DATA_AND_QUERY` or :data:`GRAPH_AND_PATTERN`: the
        command's arguments; the graph loads, the others go to the function after it.
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
    options: type[AppOptions]
    request: type[Request]
    describe: Callable
    inputs: tuple = GRAPH
    epilog: str = ""
    progress: str | Callable | None = None
    warmup: Callable | None = None

    def __post_init__(self):
        if not self.name.isidentifier() or self.name.startswith("_"):
            raise ValueError(f"an app's name is its command and a Python name: "
                             f"got {self.name!r}")
        if self.inputs not in (GRAPH, DATA_AND_QUERY, GRAPH_AND_PATTERN):
            raise ValueError(f"inputs must be {GRAPH}, {DATA_AND_QUERY} or "
                             f"{GRAPH_AND_PATTERN}, got {self.inputs!r}")
        for what, base in (("options", AppOptions), ("request", Request)):
            value = getattr(self, what)
            if not (isinstance(value, type) and issubclass(value, base)):
                raise TypeError(f"App {what} must be a subclass of {base.__module__}."
                                f"{base.__qualname__}, got {value!r}")

    def make_request(self, *inputs, **keywords) -> Request:
        """The app's request for the keywords of its function (each checked by its
        option's rule: ValueError, or TypeError for one the app does not take), for
        ``inputs`` (what follows the graph: a query, a pattern)."""
        options, rest = self.options.split(keywords)
        return self.request(*inputs, options=options, **rest)


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

"""The shape of the import graph, read from the source (every ``import``, at any depth:
imports inside functions count; those under ``if TYPE_CHECKING:`` do not run, and do
not count; ``gthinker.X.Y`` after ``import gthinker`` counts as an import of what it
names): no import circles; a module imports only from its own layer or the layers below
(:data:`LAYERS`); the engine (everything outside ``gthinker.apps``) never imports an app,
and no app imports another (they share ``gthinker.apps.matching``); no module takes
another's private (``_``) names; the bundled apps' import statements go through
``gthinker.extending`` (but for :data:`APP_EXCEPTIONS`), and the apps of the top-level
``apps/`` folder import gthinker through it alone. See docs/architecture.md, "Layers"."""

import ast
import functools
import importlib.machinery
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "gthinker"
APPS = "gthinker.apps"
#: The apps written as a user would, on gthinker.extending only (a folder each).
USER_APPS = ROOT.parent / "apps"

#: The layers of the package, top to bottom, each a list of module prefixes (a module
#: belongs to the layer of its longest prefix). The one place the order is written;
#: docs/architecture.md, "Layers", draws it.
LAYERS = [
    ("apps", ["gthinker.apps", "gthinker.extending"]),
    ("front ends", ["gthinker.cli", "gthinker.cluster", "gthinker.__main__"]),
    ("runtime", ["gthinker.runtime", "gthinker.registry"]),
    ("gpu", ["gthinker.gpu"]),
    ("graphs", ["gthinker.graphs", "gthinker.setops", "gthinker.bits"]),
    ("compiler", ["gthinker.compiler"]),
    ("base", ["gthinker", "gthinker.options", "gthinker.memory", "gthinker.stopping",
              "gthinker.errors", "gthinker.text"]),
]
#: Inside ``gthinker.apps``: the shared floor, and the front ends over the apps (the
#: NetworkX backend calls their public functions); every other package is an app.
APP_FLOOR = ["gthinker.apps", "gthinker.apps.matching"]
OVER_APPS = ["gthinker.apps.networkx"]


def _modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name)."""
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _type_checking_lines(tree) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                lines.update(range(sub.lineno, sub.end_lineno + 1))
    return lines


@functools.cache
def _lazy_names() -> dict[str, str]:
    """``gthinker.NAME`` -> the module that defines it (the package's lazy table)."""
    tree = ast.parse((ROOT / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_LAZY":
            return {k: f"gthinker.{v}" for k, v in ast.literal_eval(node.value).items()}
    raise AssertionError("gthinker/__init__.py has no _LAZY table")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _extension(dotted: str) -> bool:
    """Whether ``dotted`` is a compiled module of the package (``gthinker._core``): a
    module, not a private name (the C++ core is private to the package as a whole)."""
    try:
        spec = importlib.util.find_spec(dotted)  # of the installed package
    except ImportError:
        return False
    return spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader)


def _dotted(node) -> str | None:
    """``a.b.c`` of an attribute chain on a name, or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else None


def _read(name: str, path: Path, modules):
    """(the modules of the package that ``name`` imports, the private names it takes from
    them as ``(module, name)``, the modules its import statements name: not
    ``gthinker.X.Y`` after ``import gthinker``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out, private, bound = set(), set(), {}
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) in skip:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                out.add(a.name)
                bound[a.asname or a.name.partition(".")[0]] = a.asname and a.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for a in node.names:
                target = f"{base}.{a.name}"
                out.add(target if target in modules else base)
                if target in modules:
                    bound[a.asname or a.name] = target
                elif _private(a.name) and not _extension(target):
                    private.add((base, a.name))
    stated = set(out)
    lazy = _lazy_names()
    for node in ast.walk(tree):  # gthinker.X.Y and module._name
        if not isinstance(node, ast.Attribute) or getattr(node, "lineno", 0) in skip:
            continue
        dotted = _dotted(node)
        if dotted is None or dotted.partition(".")[0] not in bound:
            continue
        head, _, tail = dotted.partition(".")
        full = ".".join(filter(None, [bound[head] or head, tail]))
        parts = full.split(".")
        found = next((".".join(parts[:i]) for i in range(len(parts), 0, -1)
                      if ".".join(parts[:i]) in modules), None)
        if found == "gthinker" and len(parts) > 1 and parts[1] in lazy:
            found = lazy[parts[1]]
        if found is None:
            continue
        out.add(found)
        rest = parts[len(found.split(".")):]
        if rest and _private(rest[0]) and not _extension(f"{found}.{rest[0]}"):
            private.add((found, rest[0]))
    return ({m for m in out if m in modules and m != name},
            {(m, n) for m, n in private if m in modules and m != name},
            {m for m in stated if m in modules and m != name})


def _imports(name: str, path: Path, modules) -> set[str]:
    """The modules of the package that ``name`` imports."""
    return _read(name, path, modules)[0]


@functools.cache
def _graph():
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _prefix(name: str, prefixes) -> str | None:
    """The longest of ``prefixes`` that ``name`` is or is inside, or None."""
    found = [p for p in prefixes if name == p or name.startswith(p + ".")]
    return max(found, key=len, default=None)


def _layer(name: str) -> int:
    """The index of ``name``'s layer in :data:`LAYERS` (0: the top)."""
    best = max(((i, p) for i, (_, prefixes) in enumerate(LAYERS) for p in prefixes
                if _prefix(name, [p])), key=lambda ip: len(ip[1]), default=None)
    assert best is not None, f"{name} is in no layer of LAYERS"
    return best[0]


def _app(name: str) -> str | None:
    """The app package ``name`` is in (``gthinker.apps.X``), or None for the floor, the
    front ends over the apps and the engine."""
    if not name.startswith(APPS + ".") or _prefix(name, APP_FLOOR + OVER_APPS) not in (
            None, APPS):
        return None
    return ".".join(name.split(".")[:3])


def _cycles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circles():
    cycles = _cycles(_graph())
    assert cycles == [], "modules that import each other (directly or round a circle): " \
        + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_engine_imports_no_app():
    bad = {f"{m} imports {t}" for m, targets in _graph().items() if not m.startswith(APPS)
           for t in targets if t.startswith(APPS)}
    assert bad == set()


def test_a_module_imports_only_from_its_layer_and_below():
    bad = {f"{m} ({LAYERS[_layer(m)][0]}) imports {t} ({LAYERS[_layer(t)][0]})"
           for m, targets in _graph().items() for t in targets if _layer(t) < _layer(m)}
    assert bad == set()


def test_no_app_imports_another():
    """sm, count, gsword and mce share only the floor below them (gthinker.apps.matching);
    the floor imports no app; only the front ends over the apps (the NetworkX backend)
    import them."""
    bad = set()
    for m, targets in _graph().items():
        for t in targets:
            if _app(t) is not None and _app(t) != _app(m) and _prefix(m, OVER_APPS) is None:
                bad.add(f"{m} imports {t}")
    assert bad == set()


def test_no_module_takes_another_modules_private_names():
    modules = _modules()
    bad = {f"{name} takes {owner}.{private}" for name, path in modules.items()
           for owner, private in _read(name, path, modules)[1]}
    assert bad == set()


def test_the_checker_sees_imports_inside_functions():
    """The reader is not blind to what this test file exists to catch."""
    graph = _graph()
    assert "gthinker.registry" in graph["gthinker.cli.apps"]  # top level
    assert "gthinker.gpu" in graph["gthinker.cli.apps"]  # inside _requests
    assert "gthinker.graphs.graph" in graph["gthinker.apps.mce.app"]  # gthinker.as_graph
    assert "gthinker.gpu" in graph["gthinker.apps.mce.app"]  # gthinker.gpu.resolve_mode
    assert _app("gthinker.apps.sm.app") == "gthinker.apps.sm"
    assert _app("gthinker.apps.matching.search") is None
    assert LAYERS[_layer("gthinker.runtime.job")][0] == "runtime"
    assert LAYERS[_layer("gthinker.options")][0] == "base"


def test_the_checker_sees_private_names(tmp_path):
    """``from m import _x`` and ``m._x`` are seen; dunder names are not private."""
    path = tmp_path / "probe.py"
    path.write_text("from gthinker.options import _check_fields\n"
                    "from gthinker import options\n"
                    "import gthinker\n"
                    "options._keywords()\n"
                    "gthinker.memory._helper\n"
                    "options.__name__\n")
    modules = _modules()
    private = _read("gthinker.probe", path, modules)[1]
    assert private == {("gthinker.options", "_check_fields"), ("gthinker.options", "_keywords"),
                       ("gthinker.memory", "_helper")}


#: What the bundled apps still import from the engine besides gthinker.extending, and why.
APP_EXCEPTIONS = {
    "gthinker.gpu.device_helpers": "kernels call the device helpers by bare name (warp_sum(...)"
                                   " where a GPUContext app writes gpu.warp_sum(...)); the "
                                   "kernels' owners switch them",
    "gthinker.setops": "the MCE bitset kernels compile setops' functions for the device "
                       "(setops.lower_bound.py_func)",
    "gthinker.text": "the words of the command line's text output (threads(n))",
    "gthinker.runtime.trace": "mce --trace checks for matplotlib before the graph loads",
    "gthinker.stopping": "gthinker.apps installs the Ctrl-C handler as a program imports an "
                         "app (the engine's concern, not an app's)",
}


@functools.cache
def _statements():
    """The modules of the package that each module's import statements name."""
    modules = _modules()
    return {name: _read(name, path, modules)[2] for name, path in modules.items()}


def test_the_bundled_apps_import_the_engine_through_the_extension_surface():
    """gthinker.extending is the surface a user's app is written on (the top-level apps/
    folder: :func:`test_the_user_apps_import_gthinker_through_the_extension_surface_only`);
    the bundled apps' import statements use it too, but for APP_EXCEPTIONS (and ``import
    gthinker``, whose public names and submodules they use as ``gthinker.compiler.jit``)."""
    allowed = {"gthinker", "gthinker.extending", *APP_EXCEPTIONS}
    bad = {f"{m} imports {t}" for m, targets in _statements().items() if m.startswith(APPS)
           for t in targets if not t.startswith(APPS) and t not in allowed}
    assert bad == set()


def _user_modules(root: Path = USER_APPS) -> dict[str, tuple[str, Path]]:
    """Every module of the apps in ``root`` (a folder each, with a pyproject) by its dotted
    name, as the app's folder puts it on the path: ``(the app's folder name, path)``."""
    found = {}
    for folder in sorted(p for p in root.iterdir() if (p / "pyproject.toml").exists()):
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = (folder.name, path)
    return found


def _user_app_problems(root: Path = USER_APPS) -> set[str]:
    """What breaks the rules of a user's app in ``root``: an import of gthinker but through
    gthinker.extending (statement or ``gthinker.X.Y``), a private name of any module, an
    import of another app's modules, modules that import each other."""
    users = _user_modules(root)
    modules = {**_modules(), **{n: path for n, (_, path) in users.items()}}
    bad, graph = set(), {}
    for name, (app, path) in users.items():
        imported, private, _ = _read(name, path, modules)
        for t in imported:
            engine = t == "gthinker" or t.startswith("gthinker.")
            if engine and t != "gthinker.extending" or users.get(t, (app,))[0] != app:
                bad.add(f"{app}: {name} imports {t}")
        bad |= {f"{app}: {name} takes {owner}.{n}" for owner, n in private}
        graph[name] = {t for t in imported if t in users}
    return bad | {"circle: " + " <-> ".join(c) for c in _cycles(graph)}


def test_the_user_apps_import_gthinker_through_the_extension_surface_only():
    """The apps in the top-level apps/ folder are written as a user's would be: the only
    module of gthinker they import is gthinker.extending (``from gthinker import
    extending`` too), they take no private name, no app imports another (a user's or a
    bundled one), and no import circles (imports inside functions count)."""
    assert _user_modules(), f"no apps in {USER_APPS}"
    assert _user_app_problems() == set()


def test_the_user_app_rule_catches_what_it_exists_to_catch(tmp_path):
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pyproject.toml").write_text("")
    (tmp_path / "one" / "one.py").write_text(
        "import gthinker.apps.mce\nfrom gthinker.runtime.task import Task\n"
        "from gthinker.extending import _NAMES, run\nfrom gthinker import extending\n"
        "import gthinker\nimport two\nextending._NAMES\ngthinker.as_graph\n")
    (tmp_path / "two" / "two.py").write_text("from gthinker.extending import Task\n"
                                             "def f():\n    import three\n")
    (tmp_path / "two" / "three.py").write_text("import two\n")
    assert _user_app_problems(tmp_path) == {
        "one: one imports gthinker.apps.mce", "one: one imports gthinker.runtime.task",
        "one: one takes gthinker.extending._NAMES", "one: one imports gthinker",
        "one: one imports gthinker.graphs.graph", "one: one imports two",
        "circle: three <-> two"}

"""The shape of the import graph, read from the source (every ``import``, at any depth:
imports inside functions count; those under ``if TYPE_CHECKING:`` do not run, and do
not count): no import circles, and the engine (everything outside ``gthinker.apps``)
never imports an app. See docs/architecture.md, "Layers"."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "gthinker"
APPS = "gthinker.apps"


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


def _imports(name: str, path: Path, modules) -> set[str]:
    """The modules of the package that ``name`` imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    skip = _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for a in node.names:
                out.add(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base)
    return {m for m in out if m in modules and m != name}


def _graph():
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


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


def test_the_checker_sees_imports_inside_functions():
    """The reader is not blind to what this test file exists to catch."""
    graph = _graph()
    assert "gthinker.registry" in graph["gthinker.cli.apps"]  # top level
    assert "gthinker.gpu" in graph["gthinker.cli.apps"]  # inside _requests


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


def test_the_bundled_apps_import_the_engine_through_the_extension_surface():
    """gthinker.extending is the surface a user's app is written on (the top-level apps/
    folder: tests/apps/test_user_apps.py); the bundled apps use it too, but for
    APP_EXCEPTIONS (and ``import gthinker``, whose public names they use)."""
    allowed = {"gthinker", "gthinker.extending", *APP_EXCEPTIONS}
    bad = {f"{m} imports {t}" for m, targets in _graph().items() if m.startswith(APPS)
           for t in targets if not t.startswith(APPS) and t not in allowed}
    assert bad == set()

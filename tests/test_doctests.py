"""The examples in the installed package's docstrings run and print what they say.

Every module of ``gthinker`` (its subpackages and bundled apps included) whose source holds an
example (``>>>``) is run through :mod:`doctest`, from the installed package (not the source
folder, which has no built core in a plain install; see test_source_layout.py).
"""

import doctest
import importlib
import importlib.util
import io
from pathlib import Path

import pytest


def _modules_with_examples():
    names = []
    (root,) = importlib.util.find_spec("gthinker").submodule_search_locations
    root = Path(root)
    for path in sorted(root.rglob("*.py")):
        examples = [line for line in path.read_text(encoding="utf-8").splitlines()
                    if line.lstrip().startswith(">>>")]
        if any("doctest: +SKIP" not in line for line in examples):  # one that runs
            parts = path.relative_to(root.parent).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = _modules_with_examples()


def test_the_key_entry_points_have_examples():
    """Graph construction, maximal cliques and triangle counting at least."""
    assert {"gthinker.graphs.graph", "gthinker.apps.mce.app",
            "gthinker.apps.count.app"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    for test in doctest.DocTestFinder().find(module):
        runner.run(test, out=out.write)
    assert runner.tries > 0, f"{name} has examples in its source but doctest finds none"
    assert runner.failures == 0, out.getvalue()

"""The examples in the installed package's docstrings run and print what they say.

Every module of ``gthinker`` and ``gthinker.apps`` whose source holds an example (``>>>``) is
run through :mod:`doctest`, from the installed package (not the source folder, which has no
built core in a plain install; see test_source_layout.py).
"""

import doctest
import importlib
import importlib.util
import io
from pathlib import Path

import pytest


def _modules_with_examples():
    names = []
    for package in ("gthinker", "gthinker.apps"):
        for folder in importlib.util.find_spec(package).submodule_search_locations:
            for path in sorted(Path(folder).glob("*.py")):
                if ">>>" in path.read_text(encoding="utf-8"):
                    stem = path.stem
                    names.append(package if stem == "__init__" else f"{package}.{stem}")
    return names


MODULES = _modules_with_examples()


def test_the_key_entry_points_have_examples():
    """Graph construction, maximal cliques and triangle counting at least."""
    assert {"gthinker.graph", "gthinker.apps.mce", "gthinker.apps.count"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = io.StringIO()
    for test in doctest.DocTestFinder().find(module):
        runner.run(test, out=out.write)
    assert runner.tries > 0, f"{name} has '>>>' in its source but no example doctest finds"
    assert runner.failures == 0, out.getvalue()

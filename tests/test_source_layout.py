"""Importing gthinker from a source folder: it works, or it says what to do.

A source checkout has ``gthinker/`` (no built core unless ``pip install -e .`` built it there)
beside ``apps/`` (installed as ``gthinker.apps``). Python run at the repository root imports
that folder, not the installed package.
"""

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IMPORT = "import gthinker; import gthinker.apps.mce; print(gthinker.apps.mce.__file__)"
HINT = "gthinker's C++ core (gthinker._core) is not built in this source folder"


def _python(code, cwd):
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def _source_copy(dest: Path, with_core: bool) -> Path:
    """gthinker/ and apps/ of this checkout (no gthinker/apps, as in git), optionally with
    the C++ core the tests run with."""
    ignore = shutil.ignore_patterns("__pycache__", "_core*", "apps")
    shutil.copytree(ROOT / "gthinker", dest / "gthinker", ignore=ignore)
    shutil.copytree(ROOT / "apps", dest / "apps", ignore=shutil.ignore_patterns("__pycache__"))
    if with_core:
        core = Path(importlib.import_module("gthinker._core").__file__)
        shutil.copy(core, dest / "gthinker" / core.name)
    return dest


def test_repository_root_imports_or_says_what_to_do():
    """However gthinker is installed (normally, editable, or the dev checkout on sys.path)."""
    r = _python(IMPORT, ROOT)
    if r.returncode == 0:
        assert r.stdout.strip().endswith("mce.py")
    else:
        assert HINT in r.stderr and "pip install -e ." in r.stderr, r.stderr
        assert "circular import" not in r.stderr


def test_source_folder_without_core_says_what_to_do(tmp_path):
    r = _python(IMPORT, _source_copy(tmp_path, with_core=False))
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: " + HINT), r.stderr
    assert f"Run `pip install -e .` in {tmp_path}" in last


def test_source_folder_with_built_core_finds_the_apps(tmp_path):
    """gthinker.apps resolves to ../apps when the folder has no gthinker/apps (as after
    `python setup.py build_ext --inplace`, or an editable install in compat mode)."""
    src = _source_copy(tmp_path, with_core=True)
    r = _python(IMPORT + "; print(gthinker.__file__)", src)
    assert r.returncode == 0, r.stderr
    apps_file, init_file = r.stdout.split()
    assert Path(apps_file) == src / "apps" / "mce.py"
    assert Path(init_file) == src / "gthinker" / "__init__.py"


@pytest.mark.parametrize("name", ["gthinker.apps.sm", "gthinker.apps.count"])
def test_other_names_are_left_to_the_usual_finders(tmp_path, name):
    src = _source_copy(tmp_path, with_core=True)
    r = _python(f"import importlib; m = importlib.import_module({name!r}); print(m.__file__);"
                "import gthinker.nonexistent", src)
    assert r.stdout.strip() == str(src / "apps" / f"{name.rsplit('.', 1)[1]}.py")
    assert "No module named 'gthinker.nonexistent'" in r.stderr


# ---- function length ----------------------------------------------------------------------

MAX_FUNCTION_LINES = 120

#: Functions in apps/ still over the limit (being shortened): this list may only shrink.
#: (file, function) -> its length when the list was written.
LONG_APP_FUNCTIONS: dict = {}


def _long_functions(folder):
    """{(file, function): lines} for every function of ``folder`` longer than the limit,
    counted from its ``def`` line to its last line (nested functions on their own too)."""
    import ast

    found = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found[(path.relative_to(ROOT).as_posix(), node.name)] = lines
    return found


def test_no_function_in_gthinker_is_longer_than_the_limit():
    assert _long_functions("gthinker") == {}, (
        f"split these into steps of at most {MAX_FUNCTION_LINES} lines")


def test_long_functions_in_apps_are_only_the_known_ones():
    long = _long_functions("apps")
    new = {k: v for k, v in long.items() if k not in LONG_APP_FUNCTIONS}
    assert new == {}, f"split these into steps of at most {MAX_FUNCTION_LINES} lines"
    gone = sorted(set(LONG_APP_FUNCTIONS) - set(long))
    assert not gone, f"now short enough: remove {gone} from LONG_APP_FUNCTIONS"


def test_every_package_is_installed():
    """setup.py lists its packages by hand: a new subpackage left out of it works
    in the checkout and fails in every installed copy."""
    import re

    listed = set(re.findall(r'"(gthinker[\w.]*)"', (ROOT / "setup.py").read_text()))
    found = {"gthinker." + p.parent.relative_to(ROOT / "gthinker").as_posix().replace("/", ".")
             for p in (ROOT / "gthinker").rglob("__init__.py") if p.parent != ROOT / "gthinker"}
    found |= {"gthinker", "gthinker.apps"}
    assert found - listed == set(), "add these to setup.py's packages"

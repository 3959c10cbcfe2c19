"""Importing gthinker from a source folder: it works, or it says what to do; and the
source's shape (no function longer than the limit).

A source checkout has ``gthinker/`` (no built core unless ``pip install -e .`` built it
there), the bundled apps inside it (``gthinker/apps``). Python run at the repository root
imports that folder, not the installed package.
"""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMPORT = "import gthinker; import gthinker.apps.mce; print(gthinker.apps.mce.__file__)"
HINT = "gthinker's C++ core (gthinker._core) is not built in this source folder"


def _python(code, cwd):
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def _source_copy(dest: Path) -> Path:
    """gthinker/ of this checkout without a built C++ core."""
    ignore = shutil.ignore_patterns("__pycache__", "_core*")
    shutil.copytree(ROOT / "gthinker", dest / "gthinker", ignore=ignore)
    return dest


def test_repository_root_imports_or_says_what_to_do():
    """However gthinker is installed (normally, editable, or the dev checkout on sys.path)."""
    r = _python(IMPORT, ROOT)
    if r.returncode == 0:
        assert r.stdout.strip().endswith("apps/mce/__init__.py")
    else:
        assert HINT in r.stderr and "pip install -e ." in r.stderr, r.stderr
        assert "circular import" not in r.stderr


def test_source_folder_without_core_says_what_to_do(tmp_path):
    r = _python(IMPORT, _source_copy(tmp_path))
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: " + HINT), r.stderr
    assert f"Run `pip install -e .` in {tmp_path}" in last


# ---- function length ----------------------------------------------------------------------

MAX_FUNCTION_LINES = 120

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

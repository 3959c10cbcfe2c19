import importlib
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

# GPU code runs on Numba's CUDA simulator unless asked to use a real GPU
# (GTHINKER_TEST_REAL_GPU=1, as benchmarks/device_gpu.sh tests does). This must
# happen before numba.cuda is first imported.
REAL_GPU = os.environ.get("GTHINKER_TEST_REAL_GPU") == "1"
if not REAL_GPU:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

# Small real graphs shipped with the tests, and their facts computed by other tools
# (networkx, scipy, igraph) when tests/data/make.py cut them from the public data sets.
DATA = Path(__file__).resolve().parent / "data"
#: The apps written on gthinker's public surface only, a folder each (tests/apps/ tests them).
USER_APPS = Path(__file__).resolve().parents[1] / "apps"
TRUTH = json.loads((DATA / "truth.json").read_text())


def child_env(**extra):
    """The environment for a child Python that must import the same gthinker as this one:
    sys.path without its empty entry (the child's current folder, which may be the checkout,
    whose source folder has no built core when the package was installed without -e)."""
    path = os.pathsep.join(p for p in sys.path if p)
    # PYTHONSAFEPATH (Python 3.11+): ``python -m gthinker`` does not put its current folder
    # first on sys.path either, wherever a test runs it from.
    return {**os.environ, "PYTHONPATH": path, "PYTHONSAFEPATH": "1", **extra}


def user_app(name):
    """``(folder, module)`` of the user app ``apps/<name>``: the module that its
    pyproject's ``gthinker.apps`` entry point names (it holds ``APP``)."""
    folder = USER_APPS / name
    text = (folder / "pyproject.toml").read_text()
    section = text.partition('[project.entry-points."gthinker.apps"]')[2]
    found = re.search(r'^\s*[\w-]+\s*=\s*"([\w.]+):APP"', section, re.M)
    assert found, f"{folder}/pyproject.toml declares no gthinker.apps entry point"
    return folder, found.group(1)


def import_user_app(name, module):
    """Module ``module`` of the user app ``apps/<name>``, imported with its folder on
    sys.path (as a user who has not installed it would)."""
    folder, _ = user_app(name)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return importlib.import_module(module)


def user_apps_env(*names, **extra):
    """The environment of a child process that knows the user apps ``names`` through
    ``$GTHINKER_APPS``, with their folders on PYTHONPATH."""
    found = [user_app(n) for n in names]
    env = child_env(GTHINKER_APPS=",".join(m for _, m in found), **extra)
    env["PYTHONPATH"] = os.pathsep.join([*(str(f) for f, _ in found), env["PYTHONPATH"]])
    return env


def run_cli(*args, env=None, timeout=300):
    """``python -m gthinker ARGS`` in a child process (from the temporary folder)."""
    return subprocess.run([sys.executable, "-m", "gthinker", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          env=env if env is not None else child_env(),
                          cwd=tempfile.gettempdir())


def in_ranges(req, graph, pieces=3):
    """The request run as the cluster's driver and nodes run it, without Ray, one range at
    a time (a node gets its own copy, pickled: Ray sends it so); the merged result."""
    assert req.local(graph) is None
    req = pickle.loads(pickle.dumps(req))
    weights = req.weights(graph)
    cuts = np.linspace(0, len(weights), pieces + 1).astype(int)
    req.prepare(graph, 1)
    parts = [req.run_range(graph, lo, hi, 1, None, None)
             for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]
    return req.merge(parts, sum(p["seconds"] for p in parts), 1, {})

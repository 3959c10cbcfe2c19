import json
import os
import sys
from pathlib import Path

# GPU code runs on Numba's CUDA simulator unless asked to use a real GPU
# (GTHINKER_TEST_REAL_GPU=1, as benchmarks/device_gpu.sh tests does). This must
# happen before numba.cuda is first imported.
REAL_GPU = os.environ.get("GTHINKER_TEST_REAL_GPU") == "1"
if not REAL_GPU:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

# Small real graphs shipped with the tests, and their facts computed by other tools
# (networkx, scipy, igraph) when tests/data/make.py cut them from the public data sets.
DATA = Path(__file__).resolve().parent / "data"
TRUTH = json.loads((DATA / "truth.json").read_text())


def child_env(**extra):
    """The environment for a child Python that must import the same gthinker as this one:
    sys.path without its empty entry (the child's current folder, which may be the checkout,
    whose source folder has no built core when the package was installed without -e)."""
    path = os.pathsep.join(p for p in sys.path if p)
    return {**os.environ, "PYTHONPATH": path, **extra}

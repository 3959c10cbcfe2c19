import os
from pathlib import Path

import pytest

# GPU code runs on Numba's CUDA simulator unless asked to use a real GPU
# (GTHINKER_TEST_REAL_GPU=1, as benchmarks/device_gpu.sh tests does). This must
# happen before numba.cuda is first imported.
REAL_GPU = os.environ.get("GTHINKER_TEST_REAL_GPU") == "1"
if not REAL_GPU:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture
def snap_path():
    def get(name):
        path = DATA / "snap" / name
        if not path.exists():
            pytest.skip(f"{path} not available (real graphs live in ../shared/data)")
        return path

    return get

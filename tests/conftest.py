from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture
def snap_path():
    def get(name):
        path = DATA / "snap" / name
        if not path.exists():
            pytest.skip(f"{path} not available (real graphs live in ../shared/data)")
        return path

    return get

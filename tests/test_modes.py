"""Lazy imports, and where the mode of a run is decided (gthinker.gpu.resolve_mode)."""

import json
import subprocess
import sys
import tempfile

import networkx as nx
import pytest

import gthinker
from gthinker import gpu
from gthinker.apps import mce, sm
from gthinker.apps.mce import app as mce_app
from gthinker.apps.sm import app as sm_app
from gthinker.errors import DeviceUnavailableError
from gthinker.gpu import availability

# run from outside the checkout, so that the installed package is imported
OUTSIDE_SOURCE = tempfile.gettempdir()
ROW_STACK = "AttributeError: module 'numpy' has no attribute 'row_stack'"


def _modules_after(code):
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          "print(json.dumps(sorted(m for m in sys.modules "
                          "if m.split('.')[0] in ('numba', 'llvmlite'))))"],
                         capture_output=True, text=True, check=True, cwd=OUTSIDE_SOURCE)
    return json.loads(out.stdout.splitlines()[-1])


def test_import_and_help_load_no_numba():
    assert _modules_after("import gthinker") == []
    assert _modules_after("import contextlib, io\nfrom gthinker.cli.main import main\n"
                          "for c in ('', 'mce', 'sm', 'gsword', 'generate', 'warmup'):\n"
                          "    with contextlib.suppress(SystemExit), "
                          "contextlib.redirect_stdout(io.StringIO()):\n"
                          "        main([c, '--help'] if c else ['--help'])") == []
    # and the lazy names do resolve
    loaded = _modules_after("import gthinker; gthinker.Graph; gthinker.Task; gthinker.run")
    assert "numba" in loaded
    assert not any(m.startswith("numba.cuda") for m in loaded)


def test_help_exits_cleanly_without_numba():
    out = subprocess.run([sys.executable, "-m", "gthinker", "--help"],
                         capture_output=True, text=True, cwd=OUTSIDE_SOURCE)
    assert out.returncode == 0 and "warmup" in out.stdout


@pytest.fixture
def broken_numba_cuda(monkeypatch):
    """A machine with an NVIDIA driver whose numba-cuda fails to import."""
    monkeypatch.setattr(availability, "_no_driver", lambda: "")
    monkeypatch.setattr(gpu.simulator, "enabled", lambda: False)
    monkeypatch.setattr(availability, "_cuda", {"module": None, "error": ROW_STACK})
    monkeypatch.setattr(availability, "_warned", set())


def test_auto_falls_back_to_cpu_with_one_line(broken_numba_cuda, capsys):
    mode, why = gpu.resolve_mode("auto")
    assert mode == "cpu" and "numba-cuda" in why
    assert gpu.resolve_mode("auto")[0] == "cpu"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "row_stack" in err and "CPU" in err


def test_explicit_gpu_says_what_failed(broken_numba_cuda):
    with pytest.raises(DeviceUnavailableError) as info:
        gpu.resolve_mode("gpu")
    text = str(info.value)
    assert "row_stack" in text and "pip install" in text and "--mode cpu" in text


def test_auto_runs_the_job_on_the_cpu_when_the_gpu_fails(broken_numba_cuda, capsys):
    g = nx.gnm_random_graph(5000, 25_000, seed=2)  # large enough not to be "small"
    res = mce.run(g, threads=2)
    assert res.mode == "cpu" and "numba-cuda" in res.mode_reason
    assert res.count == sum(1 for _ in nx.find_cliques(g))


def test_bad_mode_lists_the_allowed_ones():
    with pytest.raises(ValueError, match="auto, cpu, gpu, hybrid"):
        gpu.resolve_mode("bogus")
    with pytest.raises(ValueError, match="auto, cpu, gpu"):
        gpu.resolve_mode("hybrid", allowed=("cpu", "gpu"))


def test_small_jobs_stay_on_the_cpu(monkeypatch):
    # Pretend a real GPU is usable: small jobs must still choose the CPU.
    monkeypatch.setattr(availability, "device_status", lambda: (True, "a test GPU"))
    monkeypatch.setattr(gpu.simulator, "enabled", lambda: False)
    assert gpu.resolve_mode("auto", auto="gpu") == ("gpu", "GPU: a test GPU")

    small = gthinker.Graph.from_networkx(nx.gnm_random_graph(50, 200, seed=1))
    assert "small graph" in mce_app._cpu_because(small, None)
    big = gthinker.Graph.from_networkx(nx.gnm_random_graph(3000, 30_000, seed=1))
    assert mce_app._cpu_because(big, None) == ""
    assert "listing" in mce_app._cpu_because(big, "out.txt")

    # A labeled query with one candidate per vertex is a tiny search; a triangle
    # in a large unlabeled graph is not.
    g = nx.path_graph(6)
    nx.set_node_attributes(g, {v: v for v in g}, "label")
    q = nx.path_graph(3)
    nx.set_node_attributes(q, {0: 1, 1: 2, 2: 3}, "label")
    tiny = sm.plan(gthinker.Graph.from_networkx(g),
                   gthinker.Graph.from_networkx(q), False)
    assert "small search" in sm_app.small_search(tiny)
    assert sm_app.small_search(sm.plan(big, "triangle", True)) == ""

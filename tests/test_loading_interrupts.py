"""Loading a graph is interruptible at any byte and bounded (issue 35, items 1 and
5): Ctrl-C at many moments of a large read raises KeyboardInterrupt and leaves the
process able to read again; the command line exits 130 / 143 without a traceback
and leaves no partial output; an endless or binary input stops with a message or
at SIGTERM; empty inputs are empty graphs."""

import gzip
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest
from conftest import child_env

import gthinker
import gthinker.graphs.generate
from gthinker.graphs.graph import Graph

MOMENTS = 16


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """An R-MAT edge list of about 25 MB, the graph in it, and the seconds a read takes."""
    folder = tmp_path_factory.mktemp("loading")
    path = folder / "big.txt"
    gthinker.graphs.generate.rmat(17, 16, seed=4).write(path)
    t0 = time.perf_counter()
    graph = Graph.read(path)
    return path, graph, time.perf_counter() - t0


def _read_with_sigint_at(path, delay):
    """Graph.read(path) with SIGINT sent to this process after ``delay`` seconds:
    the graph, or "interrupted"."""
    timer = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
    result = "interrupted"
    try:
        try:
            timer.start()
            result = Graph.read(path)
        finally:
            timer.cancel()
            timer.join()
            time.sleep(0.02)  # a signal sent as the read ended is handled here
    except KeyboardInterrupt:
        pass
    return result


def test_read_interrupted_at_many_moments_raises_keyboard_interrupt(big):
    path, graph, seconds = big
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    outcomes = [_read_with_sigint_at(path, seconds * (k + 0.5) / MOMENTS)
                for k in range(MOMENTS)]
    interrupted = sum(1 for r in outcomes if isinstance(r, str))
    assert interrupted >= MOMENTS // 2, outcomes
    assert all(r == graph for r in outcomes if not isinstance(r, str))
    assert Graph.read(path) == graph  # nothing left broken


def _cli(*args):
    return [sys.executable, "-m", "gthinker", *args]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_convert_stopped_while_loading_exits_cleanly(big, tmp_path, sig):
    path, _, seconds = big
    for k in range(3):
        out = tmp_path / f"out{k}.csr"
        proc = subprocess.Popen(_cli("convert", str(path), str(out)), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=child_env(),
                                cwd=tempfile.gettempdir(), start_new_session=True)
        time.sleep(0.6 + seconds * k)  # imports, then early and late in the read
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        # 0: it had finished; -sig: the signal came before the interpreter had imported
        # gthinker and set its handlers (a loaded machine), nothing started
        assert proc.returncode in (128 + sig, 0, -sig), err
        assert "Traceback" not in err, err
        if proc.returncode:
            assert not out.exists() and not list(tmp_path.glob(".out*")), err


def test_binary_input_stops_at_once_with_a_message():
    r = subprocess.run(_cli("convert", "/dev/zero", os.devnull), capture_output=True,
                       text=True, env=child_env(), timeout=60, cwd=tempfile.gettempdir())
    assert r.returncode == 2 and "longer than" in r.stderr and "Traceback" not in r.stderr


def test_endless_input_stops_at_sigterm(tmp_path):
    yes = subprocess.Popen(["yes", "1 2"], stdout=subprocess.PIPE)
    proc = subprocess.Popen(_cli("convert", "/dev/stdin", str(tmp_path / "o.csr")),
                            stdin=yes.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=child_env(), cwd=tempfile.gettempdir(),
                            start_new_session=True)
    yes.stdout.close()
    time.sleep(2.0)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    yes.kill()
    yes.wait()
    assert proc.returncode == 143 and "terminated" in err and "Traceback" not in err, err
    assert not list(tmp_path.iterdir())


def test_empty_inputs_are_empty_graphs(tmp_path):
    (tmp_path / "zero.txt").write_bytes(b"")
    (tmp_path / "zero.txt.gz").write_bytes(b"")
    with gzip.open(tmp_path / "empty.txt.gz", "wb"):
        pass
    (tmp_path / "comments.txt").write_text("# nothing\n% at all\n\n")
    for name in ("zero.txt", "zero.txt.gz", "empty.txt.gz", "comments.txt"):
        g = Graph.read(tmp_path / name)
        assert (g.num_vertices, g.num_edges) == (0, 0), name
        g.check()
        g.save(tmp_path / "e.csr", prepare="all")
        assert Graph.read(tmp_path / "e.csr") == g

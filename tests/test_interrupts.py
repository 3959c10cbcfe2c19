"""Fault injection: real runs interrupted, terminated and killed at random moments
in subprocesses (issue 17). Each asserts a clean exit (130 / 143, no traceback), a
partial result marked as such, no partial output file, and no temporary files left
behind."""

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import types

import networkx as nx
import pytest

from gthinker.graphs.generate import gnp

# Maximal cliques of G(500, 0.5) take minutes on 2 cores: every run here is stopped.
N, P = 500, 0.5
RNG = random.Random(17)


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A graph file whose MCE runs long, and its adjacency; the CLI's MCE compiled."""
    folder = tmp_path_factory.mktemp("interrupts")
    path = folder / "g.txt"
    graph = gnp(N, P, seed=3)
    graph.write(path)
    small = folder / "small.txt"
    gnp(30, 0.3, seed=1).write(small)
    # compiles once, for every test here
    subprocess.run(_cli("mce", str(small), "--mode", "cpu", "-q"), check=True,
                   capture_output=True, timeout=600, cwd=folder)
    return path, nx.Graph(graph.edge_array().tolist())


def _cli(*args):
    return [sys.executable, "-m", "gthinker", *args]


def _start(cmd, env=None):
    # Not from the repository root: there `python -m` / `-c` would import the source
    # folder instead of the installed package.
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})}, cwd=tempfile.gettempdir())


def _wait_for(proc, text, timeout=120):
    """Reads stderr lines until one contains ``text``; returns what was read."""
    seen = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if text in line:
            return "".join(seen)
    proc.kill()
    raise AssertionError(f"never printed {text!r}: {''.join(seen)}")


def _signal_and_wait(proc, sig, delay):
    time.sleep(delay)
    proc.send_signal(sig)
    sent = time.monotonic()
    out, err = proc.communicate(timeout=60)
    return out, err, time.monotonic() - sent


def _stop_mce_mid_run(path, sig, *extra):
    """``gthinker mce PATH --json`` stopped by ``sig`` once it runs (its first
    progress line printed): (exit code, stderr, the JSON result, seconds from the
    signal to the exit)."""
    proc = _start(_cli("mce", str(path), "--mode", "cpu", "--threads", "2", "--json",
                       "--progress-interval", "0.2", *extra))
    _wait_for(proc, "tasks done=")
    out, err, took = _signal_and_wait(proc, sig, RNG.uniform(0.1, 1.0))
    assert "Traceback" not in err
    return proc.returncode, err, json.loads(out), took


def test_ctrl_c_mid_run_prints_the_partial_result_marked(big):
    path, _ = big
    code, err, result, took = _stop_mce_mid_run(path, signal.SIGINT)
    assert code == 130, err
    assert "interrupted" in err
    assert result["stopped"] == "interrupted"
    assert result["count"] == sum(result["histogram"].values()) > 0
    assert took < 10  # within about a second on an idle machine; generous for CI


def test_sigterm_leaves_no_partial_output_file(big, tmp_path):
    """An output file is whole or not there: a terminated run leaves the file that
    was there before (none here) and no temporary file."""
    path, _ = big
    out_file = tmp_path / "cliques.txt"
    code, err, result, _ = _stop_mce_mid_run(path, signal.SIGTERM, "-o", str(out_file))
    assert code == 143, err
    assert "terminated" in err
    assert result["stopped"] == "terminated"
    assert result["count"] > 0
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_before_the_run_ends_at_once_without_traceback(big, sig, code):
    """Signals while the command reads the graph, compiles or starts the run. (Before
    gthinker's code runs at all, in the interpreter's own start-up, Python itself
    prints a KeyboardInterrupt traceback: hence the marker.)"""
    path, _ = big
    script = ("import sys, gthinker.cli.main; print('ready', flush=True); "
              f"sys.exit(gthinker.cli.main.main(['mce', {str(path)!r}, '--mode', 'cpu', "
              "'--threads', '2']))")
    proc = _start([sys.executable, "-c", script])
    assert proc.stdout.readline().strip() == "ready"
    out, err, took = _signal_and_wait(proc, sig, RNG.uniform(0.0, 0.5))
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert took < 10


def test_killed_clique_stream_leaves_no_temporary_files(big, tmp_path):
    path, _ = big
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    script = textwrap.dedent(f"""
        import sys
        from gthinker.apps import mce
        for clique in mce.iter_cliques({str(path)!r}, threads=2):
            print(len(clique), flush=True)
    """)
    proc = _start([sys.executable, "-c", script], env={"TMPDIR": str(tmp)})
    assert proc.stdout.readline().strip().isdigit()
    time.sleep(RNG.uniform(0.1, 0.8))
    proc.kill()
    proc.communicate(timeout=60)
    assert list(tmp.iterdir()) == []


def test_ctrl_c_stops_a_job_running_in_another_thread(big):
    """The job's own thread gets KeyboardInterrupt once its workers stopped; the
    interpreter exits cleanly (no 'terminate called')."""
    path, _ = big
    script = textwrap.dedent(f"""
        import threading, time
        from gthinker.apps import mce
        out = {{}}
        def progress(snap):
            if "running" not in out:
                out["running"] = True
                print("running", flush=True)
        def work():
            try:
                out["result"] = mce.run({str(path)!r}, mode="cpu", threads=2,
                                        progress=progress, progress_interval=0.1)
            except KeyboardInterrupt:
                out["result"] = "KeyboardInterrupt"
        t = threading.Thread(target=work)
        t.start()
        try:
            while t.is_alive():
                t.join(0.05)
        except KeyboardInterrupt:
            print("main: KeyboardInterrupt", flush=True)
        end = time.monotonic() + 20
        while "result" not in out and time.monotonic() < end:
            time.sleep(0.01)
        print("thread:", out.get("result"), flush=True)
    """)
    proc = _start([sys.executable, "-c", script])
    assert proc.stdout.readline().strip() == "running"
    out, err, took = _signal_and_wait(proc, signal.SIGINT, RNG.uniform(0.1, 0.8))
    assert proc.returncode == 0, err
    assert "main: KeyboardInterrupt" in out and "thread: KeyboardInterrupt" in out
    assert "terminate called" not in err
    assert took < 15


def test_signal_inside_the_import_system_is_raised_again_after_it():
    """Python prints and ignores an exception raised in the import system's callbacks;
    the command line's handler signals again a moment later instead."""
    from gthinker.stopping import SignalStop

    stopper = SignalStop()
    in_import = types.SimpleNamespace(
        f_code=types.SimpleNamespace(co_filename="<frozen importlib._bootstrap>"))
    start = time.monotonic()
    with stopper:
        stopper._handle(signal.SIGINT, in_import)  # returns: no exception there
        with pytest.raises(KeyboardInterrupt):
            time.sleep(10)  # the signal sent again interrupts this
    assert time.monotonic() - start < 5
    assert stopper.reason == "interrupted" and stopper.exit_code == 130


LLVM_CALLBACK = textwrap.dedent("""
    import os, signal, time
    import llvmlite.binding as llvm
    from gthinker.stopping import SignalStop

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(
        llvm.parse_assembly("define i32 @f() {\\n ret i32 1\\n}"), target)

    def notify(module, buffer):  # LLVM calls this through ctypes, as when Numba compiles
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)  # the handler runs here, inside the callback

    engine.set_object_cache(notify, lambda module: None)
    with SignalStop() as stopper:
        try:
            engine.finalize_object()
            time.sleep(30)
        except KeyboardInterrupt:
            print("raised after the callback", stopper.exit_code, flush=True)
""")


def test_signal_inside_an_llvm_callback_is_raised_again_after_it():
    """Python prints and ignores an exception raised in a ctypes callback (seen on CI:
    SIGTERM while Numba's object cache was notified); the handler signals again."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", LLVM_CALLBACK], capture_output=True,
                          text=True, timeout=60, cwd=tempfile.gettempdir())
    assert done.stdout.strip() == "raised after the callback 143", done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert time.monotonic() - start < 20


@pytest.mark.parametrize("args, running", [
    (["count", "{path}", "6-path", "--mode", "cpu", "--threads", "2"], "count="),
    (["sm", "{path}", "6-path", "--mode", "cpu", "--threads", "2"], "matches="),
    (["gsword", "{path}", "4-cycle", "--mode", "cpu", "--threads", "2",
      "--samples", "10000000000", "--batches", "10000"], "batch 1/"),
])
def test_every_command_stopped_by_ctrl_c_exits_130_with_its_result_marked_partial(big, args,
                                                                                   running):
    """The same rule for every app's command (text mode): the numbers found so far, a
    line on stdout saying they are partial, exit 130, no traceback."""
    path, _ = big
    proc = _start(_cli(*(a.format(path=path) for a in args)))
    _wait_for(proc, running)
    out, err, took = _signal_and_wait(proc, signal.SIGINT, RNG.uniform(0.1, 0.5))
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert "partial: interrupted" in out
    assert took < 15

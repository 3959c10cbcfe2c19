"""The gthinker command line, run as a user runs it."""

import json
import signal
import subprocess
import sys
import tempfile

import networkx as nx
from conftest import run_cli as cli  # outside the checkout: the installed package runs

import gthinker
import gthinker.graphs.generate
from gthinker.apps import mce


def test_generate_then_mce_json_matches_api(tmp_path):
    path = tmp_path / "g.txt"
    r = cli("generate", "rmat", "--scale", "9", "--edge-factor", "4", "--seed", "3", "-o", path)
    assert r.returncode == 0, r.stderr
    r = cli("mce", path, "--json", "--threads", "2")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    g = gthinker.Graph.read(path)
    ref = sum(1 for _ in nx.find_cliques(g.to_networkx()))
    assert out["count"] == ref
    assert out["count"] == mce.run(g, threads=1).count
    assert {"count", "max_size", "histogram", "seconds", "mode", "threads", "stats"} <= set(out)
    assert out["threads"] == 2 and out["mode"] == "cpu"
    assert {"tasks_spawned", "tasks_decomposed", "spill_peak_bytes"} <= set(out["stats"])
    assert out["peak_memory_bytes"] > 2**20  # the process's peak, as the OS counts it


def test_output_and_text_summary(tmp_path):
    G = nx.karate_club_graph()
    path = tmp_path / "karate.txt"
    gthinker.Graph.from_networkx(G).write(path)
    out = tmp_path / "cliques.txt"
    r = cli("mce", path, "--output", out, "-q")
    assert r.returncode == 0, r.stderr
    assert "maximal cliques: 36" in r.stdout
    assert len(out.read_text().splitlines()) == 36
    r = cli("count", path, "triangle", "--mode", "cpu", "--threads", "1")
    assert r.returncode == 0, r.stderr
    assert f"triangle: {sum(nx.triangles(G).values()) // 3}" in r.stdout
    assert "(1 thread," in r.stdout  # not "1 threads"


def test_errors_are_messages_not_tracebacks(tmp_path):
    r = cli("mce", tmp_path / "missing.txt")
    assert r.returncode == 2 and "missing.txt" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2\n3\n")
    r = cli("mce", bad)
    assert r.returncode == 2 and "bad.txt:2" in r.stderr and "Traceback" not in r.stderr
    r = cli("mce", bad, "--threads", "0")
    assert r.returncode == 2 and "--threads" in r.stderr
    r = cli("mce", "--help")
    assert r.returncode == 0 and "--time-budget" in r.stdout


def test_ctrl_c_stops_a_long_run_cleanly(tmp_path):
    # A graph with billions of maximal cliques: the run would take minutes.
    path = tmp_path / "heavy.txt"
    made = cli("generate", "rmat", "--scale", "14", "--edge-factor", "16", "-o", path)
    assert made.returncode == 0, made.stderr
    cmd = [sys.executable, "-m", "gthinker", "mce", str(path), "--threads", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tempfile.gettempdir())
    # Wait for the first progress line: the job is running inside the C++ master.
    line = proc.stderr.readline()
    while line and not line.startswith("["):
        line = proc.stderr.readline()
    assert line.startswith("["), "no progress line"
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("Ctrl-C did not stop the job") from None
    assert proc.returncode == 130
    assert "interrupted" in err and "Traceback" not in err


def test_a_misspelled_pattern_is_said_before_the_graph_is_read(tmp_path):
    """The graph file does not even exist: the pattern's error comes first."""
    r = cli("count", tmp_path / "missing.txt", "trianglx")
    assert r.returncode == 2 and "unknown pattern 'trianglx'" in r.stderr, r.stderr
    assert "missing.txt" not in r.stderr and "Traceback" not in r.stderr


def test_dash_output_is_stdout_and_a_closed_pipe_ends_quietly(tmp_path):
    path = tmp_path / "g.txt"
    gthinker.graphs.generate.rmat(9, 8, seed=2).write(path)
    r = cli("mce", path, "-o", "-", "-q", "--threads", "2")
    lines = r.stdout.splitlines()
    assert r.returncode == 0 and len(lines) == mce.run(gthinker.Graph.read(path)).count
    assert not (tmp_path / "-").exists()
    # A reader that stops after one line: the writer ends like other Unix tools (SIGPIPE).
    proc = subprocess.Popen([sys.executable, "-m", "gthinker", "mce", str(path), "-o", "-",
                             "-q", "--threads", "2"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tempfile.gettempdir())
    with proc.stdout, proc.stderr:
        proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) in (0, 141, -13) and "Traceback" not in err, err
    assert "disk full" not in err

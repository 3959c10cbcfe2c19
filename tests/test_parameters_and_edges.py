"""Issue 17, parameters and edge cases: out-of-range numbers get a message with the allowed
range (never a cast error or a raw RuntimeError), impossible queries count 0, an estimate with
nothing to sample says so, a 95% interval never goes below 0, and a trace that cannot be
written fails the command without losing the result."""

import subprocess
import sys

import networkx as nx
import pytest
from gthinker.apps import gsword, mce, sm

import gthinker

HUGE = 10**30


def _cli(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "gthinker.cli", *map(str, args), "-q"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)


def _edges(tmp_path, G, name="g.txt"):
    path = tmp_path / name
    path.write_text("".join(f"{u} {v}\n" for u, v in G.edges))
    return path


def test_thread_counts_beyond_the_bound_name_the_range():
    with pytest.raises(ValueError, match=r"threads must be an integer from 1 to 4,096"):
        mce.run(nx.path_graph(4), mode="cpu", threads=10**6)
    with pytest.raises(ValueError, match=r"from 1 to"):
        gthinker.run(mce.MaximalCliques, nx.path_graph(3), threads=0)


def test_huge_limit_and_samples_name_the_range(tmp_path):
    path = _edges(tmp_path, nx.complete_graph(5))
    r = _cli(tmp_path, "sm", path, "triangle", "--limit", HUGE)
    assert r.returncode == 2 and "limit must be an integer from 1 to" in r.stderr
    assert "Traceback" not in r.stderr and "cast" not in r.stderr
    with pytest.raises(ValueError, match=r"samples must be an integer from 1 to"):
        gsword.estimate(nx.complete_graph(5), "triangle", samples=HUGE, mode="cpu")


def test_queries_that_cannot_embed_count_zero():
    small = gthinker.as_graph(nx.path_graph(3))
    assert sm.count(small, nx.cycle_graph(4), mode="cpu", threads=1).count == 0
    empty = gthinker.as_graph(nx.empty_graph(0))
    assert sm.count(empty, "triangle", mode="cpu", threads=1).count == 0


def test_nothing_to_sample_is_an_exact_zero_without_a_rate():
    r = gsword.estimate(nx.path_graph(5), nx.star_graph(3), samples=1000, mode="cpu",
                        threads=1)
    assert r.estimate == 0 and r.ci95 == (0.0, 0.0) and r.samples_per_second is None


def test_the_interval_never_goes_below_zero():
    # Few samples on a graph with few triangles: the standard error exceeds the estimate.
    G = nx.compose(nx.gnp_random_graph(60, 0.05, seed=3), nx.complete_graph(4))
    lows = [gsword.estimate(G, "triangle", samples=40, seed=s, mode="cpu", threads=1,
                            trawl=False).ci95[0] for s in range(6)]
    assert min(lows) >= 0.0


def test_a_trace_that_cannot_be_written_fails_the_command_after_the_result(tmp_path):
    pytest.importorskip("matplotlib")
    path = _edges(tmp_path, nx.complete_graph(4))
    r = _cli(tmp_path, "mce", path, "--mode", "cpu", "--threads", 1, "--trace", "/dev/full")
    assert r.returncode == 1 and "maximal cliques: 1" in r.stdout
    assert "cannot write the trace to /dev/full" in r.stderr and "Traceback" not in r.stderr

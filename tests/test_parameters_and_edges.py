"""Issue 17, parameters and edge cases: out-of-range numbers get a message with the allowed
range (never a cast error or a raw RuntimeError), impossible queries count 0, an estimate with
nothing to sample says so, a 95% interval never goes below 0, and a trace that cannot be
written fails the command without losing the result."""

import subprocess
import sys

import networkx as nx
import pytest

import gthinker
from gthinker.apps import gsword, mce, sm

HUGE = 10**30


def _cli(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "gthinker", *map(str, args), "-q"],
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


def test_unknown_pattern_names_list_the_known_ones(tmp_path):
    path = _edges(tmp_path, nx.complete_graph(4))
    r = _cli(tmp_path, "sm", path, "pentagram-xyz")
    assert r.returncode == 2 and "unknown query pattern 'pentagram-xyz'" in r.stderr
    assert all(name in r.stderr for name in ("triangle", "4-cycle", "k-clique", "file"))


def test_generated_graphs_keep_their_isolated_vertices_through_a_file(tmp_path):
    """One graph, one answer: the edge list lists its isolated vertices, so the file
    read back has the same vertices and the same maximal cliques (isolated ones too)."""
    from gthinker.graphs.generate import rmat

    g = rmat(9, 2, seed=5)
    isolated = int((g.degrees() == 0).sum())
    assert isolated > 0
    for name in ("r.txt", "r.txt.gz"):
        g.write(tmp_path / name)
        back = gthinker.Graph.read(tmp_path / name)
        assert back.num_vertices == g.num_vertices and back.num_edges == g.num_edges
        G = nx.Graph(g.edge_array().tolist())
        G.add_nodes_from(range(g.num_vertices))
        assert mce.run(back, mode="cpu", threads=1).count == sum(1 for _ in nx.find_cliques(G))


def test_a_bad_isolated_vertex_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("# a comment\n# isolated vertices: 3 x\n0 1\n")
    with pytest.raises(gthinker.GraphFormatError, match=r"bad.txt:2: expected non-negative"):
        gthinker.Graph.read(path)


class _WritesNeighbours(gthinker.Task):
    counters = ("n",)

    @staticmethod
    def spawn(ctx, v):
        nb = ctx.neighbors(v)
        nb[0] = v
        return nb.copy()

    @staticmethod
    def compute(ctx, record):
        ctx.count(0, 1)


class _AddsEmptyRecord(gthinker.Task):  # the default spawn: one record [v] per vertex
    counters = ("n",)

    @staticmethod
    def compute(ctx, record):
        ctx.add_task(record[:0])


class _CountsParams(gthinker.Task):
    counters = ("n",)

    @staticmethod
    def compute(ctx, record):
        ctx.count(0, ctx.params.size + 1)


def test_the_task_api_guards_the_graph_records_and_params():
    g = gthinker.as_graph(nx.cycle_graph(5))
    before = g.indices.copy()
    with pytest.raises(gthinker.TaskDefinitionError, match="read-only array"):
        gthinker.run(_WritesNeighbours, g, threads=1)
    assert (g.indices == before).all()
    with pytest.raises(gthinker.TaskRuntimeError, match="add_task with an empty record"):
        gthinker.run(_AddsEmptyRecord, g, threads=2)
    # no params: an empty array, one task per vertex
    assert gthinker.run(_CountsParams, g, threads=2).counters["n"] == 5


def test_gsword_stops_between_batches_with_the_batches_done():
    token = gthinker.StopToken()
    G = nx.gnp_random_graph(80, 0.2, seed=2)
    exact = sm.count(G, "triangle", mode="cpu", threads=1).count
    # batches exist for trawling (without it, one batch)
    r = gsword.estimate(G, "triangle", samples=60_000, batches=6, mode="cpu", threads=1,
                        progress=lambda p: token.set(), stop=token)
    full = gsword.estimate(G, "triangle", samples=60_000, batches=6, mode="cpu", threads=1)
    assert full.stopped is None and full.samples == 60_000
    assert r.stopped == "stop" and r.samples == 10_000  # the first batch
    assert r.ci95[0] <= exact <= r.ci95[1] or abs(r.estimate - exact) < 0.2 * exact


def test_gsword_flags_few_valid_samples_and_heavy_tails():
    from types import SimpleNamespace

    import numpy as np

    even = [SimpleNamespace(n=6400, out_sum=np.full(200, 5.0))]
    assert gsword.diagnose(even, valid=10_000) == []
    assert "valid samples" in gsword.diagnose(even, valid=12)[0]
    spike = np.full(200, 1.0)
    spike[7] = 1000.0
    warning = gsword.diagnose([SimpleNamespace(n=6400, out_sum=spike)], valid=10_000)
    assert len(warning) == 1 and "heavy-tailed" in warning[0]
    # a real run where almost nothing is valid: a triangle in a sparse random graph
    G = nx.compose(nx.gnp_random_graph(300, 0.01, seed=1), nx.complete_graph(3))
    r = gsword.estimate(G, "triangle", samples=2000, mode="cpu", threads=1, trawl=False,
                        estimator="wj")
    assert not r.reliable and r.to_dict()["warnings"] == r.warnings

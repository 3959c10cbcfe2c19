"""Fault injection through the Python API (issue 35): output files written whole or
not at all, empty graphs, arguments checked before any work, and gSWORD runs
with nothing to estimate from. The compile cache's faults (damaged entries,
read-only folders) are in test_cache.py, gSWORD's interval coverage in
test_gsword.py, the networkx backend on empty graphs in test_nx_backend.py;
signals and the command line in test_interrupts.py and test_cli.py."""

import os
import threading

import networkx as nx
import numpy as np
import pytest

import gthinker
import gthinker.graphs.generate
import gthinker.runtime.job
import gthinker.runtime.outputs
from gthinker.apps import count, gsword, mce, sm

# ---- output files: whole or nothing -------------------------------------------------------

G = nx.powerlaw_cluster_graph(150, 5, 0.4, seed=3)
CLIQUES = sorted(tuple(sorted(c)) for c in nx.find_cliques(G))
OLD = "the previous results\n"


def _cliques_in(path) -> list[tuple]:
    with open(path) as f:
        return sorted(tuple(sorted(int(x) for x in line.split())) for line in f)


def _only(folder) -> list[str]:
    """What is in ``folder`` (temporary files included)."""
    return sorted(os.listdir(folder))


def _graph():
    return gthinker.Graph.from_networkx(G)


def test_output_replaces_the_file_whole(tmp_path):
    out = tmp_path / "cliques.txt"
    out.write_text(OLD)
    out.chmod(0o640)
    res = mce.run(_graph(), mode="cpu", threads=2, output=out, time_budget=1e-5)
    assert res.count == len(CLIQUES)
    assert _cliques_in(out) == CLIQUES
    assert _only(tmp_path) == ["cliques.txt"]
    assert out.stat().st_mode & 0o777 == 0o640  # the file it replaced kept its mode


def test_stopped_run_leaves_the_old_file_and_no_temporary_file(tmp_path):
    out = tmp_path / "cliques.txt"
    out.write_text(OLD)
    stop = gthinker.StopToken()
    stop.set()  # stops the run at once: its results are partial
    res = mce.run(_graph(), mode="cpu", threads=2, output=out, stop=stop)
    assert res.stopped == "stop"
    assert out.read_text() == OLD
    assert _only(tmp_path) == ["cliques.txt"]


class EmitsThenFails(gthinker.Task):
    """Lists every vertex, and fails on the last one."""

    @staticmethod
    def compute(ctx, record):
        v = np.empty(1, np.int32)
        v[0] = record[0]
        ctx.emit(v)
        if record[0] == ctx.params[0]:
            raise ValueError


def test_failed_run_leaves_no_file(tmp_path):
    out = tmp_path / "vertices.txt"
    with pytest.raises(gthinker.TaskRuntimeError, match="raised an exception"):
        gthinker.run(EmitsThenFails, _graph(), threads=2, output=out, cpu_chunk=1,
                     params=[G.number_of_nodes() - 1])
    assert _only(tmp_path) == []


def test_two_runs_on_one_output_never_mix(tmp_path):
    out = tmp_path / "cliques.txt"
    small = nx.complete_graph(4)
    runs = [(G, CLIQUES), (small, [tuple(range(4))])]
    errors = []

    def run(graph):
        try:
            mce.run(gthinker.Graph.from_networkx(graph), mode="cpu", threads=1, output=out,
                    time_budget=1e-5)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(g,)) for g, _ in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert _cliques_in(out) in [cliques for _, cliques in runs]  # one run's, whole
    assert _only(tmp_path) == ["cliques.txt"]


@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink"])
def test_output_that_is_the_input_file_is_refused_before_reading(tmp_path, spelling):
    graph_file = tmp_path / "g.txt"
    _graph().write(graph_file)
    before = graph_file.read_bytes()
    out = {"same": graph_file, "dot": tmp_path / "." / "g.txt",
           "symlink": tmp_path / "link.txt", "hardlink": tmp_path / "hard.txt"}[spelling]
    if spelling == "symlink":
        out.symlink_to(graph_file)
    if spelling == "hardlink":
        os.link(graph_file, out)
    with pytest.raises(ValueError, match="is the input file"):
        mce.run(str(graph_file), mode="cpu", output=out)
    with pytest.raises(ValueError, match="is the input file"):  # a graph read from it
        mce.run(gthinker.Graph.read(graph_file), mode="cpu", output=out)
    with pytest.raises(ValueError, match="is the input file"):  # sm: the query file too
        sm.count(nx.complete_graph(5), str(graph_file), mode="cpu", output=out)
    assert graph_file.read_bytes() == before


def test_check_output_says_what_is_wrong(tmp_path):
    check = gthinker.runtime.outputs.check_output
    check(None)
    check(tmp_path / "new.txt")
    with pytest.raises(ValueError, match="is a folder"):
        check(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        check(tmp_path / "no-such-folder" / "x.txt")
    with pytest.raises(ValueError, match="must be a file name"):
        check("")
    (tmp_path / "in.txt").write_text("1 2\n")
    with pytest.raises(ValueError, match="is the input file"):
        check(tmp_path / "in.txt", [tmp_path / "other.txt", str(tmp_path / "in.txt")])


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_read_only_output_is_refused(tmp_path):
    out = tmp_path / "kept.txt"
    out.write_text(OLD)
    out.chmod(0o444)
    with pytest.raises(ValueError, match="is read-only"):
        mce.run(_graph(), mode="cpu", output=out)
    assert out.read_text() == OLD


def test_closed_pipe_is_a_broken_pipe_error_at_once(tmp_path):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone (`... -o /dev/stdout | head -0`)
    try:
        with pytest.raises(BrokenPipeError, match="closed it before every result"):
            mce.run(_graph(), mode="cpu", threads=2, output=f"/proc/self/fd/{write_end}")
    finally:
        os.close(write_end)


def test_full_disk_is_said_as_such():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    with pytest.raises(OSError, match="No space left on device") as info:
        mce.run(_graph(), mode="cpu", threads=2, output="/dev/full")
    assert not isinstance(info.value, BrokenPipeError)


def test_fifo_output_is_written_directly(tmp_path):
    fifo = tmp_path / "cliques.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(_cliques_in(fifo)))
    reader.start()
    res = mce.run(_graph(), mode="cpu", threads=2, output=fifo)
    reader.join(60)
    assert got == [CLIQUES] and res.count == len(CLIQUES)
    assert _only(tmp_path) == ["cliques.fifo"]


# ---- empty graphs: 0 everywhere, the same result keys --------------------------------------


def _empty():
    return gthinker.Graph.from_edges(np.empty((0, 2), np.int64))


def _job_stats_keys():
    """The keys of a real job's stats (a non-empty graph)."""
    return set(mce.run(nx.complete_graph(4), mode="cpu", threads=1).stats)


def test_idle_stats_have_a_jobs_keys():
    assert set(gthinker.runtime.job.idle_stats()) == _job_stats_keys()


@pytest.mark.parametrize("isolated", [0, 3])
def test_mce_on_a_graph_without_edges(tmp_path, isolated):
    graph = gthinker.Graph.from_edges(np.empty((0, 2), np.int64), num_vertices=isolated)
    out = tmp_path / "cliques.txt"
    res = mce.run(graph, mode="cpu", threads=2, output=out)
    reference = list(nx.find_cliques(nx.empty_graph(isolated)))
    assert res.count == len(reference) == isolated and res.max_size == min(isolated, 1)
    assert set(res.stats) == _job_stats_keys()
    assert res.to_dict()["count"] == isolated
    assert len(out.read_text().splitlines()) == isolated
    assert sorted(mce.iter_cliques(graph)) == sorted(reference)


def test_sm_and_count_on_an_empty_graph():
    g = _empty()
    keys = _job_stats_keys()
    for unique in (False, True):
        res = sm.count(g, "triangle", unique=unique, mode="cpu", threads=2)
        assert res.count == 0 and set(res.stats) == keys
    assert sm.match(g, "house").shape == (0, 5)
    for pattern in ("triangle", "4-clique", "cliques", "4-cycle", "2-clique", "1-clique"):
        res = count.count(g, pattern, mode="cpu", threads=2)
        assert res.count == 0 and set(res.stats) == keys, pattern
        assert res.to_dict()["count"] == 0
    res = count.count(g, "triangle", per_vertex=True, mode="cpu", threads=2)
    assert res.count == 0 and res.per_vertex.shape == (0,) and set(res.stats) == keys


def test_trivial_counts_have_a_jobs_stats_keys():
    res = count.count(nx.path_graph(4), "2-clique", mode="cpu", threads=2)
    assert res.count == 3 and set(res.stats) == _job_stats_keys()


def test_gsword_on_an_empty_graph_is_exactly_zero():
    for estimator in ("alley", "wj"):
        r = gsword.estimate(_empty(), "triangle", estimator, samples=1000, mode="cpu",
                            threads=2)
        assert r.estimate == 0 and r.stderr == 0 and r.ci95 == (0.0, 0.0) and r.reliable


# ---- arguments: one rule each, checked before any work -------------------------------------

APPS = {
    "mce": lambda graph, **kw: mce.run(graph, **kw),
    "sm": lambda graph, **kw: sm.count(graph, "triangle", **kw),
    "count": lambda graph, **kw: count.count(graph, "triangle", **kw),
    "count-k": lambda graph, **kw: count.count(graph, "4-clique", **kw),
    "gsword": lambda graph, **kw: gsword.estimate(graph, "triangle", samples=1000, **kw),
}
BAD = [("threads", -1), ("threads", 0), ("threads", 1.5), ("threads", "2"), ("threads", True),
       ("time_budget", 0), ("time_budget", float("nan")), ("time_budget", "1"),
       ("mode", "quantum")]


def _rule_message(name, value):
    """What the command line says for the same value (the options' own rule)."""
    try:
        if name == "mode":
            gthinker.gpu.check_mode(value)
        else:
            gthinker.options.describe(gthinker.RunOptions, name).metadata["check"](name, value)
    except ValueError as exc:
        return str(exc)
    raise AssertionError(f"{name}={value!r} passes its rule")


@pytest.mark.parametrize("app", sorted(APPS))
@pytest.mark.parametrize("name, value", BAD, ids=[f"{n}={v!r}" for n, v in BAD])
def test_bad_arguments_stop_before_the_graph_is_read(tmp_path, app, name, value):
    missing = str(tmp_path / "no-such-graph.txt")  # reading it would fail differently
    if app == "gsword" and name == "time_budget":  # gSWORD's limit is time_limit=
        with pytest.raises(TypeError, match="unknown option 'time_budget'; it is time_limit"):
            APPS[app](missing, **{name: value})
        return
    with pytest.raises(ValueError) as info:
        APPS[app](missing, **{name: value})
    if app == "gsword" and name == "mode":
        assert "mode must be one of auto, cpu, gpu;" in str(info.value)
    else:
        assert str(info.value) == _rule_message(name, value)


@pytest.mark.parametrize("budget", [float("inf"), 1e300])
def test_huge_time_budget_means_never_split(budget):
    G = nx.gnp_random_graph(200, 0.3, seed=1)
    tiny = mce.run(G, mode="cpu", threads=2, time_budget=1e-6)
    huge = mce.run(G, mode="cpu", threads=2, time_budget=budget)
    assert huge.count == tiny.count
    assert tiny.stats["tasks_decomposed"] > 0 and huge.stats["tasks_decomposed"] == 0


@pytest.mark.parametrize("seed", [-1, 2**63, 1.0, "1", True])
def test_bad_seeds_one_rule(seed):
    with pytest.raises(ValueError, match="seed must be an integer from 0 to 2\\*\\*63 - 1"):
        gsword.estimate(nx.path_graph(3), "triangle", seed=seed)
    with pytest.raises(ValueError, match="seed must be an integer from 0 to 2\\*\\*63 - 1"):
        gthinker.graphs.generate.gnp(10, 0.5, seed=seed)


def test_gsword_samples_checked_against_memory(monkeypatch):
    monkeypatch.setattr(gthinker.memory, "available_bytes", lambda: 2**30)
    with pytest.raises(ValueError, match="at most 1,073,741,824 samples fit"):
        gsword.estimate(nx.path_graph(3), "triangle", samples=2**34, batches=1)


def test_spill_limit_error_says_what_was_pushed_and_the_limit():
    with pytest.raises(gthinker.SpillLimitError) as info:
        mce.run(nx.gnp_random_graph(200, 0.3, seed=1), mode="cpu", threads=2, spill_limit=100,
                time_budget=1e-6)
    message = str(info.value)
    assert "its limit is 100 bytes" in message and "do not fit in the spill stack S" in message
    pushed = int(message.split(" decomposed tasks (")[1].split(" bytes)")[0])
    assert pushed > 100


def test_zero_clique_is_refused():
    with pytest.raises(ValueError, match="k >= 1"):
        count.count(nx.path_graph(3), "0-clique")


# ---- gSWORD: no samples is no estimate ---------------------------------------------------


def test_gsword_stopped_before_any_sample_has_no_estimate():
    stop = gthinker.StopToken()
    stop.set()
    r = gsword.estimate(nx.karate_club_graph(), "triangle", samples=100_000, mode="cpu",
                        threads=2, stop=stop)
    assert r.stopped == "stop" and r.samples == 0
    assert r.estimate is None and r.stderr is None and r.ci95 is None
    assert not r.reliable and "no samples" in r.warnings[0]
    d = r.to_dict()
    assert d["estimate"] is None and d["ci95"] is None and d["reliable"] is False

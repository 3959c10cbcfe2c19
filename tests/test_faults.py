"""Fault injection through the Python API (issue 35): output files written whole or
not at all, empty graphs, arguments checked before any work, and gSWORD runs
with nothing to estimate from. The compile cache's faults (damaged entries,
read-only folders) are in test_cache.py; signals and the command line in
test_interrupts.py and test_cli.py."""

import os
import threading

import networkx as nx
import numpy as np
import pytest

import gthinker
from gthinker.apps import mce, sm

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
    check = gthinker.outputs.check_output
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

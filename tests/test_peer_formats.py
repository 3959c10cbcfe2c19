"""The benchmark peers' input formats (benchmarks/peers/convert.py), the matching table's
pattern map (benchmarks/peers/patterns.py) and the seed tables' bookkeeping
(benchmarks/seed_tables.py), against independent references: each written file re-read
here with numpy by its documented layout into a networkx graph, shapes compared with
networkx's isomorphism test, a child process measured and killed for real."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import gthinker

PEERS = Path(__file__).resolve().parents[1] / "benchmarks" / "peers"


def _module(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


convert = _module(PEERS / "convert.py")
patterns = _module(PEERS / "patterns.py")
seed_tables = _module(PEERS.parent / "seed_tables.py")


@pytest.fixture(scope="module")
def nx_graph():
    """A skewed graph with isolated vertices and scattered ids."""
    G = nx.powerlaw_cluster_graph(90, 3, 0.4, seed=3)
    G = nx.relabel_nodes(G, {v: 7 * v + 5 for v in G})
    G.add_nodes_from([2, 1000, 1001])  # isolated
    return G


@pytest.fixture(scope="module")
def graph(nx_graph):
    edges = np.array(list(nx_graph.edges()), dtype=np.int64)
    g = gthinker.Graph.from_edges(edges)
    return convert.compact(g)


def _edges_by_ids(graph, src, dst):
    ids = np.asarray(graph.ids)
    return {frozenset((int(ids[u]), int(ids[v]))) for u, v in zip(src, dst, strict=True)}


def _nx_edges(G):
    return {frozenset(e) for e in G.edges()}


def _csr_edges(rowptr, cols):
    src = np.repeat(np.arange(rowptr.size - 1), np.diff(rowptr))
    return src, cols


def test_compact_drops_the_isolated_vertices_only(nx_graph, graph):
    alive = [v for v in nx_graph if nx_graph.degree(v) > 0]
    assert graph.num_vertices == len(alive)
    assert sorted(graph.ids.tolist()) == sorted(alive)
    assert _edges_by_ids(graph, *_csr_edges(graph.indptr, graph.indices)) == _nx_edges(nx_graph)


def test_gthinkercg_bin_is_its_documented_layout(tmp_path, nx_graph, graph):
    out = tmp_path / "g.bin"
    convert.convert("gthinkercg", graph, out, check=True)
    raw = out.read_bytes()
    four, eight, n, m = np.frombuffer(raw[:32], "<u8").tolist()
    assert (four, eight, n, m) == (4, 8, graph.num_vertices, 2 * nx_graph.number_of_edges())
    rowptr = np.frombuffer(raw[32:32 + 8 * (n + 1)], "<u8").astype(np.int64)
    cols = np.frombuffer(raw[32 + 8 * (n + 1):], "<u4")
    assert cols.size == m and rowptr[-1] == m  # and nothing after the columns
    src, dst = _csr_edges(rowptr, cols)
    assert _edges_by_ids(graph, src, dst) == _nx_edges(nx_graph)
    for v in range(n):  # each list sorted, as its loader's binary searches need
        assert np.all(np.diff(cols[rowptr[v]:rowptr[v + 1]].astype(np.int64)) > 0)
    with pytest.raises(ValueError, match=r"\.bin"):
        convert.convert("gthinkercg", graph, tmp_path / "g.csr")


def test_mcegpu_bel_holds_both_directions_sorted(tmp_path, nx_graph, graph):
    out = tmp_path / "g.bel"
    convert.convert("mcegpu", graph, out, check=True)
    rec = np.fromfile(out, "<u8").reshape(-1, 3)
    dst, src, zero = rec[:, 0], rec[:, 1], rec[:, 2]
    assert not zero.any()
    key = src * (1 << 32) + dst
    assert np.all(np.diff(key.astype(np.int64)) > 0)  # sorted by (src, dst), no repeats
    directed = set(zip(src.tolist(), dst.tolist(), strict=True))
    assert directed == {(v, u) for u, v in directed}
    assert _edges_by_ids(graph, src, dst) == _nx_edges(nx_graph)


def test_mcegpu_refuses_a_last_vertex_without_edges(tmp_path):
    g = gthinker.Graph.from_edges(np.array([[0, 1], [1, 2]]), num_vertices=4)
    with pytest.raises(ValueError, match="isolated"):
        convert.convert("mcegpu", g, tmp_path / "g.bel")


def test_tdfs_folder_and_g2miner_prefix(tmp_path, nx_graph, graph):
    convert.convert("tdfs", graph, tmp_path / "t", check=True)
    base = tmp_path / "t" / "snap.txt"
    n, m, four, dmax = (int(x) for x in Path(f"{base}.meta.txt").read_text().split())
    degrees = dict(nx_graph.degree())
    assert (n, m, four, dmax) == (graph.num_vertices, 2 * nx_graph.number_of_edges(), 4,
                                  max(degrees.values()))
    rowptr = np.fromfile(f"{base}.vertex.bin", "<i8")
    cols = np.fromfile(f"{base}.edge.bin", "<i4")
    assert _edges_by_ids(graph, *_csr_edges(rowptr, cols)) == _nx_edges(nx_graph)
    convert.convert("g2miner", graph, tmp_path / "g2" / "graph", check=True)
    meta = Path(tmp_path / "g2" / "graph.meta.txt").read_text().split()
    assert meta[:3] == [str(n), str(m), "4"] and meta[6] == str(dmax)
    assert np.array_equal(np.fromfile(tmp_path / "g2" / "graph.edge.bin", "<i4"), cols)


@pytest.mark.parametrize("fmt, target, offset", [("gthinkercg", "g.bin", -3),
                                                  ("mcegpu", "g.bel", -40),
                                                  ("tdfs", "t/snap.txt.edge.bin", 5)])
def test_check_finds_a_changed_byte(tmp_path, graph, fmt, target, offset):
    out = tmp_path / ("t" if fmt == "tdfs" else target)
    convert.convert(fmt, graph, out)
    path = tmp_path / target
    raw = bytearray(path.read_bytes())
    raw[offset] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.raises(AssertionError, match="differs"):
        convert.FORMATS[fmt][1](graph, out)


def test_row_blocks_cover_every_entry_once_in_order():
    indptr = np.array([0, 0, 5, 5, 6, 40, 41, 41, 60])
    blocks = convert._row_blocks(indptr, chunk=7)
    assert blocks[0][0] == 0 and blocks[-1][1] == indptr.size - 1
    assert all(a[1] == b[0] for a, b in itertools.pairwise(blocks))


def test_each_tdfs_pattern_is_its_gthinkercg_pattern():
    shapes = {n: nx.Graph(e) for n, (_, e) in patterns.TDFS.items()}
    for n, q in patterns.TDFS_TO_GTHINKERCG.items():
        assert nx.is_isomorphic(shapes[n], nx.Graph(patterns.GTHINKERCG[q][1]))
        aut = sum(1 for _ in nx.algorithms.isomorphism.GraphMatcher(
            shapes[n], shapes[n]).isomorphisms_iter())
        assert patterns.automorphisms(patterns.TDFS[n][1]) == aut
    for a, b in itertools.combinations(shapes, 2):
        assert not nx.is_isomorphic(shapes[a], shapes[b])
        assert not patterns.isomorphic(patterns.TDFS[a][1], patterns.TDFS[b][1])
    for n, k in patterns.TDFS_CLIQUES.items():
        assert nx.is_isomorphic(shapes[n], nx.complete_graph(k))


def test_parsers_read_each_tools_output():
    gt = 'loaded ...\n{"count": 12, "seconds": 0.5, "compile_seconds": 0.0, "mode": "gpu", ' \
         '"stopped": null, "graph": {"load_seconds": 0.1}}\n'
    assert seed_tables.parse_gthinker(gt)[:2] == (12, 0.5)
    mg = "[info] count time 0.0123 s\nFound 869325383 maximal cliques in total.\n"
    assert seed_tables.parse_mcegpu(mg)[:2] == (869325383, 0.0123)
    # as the release build prints it: colour codes, thousands separators
    mg = ("\x1b[1;32m[01:52:57] count time 0.022157 s\n\x1b[0mInstance 0 found 1,404,156 "
          "maximal cliques.\nFound 1,404,156 maximal cliques in total.\nDone ...\n")
    assert seed_tables.parse_mcegpu(mg)[:2] == (1404156, 0.022157)
    gc = "workers created\nTotal time (s): 1.5e-05\nTotal count: 45\nTotal spilled tasks: 3\n"
    assert seed_tables.parse_gthinkercg(gc)[:2] == (45, 1.5e-05)
    td = "there're ...\n/tmp/p/1.g\t12.5\t740\ntdfs_wall_seconds = 1.2\n"
    assert seed_tables.parse_tdfs(td)[:2] == (740, 0.0125)
    g2 = "runtime [gpu] = 7e-05 sec\nnum_4-cliques = 40\n"
    assert seed_tables.parse_g2miner(g2)[:2] == (40, 7e-05)
    assert seed_tables.parse_gthinkercg("Segmentation fault\n")[:2] == (None, None)


def test_a_gthinker_row_keeps_the_mce_bitsets_engines_peaks_and_big_subtrees():
    import json

    from gthinker.apps import mce

    G = nx.star_graph(30)  # the hub's subtree is too big for the warps' 96 bytes
    G.add_edges_from((i, i + 1) for i in range(1, 30, 2))
    r = mce.run(G, mode="gpu", gpu_scratch_bytes=96)
    assert r.count == sum(1 for _ in nx.find_cliques(G))
    count, seconds, extra = seed_tables.parse_gthinker(json.dumps(r.to_dict()) + "\n")
    assert (count, seconds) == (r.count, round(r.seconds, 6))
    assert extra["host_peak_bytes"] == r.stats["host_peak_bytes"] > 0
    assert extra["gpu_peak_bytes"] == r.stats["gpu"]["peak_bytes"] > 0
    assert extra["gpu_engine"] == "bitsets"
    assert extra["gpu_stats"]["big_subtrees"] == r.stats["gpu"]["big_subtrees"] > 0


def test_only_the_peers_asked_for_get_their_input_formats():
    class NoPeers:
        def has(self, peer, binary):
            return False

    def formats(*argv):
        return seed_tables._formats(seed_tables.parse_args(["--dry-run", *argv]), NoPeers())

    assert formats("--table", "mce") == ["gthinkercg", "mcegpu"]
    assert formats("--table", "mce", "--gcg-modes", "") == ["mcegpu"]
    assert formats("--table", "mce", "--gcg-modes", "", "--mcegpu-schemes", "") == []
    assert formats("--table", "both", "--gcg-modes", "", "--mcegpu-schemes", "") == [
        "gthinkercg", "tdfs"]  # app_gmatch's modes; G2Miner not built
    assert formats("--table", "sm", "--gcg-sm-modes", "") == ["tdfs"]


def test_status_says_timeout_oom_or_the_error():
    res = {"killed": False, "rc": 0, "out": "Total count: 3"}
    assert seed_tables.status_of(res, 3, 60) == "ok"
    assert seed_tables.status_of({**res, "killed": True}, None, 60) == "timeout 60 s"
    assert seed_tables.status_of(res, 3, 60, stopped="time budget") == "timeout 60 s"
    oom = {**res, "rc": 255, "out": "out of memory\n"}
    assert seed_tables.status_of(oom, None, 60) == "OOM"
    bad = seed_tables.status_of({**res, "rc": 1, "out": "x\nno such file\n"}, None, 60)
    assert bad == "error: rc 1: no such file"
    asserted = {**res, "rc": 1, "out": "x.h:144: f: Assertion `loc < N` failed.\nwall = 0.4\n"}
    said = seed_tables.status_of(asserted, None, 60)
    assert said == "error: rc 1: x.h:144: f: Assertion `loc < N` failed."
    assert seed_tables.status_of({**res, "out": "nothing"}, None, 60).startswith("error: no count")


def _row(tool, count, secs, wall, status="ok", pattern=None):
    return seed_tables.Row("sm", "g", tool, "gpu", pattern, status=status, count=count,
                           comparable=count, tool_seconds=secs, wall_seconds=wall)


def test_judge_marks_mismatches_and_divides_by_gthinkers_best():
    rows = [_row("gthinker", 10, 2.0, 5.0, pattern=1), _row("gthinker", 10, 1.0, 6.0, pattern=1),
            _row("T-DFS", 10, 4.0, 3.0, pattern=1), _row("G-ThinkerCG", 11, 0.5, 1.0, pattern=1),
            _row("T-DFS", None, None, 60.0, status="timeout 60 s", pattern=1),
            _row("T-DFS", 7, 1.0, 1.0, pattern=2)]
    bad = seed_tables.judge(rows)
    assert bad == [rows[3]]
    assert rows[2].vs_best == (4.0, 0.6) and rows[0].vs_best == (2.0, 1.0)
    assert rows[4].agrees is None and rows[5].agrees  # no gthinker row: the peer is the reference
    md = seed_tables.markdown({"host": "h", "argv": "x"}, [], rows, bad)
    assert "COUNT MISMATCH in 1 rows" in md and "**MISMATCH** (ref 10)" in md
    assert "timeout 60 s" in md


def test_run_child_measures_memory_and_kills_after_the_limit(tmp_path):
    code = "import time; x = b'x' * (80 << 20); print('up', flush=True); time.sleep(30)"
    res = seed_tables.run_child([sys.executable, "-c", code], 2.0)
    assert res["killed"] and res["wall"] < 10
    assert res["peak_rss"] >= 80 << 20 and "up" in res["out"]
    done = seed_tables.run_child([sys.executable, "-c", "import sys; sys.exit(3)"], 30)
    assert done["rc"] == 3 and not done["killed"]


def test_a_peer_stops_at_its_ratio_of_gthinkers_best(tmp_path):
    a = seed_tables.parse_args(["--out", str(tmp_path / "o"), "--work", str(tmp_path / "w"),
                                "--run-limit", "60", "--peer-ratio", "10",
                                "--peer-floor", "1"])
    bench = seed_tables.Bench(a)
    ours = [_row("gthinker", 5, 0.1, 0.5), _row("gthinker", 5, 0.1, 0.3),
            _row("gthinker", None, None, 60.0, status="timeout 60 s")]
    assert bench.peer_limit(ours) == 3.0  # ten times the best finished process
    assert bench.peer_limit(ours[2:]) == 60  # gthinker finished nothing: the whole limit
    row = seed_tables.Row("mce", "g", "peer", "x")
    code = "import time; time.sleep(30)"
    bench.run(row, [sys.executable, "-c", code], seed_tables.parse_mcegpu, gpu=False,
              limit=bench.peer_limit(ours))
    assert row.status.startswith("timeout 3 s (--peer-ratio 10 x") and row.wall_seconds < 10
    bench.log.close()
    bench.jsonl.close()

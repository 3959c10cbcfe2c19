"""Shaped graphs and the presets (gthinker.graphs.generate.shaped / preset, the model in
gthinker.graphs.model, the kernels in csrc/graph_generate.cpp), the generate command's
preset and shaped models, gthinker stats, and KONECT / Network Repository files."""

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import networkx as nx
import numpy as np
import pytest
from conftest import child_env
from scipy import integrate

from gthinker import _core
from gthinker.cli import main as cli_main
from gthinker.cli.stats import graph_stats
from gthinker.graphs import csr, model
from gthinker.graphs.generate import PRESETS, preset, shaped
from gthinker.graphs.graph import Graph

#: A scale per preset that makes a graph of about 20,000 to 100,000 edges.
SMALL = {"soc-pokec": 0.002, "soc-livejournal": 0.002, "socfb-B-anon": 0.002,
         "edit-shwiki": 0.005, "edit-enwiktionary": 0.002, "wikipedia_link_sr": 0.0005,
         "trackers": 0.0005}


# ---- the weight curve ------------------------------------------------------------------


def _power_moment(floor, top, g, k):
    """The integral of x**(k - g) over [floor, top], numerically (the reference)."""
    return integrate.quad(lambda x: x ** (k - g), floor, top, limit=200)[0]


@pytest.mark.parametrize(("floor", "top", "mean"),
                         [(1.0, 1000.0, 10.0), (2.0, 50.0, 20.0), (1.0, 1e5, 3.0),
                          (5.0, 7000.0, 27.0)])
def test_solved_exponent_gives_the_mean(floor, top, mean):
    g = model.solve_exponent(floor, top, mean)
    assert _power_moment(floor, top, g, 1) / _power_moment(floor, top, g, 0) \
        == pytest.approx(mean, rel=1e-6)


def test_exponent_out_of_reach_is_an_error():
    with pytest.raises(ValueError, match="cannot have"):
        model.solve_exponent(1.0, 10.0, 11.0)


@pytest.mark.parametrize("size", [1, 2, 3, 17, 1000, 4097])
def test_scatter_is_a_bijection(size):
    ids = [_core.gen_scatter(size, 99, x) for x in range(size)]
    assert sorted(ids) == list(range(size))
    if size > 100:
        assert ids != sorted(ids)  # scattered


def test_draws_follow_the_size_biased_power_law():
    """A side's ranks are drawn in proportion to the mean weight of their slice of the
    power law: compared with the slices' shares computed by quadrature."""
    count, floor, top, g = 40, 1.0, 400.0, 2.5
    side = (count, floor, top, g, 0, count, 0, 7)
    draws = 400_000
    pairs = _core.gen_draw_pairs(side, side, 3, 1, 0, draws // 2, 2)
    rank_of = {_core.gen_scatter(count, 7, r): r for r in range(count)}
    seen = np.bincount([rank_of[int(x)] for x in pairs.ravel()], minlength=count)
    t = 1.0 - g
    cdf_inverse = lambda q: (floor ** t + q * (top ** t - floor ** t)) ** (1 / t)  # noqa: E731
    total = _power_moment(floor, top, g, 1)
    for r in range(count):
        hi, lo = cdf_inverse(1 - r / count), cdf_inverse(1 - (r + 1) / count)
        share = integrate.quad(lambda x: x ** (1 - g), lo, hi)[0] / total
        expect = share * draws
        assert abs(seen[r] - expect) < 5 * math.sqrt(expect) + 5, (r, seen[r], expect)


# ---- reproducibility ---------------------------------------------------------------------


@pytest.mark.parametrize("threads", [2, 3])
def test_kernels_give_the_same_arrays_on_any_threads(threads):
    side = (199_990, 1.0, 3000.0, 2.2, 10, 200_000, 0, 5)
    run = {t: {} for t in (1, threads)}
    for t in run:
        out = run[t]
        out["pairs"] = _core.gen_draw_pairs(side, side, 9, 2, 100, 150_000, t)
        out["hub"] = _core.gen_hub_neighbours(side, 40_000, 9, 3, t)
        out["anchors"] = _core.gen_anchor_pairs(side, side, None, 9, 4, t)
    g = Graph.from_pairs(run[1]["pairs"][:, 0], run[1]["pairs"][:, 1], 200_000)
    centers = np.flatnonzero(g.degrees() >= 2).astype(np.int32)
    for t in run:
        run[t]["closures"] = _core.gen_closure_pairs(g.indptr, g.indices, centers, None, 4, 9, 5,
                                                    0, 60_000, t)
        cand = Graph.from_pairs(run[t]["closures"][:, 0], run[t]["closures"][:, 1], 200_000)
        run[t]["new"] = _core.gen_new_edges(cand.indptr, cand.indices, g.indptr, g.indices, 11,
                                            50_000, t)[0]
    for key in run[1]:
        assert np.array_equal(run[1][key], run[threads][key]), key
    assert run[1]["new"].shape == (50_000, 2)


def test_presets_are_the_same_on_one_and_several_threads(monkeypatch):
    graphs = []
    for t in (1, 3):
        monkeypatch.setattr(csr, "threads", lambda t=t: t)
        graphs.append([preset(name, SMALL[name], seed=4) for name in ("soc-pokec", "trackers")])
    assert graphs[0] == graphs[1]


def test_same_seed_same_graph_other_seed_other_graph():
    a = preset("soc-livejournal", 0.002, seed=1)
    assert a == preset("soc-livejournal", 0.002, seed=1)
    b = preset("soc-livejournal", 0.002, seed=2)
    assert a != b and a.num_edges == b.num_edges


# ---- targets -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PRESETS))
def test_preset_hits_its_targets_at_a_small_scale(name):
    p, scale = PRESETS[name], SMALL[name]
    m = p.model(scale)
    g = preset(name, scale, seed=1)
    g.check()
    assert g.num_vertices == m.num_vertices
    assert g.num_vertices == round(p.vertices * scale) or p.folded  # folded: the larger side
    assert g.num_edges == m.edges == round(p.edges * scale)
    assert g.degrees().min() >= 1  # every vertex has its anchor edge (or a hub's)
    hub = max(h for s in m.sides for h in s.hubs)
    if p.folded:
        # the hub's vertex is also a vertex of the other side, with a few edges of its own
        assert hub - 2 <= g.max_degree <= hub + 10 * m.edges / m.num_vertices
    else:
        assert g.max_degree == hub
    assert g.report.source.startswith(f"preset('{name}'")


def test_shaped_targets_and_heavy_tail():
    g = shaped(20_000, 200_000, 3000, floor=2.0, seed=3)
    g.check()
    deg = g.degrees()
    assert (g.num_vertices, g.num_edges, g.max_degree) == (20_000, 200_000, 3000)
    assert np.count_nonzero(deg == 3000) == 1
    assert deg.min() >= 1
    # heavy tail: the top 1% of the vertices hold far more than 1% of the edge ends
    top = np.sort(deg)[-200:]
    assert top.sum() > 0.1 * deg.sum()
    assert np.sort(deg)[-2] > 20 * np.median(deg)


def test_closures_raise_the_clustering():
    """The clustering, measured with networkx, grows with the closure share and the
    group; a planted group of k neighbours makes cliques of k + 1 vertices."""
    args = (2000, 16_000, 200)
    plain = nx.average_clustering(shaped(*args, floor=4.0, seed=5).to_networkx())
    wedges = nx.average_clustering(shaped(*args, floor=4.0, closure=0.3, seed=5).to_networkx())
    groups = shaped(*args, floor=4.0, closure=0.3, group=4, seed=5).to_networkx()
    assert plain < 0.05 < 2 * plain < wedges < nx.average_clustering(groups)
    assert max(len(c) for c in nx.find_cliques(groups)) >= 5


def test_preset_clustering_near_its_target():
    """soc-pokec at 0.5% (8,164 vertices): networkx's average clustering within a third
    of the real graph's 0.109 (docs/generating.md gives it at full size: 0.110)."""
    g = preset("soc-pokec", 0.005, seed=0)
    c = nx.average_clustering(g.to_networkx())
    assert abs(c - PRESETS["soc-pokec"].clustering) < PRESETS["soc-pokec"].clustering / 3


def test_bipartite_graph_has_two_sides_and_no_triangles():
    g = shaped(3000, 12_000, 1500, bipartite=800, top=40.0, top2=200.0, seed=2)
    g.check()
    assert (g.num_vertices, g.num_edges) == (3800, 12_000)
    e = g.edge_array()
    assert np.all((e[:, 0] < 3000) & (e[:, 1] >= 3000))  # u < v: u on the first side
    deg = g.degrees()
    assert deg[3000:].max() == 1500 and deg.min() >= 1
    G = g.to_networkx()
    assert nx.is_bipartite(G) and sum(nx.triangles(G).values()) == 0
    assert graph_stats(g, threads=2).triangles == 0


def test_folded_bipartite_shares_ids_between_the_sides():
    g = shaped(3000, 12_000, 1500, bipartite=800, top=40.0, top2=200.0, folded=True, seed=2)
    g.check()
    assert (g.num_vertices, g.num_edges) == (3000, 12_000)
    assert 1498 <= g.max_degree <= 1600
    assert graph_stats(g, threads=2).triangles > 0  # a vertex on both sides closes cycles


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"vertices": 1}, "vertices must be"),
        ({"vertices": 2.5}, "vertices must be"),
        ({"edges": 0}, "edges must be"),
        ({"max_degree": -1}, "max_degree must be"),
        ({"max_degree": 999}, "needs at least"),
        ({"closure": 0.95}, "closure must be"),
        ({"closure": float("nan")}, "closure must be"),
        ({"group": 1}, "group must be"),
        ({"group": 17}, "group must be"),
        ({"floor": 0}, "floor must be"),
        ({"top": 0.5}, "top must be"),
        ({"edges": 10}, "too few"),
        ({"vertices": 30, "max_degree": 10, "edges": 500}, "more than the 435 pairs"),
        ({"bipartite": 50, "closure": 0.2}, "closure=0"),
        ({"folded": True}, "give bipartite"),
        ({"bipartite": 50, "max_degree": 2000}, "first side"),
        ({"seed": -1}, "seed"),
        ({"edges": 20_000, "top": 30.0}, "cannot have"),
    ],
)
def test_shaped_bad_arguments(kw, needle):
    args = {"vertices": 1000, "edges": 5000, "max_degree": 100} | kw
    with pytest.raises(ValueError, match=needle):
        shaped(**args)


@pytest.mark.parametrize(("name", "scale", "needle"),
                         [("soc-nope", 0.1, "unknown preset"), ("trackers", 0, "scale"),
                          ("trackers", 1.5, "scale"), ("trackers", "big", "scale")])
def test_preset_bad_arguments(name, scale, needle):
    with pytest.raises(ValueError, match=needle):
        preset(name, scale)


# ---- stats -------------------------------------------------------------------------------


def test_graph_stats_match_networkx():
    G = nx.powerlaw_cluster_graph(400, 4, 0.5, seed=1)
    G.add_node(1000)  # an isolated vertex counts, with clustering 0
    s = graph_stats(G, threads=2)
    tri = sum(nx.triangles(G).values()) // 3
    assert (s.vertices, s.edges, s.isolated) == (401, G.number_of_edges(), 1)
    assert s.max_degree == max(d for _, d in G.degree())
    assert s.degeneracy == max(nx.core_number(G).values())
    assert s.triangles == tri
    assert s.average_clustering == pytest.approx(nx.average_clustering(G), rel=1e-12)
    assert s.transitivity == pytest.approx(nx.transitivity(G), rel=1e-12)
    assert graph_stats(G, triangles=False).triangles is None


def test_stats_command(tmp_path, capsys):
    path = tmp_path / "g.txt"
    g = preset("socfb-B-anon", 0.001, seed=0)
    g.write(path)
    assert cli_main.main(["stats", str(path), "--json", "--threads", "2"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = graph_stats(g, threads=2)
    assert got["triangles"] == want.triangles and got["edges"] == g.num_edges
    assert got["average_clustering"] == pytest.approx(want.average_clustering)
    assert cli_main.main(["stats", str(tmp_path / "missing.txt")]) == 2


# ---- the command -------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".txt", ".csr"])
@pytest.mark.parametrize("name", ["soc-pokec", "trackers"])
def test_cli_preset_round_trip(tmp_path, capsys, name, suffix):
    out = tmp_path / f"g{suffix}"
    scale = SMALL[name]
    argv = ["generate", "preset", name, "--scale", str(scale), "--seed", "2", "-o", str(out)]
    assert cli_main.main(argv) == 0
    err = capsys.readouterr().err
    assert "Chung-Lu" in err and "peak memory" in err
    assert Graph.read(out) == preset(name, scale, seed=2)


def test_cli_shaped_round_trip_with_stats(tmp_path, capsys):
    out = tmp_path / "g.csr"
    argv = ["generate", "shaped", "--vertices", "3000", "--edges", "20000", "--max-degree",
            "300", "--closure", "0.2", "--closure-size", "3", "--floor", "2", "--seed", "7",
            "--stats", "-q", "-o", str(out)]
    assert cli_main.main(argv) == 0
    cap = capsys.readouterr()
    g = shaped(3000, 20000, 300, closure=0.2, group=3, floor=2.0, seed=7)
    assert Graph.load(out) == g
    assert {"degeneracy", "oriented"} <= set(Graph.load(out).prepared())
    assert f"triangles: {graph_stats(g).triangles:,}" in cap.out
    assert "[" not in cap.err  # --quiet: the summary line only


def test_cli_preset_list(capsys):
    assert cli_main.main(["generate", "preset", "--list"]) == 0
    out = capsys.readouterr().out
    for p in PRESETS.values():
        assert p.name in out and f"{p.edges:,}" in out and f"{p.max_degree:,}" in out


@pytest.mark.parametrize(("argv", "needle"), [
    (["preset", "-o", "x.txt"], "give a preset NAME"),
    (["preset", "soc-pokec"], "-o FILE"),
    (["preset", "soc-pokec", "--scale", "2", "-o", "x.txt"], "scale must be"),
    (["shaped", "--vertices", "10", "--edges", "5", "--max-degree", "3", "-o", "x.txt"],
     "too few"),
])
def test_cli_bad_generate_arguments(tmp_path, capsys, argv, needle):
    os.chdir(tmp_path)
    assert cli_main.main(["generate", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
    assert not (tmp_path / "x.txt").exists()


def test_generation_stops_at_ctrl_c():
    """SIGINT during a generation raises KeyboardInterrupt within a fraction of a second
    (the kernels ask for signals every tick); nothing is left running."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            preset("trackers", 0.2)
    finally:
        timer.cancel()
    assert time.perf_counter() - t0 < 3.0
    assert preset("trackers", SMALL["trackers"]).num_edges > 0  # nothing left broken


def test_cli_generate_stopped_leaves_no_file(tmp_path):
    out = tmp_path / "t.csr"
    with subprocess.Popen([sys.executable, "-m", "gthinker", "generate", "preset", "trackers",
                           "--scale", "0.2", "-o", str(out)], stderr=subprocess.PIPE, text=True,
                          env=child_env(), cwd=tempfile.gettempdir(),
                          start_new_session=True) as proc:
        first = proc.stderr.readline()  # the model's line: the handlers are in place
        t0 = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(timeout=60) == 130, first + rest
    assert time.perf_counter() - t0 < 10
    assert "Traceback" not in rest
    assert list(tmp_path.iterdir()) == []


# ---- real files --------------------------------------------------------------------------


def test_konect_and_network_repository_files_read_as_they_are(tmp_path):
    """KONECT out.* files (``%`` header lines, weight and time columns, signed and
    float weights) and Network Repository files (``%`` headers, ``u,v`` lines, Matrix
    Market with weights) read with Graph.read unchanged; a KONECT bipartite file's
    sides share ids, as the seed paper's tools read it."""
    edges = [(1, 2), (2, 3), (3, 1), (3, 4), (4, 5)]
    files = {
        "out.konect-unweighted": "% sym unweighted\n% 5 5 5\n" +
                                 "".join(f"{u} {v}\n" for u, v in edges),
        "out.konect-timed": "% sym positive\n% 6 5 5\n" +
                            "".join(f"{u}\t{v}\t1\t{1136070000 + k}\n"
                                    for k, (u, v) in enumerate(edges + [(2, 1)])),
        "out.konect-signed": "% sym signed\n" +
                             "".join(f"{u} {v} {'+1' if k % 2 else '-1'}\n"
                                     for k, (u, v) in enumerate(edges)),
        "out.konect-weighted": "% sym weighted\n" +
                               "".join(f"{u} {v} {0.5 * k:.2e}\n"
                                       for k, (u, v) in enumerate(edges)),
        "nr.edges": "% 5 5\n" + "".join(f"{u},{v}\n" for u, v in edges),
        "nr-weighted.edges": "%\n% 5 5\n" +
                             "".join(f"{u},{v},{k}\n" for k, (u, v) in enumerate(edges)),
        "nr.mtx": "%%MatrixMarket matrix coordinate integer symmetric\n% from NR\n5 5 5\n" +
                  "".join(f"{max(u, v)} {min(u, v)} 3\n" for u, v in edges),
    }
    want = nx.Graph(edges)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        g = Graph.read(tmp_path / name)
        ids = g.ids if not name.endswith(".mtx") else g.ids + 1  # Matrix Market counts from 1
        got = nx.Graph((int(ids[u]), int(ids[v])) for u, v in g.edge_array())
        assert nx.utils.graphs_equal(got, want), name
    # users 1..3, pages 1..2: read as one graph, user 1 and page 1 are one vertex
    (tmp_path / "out.edit-bip").write_text("% bip unweighted\n% 4 3 2\n1 1\n1 2\n2 2\n3 1\n")
    g = Graph.read(tmp_path / "out.edit-bip")
    assert g.num_vertices == 3 and g.report.self_loops == 2
    assert sorted(map(tuple, g.ids[g.edge_array()].tolist())) == [(1, 2), (1, 3)]

"""gSWORD's stopping rule (target error, time budget), its batch schedule, and the
candidate graph kept with the data graph (CPU here; tests/test_gsword_gpu.py has the
GPU pipeline's)."""

import json
import subprocess
import sys

import networkx as nx
import pytest
from test_gsword import _graph, _labeled

from gthinker.apps import gsword, sm
from gthinker.apps.gsword import candidates
from gthinker.apps.gsword.candidates import kept_candidate_graph
from gthinker.apps.gsword.stop_rule import Z95, StopRule, batch_sizes


def _half_width(batches):
    fields = gsword.summary(batches)
    return Z95 * fields["stderr"] / fields["estimate"]


def _as_batches(result):
    out = []
    for first, n, sums, valid in result.rounds:
        b = gsword.Batch(first, n, 0, 1)
        b.out_sum[:], b.out_valid[:] = sums, valid
        out.append(b)
    return out


@pytest.mark.parametrize("trawl, target", [(False, 0.05), (True, 0.01)])
def test_target_error_stops_as_soon_as_the_interval_is_that_tight(trawl, target):
    data = _graph()
    exact = sm.count(data, "house", mode="cpu", threads=2).count
    r = gsword.estimate(data, "house", "wj", samples=2_000_000, mode="cpu", threads=2, seed=4,
                        target_error=target, trawl=trawl, exact_if_cheaper=False)
    assert r.stopped == "target_error" and r.samples < 2_000_000
    done = _as_batches(r)
    assert r.batches == len(done) >= 2 and sum(b.n for b in done) == r.samples
    assert _half_width(done) <= target  # the interval reported is that tight
    assert _half_width(done[:-1]) > target  # and the batch before was not: no batch more
    assert abs(r.estimate - exact) <= 4 * r.stderr


def test_time_limit_stops_after_the_batch_in_progress():
    r = gsword.estimate(_graph(), "diamond", "alley", samples=1_000_000, mode="cpu",
                        threads=2, time_limit=1e-6, trawl=False)
    assert r.stopped == "time_limit" and r.batches == 1
    assert r.samples == batch_sizes(1_000_000, None, StopRule(time_limit=1.0))[0]


def test_time_budget_is_not_gswords_time_limit():
    """gSWORD's wall-clock limit has its own name: the old one says so, and is no task
    time budget either (gSWORD takes none)."""
    with pytest.raises(TypeError, match="'time_budget'; it is time_limit"):
        gsword.estimate(_graph(), "diamond", samples=1000, time_budget=1.0)


def test_an_unreached_target_draws_every_sample():
    r = gsword.estimate(_graph(), "diamond", samples=5000, mode="cpu", threads=2,
                        target_error=1e-9, exact_if_cheaper=False)
    assert r.stopped is None and r.samples == 5000


def test_batch_schedule():
    rule = StopRule(target_error=0.01)
    sizes = batch_sizes(10**6, None, rule)
    assert sum(sizes) == 10**6 and sizes[0] == 10**6 // 256
    assert all(b == min(2 * a, 10**6 // 8) for a, b in zip(sizes[:-2], sizes[1:-1], strict=True))
    assert batch_sizes(100, None, rule) == [100]
    assert batch_sizes(10, 3, rule) == [4, 3, 3]  # batches given: equal ones
    assert batch_sizes(10, None, StopRule()) == [2, 2, 2, 2, 1, 1]  # no rule: 6 batches


@pytest.mark.parametrize("kw", [{"target_error": 0}, {"target_error": -0.1},
                                {"target_error": float("nan")}, {"time_limit": 0},
                                {"target_error": True}])
def test_bad_stopping_rules(kw):
    with pytest.raises(ValueError, match=next(iter(kw))):
        gsword.estimate(_graph(), "triangle", **kw)


def test_cli_target_error(tmp_path):
    data = tmp_path / "g.txt"
    nx.write_edgelist(nx.gnp_random_graph(40, 0.3, seed=5), data, data=False)
    run = [sys.executable, "-m", "gthinker", "gsword", str(data), "house", "--mode", "cpu",
           "--threads", "2", "--estimator", "wj", "--samples", "2000000",
           "--no-exact-if-cheaper"]
    out = subprocess.run(run + ["--target-error", "0.05", "--json", "-q"], capture_output=True,
                         text=True, cwd=tmp_path, check=True)
    row = json.loads(out.stdout)
    assert row["stopped"] == "target_error" and row["samples"] < 2_000_000
    text = subprocess.run(run + ["--target-error", "0.05"], capture_output=True, text=True,
                          cwd=tmp_path, check=True)
    assert "within the target error" in text.stdout
    bad = subprocess.run(run + ["--target-error", "0"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert bad.returncode == 2 and "target_error must be a number > 0" in bad.stderr


# ---- the candidate graph kept with the data graph ------------------------------------------


def test_candidate_graph_is_kept_with_the_data_graph(monkeypatch):
    data, query = _labeled()
    cg = kept_candidate_graph(data, query)
    assert kept_candidate_graph(data, query) is cg
    assert kept_candidate_graph(data, query, "sm") is not cg  # another order, another graph
    fresh = gsword.candidate_graph(data, query)
    assert (fresh.cgp == cg.cgp).all() and (fresh.cgi == cg.cgi).all()
    r = gsword.estimate(data, query, samples=1000, mode="cpu", threads=2)
    assert r.candidates == [len(c) for c in cg.candidates]
    assert cg.plan_params(data, query) is cg.plan_params(data, query)
    monkeypatch.setattr(candidates, "KEPT_PER_GRAPH", 2)
    g = _graph()
    tri = kept_candidate_graph(g, "triangle")
    kept_candidate_graph(g, "4-path")
    assert kept_candidate_graph(g, "triangle") is tri
    kept_candidate_graph(g, "4-cycle")  # 4-path, used least recently, goes
    assert kept_candidate_graph(g, "triangle") is tri
    kept_candidate_graph(g, "4-cycle")
    kept_candidate_graph(g, "diamond")  # now the triangle's goes
    assert kept_candidate_graph(g, "triangle") is not tri

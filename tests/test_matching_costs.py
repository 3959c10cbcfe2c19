"""The cost estimate that weighs the matching search against a formula
(gthinker.apps.matching.costs): the search's estimated steps against the steps a brute
force enumeration of the same plan's partial matches takes, the formula's steps against
the 4-cycle job's own work, and the dispatch in gpu mode (the formula on a hub graph, the
search on an ordinary one; on the simulator), with counts checked against networkx."""

import itertools

import networkx as nx
import numpy as np
import pytest

import gthinker
from gthinker.apps import sm
from gthinker.apps.count import count
from gthinker.apps.matching import costs
from gthinker.apps.matching.counting import middle_graph
from gthinker.apps.matching.formulas import cycle_work
from gthinker.apps.matching.pattern_plan import pattern_plan
from gthinker.apps.matching.patterns import pattern

#: How far the sampled estimate may be from the brute force's steps (measured: within
#: 8% on these graphs and shapes, 2048 samples).
FACTOR = 1.25
SHAPES = ["4-cycle", "diamond", "tailed-triangle", "5-cycle", "house", "4-path"]


def _hub_graph(leaves: int, hubs: int = 2) -> nx.Graph:
    """``hubs`` vertices joined to every leaf, the leaves paired by a matching: each
    wedge through a hub is a partial match of the 4-cycle's search."""
    g = nx.complete_bipartite_graph(hubs, leaves)
    g.add_edges_from((hubs + i, hubs + i + 1) for i in range(0, leaves - 1, 2))
    return g


def _graphs():
    ba = nx.barabasi_albert_graph(70, 2, seed=3)
    ba.add_edges_from((0, v) for v in range(1, 70))  # a hub
    return {"gnp": nx.gnp_random_graph(40, 0.15, seed=1), "ba+hub": ba,
            "bipartite": _hub_graph(60, 3)}


def _brute_steps(graph: gthinker.Graph, plan) -> float:
    """The steps :func:`costs.search_steps` estimates, by enumerating every partial
    match of the plan's enumerated positions (backward edges, one data vertex per
    position, the restrictions): each one's next list (the shortest backward row), and
    at the last enumerated level the tail's."""
    adj = [set(graph.neighbors(v).tolist()) for v in range(graph.num_vertices)]
    deg = graph.degrees()
    n, enumerated = plan.num_vertices, max(plan.num_vertices - plan.count_only, 1)
    total = float(graph.indices.size)

    def fits(drawn, i, x):
        return (x not in drawn and all(x in adj[drawn[b]] for b in plan.backward[i])
                and all(drawn[a] < x for a, b in plan.restrictions if b == i and a < i)
                and all(x < drawn[b] for a, b in plan.restrictions if a == i and b < i))

    def grow(drawn):
        nonlocal total
        j = len(drawn)
        if j >= 2:
            for t in [j] if j < enumerated else range(j, n):
                total += min(deg[drawn[b]] for b in plan.backward[t] if b < j)
        if j == enumerated:
            return
        for x in range(graph.num_vertices) if j == 0 else adj[drawn[plan.backward[j][0]]]:
            if fits(drawn, j, x):
                grow(drawn + [x])

    grow([])
    return total


@pytest.mark.parametrize("name", SHAPES)
def test_search_estimate_near_the_enumerated_steps(name):
    plan = pattern_plan(pattern(name))
    for gname, g in _graphs().items():
        graph = gthinker.as_graph(g)
        want = _brute_steps(graph, plan)
        got = costs.search_steps(graph, plan)
        assert want / FACTOR <= got <= want * FACTOR, (gname, got, want)


def test_formula_steps_bound_the_four_cycle_job():
    for g in [*_graphs().values(), _hub_graph(300)]:
        graph = gthinker.as_graph(g)
        mg = middle_graph(graph)
        job = cycle_work(mg.in_ptr, mg.in_src, mg.in_off, mg.dag.indptr)[-1]
        bound = costs.formula_steps(graph, "4-cycle")
        assert job <= bound <= 2 * job + graph.num_vertices
    assert costs.formula_steps(graph, "diamond") is None  # no formula counts it


def _four_cycles(g: nx.Graph) -> int:
    """4-cycles from common neighbours: each cycle is two pairs of opposite vertices."""
    pairs = sum(len(set(g[u]) & set(g[v])) * (len(set(g[u]) & set(g[v])) - 1) // 2
                for u, v in itertools.combinations(g, 2))
    return pairs // 2


def test_gpu_mode_counts_a_hub_graph_by_the_formula():
    g = _hub_graph(1000)
    graph = gthinker.as_graph(g)
    weighed = costs.costs(graph, pattern_plan(pattern("4-cycle")))
    assert weighed.formula_wins() and weighed.search > costs.FORMULA_RATIO * weighed.formula
    want = _four_cycles(g)
    r = count(graph, "4-cycle", mode="gpu", threads=2)
    assert r.count == want and r.method == "formula (4-cycle)" and r.mode == "cpu"
    assert r.stats["costs"]["by"] == "formula" and "the formula" in r.mode_reason
    s = sm.count(graph, "4-cycle", mode="gpu", threads=2)
    assert s.count == 8 * want and s.stats["costs"]["by"] == "formula"
    c = count(graph, "4-cycle", mode="cpu", threads=2)  # cpu mode: the formula, unweighed
    assert c.count == want and "costs" not in c.stats


def test_gpu_mode_searches_an_ordinary_graph():
    """On the simulator (tests/conftest.py), or the GPU with GTHINKER_TEST_REAL_GPU=1."""
    g = nx.gnp_random_graph(12, 0.4, seed=1)
    graph = gthinker.as_graph(g)
    assert not costs.costs(graph, pattern_plan(pattern("4-cycle"))).formula_wins()
    want = _four_cycles(g)
    r = sm.count(g, "4-cycle", mode="gpu")
    assert r.mode == "gpu" and r.count == 8 * want
    assert r.stats["costs"]["by"] == "search" and r.mode_reason.startswith("the search")
    c = count(g, "4-cycle", mode="gpu")
    assert c.count == want and c.method == "subgraph matching"
    assert c.stats["costs"]["by"] == "search"


def test_the_estimate_is_kept_and_repeatable():
    graph = gthinker.as_graph(_graphs()["ba+hub"])
    plan = pattern_plan(pattern("house"))
    first = costs.costs(graph, plan)
    assert costs.costs(graph, plan) is first  # kept with the graph
    assert costs.search_steps(graph, plan) == first.search  # a fixed seed
    assert np.isfinite(first.search) and first.formula > 0


def test_gpu_mode_weighs_no_neighbourhood_shape():
    """The neighbourhood formulas cost what each neighbourhood's triangles cost, which the
    degrees do not bound: gpu and hybrid modes search them; cpu mode takes the formula."""
    from gthinker.apps.matching import counting, neighbourhoods

    graph = gthinker.as_graph(_hub_graph(300))
    for shape in neighbourhoods.SHAPES:
        plan = pattern_plan(pattern(shape))
        assert shape not in costs.WEIGHED_SHAPES
        assert counting.by_formula(plan, "gpu", graph) == (False, "")
        assert counting.by_formula(plan, "hybrid", graph)[0] is False
        assert counting.by_formula(plan, "cpu", graph)[0] is True


def test_sm_weighs_only_what_the_dispatch_weighs():
    """A neighbourhood shape in gpu mode is searched without an estimate (it would cost
    a tenth of a second and decide nothing); the count still equals the cpu mode's."""
    g = nx.gnp_random_graph(14, 0.5, seed=3)
    graph = gthinker.as_graph(g)
    q = pattern("4-wheel")
    r = sm.count(graph, q, mode="gpu", threads=2)
    assert "costs" not in r.stats and r.method == "subgraph matching"
    assert r.count == sm.count(graph, q, mode="cpu", threads=2).count

"""Each bundled app's request, made from its options (gthinker.registry.App.make_request),
run the way gthinker.cluster runs it, without Ray: the driver's weights cut the roots into
ranges, each range runs on its own (as on a node), and the merge of the parts is the
one-process result (for gSWORD without trawling, bit for bit). Bad options stop when the
request is made, before any graph is read."""

import networkx as nx
import pytest
from conftest import in_ranges

import gthinker
from gthinker import registry
from gthinker.apps import count, gsword, mce, sm


@pytest.fixture(scope="module")
def graph():
    return gthinker.Graph.from_networkx(nx.powerlaw_cluster_graph(120, 4, 0.4, seed=3))


def test_mce_ranges_merge_to_the_whole(graph):
    one = mce.run(graph, mode="cpu", threads=1, min_size=3)
    req = registry.get("mce").make_request(mode="cpu", min_size=3, time_budget=1e-3)
    assert req.options.min_size == 3 and req.rest == {"time_budget": 1e-3}
    many = in_ranges(req, graph)
    assert (many.count, many.histogram) == (one.count, one.histogram)
    assert min(many.histogram) >= 3


def test_sm_ranges_merge_to_the_whole(graph):
    one = sm.count(graph, "4-cycle", mode="cpu", threads=1, unique=True)
    req = registry.get("sm").make_request("4-cycle", mode="cpu", unique=True)
    many = in_ranges(req, graph)
    assert many.count == one.count > 0 and many.unique


def test_count_ranges_merge_to_the_whole(graph):
    one = count.count(graph, "4-clique", mode="cpu", threads=1)
    req = registry.get("count").make_request("4-clique", mode="cpu")
    assert req.movable  # k-cliques on the CPU: records move between nodes
    many = in_ranges(req, graph)
    assert many.count == one.count == sum(
        1 for c in nx.enumerate_all_cliques(graph.to_networkx()) if len(c) == 4)


def test_gsword_ranges_merge_bit_for_bit(graph):
    opts = {"samples": 5000, "seed": 3, "trawl": False, "mode": "cpu", "estimator": "wj"}
    one = gsword.estimate(graph, "triangle", threads=1, **opts)
    req = registry.get("gsword").make_request("triangle", **opts)
    many = in_ranges(req, graph)
    assert (many.estimate, many.stderr, many.samples) == (one.estimate, one.stderr, 5000)


@pytest.mark.parametrize("app, inputs, keywords, error, match", [
    ("mce", (), {"min_size": 0}, ValueError, "min_size must be an integer from 1"),
    ("mce", (), {"mode": "gpu", "output": "x.txt"}, ValueError, "CPU only"),
    ("mce", (), {"chunk": 4}, TypeError, "'chunk'; it is cpu_chunk"),
    ("mce", (), {"gpu_options": {"tau_c": 1}}, TypeError, "one keyword per option"),
    ("mce", (), {"threads": 0}, ValueError, "threads must be an integer from 1"),
    ("sm", ("triangle",), {"gpu_mode": "warp"}, ValueError, "gpu_mode must be one of"),
    ("sm", ("triangle",), {"mode": "gpu", "limit": 3}, ValueError, "CPU only"),
    ("count", ("4-clique",), {"size": 4}, ValueError, "goes with pattern 'motifs'"),
    ("count", ("motifs",), {"size": 7}, ValueError, "size must be one of 3, 4, 5; got 7"),
    ("count", ("4-cycle",), {"per_vertex": True}, ValueError, "is not .triangle."),
    ("gsword", ("triangle",), {"time_budget": 1.0}, TypeError, "it is time_limit"),
    ("gsword", ("triangle",), {"cpu_chunk": 4}, TypeError, "unknown option 'cpu_chunk'"),
    ("gsword", ("triangle",), {"estimator": "x"}, ValueError, "estimator must be one of"),
])
def test_bad_options_stop_when_the_request_is_made(app, inputs, keywords, error, match):
    with pytest.raises(error, match=match):
        registry.get(app).make_request(*inputs, **keywords)


def test_every_option_has_a_rule_and_help():
    """A field that the command line shows says what it is, and every value is checked."""
    import dataclasses

    for app in registry.apps().values():
        for f in dataclasses.fields(app.options):
            assert f.metadata.get("help") and callable(f.metadata.get("check")), \
                f"{app.name}: option {f.name} lacks help or a rule"


def test_gswords_estimator_names_are_its_estimators():
    """The names the option takes (light, for --help) are the estimators' table."""
    from gthinker.apps.gsword import options

    assert tuple(gsword.estimators()) == options.ESTIMATORS


def test_an_input_of_one_process_is_no_option_of_a_request():
    """``containing=`` (mce) is an input of the one-process function, not an option: a
    request (a cluster's) does not take it, and says which options there are.
    ``per_vertex`` (count) is an option (``--per-vertex``) whose request runs whole in
    one process."""
    with pytest.raises(TypeError, match="unknown option 'containing'; the options are "
                                        "gpu_cpu_share, gpu_engine, gpu_node_budget, "
                                        "gpu_scratch_bytes, min_size, mode, output, trace, "
                                        "and gthinker.run's"):
        registry.get("mce").make_request(containing=[1, 2])
    req = registry.get("count").make_request("triangle", per_vertex=True, mode="cpu")
    G = nx.karate_club_graph()
    res = req.local(gthinker.Graph.from_networkx(G))
    assert res is not None and res.per_vertex.tolist() == [nx.triangles(G)[v] for v in G]


def test_job_keywords_are_gthinker_runs():
    """What an app passes on to gthinker.run as it comes is a keyword gthinker.run takes."""
    import inspect

    from gthinker.options import JOB_KEYWORDS

    assert set(JOB_KEYWORDS) <= set(inspect.signature(gthinker.run).parameters)


class Degrees(gthinker.Task):
    counters = ("edge_ends",)

    @staticmethod
    def compute(ctx, record):
        ctx.count(0, ctx.degree(record[0]))


def test_a_users_task_request_runsin_ranges(graph):
    """gthinker.cluster.run's request of a bare Task: the keywords it holds reach
    gthinker.run; counters add up over the ranges."""
    from gthinker.runtime.request import TaskRequest

    req = TaskRequest(Degrees, mode="cpu", time_budget=0.5, cpu_chunk=4)
    assert req.mode == "cpu" and req.output is None
    res = in_ranges(req, graph)
    assert res.counters["edge_ends"] == 2 * graph.num_edges

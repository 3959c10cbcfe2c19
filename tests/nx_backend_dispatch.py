"""Run by tests/test_nx_backend.py in a fresh process, with NETWORKX_BACKEND_PRIORITY
set to ``gthinker``: NetworkX must find the backend through its entry points, run
calls on it (the explicit ``backend=`` keyword and automatic dispatch for
unchanged code), cache the converted graph, keep small graphs and what the
backend cannot run exactly to itself, and give the same results either way."""

import os
import warnings

import networkx as nx

assert os.environ["NETWORKX_BACKEND_PRIORITY"] == "gthinker"
assert "gthinker" in nx.utils.backends.backends, "no networkx.backends entry point"
assert nx.config.backend_priority.algos == ["gthinker"]
assert "threads" in nx.config.backends.gthinker  # the default config came from backend_info
nx.config.warnings_to_ignore.add("cache")


def converted(G):
    return list(G.__networkx_cache__.get("backends", {}).get("gthinker", {}).values())


def cliques(it):
    return sorted(tuple(sorted(map(repr, c))) for c in it)


big = nx.relabel_nodes(nx.powerlaw_cluster_graph(1500, 3, 0.6, seed=1), lambda v: f"n{v}")
assert big.number_of_edges() >= nx.config.backends.gthinker.min_edges
with nx.config(backend_priority=[]):  # plain NetworkX, for reference
    want = cliques(nx.find_cliques(big))
    want_clustering = nx.clustering(big)
    assert not converted(big)

# Automatic dispatch: unchanged code runs on the backend, which caches its graph.
assert cliques(nx.find_cliques(big)) == want
[backend_graph] = converted(big)
assert type(backend_graph).__name__ == "BackendGraph"
assert nx.clustering(big) == want_clustering
assert converted(big) == [backend_graph]  # the cached graph served the second call
nx.config.warnings_to_ignore.discard("cache")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    assert cliques(nx.find_cliques(big, backend="gthinker")) == want
assert any("cached graph is being used for the 'gthinker' backend" in str(w.message)
           for w in caught)
nx.config.warnings_to_ignore.add("cache")
big.add_edge("n0", "new")  # a mutation through the graph's methods clears the cache
assert not converted(big)

# Small graphs stay with NetworkX under automatic dispatch (should_run) ...
small = nx.karate_club_graph()
assert sorted(map(sorted, nx.find_cliques(small))) and not converted(small)
# ... but run on the backend when asked by name.
with nx.config(backend_priority=[]):
    want_small = cliques(nx.find_cliques(small))
assert cliques(nx.find_cliques(small, backend="gthinker")) == want_small and converted(small)

# What the backend cannot run exactly falls back to NetworkX under automatic dispatch,
# and is refused when asked for by name.
directed = nx.gnp_random_graph(60, 0.1, seed=2, directed=True)
with nx.config(backend_priority=[]):
    want_directed = nx.clustering(directed)
assert nx.clustering(directed) == want_directed
try:
    nx.clustering(directed, backend="gthinker")
except NotImplementedError as exc:
    assert "gthinker" in str(exc)
else:
    raise AssertionError("directed clustering ran on the backend")
print("dispatch checks passed")

"""Pivoter's split of P into the components of its complement (gthinker/apps/count/pivoter.py):
counts of every clique size against networkx, on joins and on dense random graphs."""

from __future__ import annotations

import itertools
from collections import Counter

import networkx as nx
import pytest

from gthinker.apps import count


def _clique_sizes(G):
    return dict(Counter(len(c) for c in nx.enumerate_all_cliques(G)))


def _join(parts):
    """Every vertex of one part adjacent to every vertex of the others."""
    G = nx.disjoint_union_all(parts)
    offsets = list(itertools.accumulate((len(p) for p in parts), initial=0))
    for a, b in itertools.combinations(range(len(parts)), 2):
        G.add_edges_from(itertools.product(range(offsets[a], offsets[a + 1]),
                                           range(offsets[b], offsets[b + 1])))
    return G


def _join_reference(parts):
    """The cliques of a join are the unions of one clique (maybe empty) of each part:
    its clique polynomial is the product of theirs (networkx lists each part's)."""
    poly = {0: 1}
    for part in parts:
        sizes = _clique_sizes(part) | {0: 1}
        prod: dict[int, int] = {}
        for i, a in poly.items():
            for j, b in sizes.items():
                prod[i + j] = prod.get(i + j, 0) + a * b
        poly = prod
    return {k: v for k, v in poly.items() if k > 0 and v}


@pytest.mark.parametrize("sizes", [(1, 2, 2, 3, 5, 9, 12), (2, 3, 4, 22, 23), (3, 4, 6, 7, 30, 40)],
                         ids=["small-parts", "two-large", "multi-word"])
def test_joins_match_the_product_of_their_parts(sizes):
    # The parts' complements fall apart at once and again deeper down; with two parts
    # of over 20 vertices nothing is split at the top (the side would be too large);
    # 90 vertices: roots over 64 candidates walk multi-word rows first.
    parts = [nx.gnp_random_graph(n, 0.5, seed=n) for n in sizes]
    G = _join(parts)
    ref = _join_reference(parts)
    for budget in (0.1, 1e-5):  # the second spills nearly every subtree, split or not
        res = count.count(G, "cliques", mode="cpu", threads=2, time_budget=budget)
        assert res.counts == ref, budget


def test_dense_random_graph_matches_networkx():
    # Dense G(n, p): complements of deep nodes' P fall apart at random.
    G = nx.gnp_random_graph(34, 0.72, seed=5)
    ref = _clique_sizes(G)
    for budget in (0.1, 1e-5):
        assert count.count(G, "cliques", mode="cpu", threads=2, time_budget=budget).counts == ref


def _near_complete(n, missing):
    G = nx.complete_graph(n)
    G.remove_edges_from(missing)
    return G


@pytest.mark.parametrize("n", range(7, 12))
def test_small_dense_graphs_match_networkx(n):
    # Roots of up to n - 1 candidates: P of 7 to 9 vertices, with and without universal
    # ones, tallied from their clique polynomials (vertex by vertex down to the table of
    # 6); near-complete ones hold the largest counts a polynomial's byte takes.
    graphs = [nx.gnp_random_graph(n, p, seed=seed) for p in (0.6, 0.8, 0.95) for seed in range(4)]
    graphs += [_near_complete(n, [(0, 1)]), _near_complete(n, [(0, i) for i in range(1, n)]),
               _near_complete(n, [(i, i + 1) for i in range(0, n - 1, 2)])]
    for G in graphs:
        assert count.count(G, "cliques", mode="cpu", threads=1).counts == _clique_sizes(G)

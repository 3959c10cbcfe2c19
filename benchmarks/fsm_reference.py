"""An independent reference for `gthinker fsm` at K <= 3 on graphs of thousands of vertices
(the networkx brute force of tests/test_fsm.py is far too slow there): every pattern of 1 to
3 edges with its exact domain (MNI) support, vertex labels only, and a comparison with
`gthinker.apps.fsm.mine` run by run.

The reference shares nothing with gthinker's miner: for every data vertex v it lists every
connected subgraph of 1 to 3 edges that contains v (an edge; a wedge with v at its centre or
at an end; a triangle; a star with v at its centre or as a leaf; a 3-edge path with v at an
end or inside), names the subgraph's labelled shape with a key of its own (the shape and its
labels in a fixed order) and v's orbit in it (the pattern vertices an automorphism maps onto
each other share a domain), and keeps the distinct (key, orbit) pairs of v. A pattern's
domain of an orbit is then the vertices that listed that pair, its support the smallest
over its orbits. Numba compiles the lists; it takes seconds on HPRD.

    python benchmarks/fsm_reference.py GRAPH K S [--fold] [--runs N] [--threads 1,2]
        [--modes exact,early] [--gpu-sim]

GRAPH: any graph gthinker reads (e.g. ../shared/data/labeled/hprd.graph); --fold merges
the labels as benchmarks/fsm_peer.py does for G2Miner (ranked by frequency, rank 253 on one
label). Prints the reference's count by level, then for each gthinker run its count, the
patterns it missed or added and the supports that differ (exact mode) or fall below S (early
stop, --no-exact-support). --self-check first compares the reference with the tests' brute
force on small random graphs. Exit status 1 when any run differs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from numba import njit

EDGE, WEDGE, TRIANGLE, STAR, PATH = 0, 1, 2, 3, 4
LB = 1 << 12  # label ranks below this


@njit(cache=True)
def _key(shape, a, b, c, d, orbit):
    return ((((shape * LB + a) * LB + b) * LB + c) * LB + d) * 8 + orbit


@njit(cache=True)
def _edge(la, lb):
    """v has label la, its neighbour lb."""
    if la < lb:
        return _key(EDGE, la, lb, 0, 0, 0)
    if la > lb:
        return _key(EDGE, lb, la, 0, 0, 1)
    return _key(EDGE, la, la, 0, 0, 0)


@njit(cache=True)
def _wedge(lc, lx, ly, v_at):
    """Centre label lc, ends lx, ly; v_at: 0 centre, 1 end x."""
    lo, hi = min(lx, ly), max(lx, ly)
    if v_at == 0:
        return _key(WEDGE, lc, lo, hi, 0, 0)
    if lo == hi or lx == lo:
        return _key(WEDGE, lc, lo, hi, 0, 1)
    return _key(WEDGE, lc, lo, hi, 0, 2)


@njit(cache=True)
def _sort3(a, b, c):
    if a > b:
        a, b = b, a
    if b > c:
        b, c = c, b
    if a > b:
        a, b = b, a
    return a, b, c


@njit(cache=True)
def _triangle(lv, la, lb):
    """v's orbit: the first position of its label among the sorted three."""
    s0, s1, s2 = _sort3(lv, la, lb)
    orbit = 0 if lv == s0 else (1 if lv == s1 else 2)
    return _key(TRIANGLE, s0, s1, s2, 0, orbit)


@njit(cache=True)
def _star(lc, l1, l2, l3, v_at):
    """Centre lc, leaves l1 l2 l3; v_at 0: the centre, 1: leaf 1."""
    s0, s1, s2 = _sort3(l1, l2, l3)
    if v_at == 0:
        return _key(STAR, lc, s0, s1, s2, 0)
    orbit = 1 if l1 == s0 else (2 if l1 == s1 else 3)
    return _key(STAR, lc, s0, s1, s2, orbit)


@njit(cache=True)
def _path(l0, l1, l2, l3, p):
    """The path l0-l1-l2-l3, v at position p: the lesser of its two readings."""
    rev = 0
    if (l3, l2, l1, l0) < (l0, l1, l2, l3):
        rev = 1
    elif (l3, l2, l1, l0) == (l0, l1, l2, l3):
        rev = 2
    if rev == 1:
        return _key(PATH, l3, l2, l1, l0, 3 - p)
    if rev == 2:
        return _key(PATH, l0, l1, l2, l3, min(p, 3 - p))
    return _key(PATH, l0, l1, l2, l3, p)


@njit(cache=True)
def _push(buf, n, x):
    if n == buf.size:
        new = np.empty(buf.size * 2, np.int64)
        new[:n] = buf[:n]
        buf = new
    buf[n] = x
    return buf, n + 1


@njit(cache=True)
def _adjacent(indptr, indices, u, w):
    row = indices[indptr[u]:indptr[u + 1]]
    at = np.searchsorted(row, w)
    return at < row.size and row[at] == w


@njit(cache=True)
def _vertex_keys(indptr, indices, lab, v, k, buf):
    """The distinct (key, orbit) codes of the subgraphs of 1..k edges containing v."""
    n = 0
    lv = lab[v]
    for ea in range(indptr[v], indptr[v + 1]):
        a = indices[ea]
        buf, n = _push(buf, n, _edge(lv, lab[a]))
        if k < 2:
            continue
        for eb in range(ea + 1, indptr[v + 1]):  # v the centre of a wedge
            b = indices[eb]
            buf, n = _push(buf, n, _wedge(lv, lab[a], lab[b], 0))
            if k < 3:
                continue
            for ec in range(eb + 1, indptr[v + 1]):  # the centre of a star
                buf, n = _push(buf, n, _star(lv, lab[a], lab[b], lab[indices[ec]], 0))
        for eb in range(indptr[a], indptr[a + 1]):
            b = indices[eb]
            if b == v:
                continue
            buf, n = _push(buf, n, _wedge(lab[a], lv, lab[b], 1))  # v an end
            if k < 3:
                continue
            if _adjacent(indptr, indices, v, b):
                buf, n = _push(buf, n, _triangle(lv, lab[a], lab[b]))
            for ec in range(eb + 1, indptr[a + 1]):  # a leaf of a star centred at a
                c = indices[ec]
                if c != v:
                    buf, n = _push(buf, n, _star(lab[a], lv, lab[b], lab[c], 1))
            for ec in range(indptr[b], indptr[b + 1]):  # v-a-b-c
                c = indices[ec]
                if c != v and c != a:
                    buf, n = _push(buf, n, _path(lv, lab[a], lab[b], lab[c], 0))
        if k < 3:
            continue
        for eb in range(indptr[v], indptr[v + 1]):  # a-v-b-c
            b = indices[eb]
            if b == a:
                continue
            for ec in range(indptr[b], indptr[b + 1]):
                c = indices[ec]
                if c != v and c != a:
                    buf, n = _push(buf, n, _path(lab[a], lv, lab[b], lab[c], 1))
    return np.unique(buf[:n]), buf


@njit(cache=True)
def _all_keys(indptr, indices, lab, k):
    buf = np.empty(1 << 16, np.int64)
    out = np.empty(1 << 16, np.int64)
    m = 0
    for v in range(indptr.size - 1):
        keys, buf = _vertex_keys(indptr, indices, lab, v, k, buf)
        for x in keys:
            out, m = _push(out, m, x)
    return out[:m]




def _orbit_count(shape, labels):
    """The distinct orbits of a pattern of ``shape`` with ``labels`` (as keyed)."""
    a, b, c, d = labels
    if shape == EDGE:
        return 1 if a == b else 2
    if shape == WEDGE:
        return 2 if b == c else 3
    if shape == TRIANGLE:
        return len({a, b, c})
    if shape == STAR:
        return 1 + len({b, c, d})
    return 2 if (a, b, c, d) == (d, c, b, a) else 4


def reference(graph, k, least=1):
    """{(shape, labels): exact support} of every pattern of 1..k edges whose support is at
    least ``least`` (labels as the graph's own label values), and how many patterns have
    any embedding."""
    names, lab = np.unique(np.asarray(graph.labels), return_inverse=True)
    assert names.size < LB
    codes = _all_keys(graph.indptr.astype(np.int64), graph.indices.astype(np.int64),
                      lab.astype(np.int64), k)
    codes, sizes = np.unique(codes, return_counts=True)
    keys = codes // 8
    first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    support = np.minimum.reduceat(sizes, first)
    orbits = np.diff(np.r_[first, keys.size])
    out = {}
    for i in np.flatnonzero(support >= least).tolist():
        key, digits = int(keys[first[i]]), []
        for _ in range(4):
            key, r = divmod(key, LB)
            digits.append(r)
        shape = key
        labels = tuple(int(names[x]) if i < _used(shape) else 0
                       for i, x in enumerate(reversed(digits)))
        assert orbits[i] == _orbit_count(shape, labels), (shape, labels)
        out[(shape, labels)] = int(support[i])
    return out, first.size


def _used(shape):
    return {EDGE: 2, WEDGE: 3, TRIANGLE: 3, STAR: 4, PATH: 4}[shape]


def key_of(pattern):
    """(shape, labels) of a gthinker Pattern of 1..3 edges, as :func:`reference` keys it."""
    lab, edges = pattern.labels, [(i, j) for i, j, _ in pattern.edges]
    deg = [0] * len(lab)
    for i, j in edges:
        deg[i] += 1
        deg[j] += 1
    if len(edges) == 1:
        return EDGE, (min(lab), max(lab), 0, 0)
    if len(edges) == 2:
        c = deg.index(2)
        x, y = sorted(lab[v] for v in range(3) if v != c)
        return WEDGE, (lab[c], x, y, 0)
    if len(lab) == 3:
        return TRIANGLE, (*sorted(lab), 0)
    if max(deg) == 3:
        c = deg.index(3)
        return STAR, (lab[c], *sorted(lab[v] for v in range(4) if v != c))
    ends = [v for v in range(4) if deg[v] == 1]
    nbr = {v: [w for i, j in edges for v2, w in ((i, j), (j, i)) if v2 == v] for v in range(4)}
    order = [ends[0]]
    while len(order) < 4:
        order.append(next(w for w in nbr[order[-1]] if w not in order))
    fwd = tuple(lab[v] for v in order)
    return PATH, min(fwd, fwd[::-1])


def compare(ref, res, support, exact):
    """Lines describing where a gthinker result differs from the reference."""
    want = ref  # the patterns of support >= ``support``
    got = {}
    for p, s in res.patterns:
        got[key_of(p)] = s
    bad = [f"missing {k} (support {want[k]})" for k in sorted(set(want) - set(got))]
    bad += [f"extra {k} (gthinker {got[k]}, reference below {support})"
            for k in sorted(set(got) - set(want))]
    for k in sorted(set(want) & set(got)):
        if (got[k] != want[k]) if exact else not (support <= got[k] <= want[k]):
            bad.append(f"support {k}: gthinker {got[k]}, reference {want[k]}")
    return bad


def _fold(graph, most=254):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from fsm_peer import _fold_labels

    import gthinker

    labels, note = _fold_labels(np.asarray(graph.labels))
    assert most == 254
    return gthinker.Graph(graph.indptr, graph.indices, labels=labels), note


def self_check(cases=30):
    """The reference against the brute force of tests/test_fsm.py on small graphs."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import networkx as nx
    from test_fsm import _random_graph, brute_force

    import gthinker

    for seed in range(cases):
        G = _random_graph(900 + seed, n=10 + seed % 5, m=18 + seed % 7, labels=1 + seed % 3)
        g = gthinker.as_graph(G)
        G2 = nx.relabel_nodes(G, {int(g.ids[i]): i for i in range(g.num_vertices)})
        for k in (1, 2, 3):
            ref, _ = reference(g, k)
            bf = brute_force(G2, k, 1)
            expected = {}
            for H, s in bf:
                H = nx.convert_node_labels_to_integers(H)
                pattern = SimpleNamespace(labels=[H.nodes[v]["label"] for v in H],
                                          edges=[(i, j, 0) for i, j in H.edges])
                expected[key_of(pattern)] = s
            assert ref == expected, (seed, k)
    print(f"self-check: the reference agrees with the brute force on {cases} graphs, K=1..3")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph")
    ap.add_argument("k", type=int, choices=(1, 2, 3))
    ap.add_argument("support", type=int)
    ap.add_argument("--fold", action="store_true")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--modes", default="exact,early")
    ap.add_argument("--gpu-sim", action="store_true", help="also mode=gpu (on the simulator "
                    "where NUMBA_ENABLE_CUDASIM=1)")
    ap.add_argument("--self-check", action="store_true")
    a = ap.parse_args(argv)
    if a.self_check:
        self_check()
    import gthinker
    from gthinker.apps import fsm

    g = gthinker.Graph.read(a.graph)
    note = ""
    if a.fold:
        g, note = _fold(g)
    t0 = time.perf_counter()
    ref, total = reference(g, a.k, a.support)
    by = [0] * a.k
    for shape, _ in ref:
        by[{EDGE: 0, WEDGE: 1}.get(shape, 2)] += 1
    print(f"reference: {sum(by)} frequent patterns {by} of {total} with support >= "
          f"{a.support}, K={a.k} ({time.perf_counter() - t0:.1f}s) {note}")
    runs = [("cpu", int(t)) for t in a.threads.split(",")] + ([("gpu", 1)] if a.gpu_sim else [])
    failed = 0
    for mode, threads in runs:
        for exact in [m == "exact" for m in a.modes.split(",")]:
            for r in range(a.runs):
                res = fsm.mine(g, a.k, a.support, mode=mode, threads=threads,
                               exact_support=exact, edge_labels=False)
                bad = compare(ref, res, a.support, exact)
                failed += bool(bad)
                print(f"{mode} threads={threads} exact={exact} run {r}: {res.count} "
                      f"{res.by_level()} {res.seconds:.3f}s"
                      + ("" if not bad else "  DIFFERS:\n    " + "\n    ".join(bad[:20])),
                      flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

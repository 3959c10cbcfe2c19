"""Rebuild tests/data from the public data sets, and the expected results in truth.json.

    python tests/data/make.py SOURCE     # SOURCE holds snap/ and labeled/ (see README.md)

The expected results are computed here by tools independent of gthinker (plain Python
parsing, networkx, scipy and igraph), most facts by two of them; the script stops if two
disagree. gthinker is never imported.
Needs networkx, scipy and igraph (``pip install ".[test]"``).
"""

import argparse
import gzip
import io
import json
import shutil
import sys
from collections import Counter
from pathlib import Path

import igraph
import networkx as nx
import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent

# (output, source, id bound): the lines of the source whose two ids are both below the
# bound, in their order, comments kept; the ids and the file format stay as they were.
SNAP_SUBSETS = [
    ("email-Enron-1000.txt.gz", "snap/email-Enron.txt.gz", 1000),
    ("facebook-1000.txt.gz", "snap/facebook_combined.txt.gz", 1000),
]
LABELED = "yeast"
# Queries of labeled/queries/yeast whose igraph VF2 count finishes in seconds (those of 24
# and 32 vertices took minutes): dense and sparse, one with a non-trivial automorphism group.
QUERIES = ["query_dense_16_2", "query_dense_16_3", "query_dense_16_4", "query_sparse_16_3"]


def agree(what, **answers):
    """The one value all tools gave, or stop."""
    values = list(answers.values())
    if any(v != values[0] for v in values):
        sys.exit(f"tools disagree on {what}: {answers}")
    return values[0]


def _gzip_out(path: Path):
    """A text file gzip-compressed with no time stamp, so that a rebuild gives the same bytes."""
    return io.TextIOWrapper(gzip.GzipFile(path, "wb", mtime=0), encoding="utf-8")


def snap_subset(source: Path, dest: Path, bound: int):
    kept = dropped = 0
    with gzip.open(source, "rt") as src, _gzip_out(dest) as out:
        for line in src:
            if line.startswith("#"):
                out.write(line)
                if "FromNodeId" in line:  # the last comment line: say what this file is
                    out.write(f"# Subset for gthinker's tests: the lines whose ids are both "
                              f"below {bound} (tests/data/make.py)\n")
                continue
            u, v = map(int, line.split())
            if u < bound and v < bound:
                out.write(line)
                kept += 1
            else:
                dropped += 1
    return kept


def snap_facts(path: Path) -> dict:
    """Facts of a SNAP edge list, read without gthinker."""
    pairs = []
    with gzip.open(path, "rt") as fh:
        for line in fh:
            if not line.startswith("#") and line.strip():
                pairs.append(tuple(map(int, line.split())))
    G = nx.Graph()
    G.add_edges_from(pairs)
    self_loops = nx.number_of_selfloops(G)
    G.remove_edges_from(list(nx.selfloop_edges(G)))
    edges = {frozenset(p) for p in pairs if p[0] != p[1]}
    ids = sorted(G)
    index = {v: i for i, v in enumerate(ids)}
    ig = igraph.Graph(n=len(ids), edges=[(index[u], index[v]) for u, v in G.edges])

    # triangles: networkx per-vertex counts, and trace(A^3) / 6 with scipy
    A = sp.csr_matrix(nx.to_scipy_sparse_array(G, nodelist=ids, dtype=np.int64))
    triangles = agree("triangles", networkx=sum(nx.triangles(G).values()) // 3,
                      scipy=int((A @ A).multiply(A).sum()) // 6)
    # maximal cliques: igraph and networkx, as a size histogram
    sizes = agree("maximal clique sizes",
                  igraph=Counter(len(c) for c in ig.maximal_cliques()),
                  networkx=Counter(len(c) for c in nx.find_cliques(G)))
    return {
        "edge_lines": len(pairs),
        "self_loops": self_loops,
        "duplicates": len(pairs) - self_loops - len(edges),
        "num_vertices": G.number_of_nodes(),
        "num_edges": agree("edges", networkx=G.number_of_edges(), set=len(edges)),
        "max_degree": max(d for _, d in G.degree),
        "degeneracy": agree("degeneracy", networkx=max(nx.core_number(G).values()),
                            igraph=max(ig.coreness())),
        "triangles": triangles,
        "maximal_cliques": sum(sizes.values()),
        "max_clique": max(sizes),
        "maximal_clique_sizes": {str(k): sizes[k] for k in sorted(sizes)},
    }


def read_labeled(path: Path):
    """(n, edges, labels) of a `.graph` file (``t n m`` / ``v id label degree`` / ``e u v``)."""
    opener = gzip.open if path.name.endswith(".gz") else open
    n, labels, edges = 0, {}, []
    with opener(path, "rt") as fh:
        for line in fh:
            f = line.split()
            if not f:
                continue
            if f[0] == "t":
                n = int(f[1])
            elif f[0] == "v":
                labels[int(f[1])] = int(f[2])
            elif f[0] == "e":
                edges.append((int(f[1]), int(f[2])))
    return n, edges, [labels[v] for v in range(n)]


def embeddings(data, query) -> int:
    """Embeddings (injective, edge-preserving, label-preserving maps) of query into data,
    by igraph's VF2 and by igraph's LAD (not induced, label classes as domains)."""
    (n, e, lab), (qn, qe, qlab) = data, query
    g, q = igraph.Graph(n=n, edges=e), igraph.Graph(n=qn, edges=qe)
    by_label = {}
    for v, label in enumerate(lab):
        by_label.setdefault(label, []).append(v)
    lad = g.get_subisomorphisms_lad(q, domains=[by_label.get(x, []) for x in qlab],
                                    induced=False)
    return agree("embeddings", vf2=g.count_subisomorphisms_vf2(q, color1=lab, color2=qlab),
                 lad=len(lad))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path, help="folder with snap/ and labeled/")
    args = ap.parse_args()
    truth = {}
    for name, source, bound in SNAP_SUBSETS:
        snap_subset(args.source / source, HERE / name, bound)
        truth[name] = snap_facts(HERE / name)
        print(name, truth[name], flush=True)

    src = args.source / "labeled" / f"{LABELED}.graph"
    dest = HERE / f"{LABELED}.graph.gz"
    with open(src) as fh, _gzip_out(dest) as out:
        shutil.copyfileobj(fh, out)
    data = read_labeled(dest)
    n, edges, labels = data
    truth[dest.name] = {"num_vertices": n, "num_edges": len({frozenset(e) for e in edges}),
                        "num_labels": len(set(labels)), "embeddings": {}}
    qdir = HERE / "queries" / LABELED
    qdir.mkdir(parents=True, exist_ok=True)
    for q in QUERIES:
        shutil.copyfile(args.source / "labeled" / "queries" / LABELED / f"{q}.graph",
                        qdir / f"{q}.graph")
        truth[dest.name]["embeddings"][q] = embeddings(data, read_labeled(qdir / f"{q}.graph"))
        print(q, truth[dest.name]["embeddings"][q], flush=True)
    (HERE / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""Peer for `gthinker count GRAPH triangle`: triangles with python-igraph, as a plain
user script would do it.

    python benchmarks/peers/igraph_triangles.py rmat18.txt

Reads a (gzipped) SNAP edge list with numpy ('#' lines are comments), relabels
the ids to 0..n-1, builds an igraph.Graph, drops self-loops and duplicate edges,
and prints the number of triangles (727044 for email-Enron).
"""

import sys

import igraph as ig
import numpy as np


def main():
    edges = np.loadtxt(sys.argv[1], comments="#", dtype=np.int64, usecols=(0, 1), ndmin=2)
    ids, flat = np.unique(edges, return_inverse=True)
    g = ig.Graph(n=ids.size, edges=flat.reshape(-1, 2).tolist())
    g.simplify()
    print(len(g.list_triangles()))


if __name__ == "__main__":
    main()

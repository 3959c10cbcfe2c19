"""Peer for the warm-start MCE case: maximal cliques with python-igraph, as a
plain user script would do it.

    python benchmarks/peers/igraph_mce.py snap/email-Enron.txt.gz

Reads a (gzipped) SNAP edge list with numpy ('#' lines are comments),
relabels the vertex ids to 0..n-1 with numpy, builds an igraph.Graph, drops
self-loops and duplicate edges, and prints the number of maximal cliques
(226859 for email-Enron).
"""

import sys

import igraph as ig
import numpy as np


def main():
    edges = np.loadtxt(sys.argv[1], comments="#", dtype=np.int64, usecols=(0, 1), ndmin=2)
    ids, flat = np.unique(edges, return_inverse=True)
    g = ig.Graph(n=ids.size, edges=flat.reshape(-1, 2).tolist())
    g.simplify()
    print(len(g.maximal_cliques()))


if __name__ == "__main__":
    main()

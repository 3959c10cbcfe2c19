"""The backend's graph: a NetworkX graph converted once into a gthinker CSR graph.

NetworkX keeps the converted graph in the input graph's cache
(``G.__networkx_cache__``), so later calls on the same, unchanged graph skip the
conversion; mutating ``G`` through its methods clears that cache.
"""

from __future__ import annotations

import itertools

import numpy as np

import gthinker


class BackendGraph:
    """An undirected graph converted from NetworkX.

    Vertex ``i`` of :attr:`graph` (a :class:`gthinker.Graph` whose ids are
    ``0 .. n-1``) is node ``nodes[i]``, in the order of ``G.nodes``; self loops
    and parallel edges are dropped, as the implemented NetworkX functions
    ignore them. :attr:`results` keeps what the algorithms computed on this
    graph (e.g. triangles per vertex), so it lives as long as the cache entry.
    """

    __networkx_backend__ = "gthinker"

    def __init__(self, graph: gthinker.Graph, nodes: list, multigraph: bool = False):
        self.graph = graph
        self.nodes = nodes
        self.index = {node: i for i, node in enumerate(nodes)}
        self.multigraph = multigraph
        self.results: dict = {}
        #: ``nodes`` as a 1-d object array: ``node_array[ids].tolist()`` names many
        #: vertices at once (a loop in C instead of one Python lookup each).
        self.node_array = np.fromiter(nodes, dtype=object, count=len(nodes))

    @classmethod
    def from_networkx(cls, G) -> BackendGraph:
        """Converts an undirected NetworkX graph (ValueError for a directed one)."""
        if G.is_directed():
            raise ValueError("the gthinker backend takes undirected graphs only")
        nodes = list(G)
        index = {node: i for i, node in enumerate(nodes)}
        rows = [nbrs for _, nbrs in G.adjacency()]
        degrees = np.fromiter(map(len, rows), np.int64, count=len(rows))
        heads = np.fromiter(map(index.__getitem__, itertools.chain.from_iterable(rows)),
                            np.int64, count=int(degrees.sum()))
        tails = np.repeat(np.arange(len(nodes), dtype=np.int64), degrees)
        graph = gthinker.Graph.from_edges(np.column_stack([tails, heads]),
                                          num_vertices=len(nodes))
        return cls(graph, nodes, G.is_multigraph())

    def to_networkx(self):
        """A :class:`networkx.Graph` with the same nodes (in order) and edges."""
        import networkx as nx

        G = nx.Graph()
        G.add_nodes_from(self.nodes)
        names = self.nodes
        G.add_edges_from((names[u], names[v]) for u, v in self.graph.edge_array().tolist())
        return G

    # -- the parts of the NetworkX graph API that the algorithms and NetworkX use --------

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self):
        return iter(self.nodes)

    def __contains__(self, node) -> bool:
        try:
            return node in self.index
        except TypeError:  # an unhashable object is no node (as nx.Graph.__contains__)
            return False

    def is_directed(self) -> bool:
        return False

    def is_multigraph(self) -> bool:
        return self.multigraph

    def number_of_edges(self) -> int:
        """Edges without self loops and parallel edges."""
        return self.graph.num_edges

    def nbunch_iter(self, nbunch=None):
        """The nodes of ``nbunch`` that are in the graph, with the rules and errors
        of :meth:`networkx.Graph.nbunch_iter`: None is every node, a node is
        itself, anything else is iterated (lazily) and nodes not in the graph
        are skipped."""
        import networkx as nx

        if nbunch is None:
            return iter(self.nodes)
        if nbunch in self:
            return iter([nbunch])

        def bunch_iter(nlist, index):
            try:
                for n in nlist:
                    if n in index:
                        yield n
            except TypeError as err:
                exc, message = err, err.args[0]
                if "iter" in message:
                    exc = nx.NetworkXError("nbunch is not a node or a sequence of nodes.")
                if "object is not iterable" in message:
                    exc = nx.NetworkXError(f"Node {nbunch} is not in the graph.")
                if "hashable" in message:
                    exc = nx.NetworkXError(f"Node {n} in sequence nbunch is not a valid node.")
                raise exc from None

        return bunch_iter(nbunch, self.index)

    def __repr__(self) -> str:
        return f"BackendGraph({self.graph!r})"

"""Undirected simple graphs in CSR form, with fast readers and writers.

The central class is :class:`Graph`. Its adjacency is stored as two
C-contiguous, read-only NumPy arrays that can be handed to compiled code
unchanged:

``indptr``
    ``int64`` array of length ``n + 1``.
``indices``
    ``int32`` array of length ``2 * m``; the neighbours of ``v`` are
    ``indices[indptr[v]:indptr[v + 1]]``, sorted ascending, without
    duplicates or self-loops, and the structure is symmetric.

Vertices are numbered ``0 .. n-1`` internally; ``Graph.ids[v]`` is the
original (file) id of internal vertex ``v`` so that every result can be
reported in the user's ids.

The file formats (SNAP edge lists, the labeled ``.graph`` format, Matrix Market,
scipy ``.npz``, gzip-compressed text, and gthinker's memory-mapped binary graphs)
are in :mod:`gthinker.graphs.formats`, picked by :mod:`gthinker.graphs.files`;
:mod:`gthinker.graphs.convert` converts from and to edge arrays, columns,
scipy.sparse and networkx; :mod:`gthinker.graphs.csr` holds the CSR kernels (C++, all
cores).

Prepared forms (:meth:`Graph.degeneracy_order`, :meth:`Graph.oriented`,
:meth:`Graph.degeneracy_ordered`, :meth:`Graph.degree_oriented`, and any an app
keeps with :meth:`Graph.derived`) are computed once per graph and travel with it
into a binary file (:meth:`Graph.save`), so a later process prepares nothing.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import numpy as np

from gthinker.graphs import convert as graph_convert
from gthinker.graphs import csr
from gthinker.graphs import edges as graph_edges
from gthinker.graphs import files as graph_files
from gthinker.graphs.formats import binary
from gthinker.graphs.formats.text import STDIN

__all__ = ["Graph", "LoadReport", "as_graph", "KEPT", "PREPARED"]


@dataclass
class LoadReport:
    """What happened while a graph was built.

    Attributes
    ----------
    source : str
        File name or a description such as ``"from_edges"``.
    lines : int
        Physical lines read (0 when not built from a file).
    edges_read : int
        Edge records (or input pairs) seen.
    self_loops : int
        Self-loops dropped.
    duplicates : int
        Repeated edges dropped; ``v u`` after ``u v`` counts as a duplicate.
    num_vertices, num_edges : int
        Size of the resulting simple undirected graph.
    """

    source: str
    lines: int
    edges_read: int
    self_loops: int
    duplicates: int
    num_vertices: int
    num_edges: int

    def __str__(self) -> str:
        where = f"{self.lines:,} lines, " if self.lines else ""
        return (
            f"{self.source}: {where}{self.edges_read:,} edges read, "
            f"{self.self_loops:,} self-loops and {self.duplicates:,} duplicates removed "
            f"-> {self.num_vertices:,} vertices, {self.num_edges:,} edges"
        )


# ---------------------------------------------------------------------------
# Graph
# ---------------------------------------------------------------------------


class Graph:
    """An undirected simple graph in CSR form.

    Build one with :meth:`read`, :meth:`from_edges`, :meth:`from_scipy` or
    :meth:`from_networkx` rather than calling the constructor.

    Parameters
    ----------
    indptr : array_like of int64, shape (n + 1,)
    indices : array_like of int32, shape (2 m,)
        Sorted, symmetric, loop-free, duplicate-free rows (not checked here;
        call :meth:`check`).
    ids : array_like of int64, shape (n,), optional
        Original id of each vertex; identity when omitted.
    labels : array_like of int32, shape (n,), optional
        Vertex labels.
    report : LoadReport or dict of its fields, optional
    node_names : list, optional
        Original hashable node names when built from a networkx graph whose
        nodes are not all non-negative integers (``node_names[v]`` names
        vertex ``v``).
    edge_labels : array_like of int32, shape (2 m,), optional
        A label per entry of ``indices`` (:mod:`gthinker.graphs.edges`).
    directions : array_like of int8, shape (2 m,), optional
        Per entry of ``indices``: out, in or both (:mod:`gthinker.graphs.edges`); a
        directed graph has them, an undirected one not. ``indptr``/``indices`` are
        then the undirected skeleton.

    Attributes
    ----------
    indptr, indices, ids, labels, report, node_names, edge_labels, directions
        The arrays are C-contiguous and read-only.
    directed : bool
        Whether the graph is directed (it has :attr:`directions`).
    file : str or None
        The absolute path of the file :meth:`read` read it from (an output path
        that names the same file is refused: :func:`gthinker.runtime.outputs.check_output`).
    """

    #: Prepared forms whose values changed with a gthinker version, by key: the
    #: revision this one computes. A binary file that stores another revision of one
    #: (or none) has it computed again, not restored (:mod:`gthinker.graphs.formats.binary`).
    #: 2: the degeneracy order peeled level by level on all cores (1: Batagelj and
    #: Zaversnik's peeling on one thread; another valid order, the same core numbers),
    #: and the forms made from it.
    FORM_REVISIONS = {"degeneracy": 2, "oriented": 2, "ordered": 2}
    #: Whether graphs loaded from a binary file keep the prepared forms (:data:`KEPT`)
    #: that runs make for them in that file, for later processes
    #: (:func:`gthinker.graphs.formats.binary.keep`). Off for the Python API (a file is
    #: only changed when asked); the ``gthinker`` app commands turn it on.
    KEEP_FORMS = False

    def __init__(self, indptr, indices, ids=None, labels=None, report=None, node_names=None,
                 edge_labels=None, directions=None):
        self.indptr = csr.readonly(indptr, np.int64)
        self.indices = csr.readonly(indices, np.int32)
        n = self.indptr.shape[0] - 1
        if n < 0:
            raise ValueError("indptr must have at least one element")
        self.ids = csr.readonly(np.arange(n, dtype=np.int64) if ids is None else ids, np.int64)
        if self.ids.shape != (n,):
            raise ValueError(f"ids must have length {n}, got {self.ids.shape}")
        self.labels = None if labels is None else csr.readonly(labels, np.int32)
        if self.labels is not None and self.labels.shape != (n,):
            raise ValueError(f"labels must have length {n}, got {self.labels.shape}")
        self.node_names = None if node_names is None else list(node_names)
        self.edge_labels = None if edge_labels is None else csr.readonly(edge_labels, np.int32)
        self.directions = None if directions is None else csr.readonly(directions, np.int8)
        for name in ("edge_labels", "directions"):
            arr = getattr(self, name)
            if arr is not None and arr.shape != self.indices.shape:
                raise ValueError(f"{name} must have length {self.indices.size}, got {arr.shape}")
        if report is None:
            report = LoadReport("arrays", 0, self.num_edges, 0, 0, n, self.num_edges)
        elif isinstance(report, dict):
            report = LoadReport(**report)
        self.report = report
        self.file = None
        #: The binary file the graph was loaded from, when it keeps forms in it
        #: (:data:`KEEP_FORMS`); None otherwise.
        self.origin = None
        self._derived: dict = {}
        self._offered: dict = {}
        self._unkept: set = set()
        #: The graph whose structural forms (:data:`KEPT`) this one shares
        #: (:meth:`unlabeled`), or None.
        self._forms_of = None

    def unlabeled(self) -> Graph:
        """This graph without its vertex labels (the same arrays, ids, names, edge labels
        and directions), kept with it; its structural forms (:data:`KEPT`: the oriented
        graph, the degeneracy order, ...) are this graph's, made, restored from its binary
        file and checked there once for both."""
        if self.labels is None:
            return self

        def build(g):
            out = Graph(g.indptr, g.indices, ids=g.ids, report=g.report,
                        node_names=g.node_names, edge_labels=g.edge_labels,
                        directions=g.directions)
            out.file, out._forms_of = g.file, g
            return out

        return self.derived("unlabeled", build)

    def derived(self, key, build):
        """``build(self)``, computed on the first call for ``key`` and kept with the
        graph (its arrays are read-only, so it stays true): apps keep their
        prepared forms here, e.g. counting's oriented graph and its GPU copy, so
        that a second job on the same graph prepares nothing. A form stored in the
        binary file the graph came from (:meth:`save`) is restored instead of built;
        one of :data:`KEPT` that is built goes into that file when the graph keeps
        forms (:attr:`KEEP_FORMS`), once the outermost ``derived`` call returns (so
        that forms made together are written together)."""
        if self._forms_of is not None and key in KEPT:
            return self._forms_of.derived(key, build)
        if key not in self._derived:
            restore = self._offered.pop(key, None)
            if restore is not None:
                self._derived[key] = restore()
            else:
                depth = getattr(_building, "depth", 0)
                _building.depth = depth + 1
                try:
                    self._derived[key] = build(self)
                finally:
                    _building.depth = depth
                if self.origin is not None and key in KEPT:
                    self._unkept.add(key)
                if depth == 0 and self._unkept:
                    self._keep()
        return self._derived[key]

    def _keep(self) -> None:
        forms = {k: self._derived[k] for k in sorted(self._unkept)}
        self._unkept.clear()
        self.origin = binary.keep(self.origin, forms, self.FORM_REVISIONS)

    def offer(self, key, restore) -> None:
        """Makes ``restore()`` the way :meth:`derived` gets ``key`` (a form stored in a
        file, read only when asked for); a form already kept stays."""
        if key not in self._derived:
            self._offered[key] = restore

    def prepared(self) -> dict:
        """Every prepared form kept with this graph or offered to it, by key (the
        offered ones restored)."""
        for key in list(self._offered):
            self.derived(key, None)
        return dict(self._derived)

    def derived_graphs(self) -> dict:
        """The prepared forms kept with this graph (:meth:`derived`) that are graphs
        themselves, by key: a cluster's driver sends them beside the graph, so
        that its workers do not prepare them again."""
        return {k: v for k, v in self._derived.items() if isinstance(v, Graph)}

    # -- basic properties -------------------------------------------------

    @property
    def num_vertices(self) -> int:
        """Number of vertices ``n``."""
        return int(self.indptr.shape[0] - 1)

    @property
    def num_edges(self) -> int:
        """Number of undirected edges ``m``."""
        return int(self.indices.shape[0] // 2)

    def degrees(self) -> np.ndarray:
        """Degree of every vertex (``int64`` array of length ``n``)."""
        return np.diff(self.indptr)

    @property
    def max_degree(self) -> int:
        """Largest vertex degree (0 for an empty graph)."""
        return self.derived("max_degree", lambda g: int(g.degrees().max()) if g.num_vertices else 0)

    @property
    def directed(self) -> bool:
        """Whether the graph is directed (it has :attr:`directions`)."""
        return self.directions is not None

    @property
    def plain(self) -> bool:
        """Whether the graph is undirected without edge labels (what every app takes)."""
        return self.directions is None and self.edge_labels is None

    def neighbors(self, v: int) -> np.ndarray:
        """Sorted neighbours of internal vertex ``v`` (read-only view)."""
        if not 0 <= v < self.num_vertices:
            raise IndexError(f"vertex {v} out of range [0, {self.num_vertices})")
        return self.indices[self.indptr[v] : self.indptr[v + 1]]

    def __repr__(self) -> str:
        lab = ""
        if self.labels is not None:
            srt = np.sort(self.labels)
            lab = f", labels={int(np.count_nonzero(srt[1:] != srt[:-1])) + 1}"
        if self.edge_labels is not None:
            lab += f", edge_labels={np.unique(self.edge_labels).size}"
        if self.directed:
            lab += ", directed"
        return (
            f"Graph(n={self.num_vertices:,}, m={self.num_edges:,}, "
            f"max_degree={self.max_degree:,}{lab}, source={self.report.source!r})"
        )

    def __eq__(self, other) -> bool:
        if not isinstance(other, Graph):
            return NotImplemented
        for name in ("labels", "edge_labels", "directions"):
            mine, theirs = getattr(self, name), getattr(other, name)
            if (mine is None) != (theirs is None) or (
                    mine is not None and not np.array_equal(mine, theirs)):
                return False
        return (
            np.array_equal(self.indptr, other.indptr)
            and np.array_equal(self.indices, other.indices)
            and np.array_equal(self.ids, other.ids)
            and (self.labels is None or np.array_equal(self.labels, other.labels))
        )

    __hash__ = None

    # -- construction ---------------------------------------------------------

    @classmethod
    def from_pairs(cls, u, v, n, ids=None, labels=None, source="arrays", lines=0,
                   node_names=None, edge_labels=None, directed=False) -> Graph:
        """The graph of endpoint pairs ``(u[i], v[i])`` already numbered ``0..n-1``
        (int64 or int32 arrays, any stride: the readers' and converters' last step;
        :meth:`from_edges` checks its input, this does not). Loops and repeated
        pairs are dropped and counted in :attr:`report`. Built on all cores.
        ``edge_labels`` (one per pair) and ``directed``: :mod:`gthinker.graphs.edges`
        (a repeated pair keeps its first label; directed, ``u v`` and ``v u`` are two
        edges, not a duplicate)."""
        indptr, indices, loops, dups = csr.build(u, v, n)
        extra = {}
        if edge_labels is not None or directed:
            extra["edge_labels"], extra["directions"], dups = graph_edges.build(
                indptr, indices, u, v, edge_labels, directed)
        m = int(indices.size // 2)
        report = LoadReport(source, lines, int(np.asarray(u).size), loops, dups, int(n), m)
        return cls(indptr, indices, ids=ids, labels=labels, report=report, node_names=node_names,
                   **extra)

    @classmethod
    def from_owned_pairs(cls, pairs, n, ids=None, labels=None, source="arrays", lines=0) -> Graph:
        """:meth:`from_pairs` of the rows of an ``(m, 2)`` array that nothing needs after
        (a reader's own pairs). A writable C-contiguous int32 one is written over: the
        graph's neighbour ids take its memory (:func:`gthinker.graphs.csr.build_in_place`), so
        building holds 12 bytes an edge where :meth:`from_pairs` holds 16. Where loops
        and repeats leave more than a tenth of it unused, the neighbour ids are copied
        out, so that the graph keeps no more than it needs."""
        pairs = np.asarray(pairs)
        if not (pairs.dtype == np.int32 and pairs.ndim == 2 and pairs.shape[1] == 2
                and pairs.flags.c_contiguous and pairs.flags.writeable):
            return cls.from_pairs(pairs[:, 0], pairs[:, 1], n, ids, labels, source, lines)
        count = int(pairs.shape[0])
        indptr, indices, loops, dups = csr.build_in_place(pairs, n)
        if indices.size * 10 < pairs.size * 9:
            indices = indices.copy()
        del pairs
        report = LoadReport(source, lines, count, loops, dups, int(n), int(indices.size // 2))
        return cls(indptr, indices, ids=ids, labels=labels, report=report)

    @classmethod
    def from_edges(cls, edges, num_vertices=None, labels=None, edge_labels=None,
                   directed=False) -> Graph:
        """Build a graph from an ``(m, 2)`` integer array of edges.

        Parameters
        ----------
        edges : array_like of int, shape (m, 2)
            Endpoint pairs; loops and repeated edges (in either direction) are
            dropped and counted in :attr:`report`.
        num_vertices : int, optional
            If given, ids must lie in ``[0, num_vertices)`` and are kept as
            they are (isolated vertices are allowed). Otherwise the distinct
            ids are remapped to ``0 .. n-1`` in increasing order and kept in
            :attr:`ids`.
        labels : array_like of int, optional
            One label per internal vertex (after remapping, i.e. in increasing
            order of original id).
        edge_labels : array_like of int, shape (m,), optional
            One non-negative label per edge (row of ``edges``): :attr:`edge_labels`.
        directed : bool
            Each row is an edge from its first to its second vertex: a directed graph
            (:attr:`directions`), stored as its undirected skeleton.

        Returns
        -------
        Graph

        Raises
        ------
        GraphFormatError
            Wrong shape or dtype, negative ids, ids out of range, bad labels.

        Examples
        --------
        >>> g = Graph.from_edges([(10, 20), (20, 30), (30, 10), (30, 40), (40, 30)])
        >>> g.num_vertices, g.num_edges, g.report.duplicates
        (4, 4, 1)
        >>> g.ids.tolist()  # original id of each internal vertex 0..3
        [10, 20, 30, 40]
        >>> g.neighbors(2).tolist()  # internal ids: 30's neighbours 10, 20, 40
        [0, 1, 3]
        """
        u, v, n, ids = graph_convert.edge_arrays(edges, num_vertices)
        labels = graph_convert.check_labels(labels, n)
        edge_labels = graph_edges.check_edge_labels(edge_labels, u.size)
        return cls.from_pairs(u, v, n, ids, labels, "from_edges", edge_labels=edge_labels,
                              directed=directed)

    @classmethod
    def from_columns(cls, src, dst, num_vertices=None, labels=None) -> Graph:
        """Build a graph from two columns of endpoint ids, without a Python loop:
        numpy arrays, pandas Series (``df["src"], df["dst"]``), pyarrow arrays or
        chunked arrays (``table["src"], table["dst"]``), anything ``np.asarray``
        takes. ``num_vertices`` and ``labels`` as in :meth:`from_edges`.

        >>> Graph.from_columns(np.array([10, 20]), np.array([20, 30])).ids.tolist()
        [10, 20, 30]
        """
        u, v, n, ids = graph_convert.column_arrays(src, dst, num_vertices)
        labels = graph_convert.check_labels(labels, n)
        return cls.from_pairs(u, v, n, ids, labels, "from_columns")

    @classmethod
    def from_scipy(cls, matrix) -> Graph:
        """Build a graph from the nonzero pattern of a square scipy.sparse matrix.

        The pattern is symmetrised (``A + A.T``), explicit zeros are ignored and
        diagonal entries are dropped (counted as self-loops in :attr:`report`).
        Vertex ``i`` is row/column ``i``.
        """
        u, v, n = graph_convert.scipy_arrays(matrix)
        return cls.from_pairs(u, v, n, source="from_scipy")

    @classmethod
    def from_networkx(cls, G) -> Graph:
        """Build a graph from a networkx graph (directed ones are symmetrised).

        If every node is a non-negative integer, those integers become
        :attr:`ids` (internal order = increasing id). Otherwise ids are
        ``0 .. n-1`` in ``G.nodes`` order and :attr:`node_names` holds the
        nodes. A node attribute ``label`` that is an integer on every node
        becomes :attr:`labels`.
        """
        u, v, n, ids, labels, node_names = graph_convert.networkx_arrays(G)
        return cls.from_pairs(u, v, n, ids, labels, "from_networkx", 0, node_names)

    @classmethod
    def read(cls, path, format=None) -> Graph:
        """Read a graph file.

        Parameters
        ----------
        path : str or pathlib.Path
            File to read: a SNAP edge list, a labeled ``.graph`` file, Matrix Market
            (``.mtx``), scipy ``.npz``, or a gthinker binary graph (:meth:`save`);
            text may be compressed (gzip, bzip2, xz, zstandard) and may be standard
            input (``"-"``). An edge list's vertex ids that are not all integers
            (names) are kept in :attr:`node_names`. Read on all cores, in blocks: Ctrl-C stops
            it at once (KeyboardInterrupt).
        format : {None, 'edgelist', 'graph', 'mtx', 'npz', 'binary'}
            ``None`` picks the format from the file's first bytes (binary graphs,
            ``.npz``, Matrix Market, through gzip too), else from its name
            (``.graph``, ``.mtx``, ``.npz``, ``.csr``), else SNAP
            (:mod:`gthinker.graphs.files`).

        Returns
        -------
        Graph

        Raises
        ------
        GraphFormatError
            Missing file or malformed content; the message is
            ``"{path}:{line}: ..."`` with a 1-based physical line number.
        GraphTooLargeError
            The graph would not fit in the memory available.
        """
        graph = graph_files.read_graph(path, format, cls)
        graph.file = None if os.fspath(path) == STDIN else os.path.abspath(os.fspath(path))
        return graph

    @classmethod
    def load(cls, path, verify: bool = False) -> Graph:
        """A graph saved with :meth:`save`, memory-mapped: loading costs page
        faults, not parsing; its prepared forms come back when first asked for.
        Every graph's rows are checked (one pass); ``verify=True`` also checks
        every section's checksums (a full read of the file).

        Raises
        ------
        GraphFormatError
            Not a binary graph, a newer format version, truncated or corrupt.
        """
        graph = binary.load(path, cls, verify=verify)
        graph.file = os.path.abspath(os.fspath(path))
        return graph

    def save(self, path, prepare=None) -> None:
        """Writes the graph as a gthinker binary file (:mod:`gthinker.graphs.formats.binary`),
        with its ids, labels, node names, load report and every prepared form it
        holds that is a graph, an integer array, a number or a tuple of them.

        Parameters
        ----------
        path : str or pathlib.Path
            Output file (replaced whole at the end: written to a temporary file first).
        prepare : iterable of str, optional
            Forms of :data:`PREPARED` to compute first (``"degeneracy"``,
            ``"oriented"``, ``"ordered"``, ``"degree-oriented"``, or ``"all"``), so
            that runs on the saved graph prepare nothing.
        """
        for name in _prepared_names(prepare):
            PREPARED[name](self)
        graph_files.write_graph(self, path, "binary")

    # -- output ----------------------------------------------------------------

    def edge_array(self) -> np.ndarray:
        """Each undirected edge once as an ``(m, 2)`` int64 array of internal ids ``u < v``."""
        rows = np.repeat(np.arange(self.num_vertices, dtype=np.int64), self.degrees())
        cols = self.indices.astype(np.int64)
        keep = rows < cols
        return np.column_stack([rows[keep], cols[keep]])

    def to_networkx(self):
        """A :class:`networkx.Graph` on the original ids (or :attr:`node_names`).

        Labels, if any, become the node attribute ``label``.
        """
        return graph_convert.to_networkx(self)

    def write(self, path, format=None) -> None:
        """Write the graph to ``path``.

        Parameters
        ----------
        path : str or pathlib.Path
            Output file; gzip-compressed if the name ends in ``.gz``.
        format : {None, 'edgelist', 'graph', 'mtx', 'npz', 'binary'}
            ``None`` chooses from the name like :meth:`read` (an unknown suffix
            writes an edge list). The edge list holds each edge once as
            ``u<TAB>v`` in original ids; the ``.graph`` format renumbers vertices
            ``0 .. n-1`` (internal ids) and writes label 0 for unlabeled graphs;
            ``.mtx`` and ``.npz`` keep ids and labels (:mod:`gthinker.graphs.formats`);
            ``.csr`` is the binary format (:meth:`save`, which can prepare forms
            first). The file is replaced whole at the end.
        """
        graph_files.write_graph(self, path, format)

    def to_scipy(self):
        """The adjacency matrix as a ``scipy.sparse.csr_array`` of ones (int8), in
        internal vertex order (``Graph.from_scipy(g.to_scipy())`` gives the same
        rows; ids are not part of a matrix)."""
        import scipy.sparse as sp

        n = self.num_vertices
        return sp.csr_array((np.ones(self.indices.size, np.int8), self.indices, self.indptr),
                            shape=(n, n))

    # -- algorithms --------------------------------------------------------------

    def degeneracy_order(self):
        """Degeneracy (smallest-last) order and core numbers, computed once (and
        kept in a binary file, :meth:`save`).

        Returns
        -------
        order : int32 array of length n
            Vertices in the order they are peeled, level by level (at level ``k``
            every remaining vertex with at most ``k`` remaining neighbours, in
            rounds, by id within a round: :func:`gthinker.graphs.csr.degeneracy_order`),
            so every vertex has at most its core number, and at most
            :attr:`degeneracy`, neighbours later in ``order``. The same for any
            number of threads.
        core : int32 array of length n
            Core number of each vertex.
        """
        return self.derived("degeneracy", _degeneracy)

    @property
    def degeneracy(self) -> int:
        """Largest core number (0 for graphs without edges)."""
        _, core = self.degeneracy_order()
        return int(core.max()) if core.size else 0

    def oriented(self) -> Graph:
        """The graph oriented by degeneracy order: a DAG whose row ``v`` holds the
        neighbours that come after ``v`` (at most :attr:`degeneracy` of them),
        sorted by id; same ids. Computed once, on all cores."""
        return self.derived("oriented", _oriented)

    def degeneracy_ordered(self) -> Graph:
        """The graph renumbered in degeneracy order (``self.reorder(order)``), so
        that the highest cores come last. Computed once, on all cores."""
        return self.derived("ordered", lambda g: g.reorder(g.degeneracy_order()[0]))

    def degree_oriented(self) -> Graph:
        """The graph oriented by degree and renumbered by that rank (vertex ``r`` is
        the r-th by degree, ties by number; row ``r`` holds the later neighbours,
        sorted), ids permuted alike. Computed once, on all cores. For triangles at
        their middle vertex it beats the degeneracy order, both to make and to count
        on (measured: docs/benchmarks.md, "Measurements behind the code's constants")."""
        return self.derived("degree-oriented", _degree_oriented)

    def degree_in_rows(self):
        """:func:`gthinker.graphs.csr.in_rows` of :meth:`degree_oriented`: ``(in_ptr,
        in_src, in_pos, after)``, each vertex's in-neighbours in that DAG and where it
        sits in their rows. Computed once, on all cores."""
        return self.derived("degree-oriented.in",
                            lambda g: csr.in_rows(g.degree_oriented().indptr,
                                                  g.degree_oriented().indices))

    def reorder(self, order) -> Graph:
        """Relabel vertices so that ``order[i]`` becomes vertex ``i``.

        Parameters
        ----------
        order : array_like of int, shape (n,)
            A permutation of ``0 .. n-1``.

        Returns
        -------
        Graph
            Same graph with sorted rows; ``new.ids[i] == self.ids[order[i]]``,
            labels, node names, edge labels and directions permuted alike, report kept.
        """
        n = self.num_vertices
        order = np.asarray(order)
        if order.shape != (n,) or (n and order.dtype.kind not in "iu"):
            raise ValueError(f"order must be an integer array of shape ({n},)")
        order = order.astype(np.int64)
        if n and (order.min() < 0 or order.max() >= n):
            raise ValueError("order must be a permutation of 0..n-1")
        inv = np.full(n, -1, dtype=np.int64)
        inv[order] = np.arange(n, dtype=np.int64)
        if np.any(inv < 0):
            raise ValueError("order must be a permutation of 0..n-1 (repeated vertex)")
        indptr, indices = csr.permute(self.indptr, self.indices, order, inv)
        names = None if self.node_names is None else [self.node_names[i] for i in order.tolist()]
        extra = {}
        if not self.plain:  # each new entry's old one
            rows = np.repeat(order, np.diff(indptr))
            old = graph_edges.positions(self.indptr, self.indices, rows, order[indices])
            extra = {k: None if getattr(self, k) is None else getattr(self, k)[old]
                     for k in ("edge_labels", "directions")}
        return Graph(
            indptr,
            indices,
            ids=self.ids[order],
            labels=None if self.labels is None else self.labels[order],
            report=self.report,
            node_names=names,
            **extra,
        )

    def check(self) -> None:
        """Verify the CSR invariants; raise ``AssertionError`` naming the first violation."""
        n = self.num_vertices

        def fail(msg):
            raise AssertionError(f"Graph invariant violated: {msg}")

        ip, ix = self.indptr, self.indices
        if ip.dtype != np.int64 or ix.dtype != np.int32:
            fail(f"dtypes {ip.dtype}/{ix.dtype}, expected int64/int32")
        if not (ip.flags.c_contiguous and ix.flags.c_contiguous):
            fail("arrays not C-contiguous")
        if ip[0] != 0 or ip[-1] != ix.size or np.any(np.diff(ip) < 0):
            fail("indptr not a monotone offset array")
        if ix.size % 2:
            fail("odd number of adjacency entries")
        if ix.size and (ix.min() < 0 or ix.max() >= n):
            fail("neighbour index out of range")
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ip))
        if np.any(rows == ix):
            fail("self-loop")
        same = rows[1:] == rows[:-1]
        if np.any(same & (ix[1:] <= ix[:-1])):
            fail("row not strictly increasing (unsorted or duplicate)")
        fwd = rows * n + ix
        bwd = np.sort(ix.astype(np.int64) * n + rows)
        if not np.array_equal(fwd, bwd):
            fail("adjacency not symmetric")
        sid = np.sort(self.ids)
        if self.ids.shape != (n,) or np.any(sid[1:] == sid[:-1]):
            fail("ids not unique")
        if self.labels is not None and self.labels.shape != (n,):
            fail("labels length")


def _degeneracy(g: Graph):
    order, core = csr.degeneracy_order(g.indptr, g.indices)
    return csr.readonly(order, np.int32), csr.readonly(core, np.int32)


def _rank(order: np.ndarray) -> np.ndarray:
    rank = np.empty(order.size, np.int32)
    rank[order] = np.arange(order.size, dtype=np.int32)
    return rank


def _oriented(g: Graph) -> Graph:
    indptr, indices = csr.orient(g.indptr, g.indices, _rank(g.degeneracy_order()[0]))
    return Graph(indptr, indices, ids=g.ids, report=g.report)


def _degree_oriented(g: Graph) -> Graph:
    order = np.argsort(g.degrees(), kind="stable").astype(np.int32)
    indptr, indices = csr.orient(g.indptr, g.indices, _rank(order), renumber=True)
    return Graph(indptr, indices, ids=g.ids[order], report=g.report)


#: Builds of :meth:`Graph.derived` in progress on this thread (forms made inside
#: another's build are kept with it).
_building = threading.local()

#: The prepared forms :meth:`Graph.save` (and ``gthinker convert --prepare``) can
#: compute before saving, by name.
PREPARED = {
    "degeneracy": Graph.degeneracy_order,
    "oriented": Graph.oriented,
    "ordered": Graph.degeneracy_ordered,
    "degree-oriented": Graph.degree_in_rows,
}


#: The keys of :meth:`Graph.derived` that the prepared forms are kept under (what a
#: binary file keeps when a run makes one: :attr:`Graph.KEEP_FORMS`).
KEPT = frozenset({"degeneracy", "oriented", "ordered", "degree-oriented", "degree-oriented.in"})


def _prepared_names(prepare) -> list[str]:
    if prepare is None:
        return []
    names = [prepare] if isinstance(prepare, str) else list(prepare)
    if "all" in names:
        return list(PREPARED)
    bad = [x for x in names if x not in PREPARED]
    if bad:
        raise ValueError(f"unknown prepared form {bad[0]!r}; use {', '.join(PREPARED)} or all")
    return names


def as_graph(obj) -> Graph:
    """Any graph a user may hold, as a :class:`Graph`.

    Accepts a :class:`Graph` (returned as is), a path (``str`` or ``os.PathLike``,
    read with :meth:`Graph.read`), a networkx graph, a scipy.sparse matrix or
    array, an integer edge array of shape (m, 2), or a pandas DataFrame or pyarrow
    Table of two columns (source, destination).

    >>> import networkx as nx
    >>> as_graph(nx.path_graph(3)).num_edges
    2
    """
    if isinstance(obj, Graph):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return Graph.read(obj)
    module = type(obj).__module__ or ""
    if module.startswith("networkx"):
        return Graph.from_networkx(obj)
    if module.startswith("scipy.sparse"):
        return Graph.from_scipy(obj)
    if isinstance(obj, (np.ndarray, list, tuple)):
        return Graph.from_edges(obj)
    if module.startswith(("pandas", "pyarrow")) and len(getattr(obj, "columns", ())) == 2:
        cols = [obj[c] for c in (obj.columns if module.startswith("pandas") else obj.column_names)]
        return Graph.from_columns(*cols)
    raise TypeError(
        f"cannot make a graph from {type(obj).__name__}: pass a gthinker.Graph, a file path, "
        "a networkx graph, a scipy.sparse matrix or an (m, 2) integer edge array"
    )

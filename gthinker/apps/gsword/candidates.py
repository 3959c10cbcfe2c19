"""gSWORD's candidate graph (host side): for every query edge ``(u_j, u_d)`` with
``j`` before ``d`` in the order, a CSR from each candidate of ``u_j`` to its local
candidates ``C(u_j, u_d, v) = N(v) & C(u_d)``, flattened into two arrays that the
samplers on both targets read (:mod:`gthinker.apps.gsword.sampling`'s helpers).
The global candidates and the order come from :mod:`gthinker.apps.matching.planner`.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

import gthinker

from ..matching.patterns import as_query
from ..matching.planner import (
    backward_positions,
    check_query,
    filter_candidates,
    order_for,
    plan,
)

__all__ = ["KEPT_PER_GRAPH", "MAX_QUERY", "CandidateGraph", "candidate_graph",
           "kept_candidate_graph"]

#: Candidate graphs kept with a data graph (the most recently used ones).
KEPT_PER_GRAPH = 32
_KEEPING = threading.Lock()

#: Largest query the samplers take (per-sample state lives in fixed-size arrays).
MAX_QUERY = 32

# Header of cgp (int64): offsets of its arrays.
_G_NQ, _G_COFF, _G_BPTR, _G_BPOS, _G_ROWS = 0, 1, 2, 3, 4
_G_HEADER = 5


@dataclass
class CandidateGraph:
    """The candidate graph in gSWORD's format, flattened into two arrays.

    ``cgp`` (int64): a header, then ``coff`` (where each position's global
    candidates start in ``cgi``), ``bptr``/``bpos`` (per position ``d``, a
    CSR of its backward edges: the earlier positions ``j`` adjacent to it),
    and per backward edge the row pointers of its CSR (absolute offsets into
    ``cgi``, one row per candidate of ``j``). ``cgi`` (int32): the global
    candidates (data vertex ids, sorted) and the local candidate lists
    (indices into ``C(u_d)``, sorted).
    """

    order: np.ndarray  # query vertex at each position
    candidates: list  # per position: sorted data vertex ids
    cgp: np.ndarray
    cgi: np.ndarray
    edges: int  # candidate-graph edges stored
    #: What is derived from it and kept with it: its copies on devices, the plan.
    kept: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def num_positions(self) -> int:
        return len(self.order)

    def empty(self) -> bool:
        return any(len(c) == 0 for c in self.candidates)

    def candidate_offsets(self) -> np.ndarray:
        """Where each position's global candidates start in ``cgi``."""
        return self.cgp[self.cgp[_G_COFF]: self.cgp[_G_COFF] + self.num_positions]

    def on_device(self):
        """``(cgp, cgi)`` on this thread's CUDA device, copied there once and kept
        with the candidate graph (``cgi`` one 0 when it is empty)."""
        from gthinker.extending import gpu

        device = gpu.current_device()
        with _KEEPING:
            copies = self.kept.setdefault("on_device", {})
            if device not in copies:
                cuda = gpu.numba_cuda()
                cgi = self.cgi if self.cgi.size else np.zeros(1, np.int32)
                copies[device] = (cuda.to_device(self.cgp), cuda.to_device(cgi))
            return copies[device]

    def plan_params(self, data, query):
        """The matching plan's ``params`` in this order (what trawling enumerates
        with), made once and kept."""
        with _KEEPING:
            if "plan" not in self.kept:
                self.kept["plan"] = plan(data, query, order=self.order).params
            return self.kept["plan"]


def _local_lists(data, pc, back, cgi_len):
    """Per backward edge (j, d), in order of d then j: the CSR from each candidate
    of position j to its local candidates of d (as indices into ``pc[d]``), its
    row pointers offset by ``cgi_len`` and what comes before it in ``cgi``.
    Returns (row pointer blocks, local lists, backward positions j)."""
    rows_blocks, pieces, bpos = [], [], []
    indptr, indices = data.indptr, data.indices
    for d in range(len(pc)):
        index_of = np.full(data.num_vertices, -1, np.int64)
        index_of[pc[d]] = np.arange(len(pc[d]))
        for j in back[d]:
            c = pc[j].astype(np.int64)
            deg = indptr[c + 1] - indptr[c]
            starts = np.repeat(indptr[c], deg)
            within = np.arange(int(deg.sum())) - np.repeat(np.cumsum(deg) - deg, deg)
            mapped = index_of[indices[starts + within]]
            keep = mapped >= 0
            rows = np.repeat(np.arange(len(c)), deg)[keep]
            counts = np.bincount(rows, minlength=len(c))
            ptr = np.zeros(len(c) + 1, np.int64)
            ptr[1:] = np.cumsum(counts)
            rows_blocks.append(ptr + cgi_len)
            pieces.append(mapped[keep].astype(np.int32))
            cgi_len += int(ptr[-1])
            bpos.append(j)
    return rows_blocks, pieces, bpos


def _flatten(coff, back, rows_blocks, bpos):
    """``cgp``: the header, ``coff``, the backward-edge CSR and the row pointers."""
    nq = len(back)
    bptr = np.zeros(nq + 1, np.int64)
    bptr[1:] = np.cumsum([len(b) for b in back])
    header = np.zeros(_G_HEADER, np.int64)
    header[_G_NQ] = nq
    off = _G_HEADER
    header[_G_COFF] = off
    off += nq + 1
    header[_G_BPTR] = off
    off += nq + 1
    header[_G_BPOS] = off
    off += len(bpos)
    header[_G_ROWS] = off  # per backward edge: where its row pointers start in cgp
    row_starts = np.zeros(len(rows_blocks), np.int64)
    off += len(rows_blocks)
    for e, blk in enumerate(rows_blocks):
        row_starts[e] = off
        off += len(blk)
    return np.concatenate([header, coff, bptr, np.array(bpos, np.int64), row_starts]
                          + rows_blocks).astype(np.int64)


def candidate_graph(data, query, order="quicksi") -> CandidateGraph:
    """Builds the candidate graph of ``query`` in ``data`` (see :class:`CandidateGraph`).

    ``order``: ``"quicksi"`` (default), ``"sm"`` (the SM app's order) or an
    explicit permutation of the query vertices."""
    data = gthinker.as_graph(data)
    query = as_query(query)
    check_query(data, query)
    nq = query.num_vertices
    if nq > MAX_QUERY:
        raise ValueError(f"the query has {nq} vertices; gsword samples queries of at most "
                         f"{MAX_QUERY}")
    cands = filter_candidates(data, query)
    order = order_for(data, query, cands, order)
    pc = [cands[int(u)].astype(np.int32) for u in order]  # candidates per position
    back = backward_positions(query, order)
    coff = np.zeros(nq + 1, np.int64)
    coff[1:] = np.cumsum([len(c) for c in pc])
    rows_blocks, local, bpos = _local_lists(data, pc, back, int(coff[-1]))
    pieces = pc + local
    cgi = np.concatenate(pieces).astype(np.int32) if pieces else np.zeros(0, np.int32)
    return CandidateGraph(order=order, candidates=pc, cgp=_flatten(coff, back, rows_blocks, bpos),
                          cgi=cgi, edges=int(cgi.size - coff[-1]))


def _query_key(query, order):
    """What a candidate graph depends on besides the data graph: the query's
    structure and labels, and the order asked for."""
    h = hashlib.blake2b(digest_size=16)
    for a in (query.indptr, query.indices, query.labels):
        h.update(b"-" if a is None else np.ascontiguousarray(a).tobytes())
        h.update(b"|")
    asked = order if isinstance(order, str) else tuple(int(u) for u in order)
    return h.hexdigest(), asked


def kept_candidate_graph(data, query, order="quicksi") -> CandidateGraph:
    """:func:`candidate_graph`, built once per (data graph, query, order) and kept
    with the data graph (:meth:`gthinker.Graph.derived`; the KEPT_PER_GRAPH most
    recently used): estimating the same query again builds nothing, and finds its
    copy on the GPU and its plan kept with it."""
    data = gthinker.as_graph(data)
    query = as_query(query)
    key = _query_key(query, order)
    with _KEEPING:
        kept = data.derived("gsword.candidate_graphs", lambda _: OrderedDict())
        cg = kept.get(key)
        if cg is not None:
            kept.move_to_end(key)
            return cg
    cg = candidate_graph(data, query, order)
    with _KEEPING:
        kept[key] = cg
        while len(kept) > KEPT_PER_GRAPH:
            kept.popitem(last=False)
    return cg

"""SNAP edge list -> G2Miner (chenxuhao/GraphMiner) binary CSR input; numpy only.

    python3 benchmarks/peers/g2miner_convert.py EDGELIST OUTPREFIX [--check]

EDGELIST: .txt or .txt.gz, '#' starts a comment (to the end of the line), whitespace
separated, the first two columns are the endpoints (non-negative ints, any ids).
Self-loops and duplicate / both-direction edges are dropped; vertex ids are relabelled
to 0..n-1 in increasing order of the original id (every id that appears, as
gthinker.graphs.graph does, so a vertex seen only in a self-loop stays, isolated).

Writes what G2Miner's loader (src/common/graph.cc, Graph::Graph) reads for a prefix P:

    P.meta.txt    text, read with >> in this order: n_vertices, n_edges (= directed
                  entries = 2 * undirected edges), sizeof(vidType)=4, sizeof(eidType)=8,
                  sizeof(vlabel_t)=1, sizeof(elabel_t)=2, max_degree, feat_len=0,
                  num_vertex_classes=0, num_edge_classes=0 (one value a line, the
                  four sizes on one line, as in its inputs/*/graph.meta.txt)
    P.vertex.bin  row pointers, n_vertices+1 little-endian int64 (eidType = int64_t)
    P.edge.bin    column indices, n_edges little-endian int32 (vidType = int32_t)

The CSR is symmetric (undirected), each neighbour list strictly increasing. The
loader asserts the sizes and 0 < max_degree < n_vertices; it orients the graph into
a DAG itself (USE_DAG=1) for TC and k-clique, so the files hold the full
undirected graph. --check re-reads the files and verifies all of this.
"""

import gzip
import os
import re
import sys
import time
import warnings

import numpy as np

VID = np.dtype("<i4")
EID = np.dtype("<i8")


def _read_text(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    # the leading comment block (SNAP's header) cheaply, then any other comment
    pos, head = 0, re.compile(rb"\s*#[^\n]*\n?")
    while (m := head.match(data, pos)) is not None:
        pos = m.end()
    if pos:
        data = data[pos:]
    if b"#" in data:
        data = re.sub(rb"(?m)^[ \t]*#[^\n]*(?:\n|\Z)", b"", data)  # comment lines
        data = re.sub(rb"#[^\n]*", b"", data)  # trailing comments
    return data


def read_edges(path):
    """(u, v) int64 arrays of the first two columns."""
    data = _read_text(path)
    first = re.search(rb"\S[^\n]*", data)
    if first is None:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    ncols = len(first.group(0).split())
    if ncols < 2:
        raise SystemExit(f"{path}: a line with fewer than two columns: {first.group(0)!r}")
    flat = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            # whitespace-separated ints in C; raises (or warns, made an error here)
            # on anything it cannot parse to the end
            flat = np.fromstring(data, dtype=np.int64, sep=" ")
        # every line must hold exactly ncols ints (else fall back to the strict parser)
        lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        if flat.size != ncols * lines:
            flat = None
    except (ValueError, DeprecationWarning):
        flat = None
    if flat is None:  # ragged or odd rows: the slow, strict path
        arr = np.loadtxt(path, comments="#", dtype=np.int64, usecols=(0, 1), ndmin=2)
        return arr[:, 0].copy(), arr[:, 1].copy()
    flat = flat.reshape(-1, ncols)
    return flat[:, 0].copy(), flat[:, 1].copy()


def relabel(u, v):
    """Map the ids to 0..n-1 by increasing id; returns n, u', v'."""
    if u.size == 0:
        return 0, u, v
    if min(u.min(), v.min()) < 0:
        raise SystemExit("negative vertex id in the edge list")
    top = int(max(u.max(), v.max()))
    if top < 4 * (u.size + v.size) + 1024:
        present = np.zeros(top + 1, dtype=bool)
        present[u] = True
        present[v] = True
        newid = np.cumsum(present, dtype=np.int64) - 1
        return int(present.sum()), newid[u], newid[v]
    both = np.concatenate([u, v])
    ids = np.unique(both)
    new = np.searchsorted(ids, both)
    return int(ids.size), new[: u.size], new[u.size:]


def build_csr(n, u, v):
    """Symmetric CSR without self-loops or duplicates, sorted neighbour lists."""
    keep = u != v
    loops = int(u.size - keep.sum())
    u, v = u[keep], v[keep]
    key = np.concatenate([u * n + v, v * n + u])  # both directions
    key.sort()
    if key.size:
        first = np.empty(key.size, dtype=bool)
        first[0] = True
        np.not_equal(key[1:], key[:-1], out=first[1:])
        key = key[first]
    src = key // n if n else key
    col = (key - src * n).astype(VID)
    deg = np.bincount(src, minlength=n)
    rowptr = np.zeros(n + 1, dtype=EID)
    np.cumsum(deg, out=rowptr[1:])
    return rowptr, col, loops


def write(prefix, rowptr, col):
    n = rowptr.size - 1
    nnz = int(col.size)
    maxdeg = int(np.diff(rowptr).max()) if n else 0
    if n >= 2**31 - 1:
        raise SystemExit(f"{n} vertices do not fit G2Miner's int32 vidType")
    if not 0 < maxdeg < n:
        raise SystemExit(f"G2Miner's loader needs 0 < max_degree < n (got {maxdeg}, n={n})")
    d = os.path.dirname(prefix)
    if d:
        os.makedirs(d, exist_ok=True)
    rowptr.astype(EID, copy=False).tofile(prefix + ".vertex.bin")
    col.astype(VID, copy=False).tofile(prefix + ".edge.bin")
    with open(prefix + ".meta.txt", "w") as f:
        f.write(f"{n}\n{nnz}\n4 8 1 2\n{maxdeg}\n0\n0\n0\n")
    return n, nnz, maxdeg


def check(prefix):
    """Re-read the files as G2Miner does and verify the CSR invariants."""
    with open(prefix + ".meta.txt") as f:
        tok = f.read().split()
    n, nnz, vs, es, vls, els, maxdeg = (int(t) for t in tok[:7])
    assert (vs, es, vls, els) == (4, 8, 1, 2), tok
    assert len(tok) == 10 and tok[7:] == ["0", "0", "0"], tok
    rowptr = np.fromfile(prefix + ".vertex.bin", dtype=EID)
    col = np.fromfile(prefix + ".edge.bin", dtype=VID)
    assert rowptr.size == n + 1 and col.size == nnz, (rowptr.size, col.size, n, nnz)
    assert rowptr[0] == 0 and rowptr[-1] == nnz
    deg = np.diff(rowptr)
    assert (deg >= 0).all() and int(deg.max()) == maxdeg and 0 < maxdeg < n
    assert col.min() >= 0 and col.max() < n
    src = np.repeat(np.arange(n, dtype=np.int64), deg)
    assert (src != col).all(), "self-loop"
    # strictly increasing inside each list
    same = src[1:] == src[:-1]
    assert (col[1:][same] > col[:-1][same]).all(), "unsorted or duplicate neighbours"
    # symmetric: the sorted reversed edges equal the edges
    fwd = src * n + col
    rev = np.sort(col.astype(np.int64) * n + src)
    assert np.array_equal(fwd, rev), "not symmetric"
    return n, nnz, maxdeg


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2:
        raise SystemExit(__doc__)
    src_path, prefix = args
    t0 = time.perf_counter()
    u, v = read_edges(src_path)
    t1 = time.perf_counter()
    n, u, v = relabel(u, v)
    rowptr, col, loops = build_csr(n, u, v)
    t2 = time.perf_counter()
    n, nnz, maxdeg = write(prefix, rowptr, col)
    t3 = time.perf_counter()
    print(f"g2miner_convert: {src_path} -> {prefix}.{{meta.txt,vertex.bin,edge.bin}}: "
          f"{u.size} edge lines, {loops} self-loops dropped, n={n}, undirected edges="
          f"{nnz // 2}, directed entries={nnz}, max_degree={maxdeg} "
          f"(read {t1 - t0:.2f} s, build {t2 - t1:.2f} s, write {t3 - t2:.2f} s)")
    if "--check" in argv:
        check(prefix)
        print(f"g2miner_convert: check ok ({time.perf_counter() - t3:.2f} s)")


if __name__ == "__main__":
    main(sys.argv[1:])

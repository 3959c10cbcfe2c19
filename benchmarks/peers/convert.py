"""A gthinker graph straight to each peer's input format: numpy, memory-mapped, no text.

    python benchmarks/peers/convert.py FORMAT GRAPH OUT [--check]
    python benchmarks/peers/convert.py compact GRAPH OUT.csr [--prepare FORMS]
    python benchmarks/peers/convert.py selftest-graph OUT.bin EXPECTED
    python benchmarks/peers/convert.py crosscheck GRAPH WORKDIR [--peers DIR]

GRAPH is anything ``gthinker.Graph.read`` reads; a gthinker binary graph (``.csr``) is
memory-mapped, so its arrays go to the output without a copy of the graph in memory.
The vertex ids written are gthinker's internal ids ``0..n-1``, each neighbour list is the
graph's own (sorted, symmetric, no loops or repeats). ``--check`` re-reads what was written,
as the peer's loader does, and compares it with the graph's arrays (chunk by chunk).

FORMAT (OUT):
  gthinkercg (G.bin)  G-ThinkerCG's binary CSR (common/graph.h, Graph::readBinFile):
                      uint64 4, 8, n, m (sizeof uintV and uintE, vertices, directed
                      entries = 2 x edges), uint64 row_ptr[n+1], uint32 cols[m], then
                      nothing (it checks for the end of the file). Its name must end in
                      .bin (the loader picks the reader by the suffix).
  mcegpu (G.bel)      MCE-GPU's .bel (include/fileop.h, read_bel): one 24-byte record per
                      directed entry, uint64 (dst, src, 0), sorted by (src, dst), both
                      directions, no loops or repeats: what its own `-m convert` writes
                      from a text edge list. Vertices are 0..max id, so an isolated
                      vertex after the last edge's would be lost (use `compact` first);
                      it holds ids and entries in 32 bits (DataType = unsigned int).
  tdfs (DIR)          T-DFS's folder format (src/graph.h, read_bin_file; what its
                      graph_converter's compactify writes): DIR/snap.txt.meta.txt (n,
                      directed entries, 4, max degree, one a line), DIR/snap.txt.vertex.bin
                      (int64 row pointers), DIR/snap.txt.edge.bin (int32 columns). Run it
                      as `ulb.out DIR/snap.txt PATTERN.g`. Ids are int32 there.
  g2miner (PREFIX)    G2Miner's PREFIX.{meta.txt,vertex.bin,edge.bin}
                      (benchmarks/peers/g2miner_convert.py describes it and writes it).

compact: the graph without its isolated vertices (the others renumbered in the same order,
their original ids kept), saved as a gthinker binary graph with the prepared forms FORMS
(default all). The seed's graphs have no isolated vertex, and MCE counts one as a maximal
clique of size 1, which MCE-GPU's .bel cannot hold: every tool then reads the same graph.

crosscheck: every format written (and checked) from GRAPH, then compared with what each
peer's own converter makes from the same graph as a text edge list (internal ids, each edge
once), where its build is under --peers (benchmarks/peers/bundle.sh's layout; none needs a
GPU): MCE-GPU's `-m convert` must write the same bytes; T-DFS's graph_converter (tdfs.sh
convert; it numbers vertices in order of first appearance) the same meta line and the same
edges once renumbered so; g2miner_convert.py's text path the same bytes; and G-ThinkerCG's
app_mc, CPU-only, the same count of maximal cliques from our .bin as from the text through
its own SNAP reader. Exit status 1 if anything differs.

selftest-graph: writes the small graph of `gthinkercg.sh selftest` (two K6 joined by a
path, a wheel W5, an isolated vertex) as G-ThinkerCG's .bin, and EXPECTED: its maximal
cliques (networkx), and for G-ThinkerCG's patterns 0 (triangle), 24 (K4), 2 (diamond) the
distinct subgraphs and the embeddings (networkx's monomorphisms), one "q Q DISTINCT
EMBEDDINGS" line each.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import g2miner_convert  # noqa: E402
import patterns  # noqa: E402

#: Entries written or compared per step: bounds the memory a step adds (24 bytes each
#: for a .bel record) whatever the graph's size.
CHUNK = 1 << 24
#: Entries per .bel step: 24 MiB of records, cache-sized (R-MAT 22 to /dev/null on the
#: 2-core machine: 6.5 s with these, 10.5 s with CHUNK's 400 MiB steps).
BEL_CHUNK = 1 << 20
#: G-ThinkerCG's header words: sizeof(uintV), sizeof(uintE).
GCG_SIZES = (4, 8)
#: The file names T-DFS reads for a graph argument DIR/snap.txt.
TDFS_BASE = "snap.txt"
U32 = 2**32
I32 = 2**31 - 1


def _graph(path):
    import gthinker

    return path if isinstance(path, gthinker.Graph) else gthinker.Graph.read(path)


def _row_blocks(indptr, chunk=CHUNK):
    """``(r0, r1)`` row ranges of about ``chunk`` entries each (one row may hold more)."""
    n = indptr.size - 1
    m = int(indptr[-1])
    starts = np.unique(np.searchsorted(indptr, np.arange(0, m, chunk), side="right") - 1)
    starts = starts[(starts >= 0) & (starts < n)]
    bounds = list(map(int, starts)) + [n]
    if not bounds or bounds[0] != 0:
        bounds.insert(0, 0)
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _rows(indptr, r0, r1):
    """The source vertex of each entry of rows ``r0..r1-1``."""
    return np.repeat(np.arange(r0, r1, dtype=np.uint64), np.diff(indptr[r0:r1 + 1]))


def _write_array(fh, arr, dtype):
    """``arr`` as ``dtype`` (same width, values in range) in steps of :data:`CHUNK`, each
    written from the array's own memory (a memory-mapped graph's pages: no copy)."""
    for a in range(0, arr.size, CHUNK):
        fh.write(np.ascontiguousarray(arr[a:a + CHUNK]).view(dtype).data)


def _writing(path):
    from gthinker.graphs.files import writing

    return writing(Path(path))


# -- writers -------------------------------------------------------------------------------


def write_gthinkercg(graph, path):
    path = Path(path)
    if path.suffix != ".bin":
        raise ValueError(f"{path}: G-ThinkerCG picks its reader by the suffix: name it *.bin")
    n, m = graph.num_vertices, int(graph.indices.size)
    with _writing(path) as fh:
        fh.write(np.array([*GCG_SIZES, n, m], dtype="<u8").tobytes())
        _write_array(fh, graph.indptr, "<u8")
        _write_array(fh, graph.indices, "<u4")


def write_mcegpu(graph, path):
    n, m = graph.num_vertices, int(graph.indices.size)
    if m >= U32 or n >= U32:
        raise ValueError(f"MCE-GPU holds vertex ids and entries in 32 bits: n={n}, m={m}")
    if n and graph.degrees()[-1] == 0:
        raise ValueError("the last vertex is isolated: MCE-GPU's .bel would lose it "
                         "(convert.py compact drops isolated vertices)")
    with _writing(path) as fh:
        for r0, r1 in _row_blocks(graph.indptr, BEL_CHUNK):
            a, b = int(graph.indptr[r0]), int(graph.indptr[r1])
            rec = np.empty((b - a, 3), dtype="<u8")
            rec[:, 0] = graph.indices[a:b]
            rec[:, 1] = _rows(graph.indptr, r0, r1)
            rec[:, 2] = 0
            fh.write(rec.data)


def write_tdfs(graph, folder):
    folder = Path(folder)
    if graph.num_vertices > I32:
        raise ValueError(f"T-DFS holds vertex ids as int: {graph.num_vertices} vertices")
    folder.mkdir(parents=True, exist_ok=True)
    base = folder / TDFS_BASE
    with _writing(f"{base}.vertex.bin") as fh:
        _write_array(fh, graph.indptr, "<i8")
    with _writing(f"{base}.edge.bin") as fh:
        _write_array(fh, graph.indices, "<i4")
    with _writing(f"{base}.meta.txt") as fh:  # last: its presence says the rest is there
        fh.write(f"{graph.num_vertices}\n{graph.indices.size}\n4\n{graph.max_degree}\n".encode())


def write_g2miner(graph, prefix):
    g2miner_convert.write(str(prefix), graph.indptr, graph.indices)


# -- checks: re-read as the peer does, compare with the graph ------------------------------


def _same(name, got, want):
    if not np.array_equal(got, want):
        bad = int(np.flatnonzero(np.asarray(got) != np.asarray(want))[0]) if (
            np.shape(got) == np.shape(want)) else -1
        raise AssertionError(f"{name} differs from the graph's (first at {bad}; shapes "
                             f"{np.shape(got)} / {np.shape(want)})")


def check_gthinkercg(graph, path):
    n, m = graph.num_vertices, int(graph.indices.size)
    size = os.path.getsize(path)
    if size != 8 * (4 + n + 1) + 4 * m:
        raise AssertionError(f"{path}: {size} bytes, want {8 * (4 + n + 1) + 4 * m}")
    head = np.fromfile(path, dtype="<u8", count=4)
    _same("header", head, np.array([*GCG_SIZES, n, m], np.uint64))
    rowptr = np.memmap(path, dtype="<u8", mode="r", offset=32, shape=(n + 1,))
    cols = np.memmap(path, dtype="<u4", mode="r", offset=32 + 8 * (n + 1), shape=(m,))
    _same("row_ptr", rowptr, graph.indptr.astype(np.uint64))
    for a in range(0, m, CHUNK):
        _same(f"cols[{a}:]", cols[a:a + CHUNK], graph.indices[a:a + CHUNK].astype(np.uint32))


def check_mcegpu(graph, path):
    m = int(graph.indices.size)
    if os.path.getsize(path) != 24 * m:
        raise AssertionError(f"{path}: {os.path.getsize(path)} bytes, want 24 x {m}")
    rec = np.memmap(path, dtype="<u8", mode="r", shape=(m, 3)) if m else np.zeros((0, 3))
    for r0, r1 in _row_blocks(graph.indptr, BEL_CHUNK):
        a, b = int(graph.indptr[r0]), int(graph.indptr[r1])
        _same(f"dst[{a}:{b}]", rec[a:b, 0], graph.indices[a:b].astype(np.uint64))
        _same(f"src[{a}:{b}]", rec[a:b, 1], _rows(graph.indptr, r0, r1))
        if rec[a:b, 2].any():
            raise AssertionError(f"records {a}:{b}: a third word other than 0")


def check_tdfs(graph, folder):
    base = Path(folder) / TDFS_BASE
    meta = Path(f"{base}.meta.txt").read_text().split()
    want = [str(graph.num_vertices), str(graph.indices.size), "4", str(graph.max_degree)]
    if meta != want:
        raise AssertionError(f"{base}.meta.txt: {meta}, want {want}")
    _same("vertex.bin", np.fromfile(f"{base}.vertex.bin", dtype="<i8"), graph.indptr)
    _same("edge.bin", np.memmap(f"{base}.edge.bin", dtype="<i4", mode="r"), graph.indices)


def check_g2miner(graph, prefix):
    """The meta file's values and both arrays (g2miner_convert.check also re-derives the
    graph's symmetry with a sort of every entry: minutes on a big graph, and the arrays
    compared here are a gthinker graph's, symmetric by construction)."""
    meta = Path(f"{prefix}.meta.txt").read_text().split()
    want = [graph.num_vertices, graph.indices.size, 4, 8, 1, 2, graph.max_degree, 0, 0, 0]
    if meta != [str(x) for x in want]:
        raise AssertionError(f"{prefix}.meta.txt: {meta}, want {want}")
    _same("vertex.bin", np.fromfile(f"{prefix}.vertex.bin", dtype="<i8"), graph.indptr)
    _same("edge.bin", np.memmap(f"{prefix}.edge.bin", dtype="<i4", mode="r"), graph.indices)


FORMATS = {
    "gthinkercg": (write_gthinkercg, check_gthinkercg),
    "mcegpu": (write_mcegpu, check_mcegpu),
    "tdfs": (write_tdfs, check_tdfs),
    "g2miner": (write_g2miner, check_g2miner),
}


def convert(fmt, graph, out, check=False):
    """Writes ``graph`` (a Graph or a path) in peer format ``fmt``; returns the seconds
    taken to write and (with ``check``) to re-read and compare."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    write, verify = FORMATS[fmt]
    graph = _graph(graph)
    t0 = time.perf_counter()
    write(graph, out)
    t1 = time.perf_counter()
    if check:
        verify(graph, out)
    return t1 - t0, time.perf_counter() - t1


def compact(graph):
    """``graph`` without its isolated vertices (the rest renumbered in order, ids kept)."""
    import gthinker

    graph = _graph(graph)
    deg = graph.degrees()
    keep = deg > 0
    if keep.all():
        return graph
    newid = np.cumsum(keep, dtype=np.int64) - 1
    indptr = np.concatenate([[0], graph.indptr[1:][keep]]).astype(np.int64)
    indices = np.empty(graph.indices.size, np.int32)
    for a in range(0, indices.size, CHUNK):
        indices[a:a + CHUNK] = newid[graph.indices[a:a + CHUNK]]
    labels = None if graph.labels is None else graph.labels[keep]
    return gthinker.Graph(indptr, indices, ids=graph.ids[keep], labels=labels)


def selftest_graph():
    """The small graph of ``gthinkercg.sh selftest`` and its counts by networkx: two K6
    joined by a path, a wheel W5 (hub and a 5-cycle), an isolated vertex."""
    import networkx as nx

    import gthinker

    G = nx.Graph()
    G.add_edges_from(itertools.combinations(range(0, 6), 2))
    G.add_edges_from(itertools.combinations(range(6, 12), 2))
    nx.add_path(G, [5, 12, 13, 6])
    G.add_edges_from((14, 15 + i) for i in range(5))
    G.add_edges_from((15 + i, 15 + (i + 1) % 5) for i in range(5))
    G.add_node(20)
    expected = [f"mc {sum(1 for _ in nx.find_cliques(G))}"]
    for q in (0, 24, 2):
        P = nx.Graph(patterns.GTHINKERCG[q][1])
        emb = sum(1 for _ in nx.algorithms.isomorphism.GraphMatcher(
            G, P).subgraph_monomorphisms_iter())
        aut = patterns.automorphisms(patterns.GTHINKERCG[q][1])
        expected.append(f"q {q} {emb // aut} {emb}")
    edges = np.array(sorted(G.edges()), dtype=np.int64)
    graph = gthinker.Graph.from_edges(edges, num_vertices=G.number_of_nodes())
    return graph, expected


def _tdfs_same(theirs, ours, text):
    """T-DFS's own conversion vs ours: its ids are the order of first appearance."""
    flat = np.loadtxt(text, dtype=np.int64, ndmin=2).ravel()
    ids, first = np.unique(flat, return_index=True)
    newid = np.empty(int(ids.max()) + 1, np.int64)
    newid[ids[np.argsort(first)]] = np.arange(ids.size)
    load = [(Path(f"{d}/{TDFS_BASE}.meta.txt").read_text().split(),
             np.fromfile(f"{d}/{TDFS_BASE}.vertex.bin", "<i8"),
             np.fromfile(f"{d}/{TDFS_BASE}.edge.bin", "<i4")) for d in (theirs, ours)]
    (m1, ip1, ix1), (m2, ip2, ix2) = load
    rows = np.repeat(np.arange(ip2.size - 1), np.diff(ip2))
    a = np.sort(newid[rows] * (ip2.size - 1) + newid[ix2])
    b = np.repeat(np.arange(ip1.size - 1), np.diff(ip1)) * (ip1.size - 1) + ix1
    return m1 == m2 and np.array_equal(a, np.sort(b))


def _app_mc_count(binary, path):
    import re
    import subprocess

    out = subprocess.run([binary, "-dg", str(path), "-cpu", "2", "-gpu", "0"], capture_output=True,
                         text=True, timeout=300).stdout
    found = re.findall(r"^Total count: (\d+)", out, re.M)
    return int(found[-1]) if found else None


def crosscheck(graph, work, peers=None):
    """Our conversions against the peers' own converters; returns the failures."""
    import filecmp
    import subprocess

    graph, work = _graph(graph), Path(work)
    work.mkdir(parents=True, exist_ok=True)
    outs = {"gthinkercg": work / "g.bin", "mcegpu": work / "g.bel", "tdfs": work / "tdfs",
            "g2miner": work / "g2m" / "graph"}
    for fmt, out in outs.items():
        convert(fmt, graph, out, check=True)
        print(f"{fmt}: written and re-read: ok")
    text = work / "g.txt"
    np.savetxt(text, graph.edge_array(), fmt="%d")
    peers = Path(peers) if peers else None
    fails, results = [], {}
    own = work / "g2m_own" / "graph"
    g2miner_convert.main([str(text), str(own)])
    results["G2Miner's text path, same bytes"] = all(
        filecmp.cmp(f"{own}.{s}", f"{outs['g2miner']}.{s}", shallow=False)
        for s in ("meta.txt", "vertex.bin", "edge.bin"))
    tool = peers / "mcegpu" / "parallel_mce_on_gpus" if peers else None
    if tool and tool.exists():
        subprocess.run([tool, "-m", "convert", "-g", text, "-r", work / "own.bel"], check=True,
                       capture_output=True)
        results["MCE-GPU -m convert, same bytes"] = filecmp.cmp(work / "own.bel", outs["mcegpu"],
                                                                shallow=False)
    if peers and (peers / "tdfs" / "bin" / "conv" / "snapToBin").exists():
        subprocess.run(["bash", HERE / "tdfs.sh", "convert", text, work / "tdfs_own"], check=True,
                       capture_output=True, env=dict(os.environ, TDFS_DIR=str(peers / "tdfs")))
        results["T-DFS graph_converter, same graph renumbered"] = _tdfs_same(
            work / "tdfs_own", outs["tdfs"], text)
    tool = peers / "gthinkercg" / "bin" / "app_mc" if peers else None
    if tool and tool.exists():
        a, b = _app_mc_count(tool, outs["gthinkercg"]), _app_mc_count(tool, text)
        results[f"G-ThinkerCG app_mc cpu: .bin {a} = its SNAP reader {b}"] = a == b and a
    for what, ok in results.items():
        print(f"{what}: {'ok' if ok else 'DIFFERS'}")
        if not ok:
            fails.append(what)
    return fails


def _main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("what", choices=[*FORMATS, "compact", "crosscheck", "selftest-graph"])
    ap.add_argument("graph", help="input graph (selftest-graph: the .bin to write)")
    ap.add_argument("out", help="output (crosscheck: a work folder; selftest-graph: the "
                    "expected counts' file)")
    ap.add_argument("--check", action="store_true", help="re-read the output and compare")
    ap.add_argument("--prepare", default="all", help="compact: the forms to store (default: all)")
    ap.add_argument("--peers", help="crosscheck: the peers' builds (bundle.sh's layout)")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    if a.what == "selftest-graph":
        graph, expected = selftest_graph()
        write_gthinkercg(graph, a.graph)
        Path(a.out).write_text("\n".join(expected) + "\n")
        return 0
    graph = _graph(a.graph)
    t1 = time.perf_counter()
    if a.what == "crosscheck":
        fails = crosscheck(graph, a.out, a.peers)
        print("crosscheck: " + ("ok" if not fails else f"{len(fails)} DIFFER"))
        return 1 if fails else 0
    if a.what == "compact":
        small = compact(graph)
        small.save(a.out, prepare=None if a.prepare == "none" else a.prepare.split(","))
        print(f"compact: {graph.num_vertices:,} -> {small.num_vertices:,} vertices, "
              f"{small.num_edges:,} edges -> {a.out} (read {t1 - t0:.2f} s, "
              f"compact + save {time.perf_counter() - t1:.2f} s)")
        return 0
    wrote, checked = convert(a.what, graph, a.out, a.check)
    print(f"{a.what}: {graph.num_vertices:,} vertices, {graph.indices.size:,} entries -> "
          f"{a.out} (read {t1 - t0:.2f} s, write {wrote:.2f} s"
          + (f", check {checked:.2f} s: ok" if a.check else "") + ")")
    return 0


if __name__ == "__main__":
    sys.exit(_main())

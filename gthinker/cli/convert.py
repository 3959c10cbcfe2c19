"""``gthinker convert GRAPH OUT``: a graph file in any format read by
:meth:`gthinker.Graph.read` written in another, above all as a binary graph that
loads by memory-mapping, with the prepared forms runs need (so they prepare
nothing): ``gthinker convert big.txt.gz big.csr``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

__all__ = ["add_parser", "add_prepare_flag", "main", "write_out", "DEFAULT_FORMS"]

#: The prepared forms a binary file keeps unless ``--prepare`` says otherwise: the
#: degeneracy order (every app's first step, and the least parallel one) and the
#: graph oriented by it (counting). All of them make a much larger file, slower to
#: write (measured: docs/benchmarks.md, "Measurements behind the code's constants").
DEFAULT_FORMS = "degeneracy,oriented"

_EPILOG = """\
examples:
  gthinker convert soc-LiveJournal1.txt.gz lj.csr     # then: gthinker count lj.csr triangle
  gthinker convert g.mtx g.txt                        # Matrix Market to an edge list
  gthinker convert lj.csr --verify                    # check every checksum of a binary file
  gthinker convert g.txt g.csr --prepare degeneracy,oriented

Formats (read: from the file's first bytes, else its name; written: from OUT's
name, else --to): SNAP edge list (any other name), .graph (labeled), .mtx
(Matrix Market), .npz (scipy.sparse), .csr (gthinker binary), text ones
gzip-compressed with .gz. A binary file keeps ids, labels, node names and the
prepared forms: degeneracy order and core numbers (mce, count), the graph
oriented by it (count), renumbered by it (mce), and oriented by degree
(count's triangles on CPUs); a form a later run makes is kept in the file too.
OUT is written to a temporary file and renamed at the end: an interrupted
convert leaves no partial file.
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Adds the ``convert`` command to ``subparsers`` (``parser.add_subparsers()``)."""
    p = subparsers.add_parser(
        "convert", help="convert a graph file, e.g. to the binary format that loads at once",
        description="Read a graph file and write it in another format: a binary graph "
                    "(.csr) loads by memory-mapping and keeps what runs prepare.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("graph", help="graph file to read (any format gthinker reads)")
    p.add_argument("out", nargs="?", default=None,
                   help="file to write (none: with --verify, only check GRAPH)")
    p.add_argument("--format", default=None, metavar="FMT",
                   help="format of GRAPH: edgelist, edgelist-labeled (u v label lines), "
                        "edgelist-directed, edgelist-directed-labeled, graph, gsi (.g), mtx, "
                        "npz, binary (default: from its first bytes, else its name)")
    p.add_argument("--to", default=None, metavar="FMT",
                   help="format of OUT: binary, edgelist, graph, mtx, npz (default: from its "
                        "name; .csr is binary, an unknown suffix an edge list)")
    add_prepare_flag(p, "OUT")
    p.add_argument("--verify", action="store_true",
                   help="check every checksum of a binary GRAPH (a full read) before using it")
    p.add_argument("--quiet", "-q", action="store_true", help="no summary on stderr")
    return p


def add_prepare_flag(parser, out_name: str) -> None:
    """The ``--prepare`` flag of a command that writes a graph (convert, generate)."""
    parser.add_argument(
        "--prepare", default=DEFAULT_FORMS, metavar="FORMS",
        help=f"prepared forms a binary {out_name} keeps, comma-separated: degeneracy, "
             "oriented, ordered, degree-oriented, all or none (default: "
             f"{DEFAULT_FORMS}: what every app starts from and counting on the GPU runs on; "
             "the others, each a copy of the graph, are made by the first run that needs "
             "them, on all cores, and kept in the file for later runs)")


def write_out(graph, out: Path, to: str, prepare: str) -> str:
    """Writes ``graph`` to ``out`` in format ``to``; a binary file keeps the ``prepare``
    forms (computed first). Returns what was written, for the summary line."""
    if to != "binary":
        graph.write(out, format=to)
        return to
    forms = [] if prepare == "none" else prepare.split(",")
    graph.save(out, prepare=forms)
    return f"binary, prepared: {', '.join(forms) or 'none'}"


def main(args) -> int:
    """Runs ``gthinker convert``; 0 on success. Bad input raises the errors the
    command line turns into messages (exit 2)."""
    from gthinker import Graph
    from gthinker.graphs import files as graph_files

    src = Path(args.graph)
    t0 = time.perf_counter()
    fmt = graph_files.format_name(src, args.format)
    if args.out is None and not args.verify:
        raise ValueError("give OUT, or --verify to check a binary GRAPH")
    if args.verify and fmt != "binary":
        raise ValueError(f"--verify checks binary graphs; {src} is read as {fmt!r}")
    graph = Graph.load(src, verify=True) if args.verify else Graph.read(src, format=fmt)
    if args.out is None:
        _say(args, f"{src}: every checksum and row checks out ({graph.num_vertices:,} "
                   f"vertices, {graph.num_edges:,} edges) in {time.perf_counter() - t0:.2f}s")
        return 0
    out = Path(args.out)
    if out.exists() and src.exists() and out.resolve() == src.resolve():
        raise ValueError(f"OUT is GRAPH ({out}); write to another file")
    to = graph_files.output_format(out, args.to)
    read_s = time.perf_counter() - t0
    what = write_out(graph, out, to, args.prepare)
    size = out.stat().st_size if out.is_file() else 0
    _say(args, f"converted {src} ({graph.num_vertices:,} vertices, {graph.num_edges:,} edges; "
               f"read in {read_s:.2f}s) to {out} ({what}; {size / 2**20:,.1f} MiB) in "
               f"{time.perf_counter() - t0:.2f}s")
    return 0


def _say(args, text: str) -> None:
    if not args.quiet:
        print(text, file=sys.stderr)

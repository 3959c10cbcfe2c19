"""Fault injection: memory limits (an rlimit on a child process, fake cgroup files) and
flipped bits in every section of a binary graph file each end in one clear line, never a
traceback or a wrong result."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap
import zlib

import networkx as nx
import numpy as np
import pytest
from conftest import child_env

import gthinker
from gthinker import Graph, memory
from gthinker.graphs.generate import rmat

# ---- memory limits ------------------------------------------------------------------------

#: The child: imports what `gthinker count` needs, then limits its address space to what
#: it has now plus argv[2] MiB (the graph's reading and counting need more), and runs.
_CHILD = textwrap.dedent("""
    import resource, sys
    import gthinker.cli.main as cli
    from gthinker.cli import apps  # noqa: F401
    from gthinker.apps.count import command  # noqa: F401
    pages = int(open("/proc/self/statm").read().split()[0])
    room = pages * resource.getpagesize() + int(sys.argv[2]) * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (room, resource.RLIM_INFINITY))
    sys.exit(cli.main(["count", sys.argv[1], "triangle", "--threads", "2", "--mode", "cpu",
                          "--quiet"], ending=True))
""")


def test_rlimit_out_of_memory_is_one_clear_line(tmp_path):
    path = tmp_path / "r15.txt"
    rmat(15, seed=3).write(path)
    # 8 MiB more: the reading threads cannot start. (Rooms just short of the need may
    # end in glibc's "cannot allocate memory for thread-local data: ABORT", which no
    # program can catch.)
    p = subprocess.run([sys.executable, "-c", _CHILD, str(path), "8"], capture_output=True,
                       text=True, timeout=120, env=child_env(), cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and "terminate" not in p.stderr, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("gthinker: error: out of memory"), p.stderr
    assert "address-space limit (ulimit -v)" in last


@pytest.mark.parametrize("exc", [MemoryError("std::bad_alloc"), MemoryError(),
                                 RuntimeError("can't start new thread")])
def test_allocation_failure_anywhere_is_one_line(monkeypatch, capsys, exc):
    from gthinker.cli import apps as app_cli
    from gthinker.cli import main as cli

    def fail(*_args):
        raise exc

    monkeypatch.setattr(app_cli, "run", fail)
    assert cli.main(["count", "x.txt", "triangle"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gthinker: error: out of memory"), err
    assert "bound by" in err[0]


def test_other_runtime_errors_are_not_called_memory(monkeypatch):
    from gthinker.cli import apps as app_cli
    from gthinker.cli import main as cli

    def fail(*_args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(app_cli, "run", fail)
    with pytest.raises(RuntimeError, match="a bug"):
        cli.main(["count", "x.txt", "triangle"])


def test_rlimit_room_counts_the_address_space_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as fh:
        pages = int(fh.read().split()[0])
    vm = pages * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (vm + (3 << 30), hard))
    try:
        room = memory.rlimit_room()["the process's address-space limit (ulimit -v)"]
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert (3 << 30) - (256 << 20) < room <= 3 << 30


def _fake_cgroup(tmp_path, v2: bool, limit, usage, parent_limit=None):
    mount = tmp_path / ("" if v2 else "memory")
    inner = mount / "box" / "job"
    inner.mkdir(parents=True)
    names = ("memory.max", "memory.current") if v2 else ("memory.limit_in_bytes",
                                                          "memory.usage_in_bytes")
    (inner / names[0]).write_text(f"{limit}\n")
    (inner / names[1]).write_text(f"{usage}\n")
    if parent_limit is not None:
        (mount / "box" / names[0]).write_text(f"{parent_limit}\n")
        (mount / "box" / names[1]).write_text(f"{usage}\n")
    member = tmp_path / "cgroup"
    member.write_text("0::/box/job\n" if v2 else "4:memory:/box/job\n2:cpu:/\n")
    return member


@pytest.mark.parametrize("v2", [True, False])
def test_cgroup_room_is_limit_less_usage(tmp_path, v2):
    member = _fake_cgroup(tmp_path, v2, 3 << 30, 1 << 30)
    assert memory.cgroup_room(tmp_path, member) == 2 << 30


def test_cgroup_room_takes_the_tightest_ancestor_and_skips_unlimited(tmp_path):
    member = _fake_cgroup(tmp_path, True, "max", 1 << 30, parent_limit=(1 << 30) + 5)
    assert memory.cgroup_room(tmp_path, member) == 5
    member = _fake_cgroup(tmp_path / "v1", False, 2**63 - 4096, 10)
    assert memory.cgroup_room(tmp_path / "v1", member) is None
    assert memory.cgroup_room(tmp_path, tmp_path / "no-such-file") is None


def test_check_fits_names_the_tightest_bound(tmp_path, monkeypatch):
    member = _fake_cgroup(tmp_path, True, 1 << 30, 0)
    real = memory.cgroup_room
    monkeypatch.setattr(memory, "cgroup_room", lambda: real(tmp_path, member))
    monkeypatch.setattr(memory, "_reading", [float("-inf"), 0, ""])
    assert memory.available_bytes() <= 1 << 30
    with pytest.raises(gthinker.GraphTooLargeError, match="bound by the memory cgroup's limit"):
        memory.check_fits(2 << 30, "the test's arrays")
    monkeypatch.setattr(memory, "_reading", [float("-inf"), 0, ""])
    np.testing.assert_array_less(0, memory.available_bytes())


# ---- flipped bits in a binary graph file ---------------------------------------------------


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A labeled graph saved with every prepared form, then one more form kept into it
    by a run (the kept-forms writer), and the 4-clique count networkx gives."""
    rng = np.random.default_rng(5)
    nxg = nx.gnp_random_graph(70, 0.25, seed=5)
    nx.set_node_attributes(nxg, {v: int(rng.integers(0, 3)) for v in nxg}, "label")
    g = Graph.from_networkx(nxg)  # with its labels
    path = tmp_path_factory.mktemp("binary") / "g.csr"
    g.save(path, prepare=["degeneracy", "oriented", "ordered"])
    keeping, Graph.KEEP_FORMS = Graph.KEEP_FORMS, True
    try:
        Graph.load(path).degree_in_rows()  # kept into the file: sections kept1/...
    finally:
        Graph.KEEP_FORMS = keeping
    cliques = sum(1 for c in nx.enumerate_all_cliques(nxg) if len(c) == 4)
    return path, cliques


def _sections(path):
    with open(path, "rb") as fh:
        head = fh.read(24)
        length = int.from_bytes(head[12:16], "little")
        return json.loads(fh.read(length))["sections"]


def test_the_file_has_sections_of_every_kind(stored):
    names = set(_sections(stored[0]))
    assert {"indptr", "indices", "ids", "labels", "derived/oriented/indices",
            "derived/degeneracy/0"} <= names
    assert any(name.startswith("kept1/") for name in names)


def _flipped(path, tmp_path, name, section):
    data = bytearray(path.read_bytes())
    at = section["offset"] + section["nbytes"] // 2
    data[at] ^= 1 << (at % 8)
    out = tmp_path / "flipped.csr"
    out.write_bytes(bytes(data))
    return out


def test_a_flipped_bit_in_any_section_is_an_error_naming_it(stored, tmp_path):
    path, _ = stored
    for name, section in _sections(path).items():
        if not section["nbytes"]:
            continue
        bad = _flipped(path, tmp_path, name, section)
        with pytest.raises(gthinker.GraphFormatError, match=f"section '{name}' does not "
                                                            "match its checksum"):
            Graph.load(bad).prepared()  # the graph at once, each form as it is restored


def test_a_flipped_bit_in_a_stored_form_prints_no_result(stored, tmp_path):
    from gthinker.cli.main import main

    path, cliques = stored
    sections = _sections(path)
    assert main(["count", str(path), "4-clique", "--mode", "cpu", "--quiet"]) == 0
    bad = _flipped(path, tmp_path, "derived/oriented/indices",
                   sections["derived/oriented/indices"])
    p = subprocess.run([sys.executable, "-m", "gthinker.cli.main", "count", str(bad),
                        "4-clique", "--mode", "cpu", "--quiet"],
                       capture_output=True, text=True, timeout=120, env=child_env(), cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == "", (p.stdout, p.stderr)
    assert p.stderr.strip().splitlines() == [
        f"gthinker: error: {bad}: corrupt: section 'derived/oriented/indices' does not match "
        "its checksum (the file was damaged after it was written: convert the graph again "
        "from its source)"]
    assert cliques > 0


def test_a_section_without_checksums_is_read_unchecked(stored, tmp_path):
    path, _ = stored
    data = path.read_bytes()
    length = int.from_bytes(data[12:16], "little")
    meta = json.loads(data[24:24 + length])
    for section in meta["sections"].values():
        del section["crc32"]
    text = json.dumps(meta, separators=(",", ":")).encode()
    text += b" " * (length - len(text))  # the same length: the sections stay where they are
    old = bytearray(data)
    old[12:16] = len(text).to_bytes(4, "little")
    old[16:20] = zlib.crc32(text).to_bytes(4, "little")
    old[24:24 + length] = text
    out = tmp_path / "old.csr"
    out.write_bytes(bytes(old))
    assert Graph.load(out) == Graph.load(path)

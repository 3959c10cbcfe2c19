"""Binary files keep the prepared forms runs make (Graph.KEEP_FORMS, on for the gthinker
app commands): written into a new copy renamed over the file, so that the next process
restores them; a read-only file, a file changed since it was loaded, or a failed or
interrupted write leave the file as it was."""

import json
import os

import networkx as nx
import numpy as np
import pytest
from conftest import DATA, TRUTH, run_cli

import gthinker
from gthinker import Graph
from gthinker.cli.main import main
from gthinker.graphs.formats import binary
from gthinker.graphs.graph import KEPT


def _middle(g):
    """What counting's CPU triangles ask for: both degree forms inside one build."""
    return g.derived("test.middle", lambda h: (h.degree_oriented(), h.degree_in_rows()))


@pytest.fixture
def saved(tmp_path):
    g = Graph.from_networkx(nx.gnp_random_graph(300, 0.05, seed=7))
    path = tmp_path / "g.csr"
    g.save(path, prepare=["degeneracy"])
    return g, path


def _same(a, b):
    if isinstance(a, Graph):
        return a == b
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    return np.array_equal(a, b)


def test_a_made_form_is_kept_once_and_restored_by_the_next_load(saved, monkeypatch):
    g, path = saved
    monkeypatch.setattr(Graph, "KEEP_FORMS", True)
    before = os.stat(path)
    h = Graph.load(path)
    _middle(h)
    after = os.stat(path)
    assert after.st_ino != before.st_ino and after.st_size > before.st_size
    h.degeneracy_order()  # stored already: restored, nothing written
    h.oriented()  # a form of its own, made later: a second new copy
    assert os.stat(path).st_ino != after.st_ino
    assert sorted(os.listdir(path.parent)) == ["g.csr"]  # no temporary file left
    monkeypatch.setattr(Graph, "KEEP_FORMS", False)
    fresh = Graph.load(path, verify=True)  # every checksum, old sections and new
    offered = fresh.prepared()
    for key in ("degeneracy", "oriented", "degree-oriented", "degree-oriented.in"):
        assert _same(offered[key], g.derived(key, lambda _, k=key: {
            "degeneracy": Graph.degeneracy_order, "oriented": Graph.oriented,
            "degree-oriented": Graph.degree_oriented,
            "degree-oriented.in": Graph.degree_in_rows}[k](g)))
    assert "test.middle" not in offered  # only the prepared forms are kept
    assert fresh == g


def test_forms_are_not_kept_unless_asked(saved):
    _, path = saved
    data = path.read_bytes()
    _middle(Graph.load(path))
    assert path.read_bytes() == data


def test_read_only_and_changed_files_are_left_alone(saved, monkeypatch):
    g, path = saved
    monkeypatch.setattr(Graph, "KEEP_FORMS", True)
    data = path.read_bytes()
    path.chmod(0o444)
    h = Graph.load(path)
    assert _same(_middle(h), _middle(g))
    assert path.read_bytes() == data
    path.chmod(0o644)
    h = Graph.load(path)
    g.save(path, prepare=["degeneracy"])  # replaced since it was loaded
    data = path.read_bytes()
    _middle(h)
    assert path.read_bytes() == data and h.origin is None


@pytest.mark.parametrize("fault", [OSError("disk full"), KeyboardInterrupt()])
def test_a_failed_or_interrupted_write_leaves_the_file_as_it_was(saved, monkeypatch, fault):
    _, path = saved
    monkeypatch.setattr(Graph, "KEEP_FORMS", True)
    data = path.read_bytes()

    def fail(fd):
        raise fault

    monkeypatch.setattr(binary.os, "fsync", fail)
    h = Graph.load(path)
    if isinstance(fault, KeyboardInterrupt):
        with pytest.raises(KeyboardInterrupt):
            _middle(h)
    else:
        _middle(h)
    assert path.read_bytes() == data
    assert sorted(os.listdir(path.parent)) == ["g.csr"]


def test_the_count_command_keeps_its_forms_for_the_next_run(tmp_path):
    G = nx.powerlaw_cluster_graph(400, 4, 0.3, seed=2)
    path = tmp_path / "p.csr"
    Graph.from_networkx(G).save(path, prepare=["degeneracy"])
    want = sum(nx.triangles(G).values()) // 3
    for _ in range(2):
        out = run_cli("count", path, "triangle", "--mode", "cpu", "--json", "-q")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout.splitlines()[-1])["count"] == want
    kept = Graph.load(path)
    assert {"degree-oriented", "degree-oriented.in"} <= set(kept.prepared())
    assert gthinker.Graph.load(path, verify=True) == Graph.from_networkx(G)


def test_kept_forms_where_the_kernel_cannot_copy(saved, monkeypatch):
    """Without copy_file_range (another file system, an old kernel) the old sections are
    read and written instead: the same file."""
    g, path = saved
    monkeypatch.setattr(Graph, "KEEP_FORMS", True)

    def unsupported(*args, **kwargs):
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(binary.os, "copy_file_range", unsupported)
    _middle(Graph.load(path))
    fresh = Graph.load(path, verify=True)
    assert fresh == g and _same(fresh.prepared()["degree-oriented"], g.degree_oriented())


def _kept_builds(monkeypatch) -> list:
    """The forms of KEPT that Graph.derived builds from here on (not restored ones)."""
    built = []
    derived = Graph.derived

    def spy(self, key, build):
        def counted(g):
            if key in KEPT:
                built.append(key)
            return build(g)
        return derived(self, key, counted)

    monkeypatch.setattr(Graph, "derived", spy)
    return built


FACEBOOK = TRUTH["facebook-1000.txt.gz"]
YEAST_QUERY = "query_dense_16_4"


@pytest.mark.parametrize("source,argv,want,first", [
    ("facebook-1000.txt.gz", ["count", "{g}", "triangle", "--mode", "cpu"],
     FACEBOOK["triangles"], {"degree-oriented", "degree-oriented.in"}),
    ("facebook-1000.txt.gz", ["mce", "{g}", "--mode", "cpu"], FACEBOOK["maximal_cliques"],
     {"ordered"}),
    ("yeast.graph.gz", ["sm", "{g}", str(DATA / f"queries/yeast/{YEAST_QUERY}.graph"),
                        "--mode", "cpu"],
     TRUTH["yeast.graph.gz"]["embeddings"][YEAST_QUERY], set()),
])
def test_a_default_converted_file_prepares_once(tmp_path, monkeypatch, capsys, source, argv,
                                                 want, first):
    """From a file of `gthinker convert`'s default forms an app starts without preparing,
    or makes the form it lacks once and keeps it (count's degree orientation, mce's
    renumbering): the second run builds none of the forms a file keeps, and both give
    the right answer."""
    path = tmp_path / "g.csr"
    assert main(["convert", str(DATA / source), str(path)]) == 0
    built = _kept_builds(monkeypatch)
    made = []
    for _ in range(2):
        built.clear()
        capsys.readouterr()
        assert main([a.replace("{g}", str(path)) for a in argv] + ["--json", "-q"]) == 0
        assert json.loads(capsys.readouterr().out.splitlines()[-1])["count"] == want
        made.append(set(built))
    assert made == [first, set()]
    assert first <= set(Graph.load(path).prepared())

"""The graph readers, fuzzed (issue 17): random bytes, huge and negative ids, bad UTF-8.
Every input either reads as a graph or raises GraphFormatError naming the file (and
the line, for a bad line); never another exception, never a crash."""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gthinker

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

ids = st.one_of(st.integers(-5, 50), st.integers(2**62, 2**66), st.integers(-(2**70), -1))
tokens = st.one_of(ids.map(str), st.sampled_from(["#", "%", "x", "1.5", "\xff", "é", "", "v",
                                                   "e", "t"]))
lines = st.lists(tokens, max_size=5).map(" ".join)
texts = st.lists(lines, max_size=30).map("\n".join)
raw = st.binary(max_size=400)


def _read_or_format_error(path, expect_line):
    try:
        g = gthinker.Graph.read(path)
    except gthinker.GraphFormatError as exc:
        msg = str(exc)
        assert msg.startswith(str(path)), msg
        if expect_line and "missing header" not in msg:
            assert re.match(re.escape(str(path)) + r":\d+: ", msg), msg
        return None
    assert g.num_vertices >= 0 and g.indptr.size == g.num_vertices + 1
    assert g.indices.size == 2 * g.num_edges
    assert (g.ids >= 0).all()
    return g


@pytest.mark.parametrize("name", ["g.txt", "g.graph"])
@SETTINGS
@given(text=texts)
def test_line_fuzz(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    _read_or_format_error(path, expect_line=name == "g.txt" and text.strip() != "")


@pytest.mark.parametrize("name", ["g.txt", "g.graph", "g.txt.gz"])
@SETTINGS
@given(data=raw)
def test_byte_fuzz(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    _read_or_format_error(path, expect_line=False)


@SETTINGS
@given(edges=st.lists(st.tuples(st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1)),
                      max_size=20))
def test_valid_edge_lists_read_back_exactly(tmp_path, edges):
    path = tmp_path / "e.txt"
    path.write_text("".join(f"{u}\t{v}\n" for u, v in edges))
    g = gthinker.Graph.read(path)
    want = {frozenset(e) for e in edges if e[0] != e[1]}
    got = {frozenset(map(int, g.ids[list(e)])) for e in g.edge_array().tolist()}
    assert got == want

"""The C++ text scanner (csrc/text_scanner.cpp) against a line-by-line Python reader of
the same rules (docs/formats.md): the same records, tags, line numbers, isolated ids and
line count, or the same first error (kind, line, field), for any split of the input
into blocks and any number of threads."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gthinker import _core
from gthinker.graphs.formats import text

INT64_MAX = 2**63 - 1
SPACE = " \t\r\v\f,"  # commas too (Network Repository's "u,v" lines)
ISOLATED = "# isolated vertices:"
NUMERIC = re.compile(r"^[0-9+\-.eE]*[0-9][0-9+\-.eE]*$")


def _int_field(tok: str):
    """(error kind or 0, value) of one field token, as the scanner words it."""
    neg = tok.startswith("-")
    digits = tok[1:] if neg else tok
    if not digits or not digits.isascii() or not digits.isdigit():
        return text.NONINT, 0
    value = int(digits)
    if neg and value != 0:
        return text.NEGATIVE, 0
    if value > INT64_MAX:
        return text.OVERFLOW, 0
    return 0, value


def reference(data: bytes, nfields: int, required: dict, tagged=False, isolated=False):
    """(vals, tags, linenos, isolated ids, lines, error) of ``data`` read line by line."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    vals, tags, linenos, iso = [], [], [], []
    for no, raw in enumerate(lines, 1):
        line = raw.decode("latin-1")
        body = line.lstrip(SPACE)
        if not body:
            continue
        if body[0] in "#%":
            if isolated and not vals and line.startswith(ISOLATED):
                for k, tok in enumerate(t for t in re.split(f"[{SPACE}]+", line[len(ISOLATED):])
                                        if t):
                    if not (tok.isascii() and tok.isdigit()) or int(tok) > INT64_MAX:
                        return None, (text.ISOLATED, no, k)
                    iso.append(int(tok))
            continue
        tag = 0
        if tagged:
            tag = ord(body[0])
            body = body[1:]
            if (body and body[0] not in SPACE) or required.get(tag, -1) < 0:
                return None, (text.BAD_TAG, no, 0)
        toks = [t for t in re.split(f"[{SPACE}]+", body) if t]
        need = required[tag]
        fields = []
        for f, tok in enumerate(toks[:need]):
            kind, value = _int_field(tok)
            if kind:
                return None, (kind, no, f)
            fields.append(value)
        if len(fields) < need:
            return None, (text.FEW_FIELDS, no, len(fields))
        for k, tok in enumerate(toks[need:], need):
            if not NUMERIC.match(tok):
                return None, (text.EXTRA, no, k)
        vals.append(fields + [0] * (nfields - need))
        tags.append(tag)
        linenos.append(no)
    return (vals, tags, linenos, iso, len(lines)), None


def scanned(data: bytes, nfields, required, cuts, threads, tagged=False, isolated=False,
            narrow=False):
    """What the C++ scanner gives for ``data`` fed as blocks ending at ``cuts`` (each
    block extended to its line's end, as the reader feeds it)."""
    req = np.full(256, -1, np.int8)
    for tag, k in required.items():
        req[tag] = k
    sc = _core.TextScanner(nfields, req.tobytes(), tagged, True, isolated, narrow)
    start = 0
    for cut in sorted(set(cuts)) + [len(data)]:
        if cut <= start:
            continue
        nl = data.find(b"\n", cut - 1)
        end = len(data) if nl < 0 else nl + 1
        if not sc.scan(data[start:end], threads):
            return None, tuple(sc.error)
        start = end
    vals, tags, linenos, iso = sc.take()
    return (vals.tolist(), tags.tolist(), linenos.tolist(), iso.tolist(), sc.lines), None


SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
ids = st.one_of(st.integers(0, 40), st.integers(2**31 - 3, 2**31 + 3), st.integers(0, 2**64),
                st.integers(-3, -1))
token = st.one_of(ids.map(str), st.sampled_from(
    ["#", "%", "x", "1.5", "2e3", "+1", "-", "-0", "00", "0" * 25, "1" + "0" * 18, "e", "v",
     "t", "\xff", "1x", "9223372036854775807", "9223372036854775808", "-9223372036854775809"]))
sep = st.sampled_from([" ", "\t", "  ", " \t", "\r", "\x0b", ",", ", "])
line = st.tuples(st.lists(st.tuples(sep, token), max_size=5), st.sampled_from(["", " ", "\r"]),
                 st.sampled_from(["", "", "", " "])).map(
    lambda t: t[2] + "".join(s + tok for s, tok in t[0]).lstrip(" ") + t[1])
iso_line = st.lists(st.one_of(st.integers(0, 2**64).map(str), st.just("x")), max_size=4).map(
    lambda toks: ISOLATED + "".join(" " + t for t in toks))
texts = st.tuples(st.lists(iso_line, max_size=2), st.lists(line, max_size=40),
                  st.booleans()).map(
    lambda t: "\n".join(t[0] + t[1]) + ("\n" if t[2] else ""))


def _same(data, nfields, required, cuts, threads, **kw):
    got = scanned(data, nfields, required, cuts, threads, **kw)
    want = reference(data, nfields, required, kw.get("tagged", False), kw.get("isolated", False))
    if want[1] is None and got[1] is None:
        want_rec, got_rec = want[0], got[0]
        assert got_rec[0] == want_rec[0] or (got_rec[0] == [] and want_rec[0] == [])
        assert got_rec[1:] == want_rec[1:]
    else:
        assert got[1] == want[1]


@SETTINGS
@given(data=texts, cuts=st.lists(st.integers(0, 2000), max_size=4),
       threads=st.sampled_from([1, 2, 3, 8]))
def test_edge_lists_read_as_the_reference_reads_them(data, cuts, threads):
    _same(data.encode("latin-1"), 2, {0: 2}, cuts, threads, isolated=True, narrow=True)


tagged_line = st.tuples(st.sampled_from(["t", "v", "e", "x", "", "tt"]),
                        st.lists(st.tuples(sep, token), max_size=5)).map(
    lambda t: t[0] + "".join(s + tok for s, tok in t[1]))


@SETTINGS
@given(lines=st.lists(tagged_line, max_size=30), cuts=st.lists(st.integers(0, 600), max_size=3),
       threads=st.sampled_from([1, 3]))
def test_tagged_lines_read_as_the_reference_reads_them(lines, cuts, threads):
    data = "\n".join(lines).encode("latin-1")
    _same(data, 3, {ord("t"): 2, ord("v"): 2, ord("e"): 2}, cuts, threads, tagged=True)


SEPS = ("\t", ",")


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_many_pieces_and_blocks_keep_file_order(threads):
    """Blocks of several pieces each (pieces are cut at 64 KiB at least): the records of
    a long edge list come back in file order, with their line numbers, comments and
    blank lines anywhere, and the last line without its newline."""
    rng = np.random.default_rng(3)
    rows = rng.integers(0, 2**40, size=(60_000, 2))
    out, want, nos = [], [], []
    for i, (u, v) in enumerate(rows.tolist()):
        if i % 997 == 0:
            out.append("# a comment")
        if i % 1231 == 0:
            out.append("")
        out.append(f"{u}{SEPS[i % 2]}{v}" + (" 1.5" if i % 7 == 0 else ""))
        want.append([u, v])
        nos.append(len(out))
    data = "\n".join(out).encode()
    cuts = [len(data) // 3, len(data) // 3 + 5, 2 * len(data) // 3]
    got, err = scanned(data, 2, {0: 2}, cuts, threads, narrow=True)
    assert err is None
    assert got[0] == want and got[2] == nos and got[4] == len(out)


def test_lines_read_a_word_at_a_time_match_the_reference():
    """Edge-list lines far from a block's end are read eight bytes at a time: numbers of
    every length from 1 to 20 digits (leading zeros, int64's last values and past
    them), every separator and every ending, each with long lines after it."""
    nums = [str(10**k - 1) for k in range(1, 21)] + [str(10**k) for k in range(0, 20)]
    nums += ["0" * 15 + "7", "0" * 7, "9223372036854775807", "9223372036854775808", "-0",
             "-12", "12a", "+5"]
    lines = [f"{a}{s}{b}{t}" for a in nums for b in ("3", "12345678901234")
             for s in (" ", "\t", "  ", "\v", ",", ", ")
             for t in ("", " ", " 1.5", "\r", " x", "\t2 3", ",1.5", ",")]
    lines += ["7", "7 ", "1 2 3", "# 1 2", " 1 2", "\t"]
    pad = "123456789\t987654321\n" * 4
    for one in lines:
        data = (one + "\n" + pad).encode()
        _same(data, 2, {0: 2}, [], 1, narrow=True)
        _same(data, 3, {0: 3}, [], 1)

"""What keeps compiling cheap: a callee compiled once per plain argument types (never
per literal value), and :func:`gthinker.setops.put`, the slice copy without Numba's
slice assignment."""

import numpy as np
from numba.core import types

import gthinker
from gthinker.setops import put


@gthinker.compiler.jit("test functions", nogil=True)
def _add(a, b):
    return a + b


@gthinker.compiler.jit("test functions", nogil=True)
def _calls_with_literals(n):
    total = _add(0, 1)  # literal arguments
    k = 0
    for i in range(n):  # k: first Literal[int](0), then int64
        k = _add(k, i)
    return total + k


def test_a_callee_compiles_once_for_literal_and_plain_arguments():
    assert _calls_with_literals(5) == 1 + sum(range(5))
    sigs = list(_add.overloads)
    assert len(sigs) == 1, sigs
    assert not any(isinstance(t, types.Literal) for t in sigs[0])


@gthinker.compiler.jit("test functions", nogil=True)
def _put_twice(dst, a, b, at):
    return put(dst, put(dst, at, a), b)


def test_put_copies_as_slice_assignment():
    rng = np.random.default_rng(7)
    a = rng.integers(-50, 50, 6).astype(np.int32)
    b = rng.integers(-50, 50, 3).astype(np.int32)
    for at in (0, 2, 11):
        got = np.full(20, -1, np.int32)
        end = _put_twice(got, a, b, at)
        want = np.full(20, -1, np.int32)
        want[at : at + 6] = a
        want[at + 6 : at + 9] = b
        assert end == at + 9
        assert np.array_equal(got, want)
    got = np.zeros(4, np.int32)
    assert _put_twice(got, a[:0], b[:0], 1) == 1  # empty sources write nothing
    assert not got.any()

"""Bit tricks for compiled task code: population count and lowest set bit on int64 words.

Set-based apps (MCE keeps P and X as bitsets) need these at machine speed;
Numba has no builtin for them, so they are LLVM intrinsics. Use int64 words
(not uint64): Numba promotes mixed signed/unsigned arithmetic to float.

>>> from numba import njit
>>> njit(lambda x: popcount(x))(0b1011)
3
"""

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, register_jitable

__all__ = ["popcount", "lowest_bit", "pop_lowest", "count_bits", "gather", "unowned"]


@intrinsic
def popcount(typingctx, word):
    """Number of set bits of an int64 word."""
    if not isinstance(word, types.Integer):
        return None
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic
def lowest_bit(typingctx, word):
    """Index (0-63) of the lowest set bit of a non-zero int64 word."""
    if not isinstance(word, types.Integer):
        return None
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], context.get_constant(types.boolean, True))

    return sig, codegen


@register_jitable
def pop_lowest(words, n):
    """Clears the lowest set bit of the bitset ``words[:n]`` and returns its index;
    -1 when the set is empty."""
    for w in range(n):
        word = words[w]
        if word != 0:
            words[w] = word & (word - 1)
            return (w << 6) + lowest_bit(word)
    return -1


@register_jitable
def count_bits(words, n):
    """Number of set bits of the bitset ``words[:n]``."""
    c = 0
    for w in range(n):
        c += popcount(words[w])
    return c


@register_jitable
def gather(words, n, ids, out, k):
    """Writes ``ids[i]`` for each set bit ``i`` of ``words[:n]``, in increasing ``i``,
    into ``out`` from position ``k``; returns the position after the last."""
    for w in range(n):
        word = words[w]
        while word != 0:
            out[k] = ids[(w << 6) + lowest_bit(word)]
            word &= word - 1
            k += 1
    return k


@intrinsic
def unowned(typingctx, array):
    """A view of ``array`` without its reference count, valid while ``array`` lives
    (e.g. an argument, for the rest of the call). Numba increments and decrements an
    array's count, atomically, wherever a helper that takes it is inlined; in a walk
    that does so at every node that cost 40% of the time (Pivoter on facebook_combined).
    The arrays of a task's ``ctx`` have no count already."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        src = context.make_array(array)(context, builder, value=args[0])
        view = context.make_array(array)(context, builder, value=args[0])
        view.meminfo = cgutils.get_null_value(src.meminfo.type)
        view.parent = cgutils.get_null_value(src.parent.type)
        return view._getvalue()

    return array(array), codegen

"""Bit tricks for compiled task code: population count and lowest set bit on int64 words.

Set-based apps (MCE keeps P and X as bitsets) need these at machine speed;
Numba has no builtin for them, so they are LLVM intrinsics. Use int64 words
(not uint64): Numba promotes mixed signed/unsigned arithmetic to float.

>>> from numba import njit
>>> njit(lambda x: popcount(x))(0b1011)
3
"""

from numba import types
from numba.extending import intrinsic, register_jitable

__all__ = ["popcount", "lowest_bit", "pop_lowest"]


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

"""The layout of a matching plan's ``params`` (int64), shared by the CPU search
(:mod:`gthinker.apps.sm`), its GPU contexts (:mod:`gthinker.apps.sm_gpu`) and
gSWORD's trawling tasks: a header of values and offsets, then the arrays.

Header slots: ``H_NQ`` query vertices; ``H_CAP`` the most extensions one partial
match can have (a bound for per-level buffers); ``H_WORDS`` 64-bit words per
candidate bitmap; ``H_LIMITED`` 1 when the run stops at a limit; then
the offsets of the arrays: ``H_SRC_PTR``/``H_SRC`` (per position, where its
candidates come from), ``H_REUSE``, ``H_LESS_PTR``/``H_LESS`` and
``H_MORE_PTR``/``H_MORE`` (symmetry-breaking constraints), ``H_BITMAP``
(candidate bitmaps), ``H_BACK_PTR``/``H_BACK`` (backward neighbours of each
position) and ``H_ORDER`` (the matching order). ``HEADER`` is its length.
"""

H_NQ, H_CAP, H_WORDS, H_LIMITED = 0, 1, 2, 3
H_SRC_PTR, H_SRC, H_REUSE = 4, 5, 6
H_LESS_PTR, H_LESS, H_MORE_PTR, H_MORE, H_BITMAP = 7, 8, 9, 10, 11
H_BACK_PTR, H_BACK, H_ORDER = 12, 13, 14
HEADER = 15

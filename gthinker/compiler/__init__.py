"""The compile cache: what gthinker compiles with Numba (task entry points, CUDA
kernels, the apps' helper functions) is kept on disk per machine, so that a new
process loads machine code instead of compiling it again.

``@gthinker.compiler.jit(label, ...)`` compiles a helper function through it;
:func:`compile_seconds` says how long this process spent compiling. The rules of
the cache are in :mod:`gthinker.compiler.cache`, its files in
:mod:`gthinker.compiler.files`.
"""

from .cache import (
    ENV,
    CacheWarning,
    attach,
    cache_dir,
    clear,
    compile_seconds,
    compiling,
    fingerprint,
    jit,
    set_quiet,
)

__all__ = ["ENV", "CacheWarning", "attach", "cache_dir", "clear", "compile_seconds", "compiling",
           "fingerprint", "jit", "set_quiet"]

"""The GPU engines of the matching search, by name (``gpu_mode``, ``--gpu-mode``), and the
``gpu_memory`` option (``--gpu-memory``) of the apps that search on them.

A module of its own so that the command (which must stay light) and the engine
(:mod:`gthinker.apps.matching.dispatch`) read the one list (and the one option) without
importing each other.
"""

from __future__ import annotations

from gthinker.extending import option_field, positive_int

__all__ = ["DFS_MAX_QUERY", "GPU_MODES", "gpu_memory_field"]

#: The depth-first engine (:mod:`gthinker.apps.matching.dfs_gpu`), or the GPUContext apps
#: of :mod:`gthinker.apps.matching.levels_gpu` in their two record layouts; auto: dfs where
#: it takes the query.
GPU_MODES = ("auto", "dfs", "prefix", "expand")
#: Query vertices the depth-first engine takes (its per-warp state in shared memory).
DFS_MAX_QUERY = 32



def gpu_memory_field():
    """The ``gpu_memory`` option (``--gpu-memory BYTES``) of the apps whose GPU engines
    match in parts (:mod:`gthinker.apps.matching.partitions`), declared here once."""
    return option_field(
        None, "GPU memory the graph's copy may take (its CSR, labels and candidate bitmaps): "
        "a graph larger is matched in parts, the first vertices cut into ranges whose "
        "neighbourhoods (what the search from them reaches) fit, streamed through the device "
        "one after the other, the counts summed", positive_int, metavar="BYTES",
        default_text="the device's free memory less what the engines' working buffers take")

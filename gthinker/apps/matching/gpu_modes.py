"""The GPU engines of the matching search, by name (``gpu_mode``, ``--gpu-mode``).

A module of its own so that the command (which must stay light) and the engine
(:mod:`gthinker.apps.matching.dispatch`) read the one list without importing each other.
"""

from __future__ import annotations

__all__ = ["GPU_MODES", "check_layout"]

#: The depth-first engine (:mod:`gthinker.apps.sm.dfs_gpu`), or the GPUContext apps of
#: :mod:`gthinker.apps.sm.gpu` in their two record layouts; auto: dfs where it takes the
#: query.
GPU_MODES = ("auto", "dfs", "prefix", "expand")


def check_layout(gpu_mode: str) -> None:
    """ValueError unless ``gpu_mode`` names a GPU engine (or ``"auto"``)."""
    if gpu_mode not in GPU_MODES:
        raise ValueError(f"gpu_mode must be one of {', '.join(GPU_MODES)}, got {gpu_mode!r}")

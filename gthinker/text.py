"""Words of the command line's output that every app's text shares."""

from __future__ import annotations

__all__ = ["threads"]


def threads(n: int) -> str:
    """``"1 thread"``, ``"4 threads"``."""
    return f"{n} thread" if n == 1 else f"{n} threads"

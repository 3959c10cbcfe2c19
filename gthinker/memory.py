"""Host memory: what this process may still use, what it used at its peak, and the
check that refuses work that would not fit (a clear error, not the kernel's OOM
killer).

What the process may use is the smallest of: the system's available memory, the
room left under its address-space and data limits (``ulimit -v``, ``RLIMIT_AS`` /
``RLIMIT_DATA``) and the room left in its memory cgroup and every cgroup above it
(v2 ``memory.max`` less ``memory.current``, v1 ``memory.limit_in_bytes`` less
``memory.usage_in_bytes``: a container's limit)."""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

from gthinker.errors import GraphTooLargeError

__all__ = ["available_bytes", "cgroup_room", "check_fits", "describe", "limits",
           "is_exhaustion", "out_of_memory", "peak_rss_bytes", "rlimit_room"]

#: What a thread that could not start says (the core's std::system_error EAGAIN,
#: Python's threading): under a memory limit, its stack did not fit.
THREAD_FAILURES = ("Resource temporarily unavailable", "can't start new thread")


#: Seconds a reading of the available memory is reused (:func:`available_bytes`).
READING_SECONDS = 1.0
_reading = [float("-inf"), 0, ""]  # [when, bytes, what limits them]

#: Where the cgroup file systems are mounted, and the file naming this process's cgroups.
CGROUP_ROOT = Path("/sys/fs/cgroup")
CGROUP_MEMBERSHIP = Path("/proc/self/cgroup")
#: A cgroup limit at or above this is no limit (v1 writes 2**63 rounded down to a page).
UNLIMITED = 1 << 60
#: (limit file, usage file) of cgroup v2, then v1.
_CGROUP_FILES = (("memory.max", "memory.current"),
                 ("memory.limit_in_bytes", "memory.usage_in_bytes"))
#: The rlimits that bound what this process may allocate, with their ``/proc/self/statm``
#: field (pages in use) and the words naming them.
_RLIMITS = ((resource.RLIMIT_AS, 0, "address-space limit (ulimit -v)"),
            (resource.RLIMIT_DATA, 5, "data limit (ulimit -d)"))


def available_bytes() -> int:
    """Memory this process may still use now: the smallest of :func:`limits` (the
    system's available memory, rlimits, cgroups), read again at most every
    :data:`READING_SECONDS`: jobs of a millisecond spent a tenth of it reading
    /proc/meminfo (a job's spill limit goes by it)."""
    return _read()[1]


def _read() -> list:
    now = time.monotonic()
    if now - _reading[0] > READING_SECONDS:
        what, room = min(limits().items(), key=lambda kv: kv[1])
        _reading[:] = [now, room, what]
    return _reading


def limits() -> dict[str, int]:
    """Each bound on the memory this process may still use, in bytes, by name: the
    system's available memory (psutil's ``available``: free plus reclaimable caches),
    and the rlimits and cgroups that are set."""
    import psutil

    out = {"the system's available memory": int(psutil.virtual_memory().available)}
    out.update(rlimit_room())
    room = cgroup_room()
    if room is not None:
        out["the memory cgroup's limit"] = room
    return out


def rlimit_room(statm: Path = Path("/proc/self/statm")) -> dict[str, int]:
    """Room left under each rlimit that is set (limit less what this process has)."""
    out = {}
    try:
        pages = [int(x) for x in statm.read_text().split()]
    except (OSError, ValueError):
        return out
    for which, field, name in _RLIMITS:
        soft = resource.getrlimit(which)[0]
        if soft != resource.RLIM_INFINITY and field < len(pages):
            out[f"the process's {name}"] = max(0, soft - pages[field] * resource.getpagesize())
    return out


def cgroup_room(root: Path = CGROUP_ROOT, membership: Path = CGROUP_MEMBERSHIP) -> int | None:
    """Room left in this process's memory cgroup and those above it (the least of their
    limits less their usage), or None where no memory cgroup has a limit. ``root``,
    ``membership``: the cgroup mount and the membership file (tests pass fake ones)."""
    best = None
    for folder in _cgroup_folders(root, membership):
        for limit_file, usage_file in _CGROUP_FILES:
            limit, usage = _number(folder / limit_file), _number(folder / usage_file)
            if limit is not None and limit < UNLIMITED and usage is not None:
                room = max(0, limit - usage)
                best = room if best is None else min(best, room)
    return best


def _cgroup_folders(root: Path, membership: Path) -> set[Path]:
    """The memory cgroup folders of this process, each with those above it up to its
    mount (in a container the membership's path may not exist below the mount, whose
    top folder is then the container's own cgroup)."""
    try:
        lines = membership.read_text().splitlines()
    except OSError:
        return set()
    folders = set()
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers, path = parts[1], parts[2].strip().lstrip("/")
        if controllers == "":
            mounts = [root, root / "unified"]
        elif "memory" in controllers.split(","):
            mounts = [root / "memory"]
        else:
            continue
        for mount in mounts:
            folder = mount / path
            while True:
                folders.add(folder)
                if folder == mount or mount not in folder.parents:
                    break
                folder = folder.parent
    return folders


def _number(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if text == "max":
        return UNLIMITED
    try:
        return int(text)
    except ValueError:
        return None


def peak_rss_bytes() -> int:
    """This process's peak resident memory so far (``getrusage``)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def describe(nbytes: float) -> str:
    """``nbytes`` in words: 1.5 GiB, 300.0 MiB."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:.1f} {unit}"
    return f"{int(nbytes)} bytes"


def check_fits(nbytes: int, what: str) -> None:
    """Raises :class:`GraphTooLargeError` when ``nbytes`` more would not fit in the
    memory available now (``what`` names the data)."""
    if nbytes < (1 << 28):  # below 256 MiB: not worth asking
        return
    _, free, bound = _read()
    if nbytes > free:
        raise GraphTooLargeError(
            f"{what} need about {describe(nbytes)} of memory, but only {describe(free)} "
            f"is available (bound by {bound}); free memory, raise the limit, use a machine "
            "with more, or convert the graph once with `gthinker convert` on one that has "
            "it (a converted file is memory-mapped, not held twice)")


def is_exhaustion(exc: BaseException) -> bool:
    """Whether ``exc`` is an allocation that failed: a MemoryError (numpy's, the core's
    ``std::bad_alloc``) or a thread that could not start for want of memory."""
    return isinstance(exc, MemoryError) or (
        isinstance(exc, RuntimeError) and any(w in str(exc) for w in THREAD_FAILURES))


def out_of_memory(exc: BaseException) -> str:
    """The words for an allocation that failed (``exc``: numpy's MemoryError, or the
    core's ``std::bad_alloc``): what failed, what bounds this process's memory, and
    what to do."""
    detail = str(exc).strip()
    try:
        _reading[0] = float("-inf")  # read again: the failure is news
        _, free, bound = _read()
        room = f"; this process may use about {describe(free)} more, bound by {bound}"
    except Exception:  # noqa: BLE001 - too little memory left even to read the limits
        room = ""
    return (f"out of memory{f' ({detail})' if detail else ''}{room}: use a smaller graph or "
            "pattern, fewer threads, or raise the limit (ulimit -v, the container's memory)")

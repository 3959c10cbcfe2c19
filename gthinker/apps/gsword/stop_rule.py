"""When a gSWORD estimate stops drawing samples, and how its samples are split into
batches for that: all of them drawn, the 95% interval within a relative error
(``target_error``), or the time limit spent (``time_limit``). The rule is checked
after each batch; on the CPU the time limit also cuts off the batch in progress
(:class:`Deadline`; the first batch, small, is always finished). A stop token
(Ctrl-C) is the pipeline's own."""

from __future__ import annotations

import math
import threading
import time

from gthinker.stopping import StopToken

__all__ = ["DEFAULT_BATCHES", "Deadline", "StopRule", "Z95", "batch_sizes", "positive_finite"]

#: The normal quantile of a two-sided 95% interval (estimate +- Z95 standard errors).
Z95 = 1.96
#: Batches without a stopping rule (the trawling pipeline runs over them).
DEFAULT_BATCHES = 6
#: With a stopping rule and no ``batches`` given: the first batch has
#: ``samples / FIRST_SHARE`` samples (FIRST_MIN to FIRST_MAX; with a time limit, FIRST_MIN:
#: the first batch is never cut off, so it must be quick), each next one twice the
#: one before, up to ``samples / MAX_SHARE``: the rule is checked early and often,
#: and a stop overshoots by at most one batch.
FIRST_SHARE, FIRST_MIN, MAX_SHARE = 256, 1024, 8
#: The most samples of that first batch: after it the estimate weighs sampling on
#: against the exact count (with ``target_error``), so it must not take long.
FIRST_MAX = 1 << 16


def positive_finite(name, value) -> float:
    """The rule of ``target_error`` and ``time_limit``: a finite number > 0."""
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or value <= 0):
        raise ValueError(f"{name} must be a number > 0, got {value!r}")
    return float(value)


class StopRule:
    """``target_error``: stop once the 95% interval's half-width is at most this
    share of the estimate (a relative error, > 0; an estimate of 0 never stops
    it); ``time_limit``: stop once this many seconds have passed since the
    estimate began (> 0). Either may be None."""

    def __init__(self, target_error: float | None = None, time_limit: float | None = None):
        self.target_error = (None if target_error is None
                             else positive_finite("target_error", target_error))
        self.time_limit = None if time_limit is None else positive_finite("time_limit",
                                                                           time_limit)

    @property
    def active(self) -> bool:
        return self.target_error is not None or self.time_limit is not None

    def reason(self, estimate: float, stderr: float, elapsed: float) -> str | None:
        """Why sampling stops now ("target_error" or "time_limit"), or None."""
        if (self.target_error is not None and estimate > 0
                and Z95 * stderr <= self.target_error * estimate):
            return "target_error"
        if self.time_limit is not None and elapsed >= self.time_limit:
            return "time_limit"
        return None


def batch_sizes(samples: int, batches: int | None, rule: StopRule) -> list[int]:
    """Samples per batch: ``batches`` equal ones (default DEFAULT_BATCHES); with a
    stopping rule and ``batches`` None, growing ones (see FIRST_SHARE)."""
    if batches is not None or not rule.active:
        b = min(samples, DEFAULT_BATCHES if batches is None else batches)
        return [samples // b + (1 if i < samples % b else 0) for i in range(b)]
    size = FIRST_MIN if rule.time_limit is not None else max(
        FIRST_MIN, min(FIRST_MAX, samples // FIRST_SHARE))
    cap = max(size, samples // MAX_SHARE)
    sizes, left = [], samples
    while left > 0:
        sizes.append(min(size, left))
        left -= sizes[-1]
        size = min(2 * size, cap)
    return sizes


class Deadline:
    """A stop token set at ``when`` (a ``time.perf_counter()`` time) or once ``stop``
    (the caller's token, or None) is set: what cuts a batch off at the time limit.
    ``with Deadline(when, stop) as token: ...``; :attr:`expired` after it: the time
    ran out (not the caller's stop)."""

    def __init__(self, when: float, stop: StopToken | None):
        self.token = StopToken()
        self.caller = stop
        self.timer = threading.Timer(max(0.0, when - time.perf_counter()), self.token.set)
        self.timer.daemon = True

    def __enter__(self) -> StopToken:
        self.timer.start()
        if self.caller is not None:
            self.caller.attach(self)  # its set() reaches this token (see stop)
        return self.token

    def stop(self, _message: str) -> None:
        """The caller's token was set (StopToken calls its attached jobs' ``stop``)."""
        self.token.set()

    def __exit__(self, *exc) -> None:
        self.timer.cancel()
        if self.caller is not None:
            self.caller.detach(self)

    @property
    def expired(self) -> bool:
        return self.token.is_set() and not (self.caller is not None and self.caller.is_set())

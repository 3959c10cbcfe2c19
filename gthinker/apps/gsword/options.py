"""The options of ``gthinker gsword`` and :func:`gthinker.apps.gsword.estimate`, each
declared once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gthinker.extending import (
    AppOptions,
    boolean,
    mode_field,
    option_field,
    positive_int,
    seconds_or_off,
)
from gthinker.extending import (
    seed as seed_rule,
)

from ..matching.shared_options import ignore_labels_field
from .stop_rule import (
    DEFAULT_BATCHES,
    FIRST_MAX,
    FIRST_MIN,
    FIRST_SHARE,
    MAX_SHARE,
    positive_finite,
)

__all__ = ["CPU_TRAWL_WINDOW", "ESTIMATORS", "GSwordOptions", "MAX_SAMPLES", "MODES", "ORDERS",
           "SMALL_SAMPLES"]

#: Where gSWORD samples: all CPU cores, or the GPU.
MODES = ("cpu", "gpu")
#: The most samples one estimate takes (each batch keeps 16 bytes per ROUND samples).
MAX_SAMPLES = 2**34
#: The bundled estimators by name (:func:`gthinker.apps.gsword.estimators`).
ESTIMATORS = ("wj", "alley")
#: The matching orders by name: QuickSI's (infrequent edges first), or the sm app's.
ORDERS = ("quicksi", "sm")
#: In auto mode fewer samples than this are drawn on the CPU: starting the GPU
#: costs more than drawing them.
SMALL_SAMPLES = 100_000
#: On the CPU the trawled samples of a batch are enumerated for at least this many seconds.
CPU_TRAWL_WINDOW = 0.05


def _samples(name, value) -> int:
    return positive_int(name, value, MAX_SAMPLES)


def _estimator(name, value):
    """A bundled estimator's name, or an Estimator subclass (checked when it runs)."""
    if value in ESTIMATORS or isinstance(value, type):
        return value
    raise ValueError(f"{name} must be one of {', '.join(ESTIMATORS)}, or an Estimator "
                     f"subclass; got {value!r}")


_estimator.choices = ESTIMATORS


def _order(name, value):
    """An order's name, or the query vertices in the order to match them."""
    if value in ORDERS or (isinstance(value, Sequence) and not isinstance(value, str)):
        return value
    raise ValueError(f"{name} must be one of {', '.join(ORDERS)}, or a list of query "
                     f"vertices; got {value!r}")


_order.choices = ORDERS


@dataclass(frozen=True)
class GSwordOptions(AppOptions):
    """Every option of a gSWORD estimate."""

    mode: str = mode_field(MODES, f"gpu if a CUDA GPU is usable, else cpu (and cpu for "
                                  f"fewer than {SMALL_SAMPLES:,} samples)")
    estimator: str | type = option_field(
        "alley", "wj: WanderJoin (cheap samples, more of them die); alley: candidates refined "
        "by every matched neighbour", _estimator)
    samples: int = option_field(
        1_000_000, "samples to draw (with --target-error or --time-limit, the most to draw)",
        _samples, metavar="N")
    trawl: bool = option_field(
        True, "count the rest of some samples exactly on the CPU workers", boolean)
    batches: int | None = option_field(
        None, "batches the samples are split into: trawling runs over them, and the stopping "
        "rule is checked after each", positive_int, metavar="N",
        default_text=f"{DEFAULT_BATCHES} when trawling, else 1; with --target-error or "
                     f"--time-limit, batches that double from 1/{FIRST_SHARE} of --samples "
                     f"({FIRST_MIN:,} to {FIRST_MAX:,}; {FIRST_MIN:,} with --time-limit) up "
                     f"to 1/{MAX_SHARE}")
    target_error: float | None = option_field(
        None, "stop once the 95% interval is within REL of the estimate (0.01: 1%), checked "
        "after each batch; where the plan's cost model puts the exact count below the time "
        "the samples would take (unlabeled graphs), it counts exactly instead and says so",
        positive_finite, metavar="REL", default_text="draw them all")
    exact_if_cheaper: bool = option_field(
        True, "with --target-error, count exactly where the plan's cost model puts that below "
        "the time the samples would take to reach the target (unlabeled graphs)", boolean)
    time_limit: float | None = option_field(
        None, "stop drawing batches once this many seconds have passed since the estimate "
        "began: on the CPU the batch in progress is cut off and left out (the first, small "
        "one is finished), on the GPU it is checked after each batch",
        positive_finite, metavar="SECONDS", default_text="no limit")
    seed: int = option_field(0, "random seed: the same seed, data, query and options give the "
                                "same estimate", seed_rule, metavar="S")
    order: str = option_field(
        "quicksi", "matching order: QuickSI's (infrequent edges first) or the sm app's", _order)
    inheritance: bool = option_field(True, "GPU sample inheritance", boolean)
    streaming: bool = option_field(True, "GPU warp streaming", boolean)
    trawl_samples: int = option_field(
        4096, "samples per batch that stop early to be counted exactly on the CPU workers "
        "(the last batch has none)", positive_int, metavar="N")
    trawl_window: float | None = option_field(
        None, "seconds the CPU workers may enumerate a batch's trawled samples (given: the GPU "
        "also waits this long at least)", seconds_or_off, metavar="SECONDS",
        default_text=f"on the GPU, the time it takes to sample the next batch; on the CPU, "
                     f"the time the batch took, at least {CPU_TRAWL_WINDOW} s")
    cutoff_walks: int = option_field(
        16, "walks from a trawled sample's prefix whose mean stands for its matches when its "
        "enumeration is cut off", positive_int, metavar="N")
    name: str | None = option_field(
        None, "the query's name in the result", lambda name, v: str(v), flag=False,
        default_text="the pattern's name, or 'query'")
    ignore_labels: bool = ignore_labels_field()

    scheduler = ("threads", "gpus")
    notes = {"gpus": "each batch's rounds shared evenly among them, the same estimate"}
    forwards = False
    renamed = {"time_budget": "time_limit (the most seconds the estimate samples for)"}

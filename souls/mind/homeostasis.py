"""Homeostasis (DESIGN §3.7): intrinsic motivation as set-point regulation.

Every ``check_every_minutes`` the soul actor measures three drives, each in [0, 1]:

==========  ============================================================================
drive       value
==========  ============================================================================
engaged     ``min(1, events in the last day / active_events_per_day)``
curious     mean recent surprise (novelty of recent events); 0 when there is none
balanced    ``1 - |positive - negative| / (positive + negative)`` over the somatic
            marker totals; 1 when both are 0
==========  ============================================================================

Each targeted drive should reach ``level``. The distance is the root-mean-square of the
shortfalls ``max(0, level - value)`` divided by ``level``: 0 when every target is met,
1 when every targeted drive is 0. Above ``nudge_threshold`` the soul gets one sentence,
about its largest shortfall, as ``INTERNAL SIGNAL`` in its next context.

Pure and deterministic: no clock, no I/O; the actor passes in what it measured.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, get_args

import msgspec

__all__ = [
    "Drive",
    "Drives",
    "HomeostasisConfig",
    "Signal",
    "check",
    "distance",
    "measure",
    "nudge",
]

Drive = Literal["engaged", "curious", "balanced"]
_DRIVES: tuple[str, ...] = get_args(Drive)


class HomeostasisConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # The drives regulated, in order of precedence when two fall equally short; an empty
    # list turns the nudges off.
    target: list[Drive] = msgspec.field(default_factory=lambda: ["engaged", "curious", "balanced"])
    # The set point every targeted drive should reach, within (0, 1].
    level: float = 0.6
    # A distance above this produces a nudge.
    nudge_threshold: float = 0.35
    # Events in the last day that count as fully engaged.
    active_events_per_day: int = 20
    # How often the soul actor checks, in minutes.
    check_every_minutes: float = 15

    def __post_init__(self) -> None:
        unknown = [name for name in self.target if name not in _DRIVES]
        if unknown:
            raise ValueError(f"target: unknown drives {unknown}; known: {', '.join(_DRIVES)}")
        if len(set(self.target)) != len(self.target):
            raise ValueError("target must not name a drive twice")
        if not 0 < self.level <= 1:
            raise ValueError("level must be within (0, 1]")
        if not 0 <= self.nudge_threshold <= 1:
            raise ValueError("nudge_threshold must be within [0, 1]")
        if self.active_events_per_day < 1:
            raise ValueError("active_events_per_day must be at least 1")
        if not self.check_every_minutes > 0:
            raise ValueError("check_every_minutes must be > 0")


class Drives(msgspec.Struct, frozen=True, kw_only=True):
    """The measured drives, each within [0, 1]."""

    engaged: float
    curious: float
    balanced: float
    # Which way an imbalance leans, within [-1, 1]: (positive - negative) / total, 0 when
    # both are 0. ``balanced == 1 - |lean|`` when measured; it picks the balanced nudge.
    lean: float = 0.0


class Signal(msgspec.Struct, frozen=True, kw_only=True):
    """One check: how far from the set point, the drives, and the nudge (None: no nudge)."""

    distance: float
    drives: Drives
    sentence: str | None


def _unit(value: float) -> float:
    return min(1.0, max(0.0, value))


def measure(
    events_last_day: int,
    recent_surprise: Sequence[float],
    positive: float,
    negative: float,
    config: HomeostasisConfig,
) -> Drives:
    """The drives from what the actor counted (see the module table); values rounded to
    4 decimals. Surprise values are clamped to [0, 1]."""
    if events_last_day < 0:
        raise ValueError("events_last_day must be >= 0")
    if not (positive >= 0 and negative >= 0) or math.isinf(positive) or math.isinf(negative):
        raise ValueError("positive and negative must be finite numbers >= 0")
    engaged = min(1.0, events_last_day / config.active_events_per_day)
    surprises = [_unit(s) for s in recent_surprise if not math.isnan(s)]
    curious = math.fsum(surprises) / len(surprises) if surprises else 0.0
    total = positive + negative
    lean = (positive - negative) / total if total > 0 else 0.0
    return Drives(
        engaged=round(engaged, 4),
        curious=round(_unit(curious), 4),
        balanced=round(_unit(1 - abs(lean)), 4),
        lean=round(max(-1.0, min(1.0, lean)), 4),
    )


def _shortfalls(drives: Drives, config: HomeostasisConfig) -> list[tuple[Drive, float]]:
    values: dict[Drive, float] = {
        "engaged": drives.engaged,
        "curious": drives.curious,
        "balanced": drives.balanced,
    }
    return [(name, max(0.0, config.level - _unit(values[name]))) for name in config.target]


def distance(drives: Drives, config: HomeostasisConfig) -> float:
    """How far the drives are from the set point, within [0, 1], rounded to 4 decimals;
    0 when nothing is targeted."""
    shortfalls = [gap for _, gap in _shortfalls(drives, config)]
    if not shortfalls:
        return 0.0
    rms = math.sqrt(math.fsum(gap * gap for gap in shortfalls) / len(shortfalls))
    return round(_unit(rms / config.level), 4)


_NUDGES: dict[str, str] = {
    "engaged": "It has been quiet for a while: reach out or pick up an open task.",
    "curious": "Things have felt routine: look for something you have not explored yet.",
    "negative": (
        "Recent experience leans heavily negative: slow down and double-check before acting."
    ),
    "positive": (
        "Recent experience leans heavily positive: look for what might be going wrong unnoticed."
    ),
}


def nudge(drives: Drives, config: HomeostasisConfig) -> str | None:
    """One sentence about the largest shortfall (ties: ``target`` order), or None when
    the distance is at most ``nudge_threshold``. For ``balanced`` the sentence follows
    ``lean``: positive when it is above 0, negative otherwise (the cautious one)."""
    if distance(drives, config) <= config.nudge_threshold:
        return None
    # max keeps the first of equal shortfalls, so ties go to the earlier target.
    name, _ = max(_shortfalls(drives, config), key=lambda item: item[1])
    if name == "balanced":
        return _NUDGES["positive" if drives.lean > 0 else "negative"]
    return _NUDGES[name]


def check(
    events_last_day: int,
    recent_surprise: Sequence[float],
    positive: float,
    negative: float,
    config: HomeostasisConfig,
) -> Signal:
    """``measure``, ``distance`` and ``nudge`` in one call."""
    drives = measure(events_last_day, recent_surprise, positive, negative, config)
    return Signal(distance=distance(drives, config), drives=drives, sentence=nudge(drives, config))

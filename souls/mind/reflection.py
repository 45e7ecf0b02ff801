"""When and how a soul reflects: the counters that trigger it and its numbers.

Reflect runs at once when an observation's novelty passes the surprise threshold (no
count-based cooldown; the only brake is the time-based storm guard of
:class:`~souls.intake.surprise.SurpriseConfig`), and otherwise every ``reflect.every``
observations. The summary only changes at reflect, so the prompt prefix stays
byte-identical in between.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import msgspec

from souls.intake.surprise import SurpriseConfig

__all__ = ["ReflectClock", "ReflectConfig"]


class ReflectConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Reflect after this many observations even when nothing surprised the soul.
    every: int = 20
    # Character budget of the consolidated summary (MEMORY.md).
    budget: int = 4000
    # Character budget of the weekly summary (WEEKLY.md).
    weekly_budget: int = 4000
    # Most observations one reflect reads; when more arrived since the last one (a
    # flood), the most salient and surprising win - the ones a summary keeps anyway.
    max_observations: int = 400
    # While the soul is busy (turns of busy_turn messages on average lately, or mail waiting),
    # a periodic reflect waits for a quieter turn, but never past max_deferral
    # observations. Surprise never waits.
    max_deferral: int = 2000
    busy_turn: int = 64
    # "auto": the LLM reflector when [llm] base_url is set, else the extractive one.
    reflector: Literal["auto", "extractive", "llm"] = "auto"

    def __post_init__(self) -> None:
        if self.every < 1 or self.budget < 200 or self.weekly_budget < 200:
            raise ValueError("every must be >= 1 and budgets >= 200 characters")
        if self.max_observations < 1 or self.max_deferral < 0 or self.busy_turn < 1:
            raise ValueError("max_observations, busy_turn must be >= 1, max_deferral >= 0")


@dataclass(slots=True)
class ReflectClock:
    """Observation counters since the last reflect, and the storm guard's memory: when
    the latest surprise reflects were triggered (soul clock, oldest first) and whether
    it holds a surprise back."""

    since: int = 0
    last_memory: int = 0
    surprises: list[float] = field(default_factory=list)
    held: bool = False

    def observe(
        self,
        surprise: float,
        now: float,
        config: ReflectConfig,
        surprise_config: SurpriseConfig,
        *,
        triggered: bool = False,
    ) -> str | None:
        """Count one stored observation (at ``now``); the reason to reflect now, if any.
        ``triggered``: an earlier event of the same turn makes the soul reflect already
        (that reflect folds this one in), so this one only counts."""
        self.since += 1
        if triggered:
            self.held = False
            return None
        if surprise > surprise_config.threshold or self.held:
            if self._storm_allows(now, surprise_config):
                self.held = False
                self.surprises.append(now)
                return "surprise"
            self.held = True
        if self.since >= config.every:
            return "periodic"
        return None

    def _storm_allows(self, now: float, config: SurpriseConfig) -> bool:
        if config.storm_reflects == 0:
            return True
        cutoff = now - config.storm_window
        self.surprises = [t for t in self.surprises if t > cutoff][-config.storm_reflects :]
        return len(self.surprises) < config.storm_reflects

    def reflected(self, reason: str, last_memory: int) -> None:
        """A reflect (for ``reason``) folded everything up to ``last_memory`` in,
        whatever surprise the storm guard held back too."""
        self.since = 0
        self.last_memory = last_memory
        self.held = False

    def to_state(self) -> dict[str, str]:
        return {
            "reflect.since": str(self.since),
            "reflect.last_memory": str(self.last_memory),
            "reflect.surprises": " ".join(map(repr, self.surprises)),
            "reflect.held": "1" if self.held else "0",
        }

    @classmethod
    def from_state(cls, state: dict[str, str]) -> ReflectClock:
        """The clock as ``to_state`` saved it (keys it does not know are ignored, such as
        the ``reflect.since_surprise`` of the count-based cooldown it replaces)."""
        clock = cls()
        clock.since = int(state.get("reflect.since", clock.since))
        clock.last_memory = int(state.get("reflect.last_memory", clock.last_memory))
        clock.surprises = [float(t) for t in state.get("reflect.surprises", "").split()]
        clock.held = state.get("reflect.held") == "1"
        return clock

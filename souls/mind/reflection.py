"""When and how a soul reflects: the counters that trigger it and its numbers.

Reflect runs at once when an observation's novelty passes the surprise threshold
(at most once per ``surprise.cooldown`` observations), and otherwise every
``reflect.every`` observations. The summary only changes at reflect, so the prompt
prefix stays byte-identical in between.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    """Observation counters since the last reflect and the last surprise reflect."""

    since: int = 0
    since_surprise: int = 1_000_000_000
    last_memory: int = 0

    def observe(
        self, surprise: float, config: ReflectConfig, surprise_config: SurpriseConfig
    ) -> str | None:
        """Count one stored observation; the reason to reflect now, if any."""
        self.since += 1
        self.since_surprise += 1
        if surprise > surprise_config.threshold and self.since_surprise > surprise_config.cooldown:
            return "surprise"
        if self.since >= config.every:
            return "periodic"
        return None

    def reflected(self, reason: str, last_memory: int) -> None:
        self.since = 0
        self.last_memory = last_memory
        if reason == "surprise":
            self.since_surprise = 0

    def to_state(self) -> dict[str, str]:
        return {
            "reflect.since": str(self.since),
            "reflect.since_surprise": str(self.since_surprise),
            "reflect.last_memory": str(self.last_memory),
        }

    @classmethod
    def from_state(cls, state: dict[str, str]) -> ReflectClock:
        clock = cls()
        clock.since = int(state.get("reflect.since", clock.since))
        clock.since_surprise = int(state.get("reflect.since_surprise", clock.since_surprise))
        clock.last_memory = int(state.get("reflect.last_memory", clock.last_memory))
        return clock

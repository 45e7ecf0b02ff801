"""Cues: what in a recall query points at who said a memory and when, besides its words.

A query that names a speaker ("What did Caroline research?") prefers what that person
said, whichever of their accounts they wrote from; one that names a date or a period
("on 8 May 2023", "last week", see :mod:`souls.recall.dates`) prefers memories from then.
A cue multiplies a memory's BM25 score by a factor; it never brings in a memory that
matched none of the query's words. Each factor says why, for explanations.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from souls.recall.dates import Span, spans
from souls.store.interface import SoulStore
from souls.store.store import Origin
from souls.text.tokenize import query_terms

__all__ = ["Boosts", "Cues", "Factors", "weigh", "weigh_one"]


@dataclass(frozen=True, slots=True)
class Boosts:
    """How much each cue raises a score: the factor is 1 + the boost."""

    speaker: float
    date: float  # a day the query names
    period: float  # a week or month it names

    def of(self, span: Span) -> float:
        return self.date if span.grain == "day" else self.period


@dataclass(frozen=True, slots=True)
class Cues:
    named: frozenset[str] = frozenset()  # senders and persons the query names
    spans: tuple[Span, ...] = ()  # dates and periods it names

    def __bool__(self) -> bool:
        return bool(self.named or self.spans)

    def most(self, boosts: Boosts) -> float:
        """The largest factor these cues can give a memory."""
        speaker = 1 + boosts.speaker if self.named else 1.0
        return speaker * (1 + max((boosts.of(span) for span in self.spans), default=0.0))

    @classmethod
    async def read(cls, store: SoulStore, query: str, terms: Sequence[str], now: float) -> Cues:
        """The cues of ``query`` (whose recall ``terms`` are given), dates counted
        from ``now``."""
        wanted = set(terms)
        names = frozenset(name for name in await store.speakers() if _name_terms(name) & wanted)
        return cls(names, tuple(spans(query, now)))


@dataclass(slots=True)
class Factors:
    """How a memory's score is made: ``bm25 * speaker * time``, and why."""

    bm25: float = 0.0
    speaker: float = 1.0
    time: float = 1.0
    reasons: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return self.bm25 * self.speaker * self.time


async def weigh(store: SoulStore, cues: Cues, boosts: Boosts, factors: dict[int, Factors]) -> None:
    """Set the cue factors of the memories in ``factors``: said by someone the query
    names, or from a time it names (the largest time factor applies)."""
    for memory_id, origin in (await store.origins(list(factors))).items():
        weigh_one(cues, boosts, factors[memory_id], origin)


def weigh_one(cues: Cues, boosts: Boosts, these: Factors, origin: Origin) -> None:
    """:func:`weigh` for one memory whose origin is at hand."""
    speaker = next((n for n in (origin.person, origin.sender) if n in cues.named), None)
    if speaker is not None:
        these.speaker = 1 + boosts.speaker
        these.reasons.append(f"said by {speaker}, whom the query names")
    holding = [span for span in cues.spans if span.holds(origin.ts)]
    best = max(holding, key=boosts.of, default=None)
    if best is not None:
        these.time = 1 + boosts.of(best)
        day = datetime.fromtimestamp(origin.ts, UTC).date().isoformat()
        these.reasons.append(f"from {day}, within {best.text!r} in the query")


@functools.lru_cache(maxsize=4096)
def _name_terms(name: str) -> frozenset[str]:
    return frozenset(query_terms(name))

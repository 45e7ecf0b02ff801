"""Surfacing: when each item last surfaced in a context — what rarity S counts from.

Rarity (DESIGN §3.5; seed 002: unseen for long, worth more once it surfaces) is the
time since an item last *surfaced*, that is, was injected into a context; an item never
injected counts from when it came to be (recorded, opened, stored). Being injected
resets it, so emergence rotates: what one context showed gives way in the next to what
has waited longest, and after a session budget pause what was injected before it
weighs little against what was not.

Items are named by their labels as a context shows them (``m12``, ``c5``, ``g3``,
``q2``, ``t7``: :func:`souls.recall.context.label`). :class:`Surfacings` is the soul's
map of them, read once from the ``surfaced`` table and kept current by the contexts it
assembles; the table is written with each context's assembly row.

Invariants a caller may rely on:

- Rarity counts from ``max(since, last surfaced)``
  (:func:`souls.recall.assembly.rarity_clock`) for every contender of a context, the
  entry shortlist's too, so both compute Φ to the bit.
- Times only move forward: marking an item with an earlier time than it has keeps the
  later one.
- The items of one context surface in the order it shows them, a millisecond apart,
  the last at ``now``: of items that surfaced together, the weakest of them there is
  the first to give way. (Were they all marked ``now``, a filler — the item that
  completed a context — would tie with the items it joined and, winning ties by id,
  come back every time.)
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

import msgspec

from souls.recall.assembly import Contender, age_days
from souls.recall.context import label
from souls.store.interface import SoulStore

__all__ = ["Surfacings", "resting"]

# Seconds between the surfacing times of two items shown one after the other.
_STEP = 1e-3
# Of the oldest memories never shown, how many a context with no query weighs by
# salience to offer ``limit`` of them: the most salient of the oldest come back first.
_POOL = 4


async def resting(store: SoulStore, surfacings: Surfacings, limit: int) -> list[int]:
    """The memories a context with no query can bring back (DESIGN §3.5: rarity), by id:
    the most salient of the oldest observations never shown in a context, and those
    shown longest ago — ``limit`` of each at most, for Φ to rank (rarity counts from
    when each was stored or last surfaced). Reads a bounded prefix of the memories in
    id order: each context shows a few, so the walk moves on."""
    if limit <= 0:
        return []
    rows = await store.unsurfaced(limit * _POOL)
    fresh = sorted(rows, key=lambda row: (-row[1], row[0]))[:limit]
    shown = heapq.nsmallest(limit, surfacings.with_letter("m").items(), key=lambda p: (p[1], p[0]))
    return [memory_id for memory_id, _ in fresh] + [memory_id for memory_id, _ in shown]


class Surfacings:
    """When each item (by label) last surfaced in a context. Owned by one soul."""

    def __init__(self, rows: Iterable[tuple[str, float]] = ()) -> None:
        self._at: dict[str, float] = {}
        for item, at in rows:
            self._mark(item, float(at))

    @classmethod
    async def read(cls, store: SoulStore) -> Surfacings:
        return cls(await store.surfaced())

    def __len__(self) -> int:
        return len(self._at)

    def at(self, item: str) -> float | None:
        """When ``item`` last surfaced; None when it never did."""
        return self._at.get(item)

    def with_letter(self, letter: str) -> dict[int, float]:
        """Id → when it last surfaced, for the items whose labels start with
        ``letter`` (``c``: claims and commitments)."""
        found = {}
        for item, at in self._at.items():
            if item[:1] == letter and item[1:].isdigit():
                found[int(item[1:])] = at
        return found

    def mark(self, items: Sequence[str], now: float) -> dict[str, float]:
        """``items``, in the order a context showed them, surfaced at ``now`` (the last
        at ``now``, each before it a step earlier): what changed, to be written (label →
        time)."""
        changed = {}
        for position, item in enumerate(items):
            at = now - (len(items) - 1 - position) * _STEP
            if self._mark(item, at):
                changed[item] = at
        return changed

    def _mark(self, item: str, at: float) -> bool:
        if self._at.get(item, at - 1.0) >= at:
            return False
        self._at[item] = at
        return True

    def rarity_from(self, contenders: Sequence[Contender], now: float) -> list[Contender]:
        """``contenders`` with rarity counted from when each last surfaced, where that
        is later than what they count from already (their ``unsurfaced_days``)."""
        out = []
        for contender in contenders:
            item, scored = contender.item, contender.scored
            at = self._at.get(label(item.kind, item.id))
            if at is not None:
                days = age_days(at, now)
                if days < scored.unsurfaced_days:
                    scored = msgspec.structs.replace(scored, unsurfaced_days=days)
                    contender = Contender(item, scored)
            out.append(contender)
        return out

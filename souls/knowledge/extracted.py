"""A model's reading of one stored event, written (DESIGN §3.10): its claims through the
merge algebra against the claims of their slots, like the rules', and its unspoken
items, in one transaction through the store interface (``SoulStore.knowledge``), on
either backend. souls/actor/extraction.py calls it, in the soul's turn.

The merge reads each subject's claims once, before anything is written, and keeps
what the reading's earlier candidates insert and close in that working copy: a later
candidate of the same event sees them as a read inside the write would. The rows are
then written together, the claims under the ids the soul hands out (one more than the
largest, as SQLite would give them: the soul is the only writer of its claims).
"""

from __future__ import annotations

from dataclasses import dataclass

from souls.knowledge.claim_llm import Reading
from souls.knowledge.claims import SLOTS, ClaimRow, ClaimUpdate, merge, related_slots, updated
from souls.knowledge.entries import Claim, Entries
from souls.store.changes import ClaimClosing
from souls.store.interface import SoulStore
from souls.store.knowledge import UnspokenRow

__all__ = ["Stored", "store_reading"]


@dataclass(frozen=True, slots=True)
class Stored:
    """What a reading added: the claims as stored, how many candidates merge found
    already known (``duplicates``), how many unspoken items were new."""

    claims: list[Claim]
    duplicates: int
    unspoken: int


async def store_reading(
    store: SoulStore, entries: Entries, event_id: int, ts: float, reading: Reading, now: float
) -> Stored | None:
    """Store what ``reading`` (of event ``event_id``, said at ``ts``) let through, at
    ``now``, and bring ``entries``' view up to date; None, with nothing written, when
    the event is gone (forgotten meanwhile: nothing of it is kept)."""
    wanted: dict[str, set[str]] = {}
    for candidate in reading.claims:
        wanted.setdefault(candidate.subject, set()).update(related_slots(candidate.slot))
    held: dict[str, list[ClaimRow]] = {}
    written: list[Claim] = []
    updates: list[ClaimUpdate] = []
    next_id = 0
    for candidate in reading.claims:
        subject = candidate.subject
        if subject not in held:
            held[subject] = await entries.slot_rows(subject, sorted(wanted[subject]))
        slots = related_slots(candidate.slot)
        rows = [row for row in held[subject] if row.slot in slots]
        told = ts if candidate.when is None else candidate.when
        plan = merge(rows, candidate, event_id=event_id, valid_from=told, now=now)
        new: list[ClaimRow] = []
        if plan.insert_state is not None:
            if not next_id:
                next_id = await store.knowledge.next_id("claims")
            since = plan.insert_valid_from
            row = ClaimRow(
                next_id, subject, candidate.slot, candidate.value, candidate.quote, event_id,
                "llm", plan.insert_confidence or candidate.confidence, plan.insert_state,
                told if since is None else since, plan.insert_valid_to, now,
                plan.insert_recorded_to, candidate.due,
            )  # fmt: skip
            next_id += 1
            new.append(row)
            written.append(_claim(row))
        held[subject] = [updated(row, plan.updates) for row in held[subject]] + new
        updates += plan.updates
    fresh = entries.view.writing()
    kept = await store.knowledge.write_extracted(
        event_id,
        written,
        [ClaimClosing(u.id, u.state, u.valid_to, u.recorded_to) for u in updates],
        [UnspokenRow(u.id, event_id, u.subject, u.sentence, now) for u in reading.unspoken],
    )
    if kept is None:
        entries.view.apply([], [], fresh=fresh)  # nothing was written
        return None
    entries.view.apply(written, updates, fresh=fresh)
    return Stored(written, len(reading.claims) - len(written), kept)


def _claim(row: ClaimRow) -> Claim:
    """``row`` as the claims table stores it: of its slot's type, replacing nothing."""
    return Claim(
        row.id, SLOTS[row.slot].type, row.subject, row.slot, row.value, row.quote,
        row.event_id, row.source, row.confidence, row.state, row.valid_from, row.valid_to,
        row.recorded_from, row.recorded_to, row.due, None,
    )  # fmt: skip

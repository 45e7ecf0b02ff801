"""Claims on PostgreSQL, as far as recall reads them: the rows a turn's
:class:`~souls.store.changes.Changes` stores and closes (as
:func:`~souls.store.changes.write_changes` does on SQLite), which memories stated a
fact a later claim superseded (:func:`successors`, the ``superseded`` flag of hits and
candidates) and which state a fact in force (:func:`stating`). The same statements as
:class:`souls.store.store.Store`'s, each row under its soul."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from souls.store.changes import CLAIM_COLUMNS, Changes
from souls.store.store import Successor

__all__ = ["SUPERSEDED", "stating", "successors", "write"]

# Whether memory m's event stated a fact that a later claim superseded.
SUPERSEDED = (
    "EXISTS (SELECT 1 FROM claims AS sc WHERE sc.soul = m.soul AND sc.event_id = m.event_id"
    " AND sc.state = 'superseded')"
)

_TYPES = (
    "bigint", "text", "text", "text", "text", "text", "bigint", "text", "text", "text",
    "float8", "float8", "float8", "float8", "float8", "bigint",
)  # fmt: skip
_NAMES = [name.strip() for name in CLAIM_COLUMNS.split(",")]


async def write(
    db: asyncpg.Connection, soul: int, changes: Changes, event_ids: Sequence[int]
) -> None:
    """Store the claims of ``changes`` (their negative event ids resolved against
    ``event_ids``, those of the same append), then close its closings."""
    if changes.claims:
        rows = [c.sourced(event_ids) for c in changes.claims]
        arrays = ", ".join(f"${n}::{kind}[]" for n, kind in enumerate(_TYPES, start=2))
        await db.execute(
            f"INSERT INTO claims (soul, {CLAIM_COLUMNS}) SELECT $1, * FROM unnest({arrays})",
            soul,
            *([getattr(row, name) for row in rows] for name in _NAMES),
        )
    if changes.closings:
        await db.executemany(
            "UPDATE claims SET state = $3, valid_to = coalesce($4, valid_to),"
            " recorded_to = coalesce($5, recorded_to) WHERE soul = $1 AND id = $2",
            [(soul, c.id, c.state, c.valid_to, c.recorded_to) for c in changes.closings],
        )


async def successors(
    db: asyncpg.Connection, soul: int, memory_ids: Sequence[int]
) -> dict[int, Successor]:
    """:meth:`souls.store.store.Store.successors` on PostgreSQL: for each memory whose
    event stated a fact a later claim of the same subject and slot superseded (and not
    the fact in force too), the visible memory of the superseding claim's event, the
    newest claim's when several did."""
    if not memory_ids:
        return {}
    rows = await db.fetch(
        """
        SELECT m.id, n.id, old.slot, old.value, new.value
        FROM memories AS m
        JOIN claims AS old ON old.soul = m.soul AND old.event_id = m.event_id
            AND old.state = 'superseded'
        JOIN claims AS new ON new.soul = old.soul AND new.subject = old.subject
            AND new.slot = old.slot AND new.state = 'active' AND new.event_id IS NOT NULL
            AND new.event_id <> old.event_id AND new.value <> old.value
        JOIN memories AS n ON n.soul = new.soul AND n.event_id = new.event_id
            AND n.hidden_at IS NULL
        WHERE m.soul = $1 AND m.id = ANY($2::bigint[])
            AND NOT EXISTS (SELECT 1 FROM claims AS kept WHERE kept.soul = m.soul
                            AND kept.event_id = m.event_id AND kept.state = 'active'
                            AND kept.slot = old.slot AND kept.subject = old.subject)
        ORDER BY new.recorded_from, new.id
        """,
        soul,
        list(memory_ids),
    )
    found: dict[int, Successor] = {}
    for old_id, new_id, slot, was, now in rows:
        found[int(old_id)] = Successor(int(new_id), f"{slot}: {was} → {now}")
    return found


async def stating(db: asyncpg.Connection, soul: int, slots: Sequence[str], limit: int) -> list[int]:
    """:meth:`souls.store.store.Store.stating` on PostgreSQL: the visible memories whose
    events stated a fact in force of one of ``slots``, the latest stated first."""
    if not slots or limit <= 0:
        return []
    rows = await db.fetch(
        """
        SELECT m.id FROM claims AS c
        JOIN memories AS m ON m.soul = c.soul AND m.event_id = c.event_id
            AND m.hidden_at IS NULL
        WHERE c.soul = $1 AND c.slot = ANY($2::text[]) AND c.state = 'active'
        GROUP BY m.id ORDER BY max(c.recorded_from) DESC, m.id DESC LIMIT $3
        """,
        soul,
        list(slots),
        limit,
    )
    return [int(r[0]) for r in rows]

"""Memories read by id on SQLite, as ``memory.get``, ``memory.list`` and ``memory.update``
read them: a page of memories (newest first, below a cursor, within a recall's scope),
one memory with the event it came from, and what that event said of itself.
:mod:`souls.store.postgres.pages` reads the same on PostgreSQL."""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from souls.results import MemoryItem
from souls.store.scope import Scope

__all__ = ["StoredEvent", "event", "first_memory", "item", "page"]

# A MemoryItem's fields, in order, from memories AS m LEFT JOIN events AS e.
_COLUMNS = (
    "m.id, m.kind, m.text, m.salience, m.created, m.recalls, m.last_recalled, m.hidden_at,"
    " m.event_id, e.ref, e.sender, e.session, e.channel, e.ts"
)


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """What a stored event said of itself besides its text (a correction keeps it)."""

    kind: str
    channel: str | None
    sender: str | None
    group: str | None
    mentioned: bool
    session: str | None
    ts: float


async def page(
    db: aiosqlite.Connection, scope: Scope | None, before: int | None, limit: int
) -> list[MemoryItem]:
    """Up to ``limit`` memories within ``scope`` with an id below ``before``, newest first."""
    conditions: list[str] = []
    args: list[object] = []
    if scope:
        within, args = scope.sql()
        conditions.append(f"m.id IN ({within})")
    if before is not None:
        conditions.append("m.id < ?")
        args.append(before)
    sql = (
        f"SELECT {_COLUMNS} FROM memories AS m LEFT JOIN events AS e ON e.id = m.event_id"
        f" WHERE {' AND '.join(conditions) or '1'} ORDER BY m.id DESC LIMIT ?"
    )
    return [MemoryItem(*row) for row in await db.execute_fetchall(sql, [*args, limit])]


async def item(db: aiosqlite.Connection, memory_id: int) -> MemoryItem | None:
    rows = await db.execute_fetchall(
        f"SELECT {_COLUMNS} FROM memories AS m LEFT JOIN events AS e ON e.id = m.event_id"
        " WHERE m.id = ?",
        (memory_id,),
    )
    return MemoryItem(*next(iter(rows))) if rows else None


async def event(db: aiosqlite.Connection, event_id: int) -> StoredEvent | None:
    rows = await db.execute_fetchall(
        "SELECT kind, channel, sender, grp, mentioned, session, ts FROM events WHERE id = ?",
        (event_id,),
    )
    if not rows:
        return None
    kind, channel, sender, group, mentioned, session, ts = next(iter(rows))
    return StoredEvent(kind, channel, sender, group, bool(mentioned), session, ts)


async def first_memory(db: aiosqlite.Connection, event_id: int) -> int | None:
    """The first memory of event ``event_id`` (its observation), None when it has none."""
    rows = await db.execute_fetchall(
        "SELECT id FROM memories WHERE event_id = ? ORDER BY id LIMIT 1", (event_id,)
    )
    return int(next(iter(rows))[0]) if rows else None

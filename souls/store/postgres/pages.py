"""Memories read by id on PostgreSQL, as :mod:`souls.store.pages` reads them on SQLite."""

from __future__ import annotations

import asyncpg

from souls.results import MemoryItem
from souls.store.pages import StoredEvent
from souls.store.postgres.scope import scope_sql
from souls.store.scope import Scope

__all__ = ["event", "first_memory", "item", "page"]

_FROM = (
    "SELECT m.id, m.kind, m.text, m.salience, m.created, m.recalls, m.last_recalled,"
    " m.hidden_at, m.event_id, e.ref, e.sender, e.session, e.channel, e.ts"
    " FROM memories AS m LEFT JOIN events AS e ON e.soul = m.soul AND e.id = m.event_id"
)


async def page(
    db: asyncpg.Connection, soul: int, scope: Scope | None, before: int | None, limit: int
) -> list[MemoryItem]:
    conditions = ["m.soul = $1"]
    args: list[object] = [soul]
    if scope:
        within, scoped = scope_sql(scope, 2)
        conditions.append(f"m.id IN ({within})")
        args += scoped
    if before is not None:
        args.append(before)
        conditions.append(f"m.id < ${len(args)}")
    args.append(limit)
    sql = f"{_FROM} WHERE {' AND '.join(conditions)} ORDER BY m.id DESC LIMIT ${len(args)}"
    return [MemoryItem(*row) for row in await db.fetch(sql, *args)]


async def item(db: asyncpg.Connection, soul: int, memory_id: int) -> MemoryItem | None:
    row = await db.fetchrow(f"{_FROM} WHERE m.soul = $1 AND m.id = $2", soul, memory_id)
    return MemoryItem(*row) if row is not None else None


async def event(db: asyncpg.Connection, soul: int, event_id: int) -> StoredEvent | None:
    row = await db.fetchrow(
        "SELECT kind, channel, sender, grp, mentioned, session, ts FROM events"
        " WHERE soul = $1 AND id = $2",
        soul,
        event_id,
    )
    return StoredEvent(*row) if row is not None else None


async def first_memory(db: asyncpg.Connection, soul: int, event_id: int) -> int | None:
    found = await db.fetchval(
        "SELECT id FROM memories WHERE soul = $1 AND event_id = $2 ORDER BY id LIMIT 1",
        soul,
        event_id,
    )
    return int(found) if found is not None else None

"""People behind accounts on SQLite (souls/knowledge/persons.py decides what a link
means): every linked identity with its person, every person with its identities, and a
link written in one transaction — the person made when new, the account moved to it,
its events attributed, their claims about the person and their questions asked by it.
:mod:`souls.store.postgres.persons` keeps the same rows on PostgreSQL."""

from __future__ import annotations

import aiosqlite

__all__ = ["identities", "link", "persons"]


async def identities(db: aiosqlite.Connection) -> list[tuple[str, str, str]]:
    """Every linked identity as (channel, external id, the person's name)."""
    rows = await db.execute_fetchall(
        "SELECT i.channel, i.external, p.name FROM identities AS i"
        " JOIN persons AS p ON p.id = i.person ORDER BY i.channel, i.external"
    )
    return [(channel, external, name) for channel, external, name in rows]


async def persons(db: aiosqlite.Connection) -> list[tuple[int, str, str | None, str | None]]:
    """Every person as (id, name, channel, external id), one row per identity (a person
    with none: one row of None), by person then identity."""
    rows = await db.execute_fetchall(
        "SELECT p.id, p.name, i.channel, i.external FROM persons AS p"
        " LEFT JOIN identities AS i ON i.person = p.id ORDER BY p.id, i.channel, i.external"
    )
    return [(int(i), name, channel, external) for i, name, channel, external in rows]


async def link(
    db: aiosqlite.Connection, name: str, channel: str, external: str, now: float
) -> tuple[int, int]:
    """Link ``channel:external`` to person ``name`` in the caller's transaction; how
    many events and claims were attributed to the person."""
    await db.execute(
        "INSERT INTO persons (name, created) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
        (name, now),
    )
    await db.execute(
        "INSERT INTO identities (channel, external, person, created)"
        " VALUES (?, ?, (SELECT id FROM persons WHERE name = ?), ?)"
        " ON CONFLICT (channel, external) DO UPDATE SET person = excluded.person",
        (channel, external, name, now),
    )
    events = await db.execute(
        "UPDATE events SET person = ? WHERE channel = ? AND sender = ?", (name, channel, external)
    )
    claims = await db.execute(
        "UPDATE claims SET subject = ? WHERE event_id IN"
        " (SELECT id FROM events WHERE channel = ? AND sender = ?)",
        (name, channel, external),
    )
    await db.execute(
        "UPDATE questions SET asker = ? WHERE event_id IN"
        " (SELECT id FROM events WHERE channel = ? AND sender = ?)",
        (name, channel, external),
    )
    return max(events.rowcount, 0), max(claims.rowcount, 0)

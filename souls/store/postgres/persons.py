"""People behind accounts on PostgreSQL (migration 0008_persons), as
:mod:`souls.store.persons` keeps them on SQLite, each under its soul (a person's id is
the soul's own: :mod:`souls.store.postgres.numbering`)."""

from __future__ import annotations

import asyncpg

from souls.store.postgres.numbering import next_number

__all__ = ["identities", "link", "persons"]


async def identities(db: asyncpg.Connection, soul: int) -> list[tuple[str, str, str]]:
    rows = await db.fetch(
        "SELECT i.channel, i.external, p.name FROM identities AS i"
        " JOIN persons AS p ON p.soul = i.soul AND p.id = i.person"
        ' WHERE i.soul = $1 ORDER BY i.channel COLLATE "C", i.external COLLATE "C"',
        soul,
    )
    return [(row[0], row[1], row[2]) for row in rows]


async def persons(
    db: asyncpg.Connection, soul: int
) -> list[tuple[int, str, str | None, str | None]]:
    rows = await db.fetch(
        "SELECT p.id, p.name, i.channel, i.external FROM persons AS p"
        " LEFT JOIN identities AS i ON i.soul = p.soul AND i.person = p.id"
        ' WHERE p.soul = $1 ORDER BY p.id, i.channel COLLATE "C", i.external COLLATE "C"',
        soul,
    )
    return [(int(row[0]), row[1], row[2], row[3]) for row in rows]


async def link(
    db: asyncpg.Connection, soul: int, name: str, channel: str, external: str, now: float
) -> tuple[int, int]:
    """As :func:`souls.store.persons.link`, in the caller's transaction."""
    person = await db.fetchval("SELECT id FROM persons WHERE soul = $1 AND name = $2", soul, name)
    if person is None:
        person = await next_number(db, soul, "persons")
        await db.execute(
            "INSERT INTO persons (soul, id, name, created) VALUES ($1, $2, $3, $4)",
            soul,
            person,
            name,
            now,
        )
    await db.execute(
        "INSERT INTO identities (soul, channel, external, person, created)"
        " VALUES ($1, $2, $3, $4, $5)"
        " ON CONFLICT (soul, channel, external) DO UPDATE SET person = excluded.person",
        soul,
        channel,
        external,
        person,
        now,
    )
    events = await db.execute(
        "UPDATE events SET person = $2 WHERE soul = $1 AND channel = $3 AND sender = $4",
        soul,
        name,
        channel,
        external,
    )
    claims = await db.execute(
        "UPDATE claims SET subject = $2 WHERE soul = $1 AND event_id IN"
        " (SELECT id FROM events WHERE soul = $1 AND channel = $3 AND sender = $4)",
        soul,
        name,
        channel,
        external,
    )
    await db.execute(
        "UPDATE questions SET asker = $2 WHERE soul = $1 AND event_id IN"
        " (SELECT id FROM events WHERE soul = $1 AND channel = $3 AND sender = $4)",
        soul,
        name,
        channel,
        external,
    )
    return int(events.split()[-1]), int(claims.split()[-1])

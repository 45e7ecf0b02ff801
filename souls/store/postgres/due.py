"""The ``due`` rows on PostgreSQL: a soul's ``@due`` wake-ups, as
:mod:`souls.store.due` keeps them on SQLite (the same reconciliation with TASKS.md,
the same orders), each row under its soul."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from souls.results import DueTask

__all__ = ["fired", "mark", "pending", "record", "task"]

_COLUMNS = "key, due, text, line, fired_at"


async def record(db: asyncpg.Connection, soul: int, tasks: Sequence[DueTask]) -> None:
    """Record ``tasks`` (the pending ones of TASKS.md) and cancel every unfired task
    of the soul not among them, in the caller's transaction."""
    if tasks:
        await db.execute(
            "INSERT INTO due (soul, key, due, text, line)"
            " SELECT $1, * FROM unnest($2::text[], $3::float8[], $4::text[], $5::int[])"
            " ON CONFLICT (soul, key) DO UPDATE SET text = excluded.text, line = excluded.line",
            soul,
            [t.key for t in tasks],
            [t.due for t in tasks],
            [t.text for t in tasks],
            [t.line for t in tasks],
        )
    await db.execute(
        "DELETE FROM due WHERE soul = $1 AND fired_at IS NULL AND key <> ALL($2::text[])",
        soul,
        [t.key for t in tasks],
    )


async def mark(db: asyncpg.Connection, soul: int, fired: dict[str, float]) -> None:
    """``fired`` of a turn's Changes: each task (key -> when) marked fired, once."""
    if fired:
        await db.execute(
            "UPDATE due SET fired_at = n.at FROM unnest($2::text[], $3::float8[]) AS n (key, at)"
            " WHERE due.soul = $1 AND due.key = n.key AND due.fired_at IS NULL",
            soul,
            list(fired),
            list(fired.values()),
        )


async def pending(db: asyncpg.Connection, soul: int) -> list[DueTask]:
    """The tasks still to fire, the soonest first."""
    rows = await db.fetch(
        f"SELECT {_COLUMNS} FROM due WHERE soul = $1 AND fired_at IS NULL ORDER BY due, key",
        soul,
    )
    return [DueTask(*row) for row in rows]


async def task(db: asyncpg.Connection, soul: int, key: str) -> DueTask | None:
    """The task under ``key`` if it is still to fire."""
    row = await db.fetchrow(
        f"SELECT {_COLUMNS} FROM due WHERE soul = $1 AND key = $2 AND fired_at IS NULL",
        soul,
        key,
    )
    return None if row is None else DueTask(*row)


async def fired(db: asyncpg.Connection, soul: int, limit: int) -> list[DueTask]:
    """The ``limit`` tasks that fired last, the latest first."""
    rows = await db.fetch(
        f"SELECT {_COLUMNS} FROM due WHERE soul = $1 AND fired_at IS NOT NULL"
        " ORDER BY fired_at DESC, key LIMIT $2",
        soul,
        limit,
    )
    return [DueTask(*row) for row in rows]

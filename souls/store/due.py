"""The ``due`` rows on SQLite: a soul's ``@due`` wake-ups (souls/actor/agenda.py).

TASKS.md is what people (and the soul) write; the table is the source of truth for
wake-ups. :func:`record` reconciles it with the file's pending tasks inside the
caller's transaction: each is (re)recorded under its key (its text and due time, so a
task whose time is edited is a new one), each task that has not fired and is no longer
pending is cancelled, and a fired task stays fired (re-reading the file never fires it
again). ``fired`` in :class:`~souls.store.changes.Changes` marks one fired.
:class:`souls.store.postgres.store.PgStore` keeps the same rows on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

from souls.results import DueTask

__all__ = ["fired", "pending", "record", "task"]

_COLUMNS = "key, due, text, line, fired_at"


async def record(db: aiosqlite.Connection, tasks: Sequence[DueTask]) -> None:
    """Record ``tasks`` (the pending ones of TASKS.md) and cancel every unfired task
    not among them, in the caller's transaction."""
    await db.executemany(
        "INSERT INTO due (key, due, text, line) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (key) DO UPDATE SET text = excluded.text, line = excluded.line",
        [(t.key, t.due, t.text, t.line) for t in tasks],
    )
    keys = {t.key for t in tasks}
    unfired = await db.execute_fetchall("SELECT key FROM due WHERE fired_at IS NULL")
    await db.executemany(
        "DELETE FROM due WHERE key = ?", [(key,) for (key,) in unfired if key not in keys]
    )


async def pending(db: aiosqlite.Connection) -> list[DueTask]:
    """The tasks still to fire, the soonest first."""
    rows = await db.execute_fetchall(
        f"SELECT {_COLUMNS} FROM due WHERE fired_at IS NULL ORDER BY due, key"
    )
    return [DueTask(*row) for row in rows]


async def task(db: aiosqlite.Connection, key: str) -> DueTask | None:
    """The task under ``key`` if it is still to fire."""
    rows = await db.execute_fetchall(
        f"SELECT {_COLUMNS} FROM due WHERE key = ? AND fired_at IS NULL", (key,)
    )
    return next((DueTask(*row) for row in rows), None)


async def fired(db: aiosqlite.Connection, limit: int) -> list[DueTask]:
    """The ``limit`` tasks that fired last, the latest first."""
    rows = await db.execute_fetchall(
        f"SELECT {_COLUMNS} FROM due WHERE fired_at IS NOT NULL ORDER BY fired_at DESC, key"
        " LIMIT ?",
        (limit,),
    )
    return [DueTask(*row) for row in rows]

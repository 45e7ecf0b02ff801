"""The logs a forget scrubs, on PostgreSQL: :mod:`souls.store.logs`' rows (draws,
assemblies' queries, gaps, ``soul_state``, goals) of one soul, read and rewritten in
the same orders, in the caller's transaction."""

from __future__ import annotations

import asyncpg

from souls.store.logs import FORGOTTEN, Logs, Scrub

__all__ = ["read", "write"]


async def read(db: asyncpg.Connection, soul: int) -> Logs:
    """The soul's logs, each by id (``soul_state`` by key, as SQLite orders text)."""
    draws = await db.fetch(
        "SELECT id, topic, cards, verdicts FROM draws WHERE soul = $1 ORDER BY id", soul
    )
    queries = await db.fetch(
        "SELECT id, query FROM assemblies WHERE soul = $1 AND query IS NOT NULL ORDER BY id",
        soul,
    )
    gaps = await db.fetch("SELECT id, topic, detail FROM gaps WHERE soul = $1 ORDER BY id", soul)
    state = await db.fetch(
        'SELECT key, value FROM soul_state WHERE soul = $1 ORDER BY key COLLATE "C"', soul
    )
    goals = await db.fetch(
        "SELECT id, statement, progress FROM goals WHERE soul = $1 ORDER BY id", soul
    )
    return Logs(
        draws=[(int(r[0]), r[1], r[2], r[3]) for r in draws],
        queries=[(int(r[0]), r[1]) for r in queries],
        gaps=[(int(r[0]), r[1], r[2]) for r in gaps],
        state={r[0]: r[1] for r in state},
        goals=[(int(r[0]), r[1], r[2]) for r in goals],
    )


async def write(db: asyncpg.Connection, soul: int, scrub: Scrub) -> None:
    """Rewrite the soul's rows ``scrub`` names, in the caller's transaction."""
    if scrub.draws:
        await db.executemany(
            "UPDATE draws SET topic = $3, verdicts = $4 WHERE soul = $1 AND id = $2",
            [(soul, draw, topic, verdicts) for draw, topic, verdicts in scrub.draws],
        )
    await db.execute(
        "UPDATE assemblies SET query = $3 WHERE soul = $1 AND id = ANY($2::bigint[])",
        soul,
        scrub.queries,
        FORGOTTEN,
    )
    await db.execute(
        "DELETE FROM gaps WHERE soul = $1 AND id = ANY($2::bigint[])", soul, scrub.gaps
    )
    await db.execute(
        "DELETE FROM soul_state WHERE soul = $1 AND key = ANY($2::text[])", soul, scrub.state
    )
    await db.execute(
        "DELETE FROM goals WHERE soul = $1 AND id = ANY($2::bigint[])", soul, scrub.goals_gone
    )
    if scrub.notes:
        await db.executemany(
            "UPDATE goals SET progress = $3 WHERE soul = $1 AND id = $2",
            [(soul, goal, progress) for goal, progress in scrub.notes],
        )

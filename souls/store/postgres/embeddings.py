"""The semantic layer's vectors on PostgreSQL, as :mod:`souls.store.embeddings` keeps
them on SQLite: packed float32 in a ``bytea`` (migration 0006_memory_vectors), each
under its soul, going with its memory (a cascading foreign key). The search itself is
the soul's in-memory matrix on either backend (souls/embed/vectors.py); the pgvector
extension is not used yet."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

__all__ = ["drop", "ids", "observation_memories", "stored", "unembedded", "write"]


async def stored(db: asyncpg.Connection, soul: int, model: str) -> list[tuple[int, bytes]]:
    rows = await db.fetch(
        "SELECT v.memory_id, v.vector FROM memory_vectors AS v"
        " JOIN memories AS m ON m.soul = v.soul AND m.id = v.memory_id"
        " WHERE v.soul = $1 AND v.model = $2 AND m.hidden_at IS NULL ORDER BY v.memory_id",
        soul,
        model,
    )
    return [(int(row["memory_id"]), bytes(row["vector"])) for row in rows]


async def unembedded(
    db: asyncpg.Connection, soul: int, model: str, after: int, limit: int
) -> list[tuple[int, str, str | None]]:
    rows = await db.fetch(
        "SELECT m.id, m.text, e.sender FROM memories AS m"
        " LEFT JOIN events AS e ON e.soul = m.soul AND e.id = m.event_id"
        " LEFT JOIN memory_vectors AS v"
        " ON v.soul = m.soul AND v.memory_id = m.id AND v.model = $2"
        " WHERE m.soul = $1 AND v.memory_id IS NULL AND m.hidden_at IS NULL AND m.id > $3"
        " ORDER BY m.id LIMIT $4",
        soul,
        model,
        after,
        limit,
    )
    return [(int(row["id"]), row["text"], row["sender"]) for row in rows]


async def observation_memories(
    db: asyncpg.Connection, soul: int, event_ids: Sequence[int]
) -> dict[int, int]:
    rows = await db.fetch(
        "SELECT event_id, id FROM memories WHERE soul = $1 AND kind = 'observation'"
        " AND event_id = ANY($2::bigint[])",
        soul,
        list(event_ids),
    )
    return {int(row["event_id"]): int(row["id"]) for row in rows}


async def write(
    db: asyncpg.Connection, soul: int, model: str, vectors: Sequence[tuple[int, bytes]]
) -> set[int]:
    """As :func:`souls.store.embeddings.write`, in the caller's transaction."""
    wanted = sorted({memory_id for memory_id, _ in vectors})
    rows = await db.fetch(
        "SELECT id FROM memories WHERE soul = $1 AND id = ANY($2::bigint[]) FOR SHARE",
        soul,
        wanted,
    )
    alive = {int(row["id"]) for row in rows}
    kept = [(memory_id, blob) for memory_id, blob in vectors if memory_id in alive]
    if kept:
        # One row per memory: of the same memory twice, the later vector wins, as
        # SQLite's INSERT OR REPLACE row by row leaves it.
        latest = dict(kept)
        await db.execute(
            "INSERT INTO memory_vectors (soul, memory_id, model, vector)"
            " SELECT $1, m, $2, v FROM unnest($3::bigint[], $4::bytea[]) AS n (m, v)"
            " ON CONFLICT (soul, memory_id)"
            " DO UPDATE SET model = excluded.model, vector = excluded.vector",
            soul,
            model,
            list(latest),
            list(latest.values()),
        )
    return alive


async def drop(db: asyncpg.Connection, soul: int) -> int:
    status = await db.execute("DELETE FROM memory_vectors WHERE soul = $1", soul)
    return int(status.split()[-1])


async def ids(db: asyncpg.Connection, soul: int) -> set[int]:
    rows = await db.fetch("SELECT memory_id FROM memory_vectors WHERE soul = $1", soul)
    return {int(row["memory_id"]) for row in rows}

"""The semantic layer's vectors on SQLite (``memory_vectors``: souls/actor/embedding.py
makes them, souls/embed/vectors.py packs them): each visible memory's vector under the
model that made it, the memories still without one, and the writes of a batch.
:mod:`souls.store.postgres.embeddings` keeps the same rows on PostgreSQL. A vector goes
with its memory (forget, decay's purge)."""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

__all__ = ["drop", "ids", "observation_memories", "stored", "unembedded", "write"]

# Ids of one ``IN (...)`` list (under SQLite's 999 parameters).
_CHUNK = 500


async def stored(db: aiosqlite.Connection, model: str) -> list[tuple[int, bytes]]:
    """The vectors of ``model`` of the visible memories, as (memory id, packed vector)."""
    rows = await db.execute_fetchall(
        "SELECT v.memory_id, v.vector FROM memory_vectors AS v"
        " JOIN memories AS m ON m.id = v.memory_id"
        " WHERE v.model = ? AND m.hidden_at IS NULL ORDER BY v.memory_id",
        (model,),
    )
    return [(int(memory_id), bytes(blob)) for memory_id, blob in rows]


async def unembedded(
    db: aiosqlite.Connection, model: str, after: int, limit: int
) -> list[tuple[int, str, str | None]]:
    """The first ``limit`` visible memories above id ``after`` without a vector of
    ``model``, as (memory id, text, its event's sender)."""
    rows = await db.execute_fetchall(
        "SELECT m.id, m.text, e.sender FROM memories AS m"
        " LEFT JOIN events AS e ON e.id = m.event_id"
        " LEFT JOIN memory_vectors AS v ON v.memory_id = m.id AND v.model = ?"
        " WHERE v.memory_id IS NULL AND m.hidden_at IS NULL AND m.id > ?"
        " ORDER BY m.id LIMIT ?",
        (model, after, limit),
    )
    return [(int(memory_id), text, sender) for memory_id, text, sender in rows]


async def observation_memories(
    db: aiosqlite.Connection, event_ids: Sequence[int]
) -> dict[int, int]:
    """The observation memory of each of ``event_ids`` that still has one."""
    found: dict[int, int] = {}
    for start in range(0, len(event_ids), _CHUNK):
        chunk = list(event_ids[start : start + _CHUNK])
        marks = ",".join("?" * len(chunk))
        rows = await db.execute_fetchall(
            "SELECT event_id, id FROM memories WHERE kind = 'observation'"
            f" AND event_id IN ({marks})",
            chunk,
        )
        found |= {int(event_id): int(memory_id) for event_id, memory_id in rows}
    return found


async def write(
    db: aiosqlite.Connection, model: str, vectors: Sequence[tuple[int, bytes]]
) -> set[int]:
    """Store each vector under its memory (replacing one of any model), for the
    memories still stored, in the caller's transaction; the ids written."""
    wanted = sorted({memory_id for memory_id, _ in vectors})
    alive: set[int] = set()
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        rows = await db.execute_fetchall(f"SELECT id FROM memories WHERE id IN ({marks})", chunk)
        alive |= {int(memory_id) for (memory_id,) in rows}
    await db.executemany(
        "INSERT OR REPLACE INTO memory_vectors (memory_id, model, vector) VALUES (?, ?, ?)",
        [(memory_id, model, blob) for memory_id, blob in vectors if memory_id in alive],
    )
    return alive


async def drop(db: aiosqlite.Connection) -> int:
    """Delete every vector, in the caller's transaction; how many there were."""
    cursor = await db.execute("DELETE FROM memory_vectors")
    return max(cursor.rowcount, 0)


async def ids(db: aiosqlite.Connection) -> set[int]:
    """The memories that have a vector (of any model)."""
    return {int(m) for (m,) in await db.execute_fetchall("SELECT memory_id FROM memory_vectors")}

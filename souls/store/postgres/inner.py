"""The soul's inner state on PostgreSQL, as :mod:`souls.store.inner` reads it on SQLite:
the same rows, in the same orders, each under its soul."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from souls.store.inner import MindCounts, Observation, Summary

__all__ = [
    "activity", "edge_weights", "gaps", "last_memory", "marker_labels", "markers",
    "mind_counts", "observations", "soul_state", "strong_edges", "summary", "surfaced",
    "unsurfaced",
]  # fmt: skip


async def summary(db: asyncpg.Connection, soul: int, layer: str, back: int = 0) -> Summary | None:
    row = await db.fetchrow(
        "SELECT id, text, created FROM summaries WHERE soul = $1 AND layer = $2"
        " ORDER BY id DESC LIMIT 1 OFFSET $3",
        soul,
        layer,
        back,
    )
    return Summary(row["id"], row["text"], row["created"]) if row is not None else None


async def soul_state(db: asyncpg.Connection, soul: int) -> dict[str, str]:
    rows = await db.fetch("SELECT key, value FROM soul_state WHERE soul = $1", soul)
    return {row["key"]: row["value"] for row in rows}


async def observations(
    db: asyncpg.Connection, soul: int, *, after_memory: int | None, since: float | None, limit: int
) -> list[Observation]:
    """As :func:`souls.store.inner.observations`."""
    where, value = ("m.id > $2", after_memory) if since is None else ("e.ts >= $2", since)
    rows = await db.fetch(
        f"""
        SELECT id, text, salience, surprise, kind, sender, ts FROM (
            SELECT m.id, m.text, m.salience, m.surprise, e.kind, e.sender, e.ts
            FROM memories AS m JOIN events AS e ON e.soul = m.soul AND e.id = m.event_id
            WHERE m.soul = $1 AND {where} AND m.hidden_at IS NULL
            ORDER BY m.salience + m.surprise DESC, m.id DESC LIMIT $3
        ) AS chosen ORDER BY id
        """,
        soul,
        value,
        limit,
    )
    return [Observation(*row) for row in rows]


async def last_memory(db: asyncpg.Connection, soul: int) -> int:
    found = await db.fetchval("SELECT coalesce(max(id), 0) FROM memories WHERE soul = $1", soul)
    return int(found)


async def strong_edges(
    db: asyncpg.Connection, soul: int, threshold: float
) -> list[tuple[int, int, float]]:
    rows = await db.fetch(
        "SELECT a, b, weight FROM edges WHERE soul = $1 AND weight >= $2 ORDER BY a, b",
        soul,
        threshold,
    )
    return [(row["a"], row["b"], row["weight"]) for row in rows]


async def edge_weights(
    db: asyncpg.Connection, soul: int, pairs: Sequence[tuple[int, int]]
) -> dict[tuple[int, int], float]:
    if not pairs:
        return {}
    # Each pair looked up by the key (a lateral join): planned as a join, a soul's edges
    # grown since their statistics were gathered were read whole for a few pairs (2 ms
    # a turn at 10k memories, with the pairs of each recall).
    rows = await db.fetch(
        "SELECT p.a, p.b, e.weight FROM unnest($2::bigint[], $3::bigint[]) AS p (a, b)"
        " CROSS JOIN LATERAL (SELECT weight FROM edges"
        " WHERE soul = $1 AND a = p.a AND b = p.b) AS e",
        soul,
        [a for a, _ in pairs],
        [b for _, b in pairs],
    )
    return {(row["a"], row["b"]): row["weight"] for row in rows}


async def markers(db: asyncpg.Connection, soul: int) -> list[tuple[str, str, float]]:
    rows = await db.fetch(
        "SELECT topic, valence, weight FROM markers WHERE soul = $1"
        ' ORDER BY topic COLLATE "C", valence COLLATE "C"',
        soul,
    )
    return [(row["topic"], row["valence"], row["weight"]) for row in rows]


async def marker_labels(db: asyncpg.Connection, soul: int) -> dict[str, str]:
    rows = await db.fetch(
        "SELECT topic, label FROM markers WHERE soul = $1 AND label IS NOT NULL"
        ' ORDER BY topic COLLATE "C", valence COLLATE "C"',
        soul,
    )
    labels: dict[str, str] = {}
    for row in rows:
        labels.setdefault(row["topic"], row["label"])
    return labels


async def gaps(db: asyncpg.Connection, soul: int, limit: int) -> list[tuple[str, str]]:
    rows = await db.fetch(
        "SELECT topic, detail FROM (SELECT id, topic, detail FROM gaps WHERE soul = $1"
        " ORDER BY id DESC LIMIT $2) AS newest ORDER BY id",
        soul,
        limit,
    )
    return [(row["topic"], row["detail"]) for row in rows]


async def activity(
    db: asyncpg.Connection, soul: int, since: float, recent: int
) -> tuple[int, list[float]]:
    events = await db.fetchval(
        "SELECT count(*) FROM events WHERE soul = $1 AND recorded >= $2", soul, since
    )
    rows = await db.fetch(
        "SELECT surprise FROM memories WHERE soul = $1 ORDER BY id DESC LIMIT $2", soul, recent
    )
    return int(events), [float(row["surprise"]) for row in rows]


async def mind_counts(db: asyncpg.Connection, soul: int) -> MindCounts:
    row = await db.fetchrow(
        """
        SELECT (SELECT count(*) FROM edges WHERE soul = $1),
               (SELECT count(*) FROM markers WHERE soul = $1),
               (SELECT count(*) FROM gaps WHERE soul = $1),
               (SELECT count(*) FROM summaries WHERE soul = $1 AND layer = 'consolidated'),
               (SELECT count(*) FROM summaries WHERE soul = $1 AND layer = 'weekly')
        """,
        soul,
    )
    assert row is not None
    return MindCounts(*(int(value) for value in row))


async def surfaced(db: asyncpg.Connection, soul: int) -> list[tuple[str, float]]:
    rows = await db.fetch(
        'SELECT item, at FROM surfaced WHERE soul = $1 ORDER BY item COLLATE "C"', soul
    )
    return [(row["item"], float(row["at"])) for row in rows]


async def unsurfaced(db: asyncpg.Connection, soul: int, limit: int) -> list[tuple[int, float]]:
    rows = await db.fetch(
        "SELECT id, salience FROM memories AS m"
        " WHERE m.soul = $1 AND m.kind = 'observation' AND m.hidden_at IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM surfaced AS s WHERE s.soul = m.soul"
        " AND s.item = 'm' || m.id)"
        " ORDER BY m.id LIMIT $2",
        soul,
        limit,
    )
    return [(int(row["id"]), float(row["salience"])) for row in rows]

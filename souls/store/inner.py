"""The soul's inner state on SQLite, as the cognitive loop reads it back: summaries,
``soul_state``, the observations a reflect folds in, Hebbian edges, somatic markers,
knowledge gaps, activity, and when each context item last surfaced.

Reads only, on the store's connection: the rows are written with a turn's
:class:`~souls.store.changes.Changes` (:func:`~souls.store.changes.write_changes`), and
decay is the store's own transaction. :mod:`souls.store.postgres.inner` reads the same
rows on PostgreSQL, in the same orders. Nothing here decides anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import aiosqlite

__all__ = [
    "MindCounts", "Observation", "Summary", "activity", "edge_weights", "gaps", "last_memory",
    "marker_labels", "markers", "mind_counts", "observations", "soul_state", "strong_edges",
    "summary", "surfaced", "unsurfaced",
]  # fmt: skip

# Pairs of one edge_weights statement (two parameters each, under SQLite's 999).
EDGE_CHUNK = 400


@dataclass(frozen=True, slots=True)
class Summary:
    """The latest version of a summary layer."""

    id: int
    text: str
    created: float


@dataclass(frozen=True, slots=True)
class Observation:
    """One memory written since the last reflect, as the reflector sees it."""

    id: int  # memory id, shown as [m<id>]
    text: str
    salience: float  # 0..1, from the attention gate
    surprise: float  # 0..1, novelty against the previous summary
    kind: str  # message, dm, heartbeat, wakeup, ...
    sender: str | None
    ts: float  # unix seconds


@dataclass(frozen=True, slots=True)
class MindCounts:
    """How many rows of the inner state there are (``soupd stats``)."""

    edges: int
    markers: int
    gaps: int
    reflects: int  # consolidated summary versions
    weeklies: int  # weekly summary versions


async def summary(db: aiosqlite.Connection, layer: str, back: int = 0) -> Summary | None:
    """The latest version of summary ``layer``, or the one ``back`` versions before it."""
    rows = await db.execute_fetchall(
        "SELECT id, text, created FROM summaries WHERE layer = ? ORDER BY id DESC LIMIT 1 OFFSET ?",
        (layer, back),
    )
    return Summary(*next(iter(rows))) if rows else None


async def soul_state(db: aiosqlite.Connection) -> dict[str, str]:
    return {
        key: value for key, value in await db.execute_fetchall("SELECT key, value FROM soul_state")
    }


async def observations(
    db: aiosqlite.Connection, *, after_memory: int | None, since: float | None, limit: int
) -> list[Observation]:
    """Visible observations after memory id ``after_memory``, or of events that happened
    at or after ``since``, oldest first; when there are more than ``limit`` (a flood),
    the most salient and surprising of them, then the newest: the ones a summary would
    keep anyway, at a bounded cost."""
    where, value = ("m.id > ?", after_memory) if since is None else ("e.ts >= ?", since)
    rows = await db.execute_fetchall(
        f"""
        SELECT id, text, salience, surprise, kind, sender, ts FROM (
            SELECT m.id, m.text, m.salience, m.surprise, e.kind, e.sender, e.ts
            FROM memories AS m JOIN events AS e ON e.id = m.event_id
            WHERE {where} AND m.hidden_at IS NULL
            ORDER BY m.salience + m.surprise DESC, m.id DESC LIMIT ?
        ) ORDER BY id
        """,
        (value, limit),
    )
    return [Observation(*row) for row in rows]


async def last_memory(db: aiosqlite.Connection) -> int:
    """The largest memory id stored (0 when none)."""
    rows = await db.execute_fetchall("SELECT coalesce(max(id), 0) FROM memories")
    return int(next(iter(rows))[0])


async def strong_edges(db: aiosqlite.Connection, threshold: float) -> list[tuple[int, int, float]]:
    """Every edge of at least ``threshold``, as (a, b, weight), a < b."""
    rows = await db.execute_fetchall(
        "SELECT a, b, weight FROM edges WHERE weight >= ? ORDER BY a, b", (threshold,)
    )
    return [(a, b, w) for a, b, w in rows]


async def edge_weights(
    db: aiosqlite.Connection, pairs: Sequence[tuple[int, int]]
) -> dict[tuple[int, int], float]:
    """The weights of those of ``pairs`` (a < b) that have an edge."""
    found: dict[tuple[int, int], float] = {}
    for start in range(0, len(pairs), EDGE_CHUNK):
        chunk = pairs[start : start + EDGE_CHUNK]
        values = ",".join("(?, ?)" for _ in chunk)
        sql = (
            f"WITH p (a, b) AS (VALUES {values})"
            " SELECT e.a, e.b, e.weight FROM edges AS e JOIN p USING (a, b)"
        )
        for a, b, weight in await db.execute_fetchall(sql, [n for pair in chunk for n in pair]):
            found[(a, b)] = weight
    return found


async def markers(db: aiosqlite.Connection) -> list[tuple[str, str, float]]:
    """Every somatic marker as (topic, valence, weight), by topic and valence."""
    rows = await db.execute_fetchall(
        "SELECT topic, valence, weight FROM markers ORDER BY topic, valence"
    )
    return [(topic, valence, weight) for topic, valence, weight in rows]


async def marker_labels(db: aiosqlite.Connection) -> dict[str, str]:
    """The stored marker labels by topic (every valence's row has the same one; should
    two differ, the first by valence counts)."""
    rows = await db.execute_fetchall(
        "SELECT topic, label FROM markers WHERE label IS NOT NULL ORDER BY topic, valence"
    )
    labels: dict[str, str] = {}
    for topic, label in rows:
        labels.setdefault(topic, label)
    return labels


async def gaps(db: aiosqlite.Connection, limit: int) -> list[tuple[str, str]]:
    """The newest ``limit`` gaps as (topic, detail), oldest first."""
    rows = await db.execute_fetchall(
        "SELECT topic, detail FROM (SELECT id, topic, detail FROM gaps"
        " ORDER BY id DESC LIMIT ?) ORDER BY id",
        (limit,),
    )
    return [(topic, detail) for topic, detail in rows]


async def activity(db: aiosqlite.Connection, since: float, recent: int) -> tuple[int, list[float]]:
    """Events recorded since ``since``, and the surprise of the last ``recent`` memories
    (the latest first)."""
    rows = await db.execute_fetchall("SELECT count(*) FROM events WHERE recorded >= ?", (since,))
    surprise = await db.execute_fetchall(
        "SELECT surprise FROM memories ORDER BY id DESC LIMIT ?", (recent,)
    )
    return int(next(iter(rows))[0]), [float(s) for (s,) in surprise]


async def mind_counts(db: aiosqlite.Connection) -> MindCounts:
    rows = await db.execute_fetchall(
        """
        SELECT (SELECT count(*) FROM edges), (SELECT count(*) FROM markers),
               (SELECT count(*) FROM gaps),
               (SELECT count(*) FROM summaries WHERE layer = 'consolidated'),
               (SELECT count(*) FROM summaries WHERE layer = 'weekly')
        """
    )
    return MindCounts(*next(iter(rows)))


async def surfaced(db: aiosqlite.Connection) -> list[tuple[str, float]]:
    """When each context item (by label: m12, c5...) last surfaced, by label."""
    rows = await db.execute_fetchall("SELECT item, at FROM surfaced ORDER BY item")
    return [(str(item), float(at)) for item, at in rows]


async def unsurfaced(db: aiosqlite.Connection, limit: int) -> list[tuple[int, float]]:
    """The first ``limit`` visible observations (in id order) never shown in a context,
    as (memory id, salience)."""
    rows = await db.execute_fetchall(
        "SELECT id, salience FROM memories AS m"
        " WHERE m.kind = 'observation' AND m.hidden_at IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM surfaced WHERE item = 'm' || m.id)"
        " ORDER BY m.id LIMIT ?",
        (limit,),
    )
    return [(int(memory_id), float(salience)) for memory_id, salience in rows]

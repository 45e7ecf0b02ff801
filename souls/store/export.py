"""A soul's export, on SQLite: the tables an export pages through (:data:`EXPORT_TABLES`,
in export order, each by its primary key) and a page of one of them read.
:mod:`souls.store.postgres.export` reads the same columns in the same order on
PostgreSQL; ``SoulStore.export_rows`` is what both offer, souls/actor/exporting.py
makes the records of the rows."""

from __future__ import annotations

import aiosqlite

__all__ = ["EXPORT_TABLES", "read"]

# (record type, table, columns, order) in export order; pages follow the primary key.
EXPORT_TABLES: tuple[tuple[str, str, str, str], ...] = (
    (
        "event",
        "events",
        "id, ref, kind, channel, sender, grp, mentioned, session, ts, recorded, salience, text,"
        " person",
        "id",
    ),
    (
        "memory",
        "memories",
        "id, kind, event_id, text, salience, created, last_recalled, recalls, hidden_at, surprise",
        "id",
    ),
    ("edge", "edges", "a, b, weight, updated", "a, b"),
    ("surfaced", "surfaced", "item, at", "item"),
    ("marker", "markers", "topic, valence, weight, label, updated", "topic, valence"),
    ("gap", "gaps", "id, topic, detail, created", "id"),
    ("summary", "summaries", "id, layer, text, created, observations, reflector, reason", "id"),
    ("task", "due", "key, due, text, line, fired_at", "key"),
    (
        "claim",
        "claims",
        "id, type, subject, slot, value, quote, event_id, source, confidence, state,"
        " valid_from, valid_to, recorded_from, recorded_to, due, replaces",
        "id",
    ),
    (
        "question",
        "questions",
        "id, event_id, asker, session, text, asked, state, resolved, answer",
        "id",
    ),
    ("person", "persons", "id, name, created", "id"),
    ("identity", "identities", "channel, external, person, created", "channel, external"),
    (
        "goal",
        "goals",
        "id, speaker, statement, domain, priority, triggers, state, progress, created, updated",
        "id",
    ),
)


async def read(
    db: aiosqlite.Connection, table: int, offset: int, limit: int
) -> list[tuple[object, ...]]:
    """Up to ``limit`` rows of ``EXPORT_TABLES[table]`` from the ``offset``-th on, its
    columns in their order."""
    _, name, columns, order = EXPORT_TABLES[table]
    rows = await db.execute_fetchall(
        f"SELECT {columns} FROM {name} ORDER BY {order} LIMIT ? OFFSET ?", (limit, offset)
    )
    return [tuple(row) for row in rows]

"""The full-text index rebuilt from the memories it indexes.

The index (``memory_fts``, and the ``memory_vocab`` view of it) is derived: one row
per visible memory, its document the shared tokenizer's output, its context columns
the neighbouring turns of its session (:mod:`souls.store.neighbours`). :func:`reindex` drops
both tables and writes them afresh from the memories, row for row what appending
them wrote, so a damaged index (which SQLite's own integrity check finds, see
:mod:`souls.store.check`) is mended without touching an event or a memory.

Invariants a caller may rely on:

- It runs inside the caller's transaction: a failure leaves the old index in place.
- Rebuilding a sound index gives the same rows (rowid, doc, prior, later).
- The tables are created with the definitions the database holds (read from
  ``sqlite_master`` before they are dropped): whatever the migrations made them.
"""

from __future__ import annotations

import sqlite3

import aiosqlite

from souls.store.bulk import insert_rows
from souls.store.neighbours import lay_out
from souls.text.tokenize import fts_document

__all__ = ["index_damaged", "reindex"]

_TABLES = ("memory_fts", "memory_vocab")  # the view last: it reads the table


async def index_damaged(db: aiosqlite.Connection) -> bool:
    """Whether FTS5's own integrity check fails (or cannot even read the index).

    The check is written as an INSERT: call it inside a write transaction."""
    try:
        await db.execute("INSERT INTO memory_fts (memory_fts) VALUES ('integrity-check')")
    except sqlite3.DatabaseError:
        return True
    return False


async def reindex(db: aiosqlite.Connection, turns: int) -> int:
    """Drop and rewrite the index from the visible memories, with ``turns``
    neighbouring turns each side; the rows written."""
    definitions = {
        name: sql
        for name, sql in await db.execute_fetchall(
            "SELECT name, sql FROM sqlite_master WHERE name IN (?, ?)", _TABLES
        )
    }
    for name in reversed(_TABLES):
        await db.execute(f"DROP TABLE IF EXISTS {name}")
    for name in _TABLES:
        await db.execute(definitions[name])
    memories = await db.execute_fetchall(
        "SELECT m.id, e.session, m.text FROM memories AS m"
        " LEFT JOIN events AS e ON e.id = m.event_id"
        " WHERE m.hidden_at IS NULL ORDER BY e.id, m.id"
    )
    placed = [(memory_id, session, fts_document(text)) for memory_id, session, text in memories]
    rows, _ = lay_out(placed, {}, turns)
    await insert_rows(
        db,
        "INSERT INTO memory_fts (rowid, doc, prior, later)",
        "(?,?,?,?)",
        [v for r in rows for v in (r.memory_id, r.doc, r.prior, r.later)],
    )
    return len(rows)

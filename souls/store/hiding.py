"""Hiding memories on SQLite: what decay does to a memory it lets fade (DESIGN §3.6).

A hidden memory keeps its row, with ``hidden_at`` set, but leaves the full-text index:
recall no longer finds it, and new rows no longer take it as a neighbouring turn
(:func:`souls.store.neighbours.tails` skips it). The rows that already quote it as
context keep it (a forget rewrites them, a hide does not). Purging the hidden memories
later is decay's (:meth:`souls.store.interface.SoulStore.decay`).

:func:`hide` works inside the caller's transaction, so that
:meth:`souls.store.store.Store.hide` and decay's own pass share it;
:meth:`souls.store.postgres.store.PgStore.hide` does the same on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

__all__ = ["hide"]

# Ids bound per statement, well below SQLite's bound-parameter limit.
_CHUNK = 500


async def hide(db: aiosqlite.Connection, memory_ids: Sequence[int], now: float) -> list[int]:
    """Hide the visible memories among ``memory_ids`` at ``now`` and take their rows
    out of the index, in the caller's transaction; the ids hidden, in order (the caller
    drops the store's caches: the statistics changed)."""
    ids = sorted(set(memory_ids))
    hidden: list[int] = []
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        rows = await db.execute_fetchall(
            f"UPDATE memories SET hidden_at = ? WHERE hidden_at IS NULL AND id IN ({marks})"
            " RETURNING id",
            (now, *chunk),
        )
        hidden += [int(row[0]) for row in rows]
    hidden.sort()
    await db.executemany("DELETE FROM memory_fts WHERE rowid = ?", [(i,) for i in hidden])
    return hidden

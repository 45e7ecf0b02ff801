"""A soul's export on PostgreSQL: :mod:`souls.store.export`'s tables of one soul, the
same columns in the same order (text keys in code point order, as SQLite's BINARY)."""

from __future__ import annotations

import asyncpg

from souls.store.export import EXPORT_TABLES

__all__ = ["read"]

# The keys an export orders by that are text (the others are numbers).
_TEXT = frozenset({"item", "topic", "valence", "key", "channel", "external"})


async def read(
    db: asyncpg.Connection, soul: int, table: int, offset: int, limit: int
) -> list[tuple[object, ...]]:
    """As :func:`souls.store.export.read`, of the soul's rows."""
    _, name, columns, order = EXPORT_TABLES[table]
    keys = ", ".join(
        f'{key} COLLATE "C"' if key in _TEXT else key
        for key in (k.strip() for k in order.split(","))
    )
    rows = await db.fetch(
        f"SELECT {columns} FROM {name} WHERE soul = $1 ORDER BY {keys} LIMIT $2 OFFSET $3",
        soul,
        limit,
        offset,
    )
    return [tuple(row) for row in rows]

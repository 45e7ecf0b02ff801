"""A soul's own numbers on PostgreSQL (cards, draws, persons: migration 0007's
``numbering`` table), handed out one more than the last and never reused, as SQLite's
``AUTOINCREMENT`` hands them out, whatever rows were deleted since."""

from __future__ import annotations

import asyncpg

__all__ = ["next_number"]


async def next_number(db: asyncpg.Connection, soul: int, name: str) -> int:
    """The soul's next number of ``name``, in the caller's transaction."""
    found = await db.fetchval(
        "INSERT INTO numbering (soul, name, last) VALUES ($1, $2, 1)"
        " ON CONFLICT (soul, name) DO UPDATE SET last = numbering.last + 1 RETURNING last",
        soul,
        name,
    )
    return int(found)

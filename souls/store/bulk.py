"""Many rows in one ``INSERT … VALUES (…), (…), …`` statement.

``executemany`` steps SQLite once per row and takes the GIL back after every step, so
while the event loop runs Python (gating the next chunk of an import, say) the
database thread waits for the GIL row after row and the two never overlap. One
statement per slice of rows binds its parameters in one C loop and runs the whole
insert in a single step with the GIL released: the loop keeps working meanwhile, and
even alone it is a little cheaper than ``executemany`` (about 10 % on the ingest
path's three tables).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from functools import lru_cache

import aiosqlite

__all__ = ["MAX_PARAMETERS", "insert_rows", "slices"]

# SQLite's default bound-parameter limit: 32,766 since 3.32, 999 before.
MAX_PARAMETERS = 32_766 if sqlite3.sqlite_version_info >= (3, 32, 0) else 999


def slices(head: str, row: str, values: Sequence[object]) -> Iterator[tuple[str, Sequence[object]]]:
    """``head VALUES row, row, …`` statements over ``values``, the rows' parameters
    flattened in order, each with its slice of the values. ``row`` is one row's
    template, e.g. ``"(?, 'observation', ?)"``; every ``?`` in it takes the next value."""
    width = row.count("?")
    if not width or len(values) % width:
        raise ValueError(f"{len(values)} values do not fill rows of {width} parameters")
    per = MAX_PARAMETERS // width * width
    for start in range(0, len(values), per):
        part = values[start : start + per]
        yield _statement(head, row, len(part) // width), part


async def insert_rows(
    db: aiosqlite.Connection, head: str, row: str, values: Sequence[object]
) -> None:
    """The rows of :func:`slices`, inserted on ``db``."""
    for sql, part in slices(head, row, values):
        await db.execute(sql, part)


@lru_cache(maxsize=64)
def _statement(head: str, row: str, rows: int) -> str:
    return f"{head} VALUES {','.join([row] * rows)}"

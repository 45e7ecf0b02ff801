"""A write transaction in one round trip to the connection's thread.

aiosqlite runs every statement on the connection's own thread and wakes the event loop
for each result: a turn that appends one event (``BEGIN``, three inserts, the knowledge
and change rows, ``COMMIT``) used to wait for the loop a dozen times. While another
soul's turn holds the loop (a flood of large texts, each gated in 1 ms slices), every
one of those waits costs up to a slice and a GIL hand-over, and a quiet soul's push
took five times its idle latency. A :class:`Batch` is collected on the loop without
touching the database, then :func:`commit` runs it in one call on the connection's
thread, from ``BEGIN IMMEDIATE`` to ``COMMIT``: one wait, whatever the batch holds.

Statements with no rows are never sent; a multi-row insert binds a slice of rows per
statement as :mod:`souls.store.bulk` explains.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

import aiosqlite

from souls.store.bulk import slices

__all__ = ["Batch", "commit"]


class Batch:
    """The statements of one transaction, in order; nothing runs until :func:`commit`."""

    __slots__ = ("_steps",)

    def __init__(self) -> None:
        self._steps: list[tuple[str, Sequence[object] | list[Sequence[object]], bool]] = []

    def __bool__(self) -> bool:
        return bool(self._steps)

    def __len__(self) -> int:
        return len(self._steps)

    def execute(self, sql: str, parameters: Sequence[object] = ()) -> None:
        self._steps.append((sql, parameters, False))

    def executemany(self, sql: str, rows: Iterable[Sequence[object]]) -> None:
        """``sql`` once per row; nothing at all when there are no rows."""
        rows = list(rows)
        if rows:
            self._steps.append((sql, rows, True))

    def insert_rows(self, head: str, row: str, values: Sequence[object]) -> None:
        """``head VALUES row, row, …`` over ``values`` (see :func:`souls.store.bulk.slices`)."""
        self._steps.extend((sql, part, False) for sql, part in slices(head, row, values))

    def run(self, conn: sqlite3.Connection) -> None:
        """Run the batch as one ``BEGIN IMMEDIATE`` … ``COMMIT`` on ``conn``, on the
        thread that owns it; rolled back on any error."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            for sql, parameters, many in self._steps:
                if many:
                    conn.executemany(sql, parameters)  # type: ignore[arg-type]
                else:
                    conn.execute(sql, parameters)
            conn.execute("COMMIT")
        except BaseException:
            # SQLite may have rolled back by itself already (it does on SQLITE_FULL).
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


async def commit(db: aiosqlite.Connection, batch: Batch) -> None:
    """Run ``batch`` in one transaction on ``db``'s thread, in one round trip.

    aiosqlite has no public call for "run this function on the connection's thread";
    ``Connection._execute`` is the one every public method of it goes through (0.17 to
    0.22), and ``tests/souls/store/test_batch.py`` fails loudly should it change."""
    await db._execute(_run, db, batch)  # type: ignore[no-untyped-call]


def _run(db: aiosqlite.Connection, batch: Batch) -> None:
    batch.run(db._conn)

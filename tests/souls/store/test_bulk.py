"""Multi-row inserts (souls.store.bulk) on a real database file. SQLite only: the
module binds SQLite's parameters on an aiosqlite connection (PgStore inserts with one
``unnest`` a table instead, tested through the interface in test_store.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path

import aiosqlite
import pytest

from souls.store.bulk import MAX_PARAMETERS, insert_rows


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[aiosqlite.Connection]:
    connection = await aiosqlite.connect(tmp_path / "bulk.db", isolation_level=None)
    await connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, kind TEXT, note TEXT)")
    try:
        yield connection
    finally:
        await connection.close()


async def test_rows_go_in_in_order_with_the_template_literals(db: aiosqlite.Connection) -> None:
    values = [1, "a", 2, None, 3, "c"]
    await insert_rows(db, "INSERT INTO t (id, kind, note)", "(?, 'x', ?)", values)
    rows = await db.execute_fetchall("SELECT id, kind, note FROM t ORDER BY id")
    assert [tuple(r) for r in rows] == [(1, "x", "a"), (2, "x", None), (3, "x", "c")]


async def test_more_rows_than_one_statement_may_bind_are_split(
    db: aiosqlite.Connection, tmp_path: Path
) -> None:
    count = MAX_PARAMETERS // 2 + 7  # two parameters a row: more than one statement
    values: list[object] = []
    for i in range(count):
        values += (i, f"note {i}")
    await insert_rows(db, "INSERT INTO t (id, note)", "(?, ?)", values)
    with closing(sqlite3.connect(tmp_path / "bulk.db")) as check:
        assert check.execute("SELECT count(*), min(id), max(id) FROM t").fetchone() == (
            count,
            0,
            count - 1,
        )
        assert check.execute("SELECT note FROM t WHERE id = ?", (count - 1,)).fetchone() == (
            f"note {count - 1}",
        )


async def test_values_that_do_not_fill_whole_rows_are_refused(db: aiosqlite.Connection) -> None:
    with pytest.raises(ValueError, match="3 values do not fill rows of 2"):
        await insert_rows(db, "INSERT INTO t (id, note)", "(?, ?)", [1, "a", 2])
    assert await db.execute_fetchall("SELECT * FROM t") == []


async def test_no_values_insert_nothing(db: aiosqlite.Connection) -> None:
    await insert_rows(db, "INSERT INTO t (id, note)", "(?, ?)", [])
    assert await db.execute_fetchall("SELECT * FROM t") == []

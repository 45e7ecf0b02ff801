"""The PostgreSQL store's migrations (souls/store/postgres/schema.py) on a real server:
applied once, by one of several daemons migrating at once, and each migration's data
carried forward."""

from __future__ import annotations

import json
import time

import anyio
import asyncpg
import pytest

from souls.store.postgres import schema
from souls.store.postgres.schema import MIGRATIONS, migrate


async def test_daemons_migrating_at_once_apply_each_migration_once(pg_dsn: str) -> None:
    dbs = [await asyncpg.connect(pg_dsn) for _ in range(3)]
    try:
        applied: list[list[str]] = []

        async def run(db: asyncpg.Connection) -> None:
            applied.append(await migrate(db))

        async with anyio.create_task_group() as tg:
            for db in dbs:
                tg.start_soon(run, db)
        names = [name for name, _ in MIGRATIONS]
        # Each was applied by exactly one of them; the others found it done.
        assert sorted(n for done in applied for n in done) == sorted(names)
        rows = await dbs[0].fetch("SELECT name FROM migrations ORDER BY name")
        assert [r[0] for r in rows] == sorted(names)
        assert await migrate(dbs[0]) == []
    finally:
        for db in dbs:
            await db.close()


async def test_term_counts_are_backfilled_for_rows_indexed_before(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = await asyncpg.connect(pg_dsn)
    try:
        # A database as the first migration left it, with an indexed row.
        with monkeypatch.context() as patch:
            patch.setattr(schema, "MIGRATIONS", MIGRATIONS[:1])
            assert await migrate(db) == ["0001_souls_events_index"]
        soul = await db.fetchval(
            "INSERT INTO souls (name, created) VALUES ('old', $1) RETURNING id", time.time()
        )
        await db.execute(
            "INSERT INTO memory_index (soul, memory_id, doc, prior, later, terms, context,"
            " length) VALUES ($1, 1, 'cat cat sat', 'dog', 'cat', $2, $3, 5)",
            soul,
            ["cat", "cat", "sat"],
            ["dog", "cat"],
        )
        assert await migrate(db) == [name for name, _ in MIGRATIONS[1:]]
        own, near = await db.fetchrow("SELECT own_counts, near_counts FROM memory_index")
        assert json.loads(own) == {"cat": 2, "sat": 1}
        assert json.loads(near) == {"dog": 1, "cat": 1}
    finally:
        await db.close()

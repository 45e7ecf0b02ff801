"""The PostgreSQL store's schema (souls/store/postgres/schema.py) on a real server:
migrations applied once, by one of several daemons migrating at once, each one's data
carried forward; the inverted index and statistics always what the rows say."""

from __future__ import annotations

import time
from collections import Counter

import anyio
import asyncpg
import pytest

from souls.store.neighbours import Row
from souls.store.postgres import schema
from souls.store.postgres.schema import MIGRATIONS, migrate
from souls.store.postgres.store import PgStore
from souls.store.store import NewEvent
from souls.text.tokenize import fts_document


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


async def test_postings_are_backfilled_for_rows_indexed_before(
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
        postings = await db.fetch(
            "SELECT term, memory_id, own, near, length FROM postings ORDER BY term"
        )
        assert [tuple(p) for p in postings] == [
            ("cat", 1, 2, 1, 5), ("dog", 1, 0, 1, 5), ("sat", 1, 1, 0, 5),
        ]  # fmt: skip
        # The arrays are gone with their indexes; the documents stay.
        columns = await db.fetch(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_name = 'memory_index' ORDER BY ordinal_position"
        )
        assert [c[0] for c in columns] == ["soul", "memory_id", "doc", "prior", "later", "length"]
    finally:
        await db.close()


def turn(i: int, text: str) -> NewEvent:
    """Turn ``i`` of two interleaved sessions."""
    return NewEvent(
        ref=None, kind="message", channel="t", sender="ada", group=None, mentioned=False,
        session=f"s{i % 2}", ts=float(i), recorded=float(i), salience=0.5, text=text,
        doc=fts_document(text),
    )  # fmt: skip


async def test_postings_and_statistics_follow_the_rows(pg_dsn: str) -> None:
    # Appends that rewrite their sessions' last rows, a forget that rewrites its
    # neighbours: the postings and statistics stay exactly what the rows say.
    pool = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=2)
    try:
        store = await PgStore.open(pool, "alpha", context_turns=2)
        texts = [f"turn {i} about {'cats' if i % 3 else 'dogs'} and {i % 4}" for i in range(12)]
        events = [turn(i, t) for i, t in enumerate(texts)]
        for start in range(0, 12, 5):
            await store.append(events[start : start + 5])
        await store.forget([3, 8])
        async with pool.acquire() as db:
            rows = [
                Row(r[0], r[1], r[2], r[3])
                for r in await db.fetch("SELECT memory_id, doc, prior, later FROM memory_index")
            ]
            postings = {
                (r[0], r[1]): (r[2], r[3], r[4])
                for r in await db.fetch("SELECT term, memory_id, own, near, length FROM postings")
            }
            stats = {
                r[0]: (r[1], r[2])
                for r in await db.fetch("SELECT term, doc_rows, rows FROM term_stats")
            }
            documents, tokens = await db.fetchrow("SELECT documents, tokens FROM index_stats")
        expected: dict[tuple[str, int], tuple[int, int, int]] = {}
        df: Counter[str] = Counter()
        own_df: Counter[str] = Counter()
        for row in rows:
            own, near = Counter(row.doc.split()), Counter(f"{row.prior} {row.later}".split())
            for term in own | near:
                expected[term, row.memory_id] = (own[term], near[term], len(row.tokens()))
            df.update(set(own | near))
            own_df.update(set(own))
        assert postings == expected
        assert stats == {term: (own_df[term], df[term]) for term in df}
        assert (documents, tokens) == (len(rows), sum(len(r.tokens()) for r in rows))
        assert len(rows) == 10
    finally:
        await pool.close()

"""The soul's store: migrations, append, search, stats. Every test of the interface's
behaviour runs on both backends (a real SQLite file, a real PostgreSQL server: the
``store``, ``opener`` and ``raw`` fixtures of tests/backends.py); those of
SQLite's file itself (its folders, WAL, ``Store.transaction``) on SQLite only."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, closing
from pathlib import Path

import anyio
import asyncpg
import pytest

from souls.store.bulk import MAX_PARAMETERS
from souls.store.changes import Changes
from souls.store.interface import SoulStore
from souls.store.postgres.schema import MIGRATIONS as PG_MIGRATIONS
from souls.store.postgres.store import PgStore
from souls.store.schema import MIGRATIONS
from souls.store.store import NewEvent, Store, StoreCounts
from souls.text.tokenize import fts_document, fts_match, tokens

T0 = 1_780_000_000.0

Opener = Callable[[], Awaitable[SoulStore]]
Raw = Callable[..., Awaitable[list[tuple[object, ...]]]]

# What a repeated ref raises, on either backend.
INTEGRITY_ERRORS = (sqlite3.IntegrityError, asyncpg.UniqueViolationError)


def new_event(text: str, ref: str | None = None, *, salience: float = 0.5) -> NewEvent:
    return NewEvent(
        ref=ref,
        kind="message",
        channel="test",
        sender="ada",
        group=None,
        mentioned=False,
        session=None,
        ts=T0,
        recorded=T0,
        salience=salience,
        text=text,
        doc=fts_document(text),
    )


def index(store: SoulStore) -> tuple[str, str]:
    """The full-text index's table and its memory id column, as ``raw`` reads them."""
    return ("memory_index", "memory_id") if isinstance(store, PgStore) else ("memory_fts", "rowid")


async def test_migrations_are_applied_once_and_recorded_by_name(
    store: SoulStore, opener: Opener, raw: Raw
) -> None:
    postgres = isinstance(store, PgStore)
    await store.close()
    first = await raw("SELECT name, applied_at FROM migrations ORDER BY name")
    applied = PG_MIGRATIONS if postgres else MIGRATIONS
    assert [name for name, _ in first] == [name for name, _ in applied]
    if postgres:
        tables = {r[0] for r in await raw("SELECT tablename FROM pg_tables")}
        assert {"souls", "events", "memories", "memory_index", "postings"} <= tables
        assert {"term_stats", "index_stats", "counters", "soul_state", "migrations"} <= tables
    else:
        tables = {r[0] for r in await raw("SELECT name FROM sqlite_master")}
        assert {"events", "memories", "memory_fts", "counters", "migrations"} <= tables
        assert {"summaries", "edges", "markers", "gaps", "soul_state"} <= tables

    again = await opener()
    await again.append([new_event("still works after reopening")])
    # Reopening applied nothing again: same rows, same times.
    assert await raw("SELECT name, applied_at FROM migrations ORDER BY name") == first


# SQLite only, the next two tests: the database file itself (its folders, WAL).
@asynccontextmanager
async def opened(path: Path) -> AsyncIterator[Store]:
    with anyio.fail_after(10):
        store = await Store.open(path)
        try:
            yield store
        finally:
            await store.close()


def query(path: Path, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
    """Read the database file with a connection of its own (what another process sees)."""
    with closing(sqlite3.connect(path)) as db:
        return db.execute(sql, params).fetchall()


async def test_open_creates_missing_folders(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "soul.db"
    async with opened(path) as store:
        assert store.path == path
    assert path.is_file()


async def test_journal_mode_is_wal(tmp_path: Path) -> None:
    path = tmp_path / "soul.db"
    async with opened(path):
        assert query(path, "PRAGMA journal_mode") == [("wal",)]
        assert (tmp_path / "soul.db-wal").exists()


# On both backends from here on, but for the last test.


async def test_append_assigns_consecutive_ids_across_reopen(
    store: SoulStore, opener: Opener, raw: Raw
) -> None:
    assert await store.append([new_event(f"first batch {i}") for i in range(3)]) == [1, 2, 3]
    assert await store.append([new_event("second batch")]) == [4]
    assert await store.append([]) == []
    await store.close()
    store = await opener()
    assert await store.append([new_event("after reopen"), new_event("and more")]) == [5, 6]
    assert await store.counts() == StoreCounts(events=6, memories=6, hidden=0)
    # Each event got its observation memory and its index row, under matching ids.
    memories = await raw("SELECT id, event_id, kind, text FROM memories ORDER BY id")
    events = await raw("SELECT id, text FROM events ORDER BY id")
    assert [(m[0], m[1]) for m in memories] == [(i, i) for i in range(1, 7)]
    assert {m[2] for m in memories} == {"observation"}
    assert [m[3] for m in memories] == [e[1] for e in events]
    table, rowid = index(store)
    assert await raw(f"SELECT {rowid} FROM {table} ORDER BY 1") == [(i,) for i in range(1, 7)]


async def test_append_beyond_one_statement_of_rows(store: SoulStore, raw: Raw) -> None:
    # More events than one multi-row INSERT may bind on SQLite (souls.store.bulk): split,
    # in one transaction, ids and texts still matching row for row (one unnest a table
    # on PostgreSQL).
    count = MAX_PARAMETERS // 13 + 10
    ids = await store.append([new_event(f"note number {i}", f"r-{i}") for i in range(count)])
    assert ids == list(range(1, count + 1))
    assert len(await store.search(fts_match(tokens("number")), 3)) == 3
    assert await raw("SELECT count(*) FROM events") == [(count,)]
    assert await raw("SELECT id, ref, text FROM events WHERE id = ?", count) == [
        (count, f"r-{count - 1}", f"note number {count - 1}")
    ]
    assert await raw("SELECT count(*) FROM memories WHERE event_id = id") == [(count,)]
    table, rowid = index(store)
    assert await raw(f"SELECT doc FROM {table} WHERE {rowid} = ?", count) == [
        (fts_document(f"note number {count - 1}"),)
    ]


async def test_append_stores_every_field(store: SoulStore, raw: Raw) -> None:
    event = NewEvent(
        ref="r-1", kind="dm", channel="telegram", sender="ada", group="team", mentioned=True,
        session="s-9", ts=T0 - 60, recorded=T0, salience=0.9, text="Deploy at noon",
        doc="deploy at noon",
    )  # fmt: skip
    await store.append([event])
    # mentioned: 1 on SQLite, true on PostgreSQL (equal in Python).
    assert await raw(
        "SELECT ref, kind, channel, sender, grp, mentioned, session, ts, recorded, salience, text"
        " FROM events",
    ) == [("r-1", "dm", "telegram", "ada", "team", 1, "s-9", T0 - 60, T0, 0.9, "Deploy at noon")]


async def test_known_refs(store: SoulStore) -> None:
    await store.append(
        [new_event("one", "r-1", salience=0.4), new_event("two"), new_event("three", "r-3")]
    )
    assert await store.known_refs(["r-3", "nope", "r-1"]) == {"r-3": (3, 0.5), "r-1": (1, 0.4)}
    assert await store.known_refs([]) == {}


async def test_known_refs_beyond_the_parameter_chunk(store: SoulStore) -> None:
    await store.append([new_event(f"event {i}", f"r-{i}") for i in range(1200)])
    asked = [f"r-{i}" for i in range(0, 2400, 2)]  # 1200 refs, every other one stored
    found = await store.known_refs(asked)
    assert found == {f"r-{i}": (i + 1, 0.5) for i in range(0, 1200, 2)}


async def test_counters_are_upserted_and_persist(store: SoulStore, opener: Opener) -> None:
    assert await store.counters() == {}
    await store.flush(Changes(counters=Counter({"dropped.attention": 2})), now=1.0)
    await store.append(
        [new_event("x")], Changes(counters=Counter({"dropped.attention": 3, "other": 1}))
    )
    assert await store.counters() == {"dropped.attention": 5, "other": 1}
    await store.close()
    store = await opener()
    await store.append([], Changes(counters=Counter({"other": 1})))
    assert await store.counters() == {"dropped.attention": 5, "other": 2}
    assert (await store.counts()).events == 1


async def test_search_orders_by_score_and_returns_the_document(store: SoulStore) -> None:
    texts = [
        "the cat sat",
        "cats and dogs and more cats and cats",
        "a dog barked at the postman",
        "Cat food is expensive",
    ]
    await store.append([new_event(t, f"r-{i}") for i, t in enumerate(texts)])
    hits = await store.search(fts_match(["cat"]), 10)
    assert {hit.memory_id for hit in hits} == {1, 2, 4}
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)
    assert hits[0].memory_id == 2  # three occurrences beat one
    for hit in hits:
        text = texts[hit.memory_id - 1]
        assert hit.text == text
        assert hit.ref == f"r-{hit.memory_id - 1}"
        assert hit.event_id == hit.memory_id
        assert hit.kind == "observation"
        assert hit.salience == 0.5
    assert len(await store.search(fts_match(["cat"]), 2)) == 2
    assert await store.search(fts_match(["giraffe"]), 10) == []


async def test_candidates_carry_the_indexed_document(store: SoulStore) -> None:
    texts = ["the cat sat", "cats and dogs and more cats and cats", "a dog barked"]
    await store.append([new_event(t) for t in texts])
    found = await store.candidates(fts_match(["cat"]), 10)
    hits = await store.search(fts_match(["cat"]), 10)
    assert [c.memory_id for c in found] == [2, 1]
    assert [c.doc for c in found] == [fts_document(texts[1]), fts_document(texts[0])]
    assert [c.score for c in found] == [hit.score for hit in hits]


async def test_hits_keep_the_order_and_scores_they_are_given(store: SoulStore) -> None:
    await store.append([new_event(f"note {i}", f"r{i}") for i in range(5)])
    hits = await store.hits([(4, 2.5), (1, 1.0), (99, 0.5), (3, 0.25)])
    assert [(h.memory_id, h.score, h.text, h.ref) for h in hits] == [
        (4, 2.5, "note 3", "r3"),
        (1, 1.0, "note 0", "r0"),
        (3, 0.25, "note 2", "r2"),
    ]


async def test_term_stats_match_what_was_appended(store: SoulStore) -> None:
    texts = [
        "Deploying the database migration failed",
        "The database is fine, the deploy is fine",
        "数据库迁移失败了",
        "lunch at noon with Ada",
        "deploy deploy deploy",
    ]
    empty = await store.term_stats()
    assert (empty.documents, empty.tokens, empty.df("database")) == (0, 0, 0)
    await store.append([new_event(t) for t in texts])
    stats = await store.term_stats()
    documents = [tokens(t) for t in texts]
    df: Counter[str] = Counter()
    for doc in documents:
        df.update(set(doc))
    assert stats.documents == len(texts)
    assert stats.tokens == sum(len(doc) for doc in documents)
    for term, count in df.items():
        assert stats.df(term) == count, term
    assert stats.df("deploy") == 3
    assert stats.df("数据") == 1
    assert stats.df("giraffe") == 0


async def test_a_failing_append_rolls_back_completely(
    store: SoulStore, opener: Opener, raw: Raw
) -> None:
    assert await store.append([new_event("kept", "r-1")], Changes(counters=Counter({"c": 1}))) == [
        1
    ]
    # The store trusts its caller to have de-duplicated; a repeated ref still cannot
    # get past the UNIQUE constraint, and the whole batch goes with it.
    with pytest.raises(INTEGRITY_ERRORS):
        await store.append(
            [new_event("fresh one"), new_event("fresh two", "r-2"), new_event("dup", "r-2")],
            Changes(counters=Counter({"c": 10})),
        )
    with pytest.raises(INTEGRITY_ERRORS):
        await store.append(
            [new_event("fresh three"), new_event("again", "r-1")],
            Changes(counters=Counter({"c": 100})),
        )
    assert await store.counts() == StoreCounts(events=1, memories=1, hidden=0)
    assert await store.counters() == {"c": 1}
    assert (await store.term_stats()).documents == 1
    assert await store.search(fts_match(["fresh"]), 10) == []
    # No holes: the next batch continues right after the last committed one.
    assert await store.append([new_event("next", "r-2")]) == [2]
    await store.close()
    table, _ = index(store)
    assert await raw(f"SELECT count(*) FROM {table}") == [(2,)]
    store = await opener()
    assert await store.append([new_event("after reopen")]) == [3]


# SQLite only: Store.transaction() hands out the SQLite connection (not in the interface;
# PgStore's writes are asyncpg transactions of their own).


async def test_transaction_rolls_back_on_error(tmp_path: Path) -> None:
    async def write_then_fail(store: Store) -> None:
        async with store.transaction() as db:
            await db.execute("INSERT INTO counters (name, value) VALUES ('x', 1)")
            raise RuntimeError("boom")

    async with opened(tmp_path / "soul.db") as store:
        with pytest.raises(RuntimeError, match="boom"):
            await write_then_fail(store)
        assert await store.counters() == {}
        # The connection is usable again: no transaction was left open.
        async with store.transaction() as db:
            await db.execute("INSERT INTO counters (name, value) VALUES ('y', 2)")
        assert await store.counters() == {"y": 2}

"""One write transaction in one round trip (souls.store.batch), on a real database file."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from souls.store.batch import Batch, commit
from souls.store.bulk import MAX_PARAMETERS
from souls.store.changes import Changes
from souls.store.store import NewEvent, Store
from souls.text.tokenize import fts_document, fts_match, tokens


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[aiosqlite.Connection]:
    connection = await aiosqlite.connect(tmp_path / "batch.db", isolation_level=None)
    await connection.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
    try:
        yield connection
    finally:
        await connection.close()


def new_event(text: str) -> NewEvent:
    return NewEvent(
        ref=None, kind="message", channel="test", sender="ada", group=None, mentioned=False,
        session=None, ts=1.0, recorded=1.0, salience=0.5, text=text, doc=fts_document(text),
    )  # fmt: skip


def rows(path: Path) -> list[tuple[object, ...]]:
    with closing(sqlite3.connect(path)) as check:
        return check.execute("SELECT id, note FROM t ORDER BY id").fetchall()


class RoundTrips:
    """Counts the calls handed to a connection's thread (aiosqlite's one way there)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        original = aiosqlite.Connection._execute

        async def counted(conn: aiosqlite.Connection, fn: Any, *args: Any, **kw: Any) -> Any:
            self.calls += 1
            return await original(conn, fn, *args, **kw)  # type: ignore[no-untyped-call]

        monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)


async def test_every_statement_commits_together_in_one_round_trip(
    db: aiosqlite.Connection, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trips = RoundTrips(monkeypatch)
    batch = Batch()
    batch.execute("INSERT INTO t (id, note) VALUES (?, ?)", (1, "one"))
    batch.executemany("INSERT INTO t (id, note) VALUES (?, ?)", [(2, "two"), (3, "three")])
    count = MAX_PARAMETERS // 2 + 5  # more rows than one statement may bind
    values: list[object] = []
    for i in range(10, 10 + count):
        values += (i, f"n{i}")
    batch.insert_rows("INSERT INTO t (id, note)", "(?, ?)", values)
    batch.execute("UPDATE t SET note = 'uno' WHERE id = 1")
    await commit(db, batch)
    assert trips.calls == 1
    found = rows(tmp_path / "batch.db")
    assert found[:3] == [(1, "uno"), (2, "two"), (3, "three")]
    assert len(found) == 3 + count
    assert not db.in_transaction


async def test_a_failing_statement_keeps_nothing_of_the_batch(
    db: aiosqlite.Connection, tmp_path: Path
) -> None:
    await db.execute("INSERT INTO t (id, note) VALUES (1, 'kept from before')")
    batch = Batch()
    batch.execute("INSERT INTO t (id, note) VALUES (2, 'two')")
    batch.execute("UPDATE t SET note = 'changed' WHERE id = 1")
    batch.execute("INSERT INTO t (id, note) VALUES (3, NULL)")  # NOT NULL fails
    with pytest.raises(sqlite3.IntegrityError):
        await commit(db, batch)
    assert rows(tmp_path / "batch.db") == [(1, "kept from before")]
    assert not db.in_transaction
    # The connection goes on: the next batch commits.
    ok = Batch()
    ok.execute("INSERT INTO t (id, note) VALUES (2, 'two')")
    await commit(db, ok)
    assert rows(tmp_path / "batch.db") == [(1, "kept from before"), (2, "two")]


def test_statements_without_rows_are_never_sent() -> None:
    batch = Batch()
    batch.executemany("INSERT INTO t (id, note) VALUES (?, ?)", [])
    batch.insert_rows("INSERT INTO t (id, note)", "(?, ?)", [])
    assert not batch
    assert len(batch) == 0
    with pytest.raises(ValueError, match="do not fill rows"):
        batch.insert_rows("INSERT INTO t (id, note)", "(?, ?)", [1, "a", 2])


async def test_a_store_append_is_one_round_trip_however_much_it_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await Store.open(tmp_path / "soul.db")
    try:
        changes = Changes()
        changes.counters["pushes"] += 3
        changes.gaps.append(("paris", "no answer"))
        trips = RoundTrips(monkeypatch)
        ids = await store.append(
            [new_event("first of three"), new_event("second"), new_event("third")],
            changes,
            1.0,
        )
        assert trips.calls == 1  # no session: no tails to read
        assert (await store.counters())["pushes"] == 3
        assert [h.memory_id for h in await store.search(fts_match(tokens("second")), 5)] == [ids[1]]
    finally:
        await store.close()

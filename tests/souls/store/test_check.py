"""The read-only database checks (``soupd check``), on real soul database files: a sound
soul passes; a corrupt page, a broken full-text index, an index out of step with the
memories and a schema from a newer soupd each fail; the checked file is never written."""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections import Counter
from contextlib import closing
from pathlib import Path

import anyio
import pytest
from test_store import new_event

from souls.store.check import Report, check, fts_integrity, integrity, stored_refs
from souls.store.schema import MIGRATIONS
from souls.store.store import Store

EVENTS = 1500
PAGE = 4096  # SQLite's default page size, which the store keeps


async def _fill(path: Path) -> None:
    store = await Store.open(path)
    try:
        for batch in range(EVENTS // 100):
            texts = [f"deploy {batch}-{i} of service {i % 7} timed out" for i in range(100)]
            await store.append([new_event(t, f"ref-{batch}-{i}") for i, t in enumerate(texts)])
    finally:
        await store.close()  # the last connection: the WAL is checkpointed into the file


@pytest.fixture(scope="module")
def sound_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real soul database, made once; tests work on copies of it."""
    path = tmp_path_factory.mktemp("sound") / "soul.db"
    anyio.run(_fill, path)
    return path


@pytest.fixture
def db(sound_db: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "soul.db"
    shutil.copyfile(sound_db, copy)
    return copy


def write(path: Path, *statements: str) -> None:
    """Damage a copy by hand, with a connection of its own."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        for statement in statements:
            conn.execute(statement)


def test_a_sound_soul_passes_every_check(db: Path) -> None:
    report = check(db)

    assert report.ok
    assert (report.integrity, report.fts) == (["ok"], "ok")
    assert report.database == str(db)
    assert report.counts is not None
    assert (report.counts.events, report.counts.memories) == (EVENTS, EVENTS)
    assert (report.counts.visible, report.counts.indexed) == (EVENTS, EVENTS)
    assert (report.counts.index_rows_missing, report.counts.index_rows_extra) == (0, 0)
    assert report.applied == [name for name, _ in MIGRATIONS]
    assert (report.pending, report.unknown) == ([], [])
    assert integrity(db) == ["ok"]
    assert fts_integrity(db) == "ok"


def test_a_corrupt_page_fails_integrity_with_what_sqlite_found(db: Path) -> None:
    data = bytearray(db.read_bytes())
    pages = len(data) // PAGE
    assert pages > 100  # big enough that the middle is table pages, not the header
    # Four whole pages of garbage: a page's unused middle alone could go unnoticed.
    start = pages // 2 * PAGE
    data[start : start + 4 * PAGE] = random.Random(7).randbytes(4 * PAGE)
    db.write_bytes(bytes(data))

    report = check(db)

    assert not report.integrity_ok
    assert not report.ok
    assert report.integrity, "no findings"
    assert all(report.integrity), report.integrity
    assert "ok" not in report.integrity
    assert integrity(db) == report.integrity


def test_a_file_that_is_no_database_fails_without_raising(db: Path) -> None:
    db.write_bytes(random.Random(3).randbytes(3 * PAGE))

    report = check(db)

    assert report.integrity == ["file is not a database"]
    assert report.counts is None
    assert report.unreadable == "file is not a database"
    assert not report.ok


def test_a_broken_full_text_index_fails_the_fts_check(db: Path) -> None:
    # The newest segment block of the index gone: FTS5's own check must notice.
    write(db, "DELETE FROM memory_fts_data WHERE id = (SELECT max(id) FROM memory_fts_data)")

    report = check(db)

    assert report.fts != "ok"
    assert not report.fts_ok
    assert not report.ok
    assert fts_integrity(db) == report.fts


def test_an_index_out_of_step_with_the_memories_fails(db: Path) -> None:
    # Hidden as the soul hides one (row dropped from the index): still sound.
    write(
        db,
        "UPDATE memories SET hidden_at = 1 WHERE id = 3",
        "DELETE FROM memory_fts WHERE rowid = 3",
    )
    hidden = check(db)
    assert hidden.ok
    assert hidden.counts is not None
    assert (hidden.counts.visible, hidden.counts.indexed) == (EVENTS - 1, EVENTS - 1)

    # A visible memory missing from the index, and an index row of a hidden one.
    write(
        db,
        "DELETE FROM memory_fts WHERE rowid = 5",
        "UPDATE memories SET hidden_at = 1 WHERE id = 9",
    )
    report = check(db)

    assert report.fts_ok  # the index is consistent in itself...
    assert not report.index_ok  # ...but not with the memories
    assert report.counts is not None
    assert (report.counts.index_rows_missing, report.counts.index_rows_extra) == (1, 1)
    assert not report.ok


def test_migrations_pending_are_fine_and_unknown_ones_fail(db: Path) -> None:
    last = MIGRATIONS[-1][0]
    write(db, f"DELETE FROM migrations WHERE name = '{last}'")
    older = check(db)
    assert (older.pending, older.unknown) == ([last], [])
    assert older.ok  # the daemon applies it when it next opens the file

    write(db, "INSERT INTO migrations (name, applied_at) VALUES ('9999_from_the_future', 0)")
    newer = check(db)
    assert newer.unknown == ["9999_from_the_future"]
    assert newer.applied[-1] == "9999_from_the_future"
    assert not newer.schema_ok
    assert not newer.ok


def test_an_empty_file_is_a_soul_that_never_got_started(tmp_path: Path) -> None:
    path = tmp_path / "soul.db"
    path.touch()

    report = check(path)

    assert report.ok
    assert report.applied == []
    assert report.pending == [name for name, _ in MIGRATIONS]


def test_a_missing_file_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        check(tmp_path / "nothing.db")
    with pytest.raises(FileNotFoundError):
        integrity(tmp_path / "nothing.db")


def test_stored_refs_counts_rows_per_ref(db: Path) -> None:
    refs = stored_refs(db)
    assert len(refs) == EVENTS
    assert set(refs.values()) == {1}
    assert refs["ref-0-0"] == refs[f"ref-{EVENTS // 100 - 1}-99"] == 1


def test_the_checks_never_write_the_checked_file(db: Path) -> None:
    before = (db.read_bytes(), db.stat().st_mtime_ns)

    report = check(db)
    integrity(db)
    fts_integrity(db)
    stored_refs(db)

    assert report.ok
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before
    assert not (db.parent / f"{db.name}-journal").exists()


async def test_a_check_beside_an_open_writer_sees_what_it_committed(db: Path) -> None:
    store = await Store.open(db)
    try:
        await store.append([new_event("written while the check runs", "live-1")])
        # The new event is in the WAL only; the file itself must stay as it was.
        main_file = await anyio.Path(db).read_bytes()
        report: Report = await anyio.to_thread.run_sync(check, db)
        refs: Counter[str] = await anyio.to_thread.run_sync(stored_refs, db)
        assert await anyio.Path(db).read_bytes() == main_file
        await store.append([new_event("and after it", "live-2")])  # not blocked
    finally:
        await store.close()

    assert report.ok
    assert report.counts is not None
    assert report.counts.events == EVENTS + 1
    assert refs["live-1"] == 1

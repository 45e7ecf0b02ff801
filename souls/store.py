"""One soul's SQLite database: the narrow interface the soul actor writes through.

Invariants:

* One writer: only the soul actor that opened the store uses it, so row ids are
  handed out from in-memory counters (read back from the table at open).
* Every write happens inside :meth:`Store.transaction` (``BEGIN IMMEDIATE`` …
  ``COMMIT``); the connection is otherwise in autocommit mode, so no statement ever
  opens an implicit transaction behind our back.
* WAL is switched on outside any transaction, before the migrations run.
* Nothing here knows about gates or tokenizing: callers hand in prepared rows.

The interface is deliberately narrow (append events, add derived rows, search, read
by id, counters) so that another backend with its own full-text search can sit
behind it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import aiosqlite
import anyio

from souls.bm25 import TermStats
from souls.changes import Changes, write_changes
from souls.schema import MIGRATIONS

__all__ = ["Candidate", "Hit", "NewEvent", "Store", "StoreCounts", "Synchronous"]

Synchronous = Literal["off", "normal", "full", "extra"]


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event that passed the gates, ready to be appended with its memory."""

    ref: str | None
    kind: str
    channel: str | None
    sender: str | None
    group: str | None
    mentioned: bool
    session: str | None
    ts: float
    recorded: float
    salience: float
    text: str
    doc: str  # the tokenizer's document for the full-text index
    surprise: float = 0.0  # novelty against the summary in force when it arrived


@dataclass(frozen=True, slots=True)
class Hit:
    """A visible memory with its score (higher is better)."""

    memory_id: int
    kind: str
    text: str
    salience: float
    score: float
    ref: str | None
    event_id: int | None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A full-text match before re-ranking: its BM25 score and indexed document."""

    memory_id: int
    score: float
    doc: str  # the tokenizer's output, tokens joined by spaces


@dataclass(frozen=True, slots=True)
class StoreCounts:
    events: int
    memories: int
    hidden: int


class Store:
    """An open soul database. Create with :meth:`open`, finish with :meth:`close`."""

    def __init__(self, path: Path, db: aiosqlite.Connection) -> None:
        self.path = path
        self._db = db
        self._next_event = 1
        self._next_memory = 1

    @classmethod
    async def open(cls, path: Path, *, synchronous: Synchronous = "normal") -> Store:
        """Open (creating if needed) and migrate the database at ``path``."""
        await anyio.Path(path.parent).mkdir(parents=True, exist_ok=True)
        db = await aiosqlite.connect(path, isolation_level=None)
        store = cls(path, db)
        try:
            await db.execute("PRAGMA journal_mode = WAL")
            await db.execute(f"PRAGMA synchronous = {synchronous.upper()}")
            await db.execute("PRAGMA foreign_keys = ON")
            await db.execute("PRAGMA busy_timeout = 5000")
            await store._migrate()
            store._next_event = await store._next_id("events")
            store._next_memory = await store._next_id("memories")
        except BaseException:
            with anyio.CancelScope(shield=True):
                await db.close()
            raise
        return store

    async def close(self) -> None:
        await self._db.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``; rolled back on any exception or cancellation."""
        await self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._db.execute("ROLLBACK")
            raise
        await self._db.execute("COMMIT")

    async def _migrate(self) -> None:
        await self._db.execute(
            "CREATE TABLE IF NOT EXISTS migrations"
            " (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
        )
        async with self._db.execute("SELECT name FROM migrations") as cursor:
            applied = {row[0] for row in await cursor.fetchall()}
        for name, sql in MIGRATIONS:
            if name in applied:
                continue
            async with self.transaction() as db:
                for statement in _statements(sql):
                    await db.execute(statement)
                await db.execute(
                    "INSERT INTO migrations (name, applied_at) VALUES (?, ?)", (name, time.time())
                )

    async def _next_id(self, table: str) -> int:
        async with self._db.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {table}") as cursor:
            row = await cursor.fetchone()
        assert row is not None
        return int(row[0])

    async def known_refs(self, refs: Sequence[str]) -> dict[str, tuple[int, float]]:
        """For each ``ref`` already stored: its event id and salience."""
        found: dict[str, tuple[int, float]] = {}
        # Stay well below SQLite's bound-parameter limit.
        for start in range(0, len(refs), 500):
            chunk = refs[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT ref, id, salience FROM events WHERE ref IN ({marks})"
            for ref, event_id, salience in await self._db.execute_fetchall(sql, chunk):
                found[ref] = (event_id, salience)
        return found

    @property
    def db(self) -> aiosqlite.Connection:
        """The connection, for the soul's other store modules (:mod:`souls.inner`)."""
        return self._db

    async def append(
        self, events: Sequence[NewEvent], changes: Changes | None = None, now: float = 0.0
    ) -> list[int]:
        """Append events, each with its observation memory, and ``changes``, in one
        transaction. Returns the new event ids in order."""
        first_event, first_memory = self._next_event, self._next_memory
        event_rows: list[tuple[object, ...]] = []
        memory_rows: list[tuple[object, ...]] = []
        fts_rows: list[tuple[object, ...]] = []
        for offset, e in enumerate(events):
            event_id, memory_id = first_event + offset, first_memory + offset
            event_rows.append(
                (
                    event_id, e.ref, e.kind, e.channel, e.sender, e.group, int(e.mentioned),
                    e.session, e.ts, e.recorded, e.salience, e.text,
                )
            )  # fmt: skip
            memory_rows.append((memory_id, event_id, e.text, e.salience, e.recorded, e.surprise))
            fts_rows.append((memory_id, e.doc))
        # Shielded: once a batch is handed to SQLite it is finished (committed or rolled
        # back) before anyone can observe a cancellation, so a reply never misreports it.
        with anyio.CancelScope(shield=True):
            async with self.transaction() as db:
                if events:
                    await db.executemany(
                        "INSERT INTO events (id, ref, kind, channel, sender, grp, mentioned,"
                        " session, ts, recorded, salience, text)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                        event_rows,
                    )
                    await db.executemany(
                        "INSERT INTO memories (id, kind, event_id, text, salience, created,"
                        " surprise) VALUES (?, 'observation', ?, ?, ?, ?, ?)",
                        memory_rows,
                    )
                    await db.executemany(
                        "INSERT INTO memory_fts (rowid, doc) VALUES (?, ?)", fts_rows
                    )
                if changes:
                    await write_changes(db, changes, now)
        # Only advance once committed: a rolled-back batch must not leave holes that a
        # restarted soul would not reproduce.
        self._next_event += len(events)
        self._next_memory += len(events)
        return list(range(first_event, first_event + len(events)))

    async def flush(self, changes: Changes, now: float) -> None:
        """Write ``changes`` alone, in one (shielded) transaction."""
        if changes:
            await self.append([], changes, now)

    # ``ORDER BY bm25(...)`` rather than ``ORDER BY rank``: the same order, measurably
    # cheaper in SQLite 3.40.
    async def search(self, match: str, limit: int) -> list[Hit]:
        """Visible memories matching the FTS5 expression ``match``, best BM25 first."""
        sql = """
            SELECT m.id, m.kind, m.text, m.salience, -f.score, e.ref, m.event_id
            FROM (SELECT rowid, bm25(memory_fts) AS score FROM memory_fts
                  WHERE memory_fts MATCH ? ORDER BY bm25(memory_fts) LIMIT ?) AS f
            JOIN memories AS m ON m.id = f.rowid
            LEFT JOIN events AS e ON e.id = m.event_id
            ORDER BY f.score, m.id
        """
        rows = await self._db.execute_fetchall(sql, (match, limit))
        return [Hit(*row) for row in rows]

    async def candidates(self, match: str, limit: int) -> list[Candidate]:
        """Like :meth:`search`, but only ids, scores and indexed documents (to re-rank)."""
        sql = """
            SELECT rowid, -bm25(memory_fts), doc FROM memory_fts
            WHERE memory_fts MATCH ? ORDER BY bm25(memory_fts) LIMIT ?
        """
        rows = await self._db.execute_fetchall(sql, (match, limit))
        return [Candidate(*row) for row in rows]

    async def hits(self, scored: Sequence[tuple[int, float]]) -> list[Hit]:
        """The visible memories named in ``scored`` (id, score), in that order."""
        if not scored:
            return []
        marks = ",".join("?" * len(scored))
        sql = f"""
            SELECT m.id, m.kind, m.text, m.salience, e.ref, m.event_id
            FROM memories AS m LEFT JOIN events AS e ON e.id = m.event_id
            WHERE m.id IN ({marks}) AND m.hidden_at IS NULL
        """
        rows = await self._db.execute_fetchall(sql, [memory_id for memory_id, _ in scored])
        found = {row[0]: row for row in rows}
        return [
            Hit(memory_id, kind, text, salience, score, ref, event_id)
            for memory_id, score in scored
            if memory_id in found
            for _, kind, text, salience, ref, event_id in (found[memory_id],)
        ]

    async def term_stats(self) -> TermStats:
        """BM25 statistics of the visible index, read from the FTS5 vocabulary."""
        df: dict[str, int] = {}
        tokens = 0
        async with self._db.execute("SELECT term, doc, cnt FROM memory_vocab") as cursor:
            for term, documents, count in await cursor.fetchall():
                df[term] = documents
                tokens += count
        async with self._db.execute("SELECT count(*) FROM memory_fts") as cursor:
            row = await cursor.fetchone()
        assert row is not None
        return TermStats(df, documents=row[0], tokens=tokens)

    async def counts(self) -> StoreCounts:
        sql = """
            SELECT (SELECT count(*) FROM events),
                   (SELECT count(*) FROM memories),
                   (SELECT count(*) FROM memories WHERE hidden_at IS NOT NULL)
        """
        async with self._db.execute(sql) as cursor:
            row = await cursor.fetchone()
        assert row is not None
        return StoreCounts(events=row[0], memories=row[1], hidden=row[2])

    async def counters(self) -> dict[str, int]:
        async with self._db.execute("SELECT name, value FROM counters") as cursor:
            return {name: value for name, value in await cursor.fetchall()}


def _statements(script: str) -> list[str]:
    """Split a migration script into statements.

    Migration scripts keep semicolons out of string literals; comments are dropped
    first, so they may say anything.
    """
    code = "\n".join(line.split("--", 1)[0] for line in script.splitlines())
    return [statement.strip() for statement in code.split(";") if statement.strip()]

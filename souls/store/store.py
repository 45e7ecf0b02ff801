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

import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import aiosqlite
import anyio
import msgspec

from souls.results import DecayResult, DueTask, MemoryItem
from souls.store import due, embeddings, export, forgetting, inner, logs, pages, persons
from souls.store.batch import Batch, commit
from souls.store.bm25 import TermStats
from souls.store.cards import CardRows
from souls.store.changes import SET_STATE, Changes, write_changes
from souls.store.fading import Fading, fade
from souls.store.forgetting import ForgetPlan, Forgetting, Forgotten
from souls.store.hiding import hide
from souls.store.inner import MindCounts, Observation, Summary
from souls.store.knowledge import KnowledgeRows
from souls.store.logs import Logs, Scrub
from souls.store.neighbours import Row, lay_out, places, refresh, tails
from souls.store.pages import StoredEvent
from souls.store.schema import MIGRATIONS
from souls.store.scope import Scope
from supervisor.errors import DiskFull, StoreUnusable

__all__ = [
    "Candidate",
    "Hit",
    "NewEvent",
    "Origin",
    "Scope",
    "Store",
    "StoreCounts",
    "Successor",
    "Synchronous",
]

# A memory's kind as recalled: "voice" when its event was transcribed from speech, so
# the context can say so (channels mark such events kind "voice").
_KIND = "CASE WHEN e.kind = 'voice' THEN 'voice' ELSE m.kind END"
# Whether a memory's event stated a fact that a later claim superseded: one index
# lookup a memory, so that recall asks for successors only when there may be one.
_SUPERSEDED = (
    "EXISTS (SELECT 1 FROM claims AS sc WHERE sc.event_id = m.event_id"
    " AND +sc.state = 'superseded')"
)

Synchronous = Literal["off", "normal", "full", "extra"]


class NewEvent(msgspec.Struct, frozen=True, gc=False):
    """An event that passed the gates, ready to be appended with its memory.

    A msgspec Struct, made once per event: a tenth of a frozen dataclass's cost. Its
    fields are strings, numbers and None only, so the garbage collector need not track
    it (``gc=False``)."""

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
    person: str | None = None  # the person behind (channel, sender), when linked


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
    created: float = 0.0  # when the memory was stored
    # Its event stated a fact a later claim superseded (see Store.successors).
    superseded: bool = False


class Candidate(msgspec.Struct, frozen=True, gc=False):
    """A full-text match before re-ranking: its BM25 score and indexed row, and what
    recall needs of its memory, so that re-ranking dozens of candidates reads nothing
    more (a msgspec Struct: dozens are made per recall)."""

    memory_id: int
    score: float
    doc: str  # the tokenizer's output, tokens joined by spaces
    # The neighbouring turns' documents (see souls.store.neighbours), before and after it.
    prior: str
    later: str
    visible: int  # 0: the memory is hidden (or gone), recall must not return it; else 1
    kind: str | None
    text: str | None
    salience: float | None
    ref: str | None
    event_id: int | None
    # Its event's sender, person and time; ts is None when it came from no event.
    sender: str | None
    person: str | None
    ts: float | None
    created: float | None  # when the memory was stored
    superseded: int = 0  # 1: its event stated a fact a later claim superseded

    def hit(self, score: float) -> Hit:
        """The memory as recall returns it, with ``score`` (only when visible)."""
        assert self.kind is not None
        assert self.text is not None
        assert self.salience is not None
        return Hit(
            self.memory_id,
            self.kind,
            self.text,
            self.salience,
            score,
            self.ref,
            self.event_id,
            self.created or 0.0,
            bool(self.superseded),
        )

    def origin(self) -> Origin | None:
        """Who said it and when (:meth:`Store.origins`); None when from no event."""
        return None if self.ts is None else Origin(self.sender, self.person, self.ts)


@dataclass(frozen=True, slots=True)
class Origin:
    """Who said a memory and when: its event's sender, the person behind it (when
    linked) and time."""

    sender: str | None
    person: str | None
    ts: float


@dataclass(frozen=True, slots=True)
class Successor:
    """The memory that says what a superseded memory's fact became: the memory of the
    event of the claim that superseded it, and what changed (``slot: old → new``)."""

    memory_id: int
    change: str


@dataclass(frozen=True, slots=True)
class StoreCounts:
    events: int
    memories: int
    hidden: int


class Store:
    """An open soul database. Create with :meth:`open`, finish with :meth:`close`."""

    def __init__(self, path: Path, db: aiosqlite.Connection, context_turns: int = 0) -> None:
        self.path = path
        self._db = db
        self._next_event = 1
        self._next_memory = 1
        # Neighbouring turns indexed each side of a new memory (souls.store.neighbours).
        self.context_turns = context_turns
        # Derived from the index, built when first asked for, kept current by append;
        # dropped (drop_caches) by whoever deletes from the index.
        self._stats: TermStats | None = None
        self._speakers: set[str] | None = None

    @classmethod
    async def open(
        cls, path: Path, *, synchronous: Synchronous = "normal", context_turns: int = 0
    ) -> Store:
        """Open (creating if needed) and migrate the database at ``path``.
        ``context_turns``: neighbouring turns indexed each side of a new memory."""
        await anyio.Path(path.parent).mkdir(parents=True, exist_ok=True)
        try:
            db = await aiosqlite.connect(path, isolation_level=None)
        except sqlite3.Error as exc:
            raise StoreUnusable(path, exc) from exc
        store = cls(path, db, context_turns)
        try:
            await db.execute("PRAGMA journal_mode = WAL")
            await db.execute(f"PRAGMA synchronous = {synchronous.upper()}")
            await db.execute("PRAGMA foreign_keys = ON")
            await db.execute("PRAGMA busy_timeout = 5000")
            await store._migrate()
            store._next_event = await store._next_id("events")
            store._next_memory = await store._next_id("memories")
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                await db.close()
            # sqlite3 never names the file ("file is not a database"); the operator
            # needs to know which one.
            if isinstance(exc, sqlite3.Error):
                raise StoreUnusable(path, exc) from exc
            raise
        return store

    async def close(self) -> None:
        await self._db.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``; rolled back on any exception or cancellation.

        A full disk (SQLITE_FULL, at any statement or at the commit) raises DiskFull,
        with nothing of the transaction kept."""
        try:
            await self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                await self._db.execute("COMMIT")
            except BaseException:
                # SQLite may have rolled back by itself already (it does on SQLITE_FULL).
                if self._db.in_transaction:
                    with anyio.CancelScope(shield=True):
                        await self._db.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
                raise DiskFull(self.path) from exc
            raise

    async def commit(self, batch: Batch) -> None:
        """Run ``batch`` as one transaction in one round trip (:mod:`souls.store.batch`).

        A full disk raises DiskFull, with nothing of the batch kept."""
        if not batch:
            return
        try:
            await commit(self._db, batch)
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
                raise DiskFull(self.path) from exc
            raise

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

    async def echo(self, event: NewEvent, window: float) -> tuple[int, float] | None:
        """A stored event with ``event``'s sender and text from another channel, within
        ``window`` seconds of it: its id and salience."""
        rows = await self._db.execute_fetchall(
            "SELECT id, salience FROM events WHERE ts BETWEEN ? AND ? AND sender = ?"
            " AND text = ? AND channel IS NOT ? ORDER BY id LIMIT 1",
            (event.ts - window, event.ts + window, event.sender, event.text, event.channel),
        )
        for event_id, salience in rows:
            return int(event_id), float(salience)
        return None

    @property
    def db(self) -> aiosqlite.Connection:
        """The connection, for the soul's other store modules (:mod:`souls.mind.inner`)."""
        return self._db

    async def append(
        self, events: Sequence[NewEvent], changes: Changes | None = None, now: float = 0.0
    ) -> list[int]:
        """Append events, each with its observation memory, and ``changes`` (whose rows
        may name the events by their offsets: :class:`~souls.store.changes.NewClaim`), in
        one transaction. Returns the new event ids in order."""
        first_event, first_memory = self._next_event, self._next_memory
        # Each table's parameters flattened, row after row (see souls.store.bulk).
        event_values: list[object] = []
        memory_values: list[object] = []
        rows: list[Row] = []
        rewritten: list[tuple[Row, Row]] = []
        for offset, e in enumerate(events):
            event_id, memory_id = first_event + offset, first_memory + offset
            event_values += (
                event_id, e.ref, e.kind, e.channel, e.sender, e.group, int(e.mentioned),
                e.session, e.ts, e.recorded, e.salience, e.text, e.person,
            )  # fmt: skip
            memory_values += (memory_id, event_id, e.text, e.salience, e.recorded, e.surprise)
        if events:
            # The sessions' last rows so far, read before the new rows exist (the soul
            # is its store's only writer: nothing changes them before the commit).
            last = await tails(self._db, [e.session for e in events], self.context_turns)
            rows, rewritten = lay_out(
                [(first_memory + i, e.session, e.doc) for i, e in enumerate(events)],
                last,
                self.context_turns,
            )
        batch = Batch()
        batch.insert_rows(
            "INSERT INTO events (id, ref, kind, channel, sender, grp, mentioned,"
            " session, ts, recorded, salience, text, person)",
            "(?,?,?,?,?,?,?,?,?,?,?,?,?)",
            event_values,
        )
        batch.insert_rows(
            "INSERT INTO memories (id, kind, event_id, text, salience, created, surprise)",
            "(?,'observation',?,?,?,?,?)",
            memory_values,
        )
        batch.insert_rows(
            "INSERT INTO memory_fts (rowid, doc, prior, later)",
            "(?,?,?,?)",
            [v for r in rows for v in (r.memory_id, r.doc, r.prior, r.later)],
        )
        batch.executemany(
            "UPDATE memory_fts SET later = ? WHERE rowid = ?",
            [(new.later, new.memory_id) for _, new in rewritten],
        )
        if changes:
            write_changes(batch, changes, now, range(first_event, first_event + len(events)))
        # Shielded: once a batch is handed to SQLite it is finished (committed or rolled
        # back) before anyone can observe a cancellation, so a reply never misreports it.
        with anyio.CancelScope(shield=True):
            await self.commit(batch)
        # Only advance once committed: a rolled-back batch must not leave holes that a
        # restarted soul would not reproduce.
        self._next_event += len(events)
        self._next_memory += len(events)
        if self._stats is not None:
            self._stats.add(row.tokens() for row in rows)
            for old, new in rewritten:
                self._stats.replace(old.tokens(), new.tokens())
        if self._speakers is not None:
            self._speakers.update(name for e in events for name in (e.sender, e.person) if name)
        return list(range(first_event, first_event + len(events)))

    async def flush(self, changes: Changes, now: float) -> None:
        """Write ``changes`` alone, in one (shielded) transaction."""
        if changes:
            await self.append([], changes, now)

    # ``ORDER BY bm25(...)`` rather than ``ORDER BY rank``: the same order, measurably
    # cheaper in SQLite 3.40.
    async def search(
        self,
        match: str,
        limit: int,
        context_weight: float | None = None,
        *,
        own: str | None = None,
    ) -> list[Hit]:
        """Visible memories matching the FTS5 expression ``match``, best BM25 first.

        ``context_weight``: also match the memories' neighbouring turns, whose tokens
        count this much (see :mod:`souls.store.bm25`); None: their own text only.
        ``own``: only memories whose own text matches this expression too (their
        neighbours may then lift them, never bring them alone)."""
        match, weight = _scoped(match, context_weight)
        own_sql, own_args = _own(own)
        sql = f"""
            SELECT m.id, {_KIND}, m.text, m.salience, -f.score, e.ref, m.event_id, m.created
            FROM (SELECT rowid, bm25(memory_fts, 1.0, ?, ?) AS score FROM memory_fts
                  WHERE memory_fts MATCH ? {own_sql} ORDER BY score LIMIT ?) AS f
            JOIN memories AS m ON m.id = f.rowid
            LEFT JOIN events AS e ON e.id = m.event_id
            ORDER BY f.score, m.id
        """
        rows = await self._db.execute_fetchall(sql, (weight, weight, match, *own_args, limit))
        return [Hit(*row) for row in rows]

    async def candidates(
        self,
        match: str,
        limit: int,
        context_weight: float | None = None,
        *,
        own: str | None = None,
        scope: Scope | None = None,
    ) -> list[Candidate]:
        """Like :meth:`search`, but the ``limit`` best matches by BM25 whether visible
        or not (the later stored first on ties), each with its indexed row, memory and
        origin (to re-rank in one read). ``scope``: only memories within it."""
        match, weight = _scoped(match, context_weight)
        own_sql, own_args = _own(own)
        extra: tuple[object, ...] = own_args
        if scope:
            # As for ``own``: the ids in scope are listed once and checked as a filter.
            inner, args = scope.sql()
            own_sql += f" AND +rowid IN ({inner})"
            extra = (*own_args, *args)
        # The rows are read for the chosen few only (SQLite's sorter would carry every
        # match's documents), straight from FTS5's content table (columns c0, c1, c2:
        # doc, prior, later): a plain b-tree read, a third of a lookup through FTS5.
        sql = f"""
            SELECT c.rowid, c.score, f.c0, f.c1, f.c2,
                   m.id IS NOT NULL AND m.hidden_at IS NULL, {_KIND}, m.text, m.salience,
                   e.ref, m.event_id, e.sender, e.person, e.ts, m.created, {_SUPERSEDED}
            FROM (SELECT rowid, -bm25(memory_fts, 1.0, ?, ?) AS score FROM memory_fts
                  WHERE memory_fts MATCH ? {own_sql} ORDER BY score DESC, rowid DESC
                  LIMIT ?) AS c
            JOIN memory_fts_content AS f ON f.id = c.rowid
            LEFT JOIN memories AS m ON m.id = c.rowid
            LEFT JOIN events AS e ON e.id = m.event_id
            ORDER BY c.score DESC, c.rowid DESC
        """
        rows = await self._db.execute_fetchall(sql, (weight, weight, match, *extra, limit))
        return [Candidate(*row) for row in rows]

    async def within(self, memory_ids: Sequence[int], scope: Scope) -> set[int]:
        """Those of ``memory_ids`` that are within ``scope``."""
        if not memory_ids:
            return set()
        inner, args = scope.sql()
        marks = ",".join("?" * len(memory_ids))
        sql = f"SELECT id FROM ({inner}) WHERE id IN ({marks})"
        return {row[0] for row in await self._db.execute_fetchall(sql, [*args, *memory_ids])}

    async def successors(self, memory_ids: Sequence[int]) -> dict[int, Successor]:
        """For each of ``memory_ids`` whose event stated a fact (a claim) that a later
        claim of the same subject and slot superseded, the visible memory of the
        superseding claim's event, newest claim first when several did. Memories that
        stated nothing superseded are left out; so is one whose event also stated the
        fact in force (it restated it, it is no older news).

        The joins go in the order written (CROSS JOIN), by the few memories asked about:
        a soul's claims run to thousands, and by state SQLite would read them all."""
        if not memory_ids:
            return {}
        marks = ",".join("?" * len(memory_ids))
        sql = f"""
            SELECT m.id, n.id, old.slot, old.value, new.value
            FROM memories AS m
            CROSS JOIN claims AS old ON old.event_id = m.event_id
                AND +old.state = 'superseded'
            CROSS JOIN claims AS new ON new.subject = old.subject AND new.slot = old.slot
                AND +new.state = 'active' AND new.event_id IS NOT NULL
                AND new.event_id != old.event_id AND new.value != old.value
            CROSS JOIN memories AS n ON n.event_id = new.event_id AND n.hidden_at IS NULL
            WHERE m.id IN ({marks})
                AND NOT EXISTS (SELECT 1 FROM claims AS kept WHERE kept.event_id = m.event_id
                                AND +kept.state = 'active' AND kept.slot = old.slot
                                AND kept.subject = old.subject)
            ORDER BY new.recorded_from, new.id
        """
        found: dict[int, Successor] = {}
        for old_id, new_id, slot, was, now in await self._db.execute_fetchall(
            sql, list(memory_ids)
        ):
            found[old_id] = Successor(new_id, f"{slot}: {was} → {now}")
        return found

    async def stating(self, slots: Sequence[str], limit: int) -> list[int]:
        """The visible memories whose events stated a fact in force (an active claim)
        of one of ``slots``, the latest stated first, at most ``limit``."""
        if not slots or limit <= 0:
            return []
        marks = ",".join("?" * len(slots))
        sql = f"""
            SELECT m.id FROM claims AS c
            JOIN memories AS m ON m.event_id = c.event_id AND m.hidden_at IS NULL
            WHERE c.slot IN ({marks}) AND +c.state = 'active'
            GROUP BY m.id ORDER BY max(c.recorded_from) DESC, m.id DESC LIMIT ?
        """
        return [row[0] for row in await self._db.execute_fetchall(sql, [*slots, limit])]

    async def rows(self, memory_ids: Sequence[int]) -> dict[int, Row]:
        """The index rows of the visible memories among ``memory_ids``."""
        marks = ",".join("?" * len(memory_ids))
        sql = f"SELECT rowid, doc, prior, later FROM memory_fts WHERE rowid IN ({marks})"
        found = await self._db.execute_fetchall(sql, list(memory_ids)) if memory_ids else []
        return {row[0]: Row(*row) for row in found}

    async def origins(self, memory_ids: Sequence[int]) -> dict[int, Origin]:
        """Who said each memory and when, for those that came from an event."""
        marks = ",".join("?" * len(memory_ids))
        sql = f"""
            SELECT m.id, e.sender, e.person, e.ts
            FROM memories AS m JOIN events AS e ON e.id = m.event_id
            WHERE m.id IN ({marks})
        """
        found = await self._db.execute_fetchall(sql, list(memory_ids)) if memory_ids else []
        return {m: Origin(sender, person, ts) for m, sender, person, ts in found}

    async def hits(self, scored: Sequence[tuple[int, float]]) -> list[Hit]:
        """The visible memories named in ``scored`` (id, score), in that order."""
        if not scored:
            return []
        marks = ",".join("?" * len(scored))
        sql = f"""
            SELECT m.id, {_KIND}, m.text, m.salience, e.ref, m.event_id, m.created,
                   {_SUPERSEDED}
            FROM memories AS m LEFT JOIN events AS e ON e.id = m.event_id
            WHERE m.id IN ({marks}) AND m.hidden_at IS NULL
        """
        rows = await self._db.execute_fetchall(sql, [memory_id for memory_id, _ in scored])
        found = {row[0]: row for row in rows}
        return [
            Hit(memory_id, kind, text, salience, score, ref, event_id, created, bool(old))
            for memory_id, score in scored
            if memory_id in found
            for _, kind, text, salience, ref, event_id, created, old in (found[memory_id],)
        ]

    async def term_stats(self) -> TermStats:
        """BM25 statistics of the visible index, read from the FTS5 vocabulary once,
        then kept current by :meth:`append` (until :meth:`drop_caches`)."""
        if self._stats is not None:
            return self._stats
        df: dict[str, int] = {}
        tokens = 0
        async with self._db.execute("SELECT term, doc, cnt FROM memory_vocab") as cursor:
            for term, documents, count in await cursor.fetchall():
                df[term] = documents
                tokens += count
        async with self._db.execute("SELECT count(*) FROM memory_fts") as cursor:
            row = await cursor.fetchone()
        assert row is not None
        self._stats = TermStats(df, documents=row[0], tokens=tokens)
        return self._stats

    async def speakers(self) -> set[str]:
        """Every sender and linked person the soul has stored an event from (kept
        current by append)."""
        if self._speakers is None:
            sql = """
                SELECT sender FROM events WHERE sender IS NOT NULL
                UNION SELECT person FROM events WHERE person IS NOT NULL
            """
            self._speakers = {name for (name,) in await self._db.execute_fetchall(sql)}
        return self._speakers

    def drop_caches(self) -> None:
        """Forget the derived statistics: memories left the index (decay, forget)."""
        self._stats = None
        self._speakers = None

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

    async def migrations(self) -> list[str]:
        """The names of the migrations applied (at open), in order."""
        rows = await self._db.execute_fetchall("SELECT name FROM migrations ORDER BY name")
        return [name for (name,) in rows]

    async def record_due(self, tasks: Sequence[DueTask]) -> None:
        """Record ``tasks`` (the pending ones of TASKS.md) in the ``due`` table and
        cancel every unfired task not among them (:mod:`souls.store.due`), in one
        shielded transaction."""
        with anyio.CancelScope(shield=True):
            async with self.transaction() as db:
                await due.record(db, tasks)

    async def pending_due(self) -> list[DueTask]:
        """The tasks still to fire, the soonest first."""
        return await due.pending(self._db)

    async def due_task(self, key: str) -> DueTask | None:
        """The task under ``key`` if it is still to fire."""
        return await due.task(self._db, key)

    async def fired_due(self, limit: int) -> list[DueTask]:
        """The ``limit`` tasks that fired last, the latest first."""
        return await due.fired(self._db, limit)

    @property
    def cards(self) -> CardRows:
        """The collision room's rows: cards, draws, verdicts (souls.store.cards)."""
        return CardRows(self)

    @property
    def knowledge(self) -> KnowledgeRows:
        """The knowledge room's rows: goals, questions, the claims it reads
        (souls.store.knowledge)."""
        return KnowledgeRows(self)

    # -- the logs a forget scrubs (souls.store.logs) --

    async def logs(self) -> Logs:
        """The draws, assemblies' queries, gaps, ``soul_state`` values and goals a
        forget's scrub reads (souls/actor/scrub.py)."""
        return await logs.read(self._db)

    async def scrub(self, scrub: Scrub) -> None:
        """Rewrite the log rows ``scrub`` names, in one shielded transaction."""
        with anyio.CancelScope(shield=True):
            async with self.transaction() as db:
                await logs.write(db, scrub)

    # -- people behind accounts (souls.store.persons) --

    async def identities(self) -> list[tuple[str, str, str]]:
        """Every linked identity as (channel, external id, person's name)."""
        return await persons.identities(self._db)

    async def persons(self) -> list[tuple[int, str, str | None, str | None]]:
        """Every person as (id, name, channel, external id), a row per identity."""
        return await persons.persons(self._db)

    async def link_person(
        self, name: str, channel: str, external: str, now: float
    ) -> tuple[int, int]:
        """Link an account to person ``name`` (made when new), attributing its events,
        their claims and questions, in one shielded transaction; (events, claims)."""
        with anyio.CancelScope(shield=True):
            async with self.transaction() as db:
                moved = await persons.link(db, name, channel, external, now)
        self._speakers = None  # a linked person is a speaker now
        return moved

    # -- the semantic layer's vectors (souls.store.embeddings) --

    async def vectors(self, model: str) -> list[tuple[int, bytes]]:
        """The vectors of ``model`` of the visible memories (memory id, packed)."""
        return await embeddings.stored(self._db, model)

    async def unembedded(
        self, model: str, after: int, limit: int
    ) -> list[tuple[int, str, str | None]]:
        """The first ``limit`` visible memories above id ``after`` without a vector of
        ``model``: (memory id, text, sender)."""
        return await embeddings.unembedded(self._db, model, after, limit)

    async def observation_memories(self, event_ids: Sequence[int]) -> dict[int, int]:
        """The observation memory of each of ``event_ids`` that still has one."""
        return await embeddings.observation_memories(self._db, event_ids)

    async def write_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]]) -> set[int]:
        """Store each vector under its memory, for the memories still stored, in one
        shielded transaction; the ids written."""
        with anyio.CancelScope(shield=True):
            async with self.transaction() as db:
                written = await embeddings.write(db, model, vectors)
        return written

    async def drop_vectors(self) -> int:
        """Delete every vector (``rebuild``), in one shielded transaction; how many."""
        with anyio.CancelScope(shield=True):
            async with self.transaction() as db:
                dropped = await embeddings.drop(db)
        return dropped

    async def vector_ids(self) -> set[int]:
        """The memories that have a vector."""
        return await embeddings.ids(self._db)

    # -- memories by id and page (souls.store.pages) --

    async def memory_page(
        self, scope: Scope | None, before: int | None, limit: int
    ) -> list[MemoryItem]:
        """Up to ``limit`` memories within ``scope``, with an id below ``before``, newest
        first."""
        return await pages.page(self._db, scope, before, limit)

    async def memory_item(self, memory_id: int) -> MemoryItem | None:
        return await pages.item(self._db, memory_id)

    async def stored_event(self, event_id: int) -> StoredEvent | None:
        return await pages.event(self._db, event_id)

    async def first_memory(self, event_id: int) -> int | None:
        return await pages.first_memory(self._db, event_id)

    # -- the inner state, as the cognitive loop reads it back (souls.store.inner) --

    async def summary(self, layer: str, back: int = 0) -> Summary | None:
        """The latest version of the summary ``layer`` (consolidated, weekly), or the
        one ``back`` versions before it."""
        return await inner.summary(self._db, layer, back)

    async def soul_state(self) -> dict[str, str]:
        return await inner.soul_state(self._db)

    async def observations(
        self, *, after_memory: int | None = None, since: float | None = None, limit: int
    ) -> list[Observation]:
        """The visible observations after memory id ``after_memory`` or said since
        ``since``, oldest first, at most ``limit`` (:func:`souls.store.inner.observations`)."""
        return await inner.observations(
            self._db, after_memory=after_memory, since=since, limit=limit
        )

    async def last_memory(self) -> int:
        return await inner.last_memory(self._db)

    async def strong_edges(self, threshold: float) -> list[tuple[int, int, float]]:
        return await inner.strong_edges(self._db, threshold)

    async def edge_weights(self, pairs: Sequence[tuple[int, int]]) -> dict[tuple[int, int], float]:
        return await inner.edge_weights(self._db, pairs)

    async def markers(self) -> list[tuple[str, str, float]]:
        return await inner.markers(self._db)

    async def marker_labels(self) -> dict[str, str]:
        return await inner.marker_labels(self._db)

    async def gaps(self, limit: int) -> list[tuple[str, str]]:
        return await inner.gaps(self._db, limit)

    async def activity(self, since: float, recent: int) -> tuple[int, list[float]]:
        return await inner.activity(self._db, since, recent)

    async def mind_counts(self) -> MindCounts:
        return await inner.mind_counts(self._db)

    async def surfaced(self) -> list[tuple[str, float]]:
        return await inner.surfaced(self._db)

    async def unsurfaced(self, limit: int) -> list[tuple[int, float]]:
        return await inner.unsurfaced(self._db, limit)

    async def hide(self, memory_ids: Sequence[int], now: float) -> int:
        """Hide the visible memories among ``memory_ids``, as decay does
        (:mod:`souls.store.hiding`), in one shielded transaction; how many were hidden."""
        if not memory_ids:
            return 0
        with anyio.CancelScope(shield=True):
            async with self.transaction() as db:
                hidden = await hide(db, memory_ids, now)
        self.drop_caches()
        return len(hidden)

    async def decay(
        self,
        now: float,
        fading: Fading,
        *,
        dry_run: bool = False,
        state: Mapping[str, str] | None = None,
    ) -> DecayResult:
        """The nightly decay pass (:mod:`souls.store.fading`) at ``now``, in one shielded
        transaction, with ``state`` (the soul's state entries: the run's own record). A
        ``dry_run`` rolls it back: its counts are the real pass's, and nothing stored
        changes."""
        result = DecayResult(hidden=0, purged=0, edges_pruned=0, markers_pruned=0)
        with anyio.CancelScope(shield=True), contextlib.suppress(_RolledBack):
            async with self.transaction() as db:
                result = await fade(db, now, fading)
                if state:
                    await db.executemany(SET_STATE, list(state.items()))
                if dry_run:
                    raise _RolledBack
        if dry_run:
            return msgspec.structs.replace(result, dry_run=True)
        self.drop_caches()
        return result

    async def forget(self, event_ids: Sequence[int]) -> int:
        """Delete the events, their memories (with their index rows, vectors, sources
        and edges), rewriting the context of the rows around them
        (:func:`souls.store.neighbours.refresh`), in one shielded transaction; how many
        events went. The store's part of a forget only: the full one
        (:meth:`forget_all`) also goes through the claims, cards, summaries and logs
        that quote them."""
        ids = sorted(set(event_ids))
        if not ids:
            return 0
        with anyio.CancelScope(shield=True):
            async with self.transaction() as db:
                forgotten = await self._forget(db, ids)
        self.drop_caches()
        return forgotten.events

    # -- a soul's export (souls.store.export; souls/actor/exporting.py) --

    async def export_rows(self, table: int, offset: int, limit: int) -> list[tuple[object, ...]]:
        """Up to ``limit`` rows of ``EXPORT_TABLES[table]`` from the ``offset``-th on."""
        return await export.read(self._db, table, offset, limit)

    # -- a full forget (souls.store.forgetting; souls/actor/forgetting.py) --

    async def forgettable(
        self,
        *,
        ref: str | None = None,
        match: str | None = None,
        before: float | None = None,
        everything: bool = False,
    ) -> list[int]:
        """The ids of the events a forget request names (souls.store.forgetting)."""
        return await forgetting.matching(
            self._db, ref=ref, match=match, before=before, everything=everything
        )

    async def forgetting(self, event_ids: Sequence[int]) -> Forgetting:
        """What a full forget of ``event_ids`` reads before it decides."""
        return await forgetting.read(self._db, event_ids)

    async def forget_all(self, plan: ForgetPlan, *, dry_run: bool = False) -> Forgotten:
        """Forget ``plan``'s events and everything derived from them, as it says, in one
        shielded transaction (rolled back when ``dry_run``); what went. Freed pages
        are zeroed from here on (``secure_delete``); :meth:`compact` then clears the
        index's old segments and the WAL."""
        ids = sorted(set(plan.events))
        # Zero the pages this frees (SQLite's default keeps their bytes until reused).
        await self._db.execute("PRAGMA secure_delete = ON")
        with anyio.CancelScope(shield=True), contextlib.suppress(_RolledBack):
            async with self.transaction() as db:
                forgotten = await self._forget(db, ids)
                claims, questions = await forgetting.apply(db, plan)
                forgotten = msgspec.structs.replace(forgotten, claims=claims, questions=questions)
                if dry_run:
                    raise _RolledBack
        if not dry_run:
            self.drop_caches()
        return forgotten

    async def compact(self) -> None:
        """Leave no byte of what was deleted in the file or its WAL: the full-text
        index's old segments merged into new ones (their pages freed, hence zeroed under
        ``secure_delete``), then the WAL, which holds old page images, folded into the
        database and truncated."""
        with anyio.CancelScope(shield=True):
            async with self.transaction() as db:
                await db.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')")
            await self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    async def _forget(self, db: aiosqlite.Connection, ids: Sequence[int]) -> Forgotten:
        """Delete the events ``ids`` (sorted, once each) and their memories, rewriting
        their neighbours' context, in the caller's transaction; what went (no claims
        nor questions: counted 0)."""
        events = [(i,) for i in ids]
        memories: list[tuple[int]] = []
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT id FROM memories WHERE event_id IN ({marks})"
            memories += [(m,) for (m,) in await db.execute_fetchall(sql, chunk)]
        where = await places(db, sorted(m for (m,) in memories))
        edges = await db.executemany("DELETE FROM edges WHERE a = ?1 OR b = ?1", memories)
        edges_gone = max(edges.rowcount, 0)
        await db.executemany("DELETE FROM memory_fts WHERE rowid = ?", memories)
        await db.executemany("DELETE FROM memory_sources WHERE memory_id = ?", memories)
        await db.executemany("DELETE FROM memory_sources WHERE event_id = ?", events)
        # Its embedding goes with it (the foreign key cascades too).
        await db.executemany("DELETE FROM memory_vectors WHERE memory_id = ?", memories)
        await db.executemany("DELETE FROM memories WHERE id = ?", memories)
        gone = db.total_changes
        await db.executemany("DELETE FROM events WHERE id = ?", events)
        gone = db.total_changes - gone
        await refresh(db, where, self.context_turns)
        return Forgotten(gone, len(memories), edges_gone, 0, 0)


class _RolledBack(Exception):
    """Raised inside a dry run's transaction to roll it back."""


def _scoped(match: str, context_weight: float | None) -> tuple[str, float]:
    """The MATCH expression and the context columns' weight: without a weight, the
    memories' own text only."""
    if context_weight is None:
        return f"doc : ({match})", 0.0
    return match, context_weight


def _own(own: str | None) -> tuple[str, tuple[str, ...]]:
    """The condition (and its argument) that a row's own text matches ``own``. The
    ``+`` keeps SQLite from looking every listed row up in FTS5 one by one: the list
    is built once and checked as a filter."""
    if own is None:
        return "", ()
    return "AND +rowid IN (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?)", (
        f"doc : ({own})",
    )


def _statements(script: str) -> list[str]:
    """Split a migration script into statements.

    Migration scripts keep semicolons out of string literals; comments are dropped
    first, so they may say anything.
    """
    code = "\n".join(line.split("--", 1)[0] for line in script.splitlines())
    return [statement.strip() for statement in code.split(";") if statement.strip()]

"""One soul's store on PostgreSQL: the :class:`~souls.store.interface.SoulStore` of the
shared database (asyncpg), beside the SQLite :class:`~souls.store.store.Store`.

Invariants, as on SQLite:

* One writer per soul: only the soul's actor (on the daemon holding the soul's lease,
  :mod:`souls.store.postgres.lease`) writes its rows, so ids are handed out from
  in-memory counters read back at open, and the term statistics are kept by the store
  in the same transaction as the rows they count.
* Every write is one transaction, shielded from cancellation once sent.
* Idempotency by ref: ``(soul, ref)`` is unique; :meth:`PgStore.known_refs` finds the
  refs already stored (intake drops those), and a batch repeating one is rolled back
  whole (``asyncpg.UniqueViolationError``, where SQLite raises ``IntegrityError``).
* Ranking: exact FTS5 BM25 (:mod:`souls.store.postgres.search`).

A turn's derived rows (:class:`~souls.store.changes.Changes`) are all written as
:func:`~souls.store.changes.write_changes` writes them on SQLite, ``fired`` marking the
``due`` rows of the soul's agenda (:mod:`souls.store.postgres.due`), ``claims`` and
``closings`` the claims recall reads (:mod:`souls.store.postgres.claims`: successors,
what states a slot, a memory ``superseded``), ``questions``, ``settlements`` and
``goals`` the knowledge room's (:mod:`souls.store.postgres.knowledge`). The inner
state's reads, memory pages, vectors, the collision room's rows, people behind
accounts and the knowledge room's rows are modules of their own beside this one
(inner, pages, embeddings, cards, persons, knowledge). Not yet here: the rest of the
SQLite store modules (souls/store/interface.py lists them).
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager

import anyio
import asyncpg
import msgspec

from souls.results import DecayResult, DueTask, MemoryItem
from souls.store.bm25 import TermStats
from souls.store.changes import Changes
from souls.store.fading import DAY, Fading
from souls.store.forgetting import ForgetPlan, Forgetting, Forgotten
from souls.store.inner import MindCounts, Observation, Summary
from souls.store.logs import Logs, Scrub
from souls.store.neighbours import MAX_TURNS, Row, lay_out
from souls.store.pages import StoredEvent
from souls.store.postgres import (
    claims,
    due,
    embeddings,
    export,
    forgetting,
    inner,
    knowledge,
    pages,
    persons,
)
from souls.store.postgres import logs as scrubbed_logs
from souls.store.postgres.cards import PgCardRows
from souls.store.postgres.knowledge import PgKnowledgeRows
from souls.store.postgres.lease import Fence
from souls.store.postgres.schema import migrate
from souls.store.postgres.scope import scope_sql
from souls.store.postgres.search import match_terms, own_sql, plan, ranked_sql
from souls.store.postgres.term_counts import TermCounts
from souls.store.postgres.writing import writing
from souls.store.store import Candidate, Hit, NewEvent, Origin, Scope, StoreCounts, Successor

__all__ = ["PgStore", "soul_id"]

_KIND = "CASE WHEN e.kind = 'voice' THEN 'voice' ELSE m.kind END"


async def soul_id(db: asyncpg.Connection, name: str) -> int:
    """The id of the soul ``name``, registering it when new (a lease may have made its
    row before: its statistics row is made here all the same)."""
    found: int | None = await db.fetchval("SELECT id FROM souls WHERE name = $1", name)
    if found is None:
        found = await db.fetchval(
            "INSERT INTO souls (name, created) VALUES ($1, $2)"
            " ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id",
            name,
            time.time(),
        )
        assert found is not None
    await db.execute(
        "INSERT INTO index_stats (soul, documents, tokens) VALUES ($1, 0, 0)"
        " ON CONFLICT (soul) DO NOTHING",
        found,
    )
    return found


class _Delta:
    """What a write changes in the term statistics, applied in its transaction."""

    def __init__(self) -> None:
        self.doc_rows: Counter[str] = Counter()
        self.rows: Counter[str] = Counter()
        self.documents = 0
        self.tokens = 0

    def add(self, row: Row, sign: int = 1) -> None:
        own, near = row.doc.split(), f"{row.prior} {row.later}".split()
        self.counted(set(own), set(own).union(near), len(own) + len(near), sign)

    def counted(self, own: Iterable[str], every: Iterable[str], length: int, sign: int) -> None:
        """A row of ``length`` tokens: ``own``, the distinct terms of its own text;
        ``every``, of all its columns."""
        self.doc_rows.update(dict.fromkeys(own, sign))
        self.rows.update(dict.fromkeys(every, sign))
        self.documents += sign
        self.tokens += sign * length

    def replace(self, old: Row, new: Row) -> None:
        """A row's context rewritten (its own text stays)."""
        self.rows.update({t: -1 for t in set(old.tokens())})
        self.rows.update({t: 1 for t in set(new.tokens())})
        self.tokens += len(new.tokens()) - len(old.tokens())

    async def apply(self, db: asyncpg.Connection, soul: int) -> None:
        terms = sorted(t for t in set(self.doc_rows) | set(self.rows)
                       if self.doc_rows[t] or self.rows[t])  # fmt: skip
        if terms:
            await db.execute(
                "INSERT INTO term_stats (soul, term, doc_rows, rows)"
                " SELECT $1, * FROM unnest($2::text[], $3::int[], $4::int[])"
                " ON CONFLICT (soul, term) DO UPDATE SET"
                " doc_rows = term_stats.doc_rows + excluded.doc_rows,"
                " rows = term_stats.rows + excluded.rows",
                soul,
                terms,
                [self.doc_rows[t] for t in terms],
                [self.rows[t] for t in terms],
            )
            gone = [t for t in terms if self.rows[t] < 0]
            if gone:  # only a row's context rewritten or a row forgotten lowers a count
                await db.execute(
                    "DELETE FROM term_stats WHERE soul = $1 AND term = ANY($2::text[])"
                    " AND rows <= 0",
                    soul,
                    gone,
                )
        if self.documents or self.tokens:
            await db.execute(
                "UPDATE index_stats SET documents = documents + $2, tokens = tokens + $3"
                " WHERE soul = $1",
                soul,
                self.documents,
                self.tokens,
            )


# The postings of the rows of the memory ids $2.
_DELETE_POSTINGS = "DELETE FROM postings WHERE soul = $1 AND memory_id = ANY($2::bigint[])"

# Each table's columns as written, with their types (for unnest).
_EVENT_COLUMNS = (
    ("soul", "integer"), ("id", "bigint"), ("ref", "text"), ("kind", "text"),
    ("channel", "text"), ("sender", "text"), ("grp", "text"), ("mentioned", "boolean"),
    ("session", "text"), ("ts", "float8"), ("recorded", "float8"), ("salience", "float8"),
    ("text", "text"), ("person", "text"), ("epoch", "bigint"),
)  # fmt: skip
_MEMORY_COLUMNS = (
    ("soul", "integer"), ("id", "bigint"), ("kind", "text"), ("event_id", "bigint"),
    ("text", "text"), ("salience", "float8"), ("created", "float8"), ("surprise", "float8"),
)  # fmt: skip
_INDEX_COLUMNS = (
    ("soul", "integer"), ("memory_id", "bigint"), ("doc", "text"), ("prior", "text"),
    ("later", "text"), ("length", "integer"),
)  # fmt: skip
_POSTING_COLUMNS = (
    ("soul", "integer"), ("term", "text"), ("memory_id", "bigint"), ("own", "integer"),
    ("near", "integer"), ("length", "integer"),
)  # fmt: skip


async def _insert(
    db: asyncpg.Connection,
    table: str,
    columns: Sequence[tuple[str, str]],
    records: Sequence[tuple[object, ...]],
) -> None:
    """Insert ``records`` in one statement: a column an array (``unnest``), or from
    :data:`_COPY_FROM` records on, a binary COPY. Either is one round trip (asyncpg
    keeps the statement, and COPY's look at the table's columns, prepared); COPY costs
    the server a third less a row (2,800 postings: 22 ms against 30)."""
    if not records:
        return
    names = [name for name, _ in columns]
    if len(records) >= _COPY_FROM:
        await db.copy_records_to_table(table, records=records, columns=names)
        return
    arrays = ", ".join(f"${n}::{kind}[]" for n, (_, kind) in enumerate(columns, start=1))
    await db.execute(
        f"INSERT INTO {table} ({', '.join(names)}) SELECT * FROM unnest({arrays})",
        *(list(column) for column in zip(*records, strict=True)),
    )


# Records from which an insert is a COPY (below, the unnest's arrays cost less than
# COPY's framing).
_COPY_FROM = 64


def _event_record(soul: int, event_id: int, e: NewEvent, epoch: int) -> tuple[object, ...]:
    return (soul, event_id, e.ref, e.kind, e.channel, e.sender, e.group, e.mentioned,
            e.session, e.ts, e.recorded, e.salience, e.text, e.person, epoch)  # fmt: skip


def _memory_record(soul: int, memory_id: int, event_id: int, e: NewEvent) -> tuple[object, ...]:
    return (soul, memory_id, "observation", event_id, e.text, e.salience, e.recorded, e.surprise)


def _index_row(soul: int, row: Row) -> tuple[object, ...]:
    """A row of memory_index, in the order of _INDEX_COLUMNS."""
    return (soul, row.memory_id, row.doc, row.prior, row.later, len(row.tokens()))


def _postings(
    soul: int, rows: Iterable[Row], delta: _Delta | None = None
) -> list[tuple[object, ...]]:
    """The rows' postings, in the order of _POSTING_COLUMNS: one per distinct term of a
    row (each row's text split once; accounted for in ``delta``, when given)."""
    found: list[tuple[object, ...]] = []
    for row in rows:
        own = Counter(row.doc.split())
        near = Counter(f"{row.prior} {row.later}".split())
        length = own.total() + near.total()
        every = own.keys() | near.keys()
        found.extend([(soul, term, row.memory_id, own.get(term, 0), near.get(term, 0), length)
                      for term in every])  # fmt: skip
        if delta is not None:
            delta.counted(own, every, length, 1)
    return found


def _join(docs: Sequence[str]) -> str:
    return " ".join(doc for doc in docs if doc)


class PgStore:
    """One soul's rows in the shared database. Create with :meth:`open` (on a pool the
    daemon shares between its souls), finish with :meth:`close` (the pool stays)."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        soul: int,
        name: str,
        context_turns: int,
        fence: Fence | None = None,
        ranking: asyncpg.Pool | None = None,
    ) -> None:
        self._pool = pool
        # The searches' sessions: generic plans (souls.store.postgres.pool); ``pool``
        # when none is given.
        self._searches = ranking if ranking is not None else pool
        self.soul = soul
        self.name = name
        self.context_turns = context_turns
        # What every write is made under: the soul's lease (souls.store.postgres.lease).
        self._fence = fence
        self._next_event = 1
        self._next_memory = 1
        self._stats: TermStats | None = None
        self._counts = TermCounts()
        self._speakers: set[str] | None = None
        # The edges the last append wrote, with their weights after it (edge_weights).
        self._edges_written: dict[tuple[int, int], float] = {}

    @classmethod
    async def open(
        cls,
        pool: asyncpg.Pool,
        name: str,
        *,
        context_turns: int = 0,
        fence: Fence | None = None,
        migrating: bool = True,
        ranking: asyncpg.Pool | None = None,
    ) -> PgStore:
        """Migrate the database when needed and open the soul ``name`` (registered
        when new). ``context_turns``: neighbouring turns indexed each side. ``fence``:
        the soul's lease, which every write is made under (a daemon's store always has
        one: :mod:`souls.store.postgres.writing`); without, writes are unfenced (tools
        and tests that have the database to themselves). ``migrating``: False when the
        caller migrated the database already (a daemon, at start: not at every wake).
        ``ranking``: the pool the searches run on (:data:`~souls.store.postgres.pool.
        RANKING_SETTINGS`), ``pool`` when None."""
        if fence is not None and fence.soul != name:
            raise ValueError(f"the lease of soul {fence.soul!r} cannot fence soul {name!r}")
        async with pool.acquire() as db:
            if migrating:
                await migrate(db)
            soul = await soul_id(db, name)
            store = cls(pool, soul, name, context_turns, fence, ranking)
            store._next_event = await db.fetchval(
                "SELECT coalesce(max(id), 0) + 1 FROM events WHERE soul = $1", soul
            )
            store._next_memory = await db.fetchval(
                "SELECT coalesce(max(id), 0) + 1 FROM memories WHERE soul = $1", soul
            )
        return store

    async def close(self) -> None:
        self.drop_caches()

    async def migrations(self) -> list[str]:
        """The names of the migrations applied to the database, in order."""
        async with self._pool.acquire() as db:
            rows = await db.fetch("SELECT name FROM migrations ORDER BY name")
        return [row[0] for row in rows]

    async def known_refs(self, refs: Sequence[str]) -> dict[str, tuple[int, float]]:
        """For each ``ref`` already stored: its event id and salience."""
        if not refs:
            return {}
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                "SELECT ref, id, salience FROM events WHERE soul = $1 AND ref = ANY($2::text[])",
                self.soul,
                list(refs),
            )
        return {ref: (int(event_id), float(salience)) for ref, event_id, salience in rows}

    async def echo(self, event: NewEvent, window: float) -> tuple[int, float] | None:
        """A stored event with ``event``'s sender and text from another channel, within
        ``window`` seconds of it: its id and salience (as on SQLite)."""
        async with self._pool.acquire() as db:
            row = await db.fetchrow(
                "SELECT id, salience FROM events WHERE soul = $1 AND ts BETWEEN $2 AND $3"
                " AND sender = $4 AND text = $5 AND channel IS DISTINCT FROM $6"
                " ORDER BY id LIMIT 1",
                self.soul,
                event.ts - window,
                event.ts + window,
                event.sender,
                event.text,
                event.channel,
            )
        return None if row is None else (int(row[0]), float(row[1]))

    async def append(
        self, events: Sequence[NewEvent], changes: Changes | None = None, now: float = 0.0
    ) -> list[int]:
        """Append events, each with its observation memory and index row, and
        ``changes``, in one transaction. Returns the new event ids in order."""
        first_event, first_memory = self._next_event, self._next_memory
        soul = self.soul
        delta = _Delta()
        weights: dict[tuple[int, int], float] = {}
        rows: list[Row] = []
        rewritten: list[tuple[Row, Row]] = []
        with self._counts.writing(), anyio.CancelScope(shield=True):
            async with self._writing() as db:
                if events:
                    epoch = await self._epoch(db)
                    last = await self._tails(db, [e.session for e in events])
                    rows, rewritten = lay_out(
                        [(first_memory + i, e.session, e.doc) for i, e in enumerate(events)],
                        last,
                        self.context_turns,
                    )
                    await _insert(
                        db,
                        "events",
                        _EVENT_COLUMNS,
                        [
                            _event_record(soul, first_event + i, e, epoch)
                            for i, e in enumerate(events)
                        ],
                    )
                    await _insert(
                        db,
                        "memories",
                        _MEMORY_COLUMNS,
                        [
                            _memory_record(soul, first_memory + i, first_event + i, e)
                            for i, e in enumerate(events)
                        ],
                    )
                    postings = _postings(soul, rows, delta)
                    await _insert(
                        db, "memory_index", _INDEX_COLUMNS, [_index_row(soul, r) for r in rows]
                    )
                    await _insert(db, "postings", _POSTING_COLUMNS, postings)
                    await self._rewrite(db, rewritten, delta)
                    await delta.apply(db, soul)
                if changes:
                    ids = range(first_event, first_event + len(events))
                    weights = await self._write_changes(db, changes, now, ids)
            self._counts.applied(delta.documents, delta.tokens, delta.doc_rows, delta.rows)
        self._next_event += len(events)
        self._next_memory += len(events)
        self._edges_written = weights
        if self._stats is not None:
            self._stats.add(row.tokens() for row in rows)
            for old, new in rewritten:
                self._stats.replace(old.tokens(), new.tokens())
        if self._speakers is not None:
            self._speakers.update(name for e in events for name in (e.sender, e.person) if name)
        return list(range(first_event, first_event + len(events)))

    def _writing(self) -> AbstractAsyncContextManager[asyncpg.Connection]:
        """A write transaction under the soul's lease (:func:`writing`). The weights of
        the edges the last append wrote are not known after another write (a decay
        weakens them, a forget deletes them): edge_weights reads them again."""
        self._edges_written = {}
        return writing(self._pool, self._fence)

    async def _epoch(self, db: asyncpg.Connection) -> int:
        """The epoch of the soul's lease this write is made under, which each event
        records (migration 0014): the fence's, which its check found the soul's row
        holding and holds FOR SHARE until the commit; unfenced, the row's."""
        if self._fence is not None:
            return self._fence.epoch
        epoch: int = await db.fetchval("SELECT epoch FROM souls WHERE id = $1", self.soul)
        return epoch

    async def flush(self, changes: Changes, now: float) -> None:
        """Write ``changes`` alone, in one (shielded) transaction."""
        if changes:
            await self.append([], changes, now)

    async def _write_changes(
        self, db: asyncpg.Connection, changes: Changes, now: float, event_ids: Sequence[int]
    ) -> dict[tuple[int, int], float]:
        """``changes`` in the order :func:`~souls.store.changes.write_changes` writes
        them, each kind in one statement (``event_ids``: the append's, for claims).
        Returns the weights its edges have now."""
        soul = self.soul
        if changes.counters:
            await db.executemany(
                "INSERT INTO counters (soul, name, value) VALUES ($1, $2, $3)"
                " ON CONFLICT (soul, name) DO UPDATE SET value = counters.value + excluded.value",
                [(soul, name, value) for name, value in changes.counters.items()],
            )
        weights: dict[tuple[int, int], float] = {}
        if changes.edges:
            pairs = list(changes.edges.items())
            written = await db.fetch(
                "INSERT INTO edges (soul, a, b, weight, updated)"
                " SELECT $1, a, b, w, $2 FROM unnest($3::bigint[], $4::bigint[], $5::float8[])"
                " AS n (a, b, w)"
                " ON CONFLICT (soul, a, b) DO UPDATE SET weight = edges.weight + excluded.weight,"
                " updated = excluded.updated RETURNING a, b, weight",
                soul,
                now,
                [a for (a, _), _ in pairs],
                [b for (_, b), _ in pairs],
                [weight for _, weight in pairs],
            )
            weights = {(int(r[0]), int(r[1])): float(r[2]) for r in written}
        if changes.recalled:
            await db.execute(
                "UPDATE memories SET last_recalled = $2, recalls = recalls + 1"
                " WHERE soul = $1 AND id = ANY($3::bigint[])",
                soul,
                now,
                sorted(changes.recalled),
            )
        if changes.penalties:
            await db.executemany(
                "UPDATE memories SET salience = greatest(0.0, salience - $3)"
                " WHERE soul = $1 AND id = $2",
                [(soul, memory_id, amount) for memory_id, amount in changes.penalties.items()],
            )
        await self._write_reflection(db, changes, now)
        await due.mark(db, soul, changes.fired)
        await self._write_assemblies(db, changes, now)
        if changes.state:
            await _set_state(db, soul, changes.state)
        await claims.write(db, soul, changes, event_ids)
        await knowledge.write(db, soul, changes, now, event_ids)
        return weights

    async def _write_reflection(self, db: asyncpg.Connection, changes: Changes, now: float) -> None:
        """Markers (weights, then labels), gaps and summaries."""
        soul = self.soul
        if changes.markers:
            marks = list(changes.markers.items())
            await db.execute(
                "INSERT INTO markers (soul, topic, valence, weight, updated)"
                " SELECT $1, t, v, w, $2 FROM unnest($3::text[], $4::text[], $5::float8[])"
                " AS n (t, v, w)"
                " ON CONFLICT (soul, topic, valence) DO UPDATE SET weight = excluded.weight,"
                " updated = excluded.updated",
                soul,
                now,
                [topic for (topic, _), _ in marks],
                [valence for (_, valence), _ in marks],
                [weight for _, weight in marks],
            )
        if changes.marker_labels:
            # After the weights: a topic's new rows get their label here too.
            await db.execute(
                "UPDATE markers SET label = n.label FROM unnest($2::text[], $3::text[])"
                " AS n (topic, label) WHERE markers.soul = $1 AND markers.topic = n.topic"
                " AND markers.label IS DISTINCT FROM n.label",
                soul,
                list(changes.marker_labels),
                list(changes.marker_labels.values()),
            )
        if changes.gaps:
            await db.execute(
                f"INSERT INTO gaps (soul, id, topic, detail, created)"
                f" SELECT $1, {_next_id('gaps')}, t, d, $2"
                " FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS n (t, d, i)",
                soul,
                now,
                [topic for topic, _ in changes.gaps],
                [detail for _, detail in changes.gaps],
            )
        if changes.summaries:
            versions = changes.summaries
            await db.execute(
                "INSERT INTO summaries (soul, id, layer, text, created, observations, reflector,"
                f" reason) SELECT $1, {_next_id('summaries')}, l, t, $2, o, f, r"
                " FROM unnest($3::text[], $4::text[], $5::int[], $6::text[], $7::text[])"
                " WITH ORDINALITY AS n (l, t, o, f, r, i)",
                soul,
                now,
                [v.layer for v in versions],
                [v.text for v in versions],
                [v.observations for v in versions],
                [v.reflector for v in versions],
                [v.reason for v in versions],
            )

    async def _write_assemblies(self, db: asyncpg.Connection, changes: Changes, now: float) -> None:
        """The contexts assembled, and when their items surfaced."""
        soul = self.soul
        if changes.assemblies:
            rows = changes.assemblies
            await db.execute(
                "INSERT INTO assemblies (soul, id, hash, created, session, query, mode, chars,"
                f" recalled, paused, items, sections) SELECT $1, {_next_id('assemblies')},"
                " h, $2, s, q, m, c, r, p, it, se FROM unnest($3::text[], $4::text[],"
                " $5::text[], $6::text[], $7::int[], $8::int[], $9::boolean[], $10::text[],"
                " $11::text[]) WITH ORDINALITY AS n (h, s, q, m, c, r, p, it, se, i)",
                soul,
                now,
                [a.hash for a in rows],
                [a.session for a in rows],
                [a.query for a in rows],
                [a.mode for a in rows],
                [a.chars for a in rows],
                [a.recalled for a in rows],
                [a.paused for a in rows],
                [a.items for a in rows],
                [a.sections for a in rows],
            )
        if changes.surfaced:
            await db.execute(
                "INSERT INTO surfaced (soul, item, at)"
                " SELECT $1, * FROM unnest($2::text[], $3::float8[])"
                " ON CONFLICT (soul, item) DO UPDATE SET at = greatest(surfaced.at, excluded.at)",
                soul,
                list(changes.surfaced),
                list(changes.surfaced.values()),
            )

    async def _rewrite(
        self, db: asyncpg.Connection, rewritten: Sequence[tuple[Row, Row]], delta: _Delta
    ) -> None:
        """Write the rows whose context changed (and account for it in ``delta``)."""
        if not rewritten:
            return
        await db.executemany(
            "UPDATE memory_index SET prior = $3, later = $4, length = $5"
            " WHERE soul = $1 AND memory_id = $2",
            [
                (self.soul, new.memory_id, new.prior, new.later, len(new.tokens()))
                for _, new in rewritten
            ],
        )
        await db.execute(
            _DELETE_POSTINGS,
            self.soul,
            [new.memory_id for _, new in rewritten],
        )
        await _insert(
            db,
            "postings",
            _POSTING_COLUMNS,
            _postings(self.soul, [new for _, new in rewritten]),
        )
        for old, new in rewritten:
            delta.replace(old, new)

    async def _tails(
        self, db: asyncpg.Connection, sessions: Sequence[str | None]
    ) -> dict[str | None, list[Row]]:
        """The last ``context_turns`` visible rows of each session, oldest first."""
        found: dict[str | None, list[Row]] = {}
        for session in dict.fromkeys(sessions):
            if session is None or not self.context_turns:
                continue
            rows = await db.fetch(
                """
                SELECT i.memory_id, i.doc, i.prior, i.later
                FROM (SELECT m.id FROM events AS e
                      JOIN memories AS m ON m.soul = e.soul AND m.event_id = e.id
                      WHERE e.soul = $1 AND e.session = $2 AND m.hidden_at IS NULL
                      ORDER BY e.id DESC LIMIT $3) AS t
                JOIN memory_index AS i ON i.soul = $1 AND i.memory_id = t.id
                ORDER BY i.memory_id
                """,
                self.soul,
                session,
                self.context_turns,
            )
            found[session] = [Row(int(r[0]), r[1], r[2], r[3]) for r in rows]
        return found

    async def _side(
        self, db: asyncpg.Connection, session: str, event_id: int, before: bool, turns: int
    ) -> list[tuple[int, str]]:
        op, order = ("<", "DESC") if before else (">", "ASC")
        rows = await db.fetch(
            f"""
            SELECT m.id, i.doc FROM events AS e
            JOIN memories AS m ON m.soul = e.soul AND m.event_id = e.id
            JOIN memory_index AS i ON i.soul = m.soul AND i.memory_id = m.id
            WHERE e.soul = $1 AND e.session = $2 AND e.id {op} $3 AND m.hidden_at IS NULL
            ORDER BY e.id {order} LIMIT $4
            """,
            self.soul,
            session,
            event_id,
            turns,
        )
        return [(int(memory_id), doc) for memory_id, doc in rows]

    async def _unindex(
        self, db: asyncpg.Connection, memory_ids: Sequence[int], delta: _Delta
    ) -> None:
        """Take the memories' rows and postings out of the index (and account for them
        in ``delta``)."""
        gone = await db.fetch(
            "DELETE FROM memory_index WHERE soul = $1 AND memory_id = ANY($2::bigint[])"
            " RETURNING memory_id, doc, prior, later",
            self.soul,
            list(memory_ids),
        )
        for r in gone:
            delta.add(Row(int(r[0]), r[1], r[2], r[3]), -1)
        await db.execute(_DELETE_POSTINGS, self.soul, list(memory_ids))

    async def record_due(self, tasks: Sequence[DueTask]) -> None:
        """Record ``tasks`` (the pending ones of TASKS.md) and cancel every unfired task
        not among them (:mod:`souls.store.postgres.due`), in one shielded transaction."""
        with anyio.CancelScope(shield=True):
            async with self._writing() as db:
                await due.record(db, self.soul, tasks)

    async def pending_due(self) -> list[DueTask]:
        """The tasks still to fire, the soonest first."""
        async with self._pool.acquire() as db:
            return await due.pending(db, self.soul)

    async def due_task(self, key: str) -> DueTask | None:
        """The task under ``key`` if it is still to fire."""
        async with self._pool.acquire() as db:
            return await due.task(db, self.soul, key)

    async def fired_due(self, limit: int) -> list[DueTask]:
        """The ``limit`` tasks that fired last, the latest first."""
        async with self._pool.acquire() as db:
            return await due.fired(db, self.soul, limit)

    @property
    def cards(self) -> PgCardRows:
        """The collision room's rows: cards, draws, verdicts (souls.store.postgres.cards)."""
        return PgCardRows(self._pool, self.soul, self._fence)

    @property
    def knowledge(self) -> PgKnowledgeRows:
        """The knowledge room's rows: goals, questions, the claims it reads
        (souls.store.postgres.knowledge)."""
        return PgKnowledgeRows(self._pool, self.soul, self._fence)

    # -- the logs a forget scrubs (souls.store.postgres.logs) --

    async def logs(self) -> Logs:
        async with self._pool.acquire() as db:
            return await scrubbed_logs.read(db, self.soul)

    async def scrub(self, scrub: Scrub) -> None:
        with anyio.CancelScope(shield=True):
            async with self._writing() as db:
                await scrubbed_logs.write(db, self.soul, scrub)

    # -- people behind accounts (souls.store.postgres.persons) --

    async def identities(self) -> list[tuple[str, str, str]]:
        async with self._pool.acquire() as db:
            return await persons.identities(db, self.soul)

    async def persons(self) -> list[tuple[int, str, str | None, str | None]]:
        async with self._pool.acquire() as db:
            return await persons.persons(db, self.soul)

    async def link_person(
        self, name: str, channel: str, external: str, now: float
    ) -> tuple[int, int]:
        with anyio.CancelScope(shield=True):
            async with self._writing() as db:
                moved = await persons.link(db, self.soul, name, channel, external, now)
        self._speakers = None  # a linked person is a speaker now
        return moved

    # -- the semantic layer's vectors (souls.store.postgres.embeddings) --

    async def vectors(self, model: str) -> list[tuple[int, bytes]]:
        async with self._pool.acquire() as db:
            return await embeddings.stored(db, self.soul, model)

    async def unembedded(
        self, model: str, after: int, limit: int
    ) -> list[tuple[int, str, str | None]]:
        async with self._pool.acquire() as db:
            return await embeddings.unembedded(db, self.soul, model, after, limit)

    async def observation_memories(self, event_ids: Sequence[int]) -> dict[int, int]:
        async with self._pool.acquire() as db:
            return await embeddings.observation_memories(db, self.soul, event_ids)

    async def write_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]]) -> set[int]:
        with anyio.CancelScope(shield=True):
            async with self._writing() as db:
                written = await embeddings.write(db, self.soul, model, vectors)
        return written

    async def drop_vectors(self) -> int:
        with anyio.CancelScope(shield=True):
            async with self._writing() as db:
                dropped = await embeddings.drop(db, self.soul)
        return dropped

    async def vector_ids(self) -> set[int]:
        async with self._pool.acquire() as db:
            return await embeddings.ids(db, self.soul)

    # -- memories by id and page (souls.store.postgres.pages) --

    async def memory_page(
        self, scope: Scope | None, before: int | None, limit: int
    ) -> list[MemoryItem]:
        async with self._pool.acquire() as db:
            return await pages.page(db, self.soul, scope, before, limit)

    async def memory_item(self, memory_id: int) -> MemoryItem | None:
        async with self._pool.acquire() as db:
            return await pages.item(db, self.soul, memory_id)

    async def stored_event(self, event_id: int) -> StoredEvent | None:
        async with self._pool.acquire() as db:
            return await pages.event(db, self.soul, event_id)

    async def first_memory(self, event_id: int) -> int | None:
        async with self._pool.acquire() as db:
            return await pages.first_memory(db, self.soul, event_id)

    # -- the inner state, as the cognitive loop reads it back (souls.store.postgres.inner) --

    async def summary(self, layer: str, back: int = 0) -> Summary | None:
        """The latest version of the summary ``layer`` (consolidated, weekly), or the
        one ``back`` versions before it."""
        async with self._pool.acquire() as db:
            return await inner.summary(db, self.soul, layer, back)

    async def soul_state(self) -> dict[str, str]:
        async with self._pool.acquire() as db:
            return await inner.soul_state(db, self.soul)

    async def observations(
        self, *, after_memory: int | None = None, since: float | None = None, limit: int
    ) -> list[Observation]:
        async with self._pool.acquire() as db:
            return await inner.observations(
                db, self.soul, after_memory=after_memory, since=since, limit=limit
            )

    async def last_memory(self) -> int:
        async with self._pool.acquire() as db:
            return await inner.last_memory(db, self.soul)

    async def strong_edges(self, threshold: float) -> list[tuple[int, int, float]]:
        async with self._pool.acquire() as db:
            return await inner.strong_edges(db, self.soul, threshold)

    async def edge_weights(self, pairs: Sequence[tuple[int, int]]) -> dict[tuple[int, int], float]:
        """The weights of the edges ``pairs`` that exist. Right after an append that
        wrote them all (the mind asks so, for its index of strong edges), from what
        that append's commit returned: no round trip; read otherwise."""
        written, self._edges_written = self._edges_written, {}
        if pairs and all(pair in written for pair in pairs):
            return {pair: written[pair] for pair in pairs}
        async with self._pool.acquire() as db:
            return await inner.edge_weights(db, self.soul, pairs)

    async def markers(self) -> list[tuple[str, str, float]]:
        async with self._pool.acquire() as db:
            return await inner.markers(db, self.soul)

    async def marker_labels(self) -> dict[str, str]:
        async with self._pool.acquire() as db:
            return await inner.marker_labels(db, self.soul)

    async def gaps(self, limit: int) -> list[tuple[str, str]]:
        async with self._pool.acquire() as db:
            return await inner.gaps(db, self.soul, limit)

    async def activity(self, since: float, recent: int) -> tuple[int, list[float]]:
        async with self._pool.acquire() as db:
            return await inner.activity(db, self.soul, since, recent)

    async def mind_counts(self) -> MindCounts:
        async with self._pool.acquire() as db:
            return await inner.mind_counts(db, self.soul)

    async def surfaced(self) -> list[tuple[str, float]]:
        async with self._pool.acquire() as db:
            return await inner.surfaced(db, self.soul)

    async def unsurfaced(self, limit: int) -> list[tuple[int, float]]:
        async with self._pool.acquire() as db:
            return await inner.unsurfaced(db, self.soul, limit)

    async def hide(self, memory_ids: Sequence[int], now: float) -> int:
        """Hide the visible memories among ``memory_ids`` as decay does on SQLite
        (:mod:`souls.store.hiding`): ``hidden_at`` set, out of the index and its
        statistics, the rows quoting them as context left as they are; in one shielded
        transaction. How many were hidden."""
        ids = sorted(set(memory_ids))
        if not ids:
            return 0
        delta = _Delta()
        with anyio.CancelScope(shield=True):
            async with self._writing() as db:
                rows = await db.fetch(
                    "UPDATE memories SET hidden_at = $2"
                    " WHERE soul = $1 AND id = ANY($3::bigint[]) AND hidden_at IS NULL"
                    " RETURNING id",
                    self.soul,
                    now,
                    ids,
                )
                hidden = sorted(int(r[0]) for r in rows)
                await self._unindex(db, hidden, delta)
                await delta.apply(db, self.soul)
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
        """The nightly decay pass at ``now``, as :func:`souls.store.fading.fade` does it
        on SQLite (the same steps, in the same order, in double precision), in one
        shielded transaction, with ``state`` (the soul's state entries: the run's own
        record). A ``dry_run`` rolls it back: its counts are the real pass's, and
        nothing stored changes."""
        soul = self.soul
        result = DecayResult(hidden=0, purged=0, edges_pruned=0, markers_pruned=0)
        with anyio.CancelScope(shield=True), contextlib.suppress(_RolledBack):
            async with self._writing() as db:
                rows = await db.fetch(
                    "UPDATE memories SET hidden_at = $2"
                    " WHERE soul = $1 AND hidden_at IS NULL AND salience < $3"
                    " AND coalesce(last_recalled, created) < $2 - 86400.0 * CASE"
                    " WHEN salience >= $4 THEN $5::float8 ELSE $6::float8 END RETURNING id",
                    soul,
                    now,
                    fading.permanent_at,
                    fading.medium_at,
                    fading.medium_days,
                    fading.low_days,
                )
                delta = _Delta()
                await self._unindex(db, sorted(int(r[0]) for r in rows), delta)
                await delta.apply(db, soul)
                # No memory_sources here: PostgreSQL holds observations only so far.
                purged = [
                    int(r[0])
                    for r in await db.fetch(
                        "DELETE FROM memories WHERE soul = $1 AND hidden_at IS NOT NULL"
                        " AND hidden_at <= $2 RETURNING id",
                        soul,
                        now - fading.purge_days * DAY,
                    )
                ]
                await db.execute(
                    "DELETE FROM edges WHERE soul = $1"
                    " AND (a = ANY($2::bigint[]) OR b = ANY($2::bigint[]))",
                    soul,
                    purged,
                )
                await db.execute(
                    "UPDATE edges SET weight = weight * $2 WHERE soul = $1",
                    soul,
                    fading.edge_factor,
                )
                pruned = await db.execute(
                    "DELETE FROM edges WHERE soul = $1 AND weight < $2", soul, fading.edge_floor
                )
                await db.execute(
                    "UPDATE markers SET weight = weight * $2 WHERE soul = $1",
                    soul,
                    fading.marker_factor,
                )
                faded = await db.execute(
                    "DELETE FROM markers WHERE soul = $1 AND weight < $2", soul, fading.marker_floor
                )
                result = DecayResult(
                    hidden=len(rows), purged=len(purged), edges_pruned=_count(pruned),
                    markers_pruned=_count(faded),
                )  # fmt: skip
                if state:
                    await _set_state(db, soul, state)
                if dry_run:
                    raise _RolledBack
        if dry_run:
            return msgspec.structs.replace(result, dry_run=True)
        self.drop_caches()
        return result

    async def forget(self, event_ids: Sequence[int]) -> int:
        """Delete the events, their memories, index rows and edges; the rows around them
        get their context rewritten without them (as :func:`souls.store.neighbours.refresh`
        does on SQLite). Returns how many events went."""
        ids = sorted(set(event_ids))
        if not ids:
            return 0
        with anyio.CancelScope(shield=True):
            async with self._writing() as db:
                forgotten = await self._forget(db, ids)
        self.drop_caches()
        return forgotten.events

    # -- a soul's export (souls.store.postgres.export; souls/actor/exporting.py) --

    async def export_rows(self, table: int, offset: int, limit: int) -> list[tuple[object, ...]]:
        async with self._pool.acquire() as db:
            return await export.read(db, self.soul, table, offset, limit)

    # -- a full forget (souls.store.postgres.forgetting; souls/actor/forgetting.py) --

    async def forgettable(
        self,
        *,
        ref: str | None = None,
        match: str | None = None,
        before: float | None = None,
        everything: bool = False,
    ) -> list[int]:
        async with self._pool.acquire() as db:
            return await forgetting.matching(
                db, self.soul, ref=ref, match=match, before=before, everything=everything
            )

    async def forgetting(self, event_ids: Sequence[int]) -> Forgetting:
        async with self._pool.acquire() as db:
            return await forgetting.read(db, self.soul, event_ids)

    async def forget_all(self, plan: ForgetPlan, *, dry_run: bool = False) -> Forgotten:
        """Forget ``plan``'s events and everything derived from them, as it says, in one
        shielded transaction (rolled back when ``dry_run``); what went."""
        ids = sorted(set(plan.events))
        with anyio.CancelScope(shield=True), contextlib.suppress(_RolledBack):
            async with self._writing() as db:
                forgotten = await self._forget(db, ids)
                claims, questions = await forgetting.apply(db, self.soul, plan)
                forgotten = msgspec.structs.replace(forgotten, claims=claims, questions=questions)
                if not dry_run:
                    # The soul's large outputs on their way to the other daemons
                    # (supervisor/relay.py) may quote what goes: they go too (a listener
                    # that has not read one yet counts it missed).
                    await db.execute("DELETE FROM relayed_outputs WHERE soul = $1", self.soul)
                if dry_run:
                    raise _RolledBack
        if not dry_run:
            self.drop_caches()
        return forgotten

    async def compact(self) -> None:
        """Nothing: a deleted row's bytes stay in its dead tuple (and the server's WAL)
        until PostgreSQL's autovacuum reclaims the page, which soupd does not force (a
        VACUUM is the whole table's, every soul's)."""

    async def _forget(self, db: asyncpg.Connection, ids: Sequence[int]) -> Forgotten:
        """Delete the events ``ids`` (sorted, once each), their memories, index rows and
        edges, rewriting their neighbours' context, in the caller's transaction; what
        went (no claims nor questions: counted 0)."""
        soul = self.soul
        delta = _Delta()
        places = await db.fetch(
            "SELECT m.id, e.session, e.id FROM memories AS m"
            " JOIN events AS e ON e.soul = m.soul AND e.id = m.event_id"
            " WHERE m.soul = $1 AND m.event_id = ANY($2::bigint[])",
            soul,
            ids,
        )
        memory_ids = [int(r[0]) for r in places]
        await self._unindex(db, memory_ids, delta)
        edges = await db.execute(
            "DELETE FROM edges WHERE soul = $1"
            " AND (a = ANY($2::bigint[]) OR b = ANY($2::bigint[]))",
            soul,
            memory_ids,
        )
        await db.execute(
            "DELETE FROM memories WHERE soul = $1 AND id = ANY($2::bigint[])",
            soul,
            memory_ids,
        )
        # A goal read from an event that goes loses its event id (the foreign
        # key of migration 0012_goal_event), unspoken items go with it.
        status = await db.execute(
            "DELETE FROM events WHERE soul = $1 AND id = ANY($2::bigint[])", soul, ids
        )
        around: dict[int, tuple[str, int]] = {}
        for _, session, event_id in places:
            if session is None:
                continue
            for before in (True, False):
                for memory_id, _ in await self._side(db, session, event_id, before, MAX_TURNS):
                    around.setdefault(memory_id, (session, event_id))
        rewritten: list[tuple[Row, Row]] = []
        for memory_id in sorted(around):
            row = await db.fetchrow(
                "SELECT i.doc, i.prior, i.later, e.session, e.id FROM memory_index AS i"
                " JOIN memories AS m ON m.soul = i.soul AND m.id = i.memory_id"
                " JOIN events AS e ON e.soul = m.soul AND e.id = m.event_id"
                " WHERE i.soul = $1 AND i.memory_id = $2",
                soul,
                memory_id,
            )
            assert row is not None
            doc, prior, later, session, event_id = row
            old = Row(memory_id, doc, prior, later)
            turns = self.context_turns
            new = Row(
                memory_id,
                doc,
                _join([d for _, d in await self._side(db, session, event_id, True, turns)])
                if turns
                else "",
                _join([d for _, d in await self._side(db, session, event_id, False, turns)])
                if turns
                else "",
            )
            if new != old:
                rewritten.append((old, new))
        await self._rewrite(db, rewritten, delta)
        await delta.apply(db, soul)
        return Forgotten(int(status.split()[-1]), len(memory_ids), _count(edges), 0, 0)

    async def search(
        self,
        match: str,
        limit: int,
        context_weight: float | None = None,
        *,
        own: str | None = None,
    ) -> list[Hit]:
        """Visible memories matching any term of ``match`` (an
        :func:`~souls.text.tokenize.fts_match` expression), best BM25 first, as
        :meth:`souls.store.store.Store.search`."""
        rows = await self._ranked(match, limit, context_weight, own, None, descending_ids=False)
        if not rows:
            return []
        scores = {int(memory_id): float(score) for memory_id, score in rows}
        async with self._searches.acquire() as db:
            found = await db.fetch(
                f"""
                SELECT m.id, {_KIND}, m.text, m.salience, e.ref, m.event_id, m.created
                FROM memories AS m
                LEFT JOIN events AS e ON e.soul = m.soul AND e.id = m.event_id
                WHERE m.soul = $1 AND m.id = ANY($2::bigint[])
                """,
                self.soul,
                list(scores),
            )
        by_id = {int(r[0]): r for r in found}
        return [
            Hit(m, r[1], r[2], r[3], scores[m], r[4], r[5], r[6])
            for m in scores
            if (r := by_id.get(m)) is not None
        ]

    async def candidates(
        self,
        match: str,
        limit: int,
        context_weight: float | None = None,
        *,
        own: str | None = None,
        scope: Scope | None = None,
    ) -> list[Candidate]:
        """The ``limit`` best matches by BM25, visible or not (the later stored first
        on ties), each with its indexed row, memory and origin, as
        :meth:`souls.store.store.Store.candidates`."""
        async with self._searches.acquire() as db:
            ranking = await self._ranking(db, match, context_weight, own, scope, True)
            if ranking is None:
                return []
            ranked, params = ranking
            # The ranking and its rows in one round trip, in the ranking's order.
            found = await db.fetch(
                f"""
                WITH r AS MATERIALIZED ({ranked})
                SELECT r.memory_id, i.doc, i.prior, i.later,
                       m.id IS NOT NULL AND m.hidden_at IS NULL, {_KIND}, m.text, m.salience,
                       e.ref, m.event_id, e.sender, e.person, e.ts, m.created,
                       {claims.SUPERSEDED}, r.score
                FROM r
                JOIN memory_index AS i ON i.soul = $1 AND i.memory_id = r.memory_id
                LEFT JOIN memories AS m ON m.soul = i.soul AND m.id = i.memory_id
                LEFT JOIN events AS e ON e.soul = m.soul AND e.id = m.event_id
                ORDER BY r.score DESC, r.memory_id DESC
                """,
                *params,
                limit,
            )
        return [_candidate(int(r[0]), float(r[15]), r) for r in found]

    async def _ranked(
        self,
        match: str,
        limit: int,
        context_weight: float | None,
        own: str | None,
        scope: Scope | None,
        *,
        descending_ids: bool,
    ) -> list[tuple[int, float]]:
        """The ``limit`` best (memory id, BM25) of the index for ``match``."""
        async with self._searches.acquire() as db:
            ranking = await self._ranking(db, match, context_weight, own, scope, descending_ids)
            if ranking is None:
                return []
            sql, params = ranking
            rows = await db.fetch(sql, *params, limit)
        return [(int(m), float(s)) for m, s in rows]

    async def _ranking(
        self,
        db: asyncpg.Connection,
        match: str,
        context_weight: float | None,
        own: str | None,
        scope: Scope | None,
        descending_ids: bool,
    ) -> tuple[str, list[object]] | None:
        """The SELECT of (memory id, BM25) for ``match``, best first, and its
        parameters but the last (the limit); None when the index is empty."""
        terms = match_terms(match)
        documents, tokens, df = await self._counts.read(db, self.soul, terms)
        if not documents:
            return None
        query = plan(terms, df, documents, tokens, context_weight)
        params: list[object] = [self.soul]
        where: list[str] = []
        if own is not None:
            params.append(match_terms(own))
            where.append(own_sql(len(params)))
        if scope:
            inner, scoped = scope_sql(scope, len(params) + 1)
            params += scoped
            where.append(f"p.memory_id IN ({inner})")
        sql, args = ranked_sql(query, len(params) + 1, where, descending_ids)
        return sql, params + args

    async def within(self, memory_ids: Sequence[int], scope: Scope) -> set[int]:
        """Those of ``memory_ids`` that are within ``scope``."""
        if not memory_ids:
            return set()
        inner, args = scope_sql(scope, 3)
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                f"SELECT id FROM ({inner}) AS s WHERE id = ANY($2::bigint[])",
                self.soul,
                list(memory_ids),
                *args,
            )
        return {int(r[0]) for r in rows}

    async def successors(self, memory_ids: Sequence[int]) -> dict[int, Successor]:
        """For each of ``memory_ids`` whose event stated a fact a later claim
        superseded, the memory saying what it became (:func:`claims.successors`)."""
        if not memory_ids:
            return {}
        async with self._pool.acquire() as db:
            return await claims.successors(db, self.soul, memory_ids)

    async def stating(self, slots: Sequence[str], limit: int) -> list[int]:
        """The visible memories whose events stated a fact in force of one of
        ``slots``, the latest stated first, at most ``limit`` (:func:`claims.stating`)."""
        async with self._pool.acquire() as db:
            return await claims.stating(db, self.soul, slots, limit)

    async def rows(self, memory_ids: Sequence[int]) -> dict[int, Row]:
        """The index rows of the visible memories among ``memory_ids``."""
        if not memory_ids:
            return {}
        async with self._pool.acquire() as db:
            found = await db.fetch(
                "SELECT memory_id, doc, prior, later FROM memory_index"
                " WHERE soul = $1 AND memory_id = ANY($2::bigint[])",
                self.soul,
                list(memory_ids),
            )
        return {int(r[0]): Row(int(r[0]), r[1], r[2], r[3]) for r in found}

    async def origins(self, memory_ids: Sequence[int]) -> dict[int, Origin]:
        """Who said each memory and when, for those that came from an event."""
        if not memory_ids:
            return {}
        async with self._pool.acquire() as db:
            found = await db.fetch(
                "SELECT m.id, e.sender, e.person, e.ts FROM memories AS m"
                " JOIN events AS e ON e.soul = m.soul AND e.id = m.event_id"
                " WHERE m.soul = $1 AND m.id = ANY($2::bigint[])",
                self.soul,
                list(memory_ids),
            )
        return {int(m): Origin(sender, person, ts) for m, sender, person, ts in found}

    async def hits(self, scored: Sequence[tuple[int, float]]) -> list[Hit]:
        """The visible memories named in ``scored`` (id, score), in that order."""
        if not scored:
            return []
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                f"""
                SELECT m.id, {_KIND}, m.text, m.salience, e.ref, m.event_id, m.created,
                       {claims.SUPERSEDED}
                FROM memories AS m
                LEFT JOIN events AS e ON e.soul = m.soul AND e.id = m.event_id
                WHERE m.soul = $1 AND m.id = ANY($2::bigint[]) AND m.hidden_at IS NULL
                """,
                self.soul,
                [memory_id for memory_id, _ in scored],
            )
        found = {int(r[0]): r for r in rows}
        return [
            Hit(memory_id, r[1], r[2], r[3], score, r[4], r[5], r[6], bool(r[7]))
            for memory_id, score in scored
            if (r := found.get(memory_id)) is not None
        ]

    async def term_stats(self) -> TermStats:
        """BM25 statistics of the visible index (as on SQLite: a term's document
        frequency counts rows holding it in any column), read once, then kept current
        by :meth:`append` (until :meth:`drop_caches`)."""
        if self._stats is None:
            async with self._pool.acquire() as db:
                documents, tokens = await db.fetchrow(
                    "SELECT documents, tokens FROM index_stats WHERE soul = $1", self.soul
                )
                df = {
                    term: int(rows)
                    for term, rows in await db.fetch(
                        "SELECT term, rows FROM term_stats WHERE soul = $1 AND rows > 0",
                        self.soul,
                    )
                }
            self._stats = TermStats(df, documents=int(documents), tokens=int(tokens))
        return self._stats

    async def speakers(self) -> set[str]:
        """Every sender and linked person the soul has stored an event from."""
        if self._speakers is None:
            async with self._pool.acquire() as db:
                rows = await db.fetch(
                    "SELECT sender FROM events WHERE soul = $1 AND sender IS NOT NULL"
                    " UNION SELECT person FROM events WHERE soul = $1 AND person IS NOT NULL",
                    self.soul,
                )
            self._speakers = {r[0] for r in rows}
        return self._speakers

    def drop_caches(self) -> None:
        """Forget the derived statistics: memories left the index."""
        self._stats = None
        self._counts.drop()
        self._speakers = None

    async def counts(self) -> StoreCounts:
        async with self._pool.acquire() as db:
            row = await db.fetchrow(
                "SELECT (SELECT count(*) FROM events WHERE soul = $1),"
                " (SELECT count(*) FROM memories WHERE soul = $1),"
                " (SELECT count(*) FROM memories WHERE soul = $1 AND hidden_at IS NOT NULL)",
                self.soul,
            )
        assert row is not None
        return StoreCounts(events=row[0], memories=row[1], hidden=row[2])

    async def counters(self) -> dict[str, int]:
        async with self._pool.acquire() as db:
            rows = await db.fetch("SELECT name, value FROM counters WHERE soul = $1", self.soul)
        return {name: int(value) for name, value in rows}


def _candidate(memory_id: int, score: float, r: asyncpg.Record) -> Candidate:
    """A candidate from its row (see :meth:`PgStore.candidates`)."""
    return Candidate(
        memory_id, score, r[1], r[2], r[3], int(r[4]), r[5], r[6], r[7], r[8], r[9],
        r[10], r[11], r[12], r[13], int(r[14]),
    )  # fmt: skip


class _RolledBack(Exception):
    """Raised inside a dry run's transaction to roll it back."""


def _count(status: str) -> int:
    """The rows a statement touched, from its status (``DELETE 3``)."""
    return int(status.split()[-1])


def _next_id(table: str) -> str:
    """The id of the ``i``-th row (from 1) a statement adds to the soul's ``table``:
    one more than its largest so far, as SQLite hands out a rowid (the soul's actor is
    its only writer)."""
    return f"coalesce((SELECT max(id) FROM {table} WHERE soul = $1), 0) + n.i"


async def _set_state(db: asyncpg.Connection, soul: int, state: Mapping[str, str]) -> None:
    """Soul state entries set: a turn's, or a decay's record of its run."""
    await db.executemany(
        "INSERT INTO soul_state (soul, key, value) VALUES ($1, $2, $3)"
        " ON CONFLICT (soul, key) DO UPDATE SET value = excluded.value",
        [(soul, key, value) for key, value in state.items()],
    )

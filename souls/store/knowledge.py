"""The knowledge room's rows on SQLite (souls/knowledge/ decides what they mean): goals,
the questions people asked, the claims the room reads (entries in force, a slot's,
those named) and the entries the user states, the contexts assembled (a session's
spend, a logged assembly), what the memory map and its drill-down read, and what a
model's reading of one event stores (its claims, the unspoken items: souls/knowledge/
extracted.py).
:mod:`souls.store.postgres.knowledge` keeps the same rows on PostgreSQL;
:class:`~souls.store.interface.KnowledgeRows` is what both offer.

What a turn adds (questions asked and settled, goals read from what people said) is
written with its events by :class:`~souls.store.changes.Changes`, not here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Literal, Protocol

import aiosqlite
import anyio
import msgspec

from souls.store.changes import (
    CLAIM_COLUMNS,
    GOAL_COLUMNS,
    GOAL_UPSERT,
    AssemblyRow,
    ClaimClosing,
    GoalRow,
    NewClaim,
)

__all__ = [
    "ASSEMBLY_COLUMNS", "EVENT_KEYS", "QUESTION_COLUMNS", "SUMMARY_KEYS", "UNSPOKEN_COLUMNS",
    "KnowledgeRows", "LoggedAssembly", "Question", "Table", "UnspokenRow",
]  # fmt: skip

QUESTION_COLUMNS = "id, event_id, asker, session, text, asked, state, resolved, answer"
ASSEMBLY_COLUMNS = "created, hash, session, query, mode, chars, recalled, paused, items, sections"
# What the drill-down shows of an event and of a summary version, in column order.
EVENT_KEYS = (
    "id", "ref", "kind", "channel", "sender", "group", "mentioned", "session", "ts",
    "recorded", "salience", "text",
)  # fmt: skip
SUMMARY_KEYS = ("id", "layer", "text", "created", "observations", "reflector", "reason")
UNSPOKEN_COLUMNS = "id, event_id, subject, sentence, recorded"

Table = Literal["claims", "questions"]
# The statement of next_id for each table (no name is ever put into SQL).
_NEXT_ID: Mapping[Table, str] = {
    "claims": "SELECT coalesce(max(id), 0) + 1 FROM claims",
    "questions": "SELECT coalesce(max(id), 0) + 1 FROM questions",
}


class Question(msgspec.Struct, frozen=True):
    """A question someone asked: pending, then answered or unanswered by a reply."""

    id: int
    event_id: int
    asker: str | None
    session: str | None
    text: str
    asked: float
    state: str
    resolved: float | None
    answer: int | None


class UnspokenRow(msgspec.Struct, frozen=True):
    """What a model judged a sentence of event ``event_id`` to leave unsaid
    (souls.knowledge.claim_llm): the sentence verbatim, under ``unspoken.<hash>``.
    Never a fact, never injected."""

    id: str
    event_id: int
    subject: str
    sentence: str
    recorded: float


class LoggedAssembly(msgspec.Struct, frozen=True):
    """An assembled context as logged: when, and its row (JSON byte for byte)."""

    created: float
    row: AssemblyRow


class _Database(Protocol):
    """What :class:`KnowledgeRows` needs of the SQLite store."""

    @property
    def db(self) -> aiosqlite.Connection: ...

    def transaction(self) -> AbstractAsyncContextManager[aiosqlite.Connection]: ...


class KnowledgeRows:
    """The knowledge room's rows of one SQLite store (``store.knowledge``). Reads go
    through the store's connection, so one made inside a transaction of the caller's
    sees what it wrote so far."""

    def __init__(self, store: _Database) -> None:
        self._store = store

    async def next_id(self, table: Table) -> int:
        """One more than the largest id of ``table`` (1 when empty)."""
        rows = list(await self._store.db.execute_fetchall(_NEXT_ID[table]))
        return int(rows[0][0])

    # -- goals --------------------------------------------------------------------

    async def goals(self) -> list[GoalRow]:
        """Every goal, by id."""
        rows = await self._store.db.execute_fetchall(
            f"SELECT {GOAL_COLUMNS} FROM goals ORDER BY id"
        )
        return [GoalRow(*row) for row in rows]

    async def write_goals(self, goals: Sequence[GoalRow], gone: Sequence[int] = ()) -> None:
        """Store ``goals`` (insert or replace, by id), then delete those of ids
        ``gone``, in one shielded transaction."""
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                await db.executemany(GOAL_UPSERT, [msgspec.structs.astuple(g) for g in goals])
                await db.executemany("DELETE FROM goals WHERE id = ?", [(i,) for i in gone])

    # -- questions ----------------------------------------------------------------

    async def pending(self, limit: int) -> list[Question]:
        """The latest ``limit`` pending questions, oldest first."""
        rows = await self._store.db.execute_fetchall(
            f"SELECT {QUESTION_COLUMNS} FROM questions WHERE state = 'pending'"
            " ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [Question(*row) for row in reversed(list(rows))]

    async def questions(
        self, *, state: str = "unanswered", ids: Sequence[int] = ()
    ) -> list[Question]:
        """The questions named in ``ids``, else those in ``state``, by id."""
        if ids:
            marks = ",".join("?" * len(ids))
            sql = f"SELECT {QUESTION_COLUMNS} FROM questions WHERE id IN ({marks}) ORDER BY id"
            rows = await self._store.db.execute_fetchall(sql, list(ids))
        else:
            sql = f"SELECT {QUESTION_COLUMNS} FROM questions WHERE state = ? ORDER BY id"
            rows = await self._store.db.execute_fetchall(sql, (state,))
        return [Question(*row) for row in rows]

    # -- claims -------------------------------------------------------------------

    async def claims(self, *, every: bool = False, ids: Sequence[int] = ()) -> list[NewClaim]:
        """The claims named in ``ids``, else those in force (active, deferred), else
        (``every``) all of them; by id."""
        if ids:
            marks = ",".join("?" * len(ids))
            sql = f"SELECT {CLAIM_COLUMNS} FROM claims WHERE id IN ({marks}) ORDER BY id"
            rows = await self._store.db.execute_fetchall(sql, list(ids))
        else:
            where = "1" if every else "state IN ('active', 'deferred')"
            sql = f"SELECT {CLAIM_COLUMNS} FROM claims WHERE {where} ORDER BY id"
            rows = await self._store.db.execute_fetchall(sql)
        return [NewClaim(*row) for row in rows]

    async def slot_claims(self, subject: str, slots: Sequence[str]) -> list[NewClaim]:
        """Every claim about ``subject`` in one of ``slots``, closed ones too, by id."""
        marks = ",".join("?" * len(slots))
        rows = await self._store.db.execute_fetchall(
            f"SELECT {CLAIM_COLUMNS} FROM claims WHERE subject = ? AND slot IN ({marks})"
            " ORDER BY id",
            (subject, *slots),
        )
        return [NewClaim(*row) for row in rows]

    async def state_entry(
        self, claim: NewClaim | None, closings: Sequence[ClaimClosing], state: Mapping[str, str]
    ) -> int | None:
        """Store ``claim`` under the next id (its own is ignored), close ``closings``
        and set the ``soul_state`` values of ``state``, in one shielded transaction;
        the claim's id (None without one)."""
        stored = None
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                if claim is not None:
                    cursor = await db.execute(
                        f"INSERT INTO claims ({CLAIM_COLUMNS}) VALUES"
                        " (NULL,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        msgspec.structs.astuple(claim)[1:],
                    )
                    assert cursor.lastrowid is not None
                    stored = cursor.lastrowid
                await db.executemany(
                    "UPDATE claims SET state = ?, valid_to = coalesce(?, valid_to),"
                    " recorded_to = coalesce(?, recorded_to) WHERE id = ?",
                    [(c.state, c.valid_to, c.recorded_to, c.id) for c in closings],
                )
                await db.executemany(
                    "INSERT INTO soul_state (key, value) VALUES (?, ?)"
                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    list(state.items()),
                )
        return stored

    async def write_extracted(
        self,
        event_id: int,
        claims: Sequence[NewClaim],
        closings: Sequence[ClaimClosing],
        unspoken: Sequence[UnspokenRow],
    ) -> int | None:
        """If event ``event_id`` is still stored: store ``claims`` (under their own
        ids), close ``closings`` and add the ``unspoken`` items not stored yet (by id),
        in one shielded transaction; how many unspoken items were new. None, with
        nothing written, when the event is gone."""
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                if not await db.execute_fetchall("SELECT 1 FROM events WHERE id = ?", (event_id,)):
                    return None
                await db.executemany(
                    f"INSERT INTO claims ({CLAIM_COLUMNS}) VALUES"
                    " (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    [msgspec.structs.astuple(claim) for claim in claims],
                )
                await db.executemany(
                    "UPDATE claims SET state = ?, valid_to = coalesce(?, valid_to),"
                    " recorded_to = coalesce(?, recorded_to) WHERE id = ?",
                    [(c.state, c.valid_to, c.recorded_to, c.id) for c in closings],
                )
                cursor = await db.executemany(
                    f"INSERT OR IGNORE INTO unspoken ({UNSPOKEN_COLUMNS}) VALUES (?, ?, ?, ?, ?)",
                    [msgspec.structs.astuple(item) for item in unspoken],
                )
        return max(cursor.rowcount, 0)

    async def unspoken(self) -> list[UnspokenRow]:
        """Every unspoken item, oldest first (by when recorded, then id)."""
        rows = await self._store.db.execute_fetchall(
            f"SELECT {UNSPOKEN_COLUMNS} FROM unspoken ORDER BY recorded, id"
        )
        return [UnspokenRow(*row) for row in rows]

    # -- the contexts assembled -----------------------------------------------------

    async def spent(self, session: str | None, since: float) -> int:
        """Characters of recalled items the contexts of ``session`` (None: those of no
        session) injected at or after ``since``."""
        rows = list(
            await self._store.db.execute_fetchall(
                "SELECT coalesce(sum(recalled), 0) FROM assemblies"
                " WHERE created >= ? AND session IS ?",
                (since, session),
            )
        )
        return int(rows[0][0])

    async def assembly(self, prefix: str | None) -> LoggedAssembly | None:
        """The latest logged assembly whose hash starts with ``prefix`` (ASCII case
        ignored, every character itself: no wildcards), or the latest of all without
        one."""
        sql = f"SELECT {ASSEMBLY_COLUMNS} FROM assemblies"
        if prefix:
            # SQLite's lower() folds ASCII letters only (no ICU), as PostgreSQL's
            # under COLLATE "C" does.
            rows = await self._store.db.execute_fetchall(
                sql + " WHERE lower(substr(hash, 1, length(?1))) = lower(?1)"
                " ORDER BY id DESC LIMIT 1",
                (prefix,),
            )
        else:
            rows = await self._store.db.execute_fetchall(sql + " ORDER BY id DESC LIMIT 1")
        for created, *row in rows:
            hash_, session, query, mode, chars, recalled, paused, items, sections = row
            return LoggedAssembly(
                created,
                AssemblyRow(
                    hash_, session, query, mode, chars, recalled, bool(paused), items, sections
                ),
            )
        return None

    # -- what the memory map and its drill-down read ----------------------------------

    async def recent(self, limit: int) -> list[tuple[int, str]]:
        """The latest ``limit`` visible observations as (memory id, text), newest first."""
        rows = await self._store.db.execute_fetchall(
            "SELECT id, text FROM memories WHERE kind = 'observation' AND hidden_at IS NULL"
            " ORDER BY id DESC LIMIT ?",
            (limit,),
        )
        return [(memory_id, text) for memory_id, text in rows]

    async def latest_summaries(self) -> list[tuple[int, str, str]]:
        """The latest version of each summary layer as (id, layer, text), by id."""
        rows = await self._store.db.execute_fetchall(
            "SELECT id, layer, text FROM summaries WHERE id IN"
            " (SELECT max(id) FROM summaries GROUP BY layer) ORDER BY id"
        )
        return [(summary_id, layer, text) for summary_id, layer, text in rows]

    async def days(self, limit: int) -> list[tuple[str, int, int, int]]:
        """The latest ``limit`` days of the journal (UTC, ``YYYY-MM-DD``) as (day,
        events, first event id, last event id), the latest first."""
        rows = await self._store.db.execute_fetchall(
            "SELECT date(ts, 'unixepoch') AS day, count(*), min(id), max(id) FROM events"
            " GROUP BY day ORDER BY day DESC LIMIT ?",
            (limit,),
        )
        return [(day, count, first, last) for day, count, first, last in rows]

    async def event(self, event_id: int) -> dict[str, object] | None:
        """Event ``event_id`` in full, keyed by :data:`EVENT_KEYS` (``mentioned`` 0 or 1)."""
        rows = await self._store.db.execute_fetchall(
            "SELECT id, ref, kind, channel, sender, grp, mentioned, session, ts, recorded,"
            " salience, text FROM events WHERE id = ?",
            (event_id,),
        )
        return next((dict(zip(EVENT_KEYS, row, strict=True)) for row in rows), None)

    async def summary_version(self, summary_id: int) -> dict[str, object] | None:
        """Summary version ``summary_id`` in full, keyed by :data:`SUMMARY_KEYS`."""
        rows = await self._store.db.execute_fetchall(
            "SELECT id, layer, text, created, observations, reflector, reason FROM summaries"
            " WHERE id = ?",
            (summary_id,),
        )
        return next((dict(zip(SUMMARY_KEYS, row, strict=True)) for row in rows), None)

"""The knowledge room's rows on PostgreSQL (goals: migrations 0009_goals, 0012; questions:
0008; claims: 0005; unspoken items: 0010), as :mod:`souls.store.knowledge` keeps them
on SQLite: the same rows in the same orders, each under its soul. Ids are the soul's
own, one more than its largest as SQLite hands them out (the soul's actor is its only
writer).

:func:`write` stores what a turn's :class:`~souls.store.changes.Changes` adds
(questions asked and settled, goals), in the append's transaction."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import anyio
import asyncpg
import msgspec

from souls.store.changes import (
    CLAIM_COLUMNS,
    GOAL_COLUMNS,
    AssemblyRow,
    Changes,
    ClaimClosing,
    GoalRow,
    NewClaim,
    sourced,
)
from souls.store.knowledge import (
    ASSEMBLY_COLUMNS,
    EVENT_KEYS,
    QUESTION_COLUMNS,
    SUMMARY_KEYS,
    UNSPOKEN_COLUMNS,
    LoggedAssembly,
    Question,
    Table,
    UnspokenRow,
)
from souls.store.postgres import claims as claim_rows
from souls.store.postgres.lease import Fence
from souls.store.postgres.writing import writing

__all__ = ["PgKnowledgeRows", "write"]

_GOAL_UPSERT = (
    f"INSERT INTO goals (soul, {GOAL_COLUMNS})"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    " ON CONFLICT (soul, id) DO UPDATE SET"
    + ",".join(
        f" {name} = excluded.{name}" for name in [c.strip() for c in GOAL_COLUMNS.split(",")][1:]
    )
)
_CLAIM_VALUES = ", ".join(f"${n}" for n in range(2, 17))
# The statement of next_id for each table (no name is ever put into SQL).
_NEXT_ID: Mapping[Table, str] = {
    "claims": "SELECT coalesce(max(id), 0) + 1 FROM claims WHERE soul = $1",
    "questions": "SELECT coalesce(max(id), 0) + 1 FROM questions WHERE soul = $1",
}


async def write(
    db: asyncpg.Connection, soul: int, changes: Changes, now: float, event_ids: Sequence[int]
) -> None:
    """Store the questions of ``changes``, settle its settlements (at ``now``) and
    store its goals, their negative event ids resolved against ``event_ids``, in the
    caller's transaction."""
    if changes.questions:
        await db.executemany(
            "INSERT INTO questions (soul, id, event_id, asker, session, text, asked, state)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending')",
            [
                (soul, q.id, sourced(q.event_id, event_ids), q.asker, q.session, q.text, q.asked)
                for q in changes.questions
            ],
        )
    if changes.settlements:
        await db.executemany(
            "UPDATE questions SET state = $3, resolved = $4, answer = $5"
            " WHERE soul = $1 AND id = $2",
            [(soul, s.id, s.state, now, sourced(s.answer, event_ids)) for s in changes.settlements],
        )
    if changes.goals:
        await _put_goals(db, soul, [g.sourced(event_ids) for g in changes.goals])


async def _put_goals(db: asyncpg.Connection, soul: int, goals: Sequence[GoalRow]) -> None:
    await db.executemany(_GOAL_UPSERT, [(soul, *msgspec.structs.astuple(goal)) for goal in goals])


class PgKnowledgeRows:
    """The knowledge room's rows of one soul (``PgStore.knowledge``)."""

    def __init__(self, pool: asyncpg.Pool, soul: int, fence: Fence | None = None) -> None:
        self._pool = pool
        self._soul = soul
        self._fence = fence  # what every write is made under (souls.store.postgres.lease)

    async def next_id(self, table: Table) -> int:
        async with self._pool.acquire() as db:
            found = await db.fetchval(_NEXT_ID[table], self._soul)
        return int(found)

    # -- goals --------------------------------------------------------------------

    async def goals(self) -> list[GoalRow]:
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                f"SELECT {GOAL_COLUMNS} FROM goals WHERE soul = $1 ORDER BY id", self._soul
            )
        return [GoalRow(*row) for row in rows]

    async def write_goals(self, goals: Sequence[GoalRow], gone: Sequence[int] = ()) -> None:
        with anyio.CancelScope(shield=True):
            async with writing(self._pool, self._fence) as db:
                await _put_goals(db, self._soul, goals)
                if gone:
                    await db.execute(
                        "DELETE FROM goals WHERE soul = $1 AND id = ANY($2::bigint[])",
                        self._soul,
                        list(gone),
                    )

    # -- questions ----------------------------------------------------------------

    async def pending(self, limit: int) -> list[Question]:
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                f"SELECT {QUESTION_COLUMNS} FROM questions WHERE soul = $1 AND state = 'pending'"
                " ORDER BY id DESC LIMIT $2",
                self._soul,
                limit,
            )
        return [Question(*row) for row in reversed(rows)]

    async def questions(
        self, *, state: str = "unanswered", ids: Sequence[int] = ()
    ) -> list[Question]:
        async with self._pool.acquire() as db:
            if ids:
                rows = await db.fetch(
                    f"SELECT {QUESTION_COLUMNS} FROM questions"
                    " WHERE soul = $1 AND id = ANY($2::bigint[]) ORDER BY id",
                    self._soul,
                    list(ids),
                )
            else:
                rows = await db.fetch(
                    f"SELECT {QUESTION_COLUMNS} FROM questions WHERE soul = $1 AND state = $2"
                    " ORDER BY id",
                    self._soul,
                    state,
                )
        return [Question(*row) for row in rows]

    # -- claims -------------------------------------------------------------------

    async def claims(self, *, every: bool = False, ids: Sequence[int] = ()) -> list[NewClaim]:
        async with self._pool.acquire() as db:
            if ids:
                rows = await db.fetch(
                    f"SELECT {CLAIM_COLUMNS} FROM claims"
                    " WHERE soul = $1 AND id = ANY($2::bigint[]) ORDER BY id",
                    self._soul,
                    list(ids),
                )
            else:
                where = "" if every else " AND state IN ('active', 'deferred')"
                rows = await db.fetch(
                    f"SELECT {CLAIM_COLUMNS} FROM claims WHERE soul = $1{where} ORDER BY id",
                    self._soul,
                )
        return [NewClaim(*row) for row in rows]

    async def slot_claims(self, subject: str, slots: Sequence[str]) -> list[NewClaim]:
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                f"SELECT {CLAIM_COLUMNS} FROM claims"
                " WHERE soul = $1 AND subject = $2 AND slot = ANY($3::text[]) ORDER BY id",
                self._soul,
                subject,
                list(slots),
            )
        return [NewClaim(*row) for row in rows]

    async def state_entry(
        self, claim: NewClaim | None, closings: Sequence[ClaimClosing], state: Mapping[str, str]
    ) -> int | None:
        soul = self._soul
        stored = None
        with anyio.CancelScope(shield=True):
            async with writing(self._pool, self._fence) as db:
                if claim is not None:
                    stored = await db.fetchval(
                        f"INSERT INTO claims (soul, {CLAIM_COLUMNS}) VALUES ($1,"
                        " (SELECT coalesce(max(id), 0) + 1 FROM claims WHERE soul = $1),"
                        f" {_CLAIM_VALUES}) RETURNING id",
                        soul,
                        *msgspec.structs.astuple(claim)[1:],
                    )
                await db.executemany(
                    "UPDATE claims SET state = $3, valid_to = coalesce($4, valid_to),"
                    " recorded_to = coalesce($5, recorded_to) WHERE soul = $1 AND id = $2",
                    [(soul, c.id, c.state, c.valid_to, c.recorded_to) for c in closings],
                )
                await db.executemany(
                    "INSERT INTO soul_state (soul, key, value) VALUES ($1, $2, $3)"
                    " ON CONFLICT (soul, key) DO UPDATE SET value = excluded.value",
                    [(soul, key, value) for key, value in state.items()],
                )
        return None if stored is None else int(stored)

    async def write_extracted(
        self,
        event_id: int,
        claims: Sequence[NewClaim],
        closings: Sequence[ClaimClosing],
        unspoken: Sequence[UnspokenRow],
    ) -> int | None:
        soul = self._soul
        with anyio.CancelScope(shield=True):
            async with writing(self._pool, self._fence) as db:
                if not await db.fetchval(
                    "SELECT 1 FROM events WHERE soul = $1 AND id = $2", soul, event_id
                ):
                    return None
                changes = Changes(claims=list(claims), closings=list(closings))
                await claim_rows.write(db, soul, changes, ())
                if not unspoken:
                    return 0
                status = await db.execute(
                    f"INSERT INTO unspoken (soul, {UNSPOKEN_COLUMNS})"
                    " SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[],"
                    " $6::float8[]) ON CONFLICT (soul, id) DO NOTHING",
                    soul,
                    [u.id for u in unspoken],
                    [u.event_id for u in unspoken],
                    [u.subject for u in unspoken],
                    [u.sentence for u in unspoken],
                    [u.recorded for u in unspoken],
                )
        return int(status.split()[-1])

    async def unspoken(self) -> list[UnspokenRow]:
        # COLLATE "C": ids ordered by their bytes, as SQLite orders text.
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                f"SELECT {UNSPOKEN_COLUMNS} FROM unspoken WHERE soul = $1"
                ' ORDER BY recorded, id COLLATE "C"',
                self._soul,
            )
        return [UnspokenRow(*row) for row in rows]

    # -- the contexts assembled -----------------------------------------------------

    async def spent(self, session: str | None, since: float) -> int:
        async with self._pool.acquire() as db:
            found = await db.fetchval(
                "SELECT coalesce(sum(recalled), 0) FROM assemblies"
                " WHERE soul = $1 AND created >= $2 AND session IS NOT DISTINCT FROM $3",
                self._soul,
                since,
                session,
            )
        return int(found)

    async def assembly(self, prefix: str | None) -> LoggedAssembly | None:
        # No LIKE: the prefix's characters are all themselves. lower() under COLLATE
        # "C" folds ASCII letters only, as SQLite's does (a hash is ASCII hex).
        sql = f"SELECT {ASSEMBLY_COLUMNS} FROM assemblies WHERE soul = $1"
        async with self._pool.acquire() as db:
            if prefix:
                row = await db.fetchrow(
                    sql + ' AND lower(left(hash, length($2)) COLLATE "C") = lower($2 COLLATE "C")'
                    " ORDER BY id DESC LIMIT 1",
                    self._soul,
                    prefix,
                )
            else:
                row = await db.fetchrow(sql + " ORDER BY id DESC LIMIT 1", self._soul)
        if row is None:
            return None
        created, *rest = row
        return LoggedAssembly(created, AssemblyRow(*rest))

    # -- what the memory map and its drill-down read ----------------------------------

    async def recent(self, limit: int) -> list[tuple[int, str]]:
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                "SELECT id, text FROM memories WHERE soul = $1 AND kind = 'observation'"
                " AND hidden_at IS NULL ORDER BY id DESC LIMIT $2",
                self._soul,
                limit,
            )
        return [(int(row[0]), row[1]) for row in rows]

    async def latest_summaries(self) -> list[tuple[int, str, str]]:
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                "SELECT id, layer, text FROM summaries WHERE soul = $1 AND id IN"
                " (SELECT max(id) FROM summaries WHERE soul = $1 GROUP BY layer) ORDER BY id",
                self._soul,
            )
        return [(int(row[0]), row[1], row[2]) for row in rows]

    async def days(self, limit: int) -> list[tuple[str, int, int, int]]:
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                "SELECT to_char(to_timestamp(ts) AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
                ' COLLATE "C" AS day, count(*), min(id), max(id) FROM events WHERE soul = $1'
                " GROUP BY day ORDER BY day DESC LIMIT $2",
                self._soul,
                limit,
            )
        return [(row[0], int(row[1]), int(row[2]), int(row[3])) for row in rows]

    async def event(self, event_id: int) -> dict[str, object] | None:
        async with self._pool.acquire() as db:
            row = await db.fetchrow(
                "SELECT id, ref, kind, channel, sender, grp, mentioned::int, session, ts,"
                " recorded, salience, text FROM events WHERE soul = $1 AND id = $2",
                self._soul,
                event_id,
            )
        return None if row is None else dict(zip(EVENT_KEYS, row, strict=True))

    async def summary_version(self, summary_id: int) -> dict[str, object] | None:
        async with self._pool.acquire() as db:
            row = await db.fetchrow(
                "SELECT id, layer, text, created, observations, reflector, reason FROM summaries"
                " WHERE soul = $1 AND id = $2",
                self._soul,
                summary_id,
            )
        return None if row is None else dict(zip(SUMMARY_KEYS, row, strict=True))

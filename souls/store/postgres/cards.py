"""The collision room's rows on PostgreSQL (migration 0007_cards), as
:mod:`souls.store.cards` keeps them on SQLite: the same rows, the same orders, each
under its soul. Card and draw numbers are the soul's own and never reused, as SQLite's
``AUTOINCREMENT`` hands them out: from the ``numbering`` table, not from the rows left."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import asyncpg

from souls.results import Card
from souls.store.cards import DRAW_COLUMNS, DrawRow, NewCard, cards_of, draw_of
from souls.store.postgres.lease import Fence
from souls.store.postgres.numbering import next_number
from souls.store.postgres.writing import writing

__all__ = ["PgCardRows"]


class PgCardRows:
    """The collision room's rows of one soul (``PgStore.cards``)."""

    def __init__(self, pool: asyncpg.Pool, soul: int, fence: Fence | None = None) -> None:
        self._pool = pool
        self._soul = soul
        self._fence = fence  # what every write is made under (souls.store.postgres.lease)

    async def existing(self, numbers: Sequence[int]) -> set[int]:
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                "SELECT number FROM cards WHERE soul = $1 AND number = ANY($2::bigint[])",
                self._soul,
                sorted(set(numbers)),
            )
        return {int(row["number"]) for row in rows}

    async def add(self, card: NewCard) -> int:
        soul = self._soul
        with anyio.CancelScope(shield=True):
            async with writing(self._pool, self._fence) as db:
                number = await next_number(db, soul, "cards")
                await db.execute(
                    "INSERT INTO cards (soul, number, kind, title, source, created, last_touched)"
                    " VALUES ($1, $2, $3, $4, $5, $6, $6)",
                    soul, number, card.kind, card.title, card.source, card.created,
                )  # fmt: skip
                await db.executemany(
                    "INSERT INTO card_lines (soul, card, position, kind, text, created)"
                    " VALUES ($1, $2, $3, $4, $5, $6)",
                    [
                        (soul, number, i, kind, text, card.created)
                        for i, (kind, text) in enumerate(card.lines)
                    ],
                )
                await db.executemany(
                    "INSERT INTO card_members (soul, protein, member) VALUES ($1, $2, $3)",
                    [(soul, number, m) for m in card.members],
                )
                await db.execute(
                    "INSERT INTO card_sources (soul, card, event_id)"
                    " SELECT $1, $2, event_id FROM memories"
                    " WHERE soul = $1 AND id = ANY($3::bigint[]) AND event_id IS NOT NULL"
                    " ON CONFLICT DO NOTHING",
                    soul,
                    number,
                    list(card.memories),
                )
        return number

    async def line_texts(self) -> list[str]:
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                "SELECT text FROM card_lines WHERE soul = $1"
                " AND kind IN ('conclusion', 'question') ORDER BY card, position",
                self._soul,
            )
        return [row["text"] for row in rows]

    async def close(
        self, number: int, question: int, answered_by: int, line: int, note: str, now: float
    ) -> None:
        soul = self._soul
        with anyio.CancelScope(shield=True):
            async with writing(self._pool, self._fence) as db:
                await db.execute(
                    "INSERT INTO card_closures (soul, card, question, answered_by, line, created)"
                    " VALUES ($1, $2, $3, $4, $5, $6)",
                    soul, number, question, answered_by, line, now,
                )  # fmt: skip
                await self._append_note(db, number, note, now)

    async def note(self, number: int, text: str, now: float) -> None:
        with anyio.CancelScope(shield=True):
            async with writing(self._pool, self._fence) as db:
                await self._append_note(db, number, text, now)
                await db.execute(
                    "UPDATE cards SET last_touched = $3 WHERE soul = $1 AND number = $2",
                    self._soul,
                    number,
                    now,
                )

    async def _append_note(
        self, db: asyncpg.Connection, number: int, text: str, now: float
    ) -> None:
        await db.execute(
            "INSERT INTO card_lines (soul, card, position, kind, text, created)"
            " SELECT $1, $2, coalesce(max(position), -1) + 1, 'note', $3, $4"
            " FROM card_lines WHERE soul = $1 AND card = $2",
            self._soul,
            number,
            text,
            now,
        )

    async def load(self, number: int | None) -> list[Card]:
        one = " AND {} = $2" if number is not None else ""
        args: list[object] = [self._soul] if number is None else [self._soul, number]
        async with self._pool.acquire() as db:
            heads = await db.fetch(
                "SELECT number, kind, title, source, created, strong_approvals, last_touched"
                f" FROM cards WHERE soul = $1{one.format('number')} ORDER BY number",
                *args,
            )
            if not heads:
                return []
            lines = await db.fetch(
                "SELECT card, kind, text FROM card_lines"
                f" WHERE soul = $1{one.format('card')} ORDER BY card, position",
                *args,
            )
            members = await db.fetch(
                "SELECT protein, member FROM card_members"
                f" WHERE soul = $1{one.format('protein')} ORDER BY protein, member",
                *args,
            )
            closed = await db.fetch(
                "SELECT card, question FROM card_closures"
                f" WHERE soul = $1{one.format('card')} ORDER BY card, question",
                *args,
            )
            reached = await db.fetch(
                "SELECT s.card, max(e.ts) FROM card_sources AS s JOIN events AS e"
                " ON e.soul = s.soul AND e.id = s.event_id"
                f" WHERE s.soul = $1{one.format('s.card')} GROUP BY s.card",
                *args,
            )
        return cards_of(heads, lines, members, closed, reached)

    async def links(self, threshold: float) -> list[tuple[int, int, float]]:
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                "SELECT ca.card, cb.card, max(e.weight) FROM edges AS e"
                " JOIN memories AS ma ON ma.soul = e.soul AND ma.id = e.a"
                " JOIN card_sources AS ca ON ca.soul = e.soul AND ca.event_id = ma.event_id"
                " JOIN memories AS mb ON mb.soul = e.soul AND mb.id = e.b"
                " JOIN card_sources AS cb ON cb.soul = e.soul AND cb.event_id = mb.event_id"
                " WHERE e.soul = $1 AND e.weight >= $2 AND ca.card <> cb.card"
                " GROUP BY ca.card, cb.card ORDER BY ca.card, cb.card",
                self._soul,
                threshold,
            )
        return [(int(a), int(b), float(w)) for a, b, w in rows]

    async def closures_since(self, since: float) -> int:
        async with self._pool.acquire() as db:
            found = await db.fetchval(
                "SELECT count(*) FROM card_closures WHERE soul = $1 AND created >= $2",
                self._soul,
                since,
            )
        return int(found)

    async def add_draw(self, draw: DrawRow) -> int:
        with anyio.CancelScope(shield=True):
            async with writing(self._pool, self._fence) as db:
                number = await next_number(db, self._soul, "draws")
                await db.execute(
                    f"INSERT INTO draws (soul, id, {DRAW_COLUMNS}) VALUES"
                    " ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
                    self._soul, number, draw.seed, draw.topic, draw.cards, draw.wildcard,
                    draw.presented, draw.criterion, draw.verdicts, draw.created, draw.judge,
                    draw.n, draw.exclude, draw.weights, draw.replay_of,
                )  # fmt: skip
        return number

    async def draw(self, number: int) -> DrawRow | None:
        async with self._pool.acquire() as db:
            row = await db.fetchrow(
                f"SELECT id, {DRAW_COLUMNS} FROM draws WHERE soul = $1 AND id = $2",
                self._soul,
                number,
            )
        return draw_of(row)[1] if row is not None else None

    async def draws(self, limit: int) -> list[tuple[int, DrawRow]]:
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                f"SELECT id, {DRAW_COLUMNS} FROM draws WHERE soul = $1 ORDER BY id DESC LIMIT $2",
                self._soul,
                limit,
            )
        return [draw_of(row) for row in rows]

    async def draws_since(self, since: float) -> list[tuple[int, DrawRow]]:
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                f"SELECT id, {DRAW_COLUMNS} FROM draws WHERE soul = $1 AND created >= $2"
                " ORDER BY id",
                self._soul,
                since,
            )
        return [draw_of(row) for row in rows]

    async def presented_before(self, before: int | None) -> list[tuple[int, str]]:
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                "SELECT id, verdicts FROM draws WHERE soul = $1 AND presented AND id < $2"
                " ORDER BY id",
                self._soul,
                before if before is not None else 2**63 - 1,
            )
        return [(int(row["id"]), row["verdicts"]) for row in rows]

    async def silence(self) -> tuple[int, int]:
        async with self._pool.acquire() as db:
            row = await db.fetchrow(
                "SELECT count(*), count(*) FILTER (WHERE NOT presented) FROM draws"
                " WHERE soul = $1 AND replay_of IS NULL",
                self._soul,
            )
        assert row is not None
        return int(row[0]), int(row[1])

    async def add_verdict(
        self, draw: int, card: int, verdict: str, line: int | None, now: float
    ) -> str | None:
        soul = self._soul
        with anyio.CancelScope(shield=True):
            async with writing(self._pool, self._fence) as db:
                done = await db.fetchval(
                    "INSERT INTO verdicts (soul, draw, card, verdict, line, created)"
                    " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (soul, draw, card) DO NOTHING"
                    " RETURNING verdict",
                    soul, draw, card, verdict, line, now,
                )  # fmt: skip
                if done is None:  # already judged: that verdict stays
                    kept = await db.fetchval(
                        "SELECT verdict FROM verdicts WHERE soul = $1 AND draw = $2 AND card = $3",
                        soul,
                        draw,
                        card,
                    )
                    return str(kept)
                if verdict == "strong":
                    await db.execute(
                        "UPDATE cards SET strong_approvals = strong_approvals + 1,"
                        " last_touched = $3 WHERE soul = $1 AND number = $2",
                        soul,
                        card,
                        now,
                    )
        return None

    async def judged(self) -> set[tuple[int, int]]:
        async with self._pool.acquire() as db:
            rows = await db.fetch("SELECT draw, card FROM verdicts WHERE soul = $1", self._soul)
        return {(int(row["draw"]), int(row["card"])) for row in rows}

    async def verdict_counts(self) -> dict[str, int]:
        async with self._pool.acquire() as db:
            rows = await db.fetch(
                "SELECT verdict, count(*) FROM verdicts WHERE soul = $1 GROUP BY verdict",
                self._soul,
            )
        return {row[0]: int(row[1]) for row in rows}

    async def strong_since(self, since: float) -> int:
        async with self._pool.acquire() as db:
            found = await db.fetchval(
                "SELECT count(*) FROM verdicts WHERE soul = $1 AND verdict = 'strong'"
                " AND created >= $2",
                self._soul,
                since,
            )
        return int(found)

"""The collision room's rows on SQLite: cards (their lines, members, sources and closed
questions), the ledger of lightning draws and the user's verdicts. The room
(souls/collision/) decides what a card or a draw is; here they are only stored and
read back. :mod:`souls.store.postgres.cards` keeps the same rows on PostgreSQL;
:class:`~souls.store.interface.CardRows` is what both offer.

JSON columns (a draw's cards, verdicts, exclude and weights) are kept as the room wrote
them, byte for byte."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import aiosqlite
import anyio

from souls.results import Card

__all__ = ["DRAW_COLUMNS", "CardRows", "DrawRow", "NewCard", "cards_of", "draw_of"]

_CHUNK = 500  # ids of one IN (...) list, under SQLite's 999 parameters


@dataclass(frozen=True, slots=True)
class NewCard:
    """A card to store: its lines (kind, text) in order — conclusions, questions, tags
    — the cards a protein synthesises and the memories whose events it came from."""

    kind: str  # card | protein
    title: str
    source: str  # reflect | manual | synthesis
    lines: Sequence[tuple[str, str]]
    members: Sequence[int]
    memories: Sequence[int]
    created: float


@dataclass(frozen=True, slots=True)
class DrawRow:
    """One lightning draw of the ledger, silenced ones too (JSON as recorded)."""

    seed: int
    topic: str
    cards: str  # JSON list of card numbers, the wildcard last
    wildcard: int
    presented: bool
    criterion: str | None
    verdicts: str  # JSON: every criterion with its reason
    created: float
    judge: str
    n: int | None
    exclude: str  # JSON list
    weights: str | None  # JSON object, None for draws recorded before weights were kept
    replay_of: int | None


DRAW_COLUMNS = (
    "seed, topic, cards, wildcard, presented, criterion, verdicts, created, judge, n,"
    " exclude, weights, replay_of"
)


def draw_of(row: Sequence[Any]) -> tuple[int, DrawRow]:
    """A ledger row (its number, then the columns of ``DRAW_COLUMNS``) of either backend."""
    (number, seed, topic, cards, wildcard, presented, criterion, verdicts, created, judge, n,
     exclude, weights, replay_of) = row  # fmt: skip
    return int(number), DrawRow(
        int(seed), topic, cards, int(wildcard), bool(presented), criterion, verdicts,
        float(created), judge, n, exclude, weights, replay_of,
    )  # fmt: skip


def cards_of(
    heads: Iterable[Sequence[Any]],
    lines: Iterable[Sequence[Any]],
    members: Iterable[Sequence[Any]],
    closed: Iterable[Sequence[Any]],
    reached: Iterable[Sequence[Any]],
) -> list[Card]:
    """Cards from their rows (either backend's, in the orders of :meth:`CardRows.load`)."""
    texts: dict[int, dict[str, list[str]]] = {}
    for card, kind, text in lines:
        texts.setdefault(card, {}).setdefault(kind, []).append(text)
    joined: dict[int, list[int]] = {}
    for protein, member in members:
        joined.setdefault(protein, []).append(member)
    shut: dict[int, list[int]] = {}
    for card, question in closed:
        shut.setdefault(card, []).append(question)
    when = {card: float(ts) for card, ts in reached}
    out = []
    for num, kind, title, source, created, approvals, touched in heads:
        by_kind = texts.get(num, {})
        out.append(
            Card(
                num, kind, title, source, created, by_kind.get("conclusion", []),
                by_kind.get("question", []), by_kind.get("tag", []), by_kind.get("note", []),
                joined.get(num, []), approvals, touched, shut.get(num, []),
                when.get(num, created),
            )
        )  # fmt: skip
    return out


class _Database(Protocol):
    """What :class:`CardRows` needs of the SQLite store (:class:`souls.store.store.Store`,
    which reads and writes the room's rows through this module)."""

    @property
    def db(self) -> aiosqlite.Connection: ...

    def transaction(self) -> AbstractAsyncContextManager[aiosqlite.Connection]: ...


class CardRows:
    """The collision room's rows of one SQLite store (``store.cards``)."""

    def __init__(self, store: _Database) -> None:
        self._store = store

    # -- cards ------------------------------------------------------------------

    async def existing(self, numbers: Sequence[int]) -> set[int]:
        """Those of ``numbers`` that are cards."""
        found: set[int] = set()
        ordered = sorted(set(numbers))
        for start in range(0, len(ordered), _CHUNK):
            chunk = ordered[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = await self._store.db.execute_fetchall(
                f"SELECT number FROM cards WHERE number IN ({marks})", chunk
            )
            found |= {int(n) for (n,) in rows}
        return found

    async def add(self, card: NewCard) -> int:
        """Store a new card, in one shielded transaction; its number (never reused)."""
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                cursor = await db.execute(
                    "INSERT INTO cards (kind, title, source, created, last_touched)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (card.kind, card.title, card.source, card.created, card.created),
                )
                number = cursor.lastrowid
                await db.executemany(
                    "INSERT INTO card_lines (card, position, kind, text, created)"
                    " VALUES (?, ?, ?, ?, ?)",
                    [(number, i, k, t, card.created) for i, (k, t) in enumerate(card.lines)],
                )
                await db.executemany(
                    "INSERT INTO card_members (protein, member) VALUES (?, ?)",
                    [(number, m) for m in card.members],
                )
                # The events a card came from: those of the memories its summary cited.
                await db.executemany(
                    "INSERT OR IGNORE INTO card_sources (card, event_id)"
                    " SELECT ?, event_id FROM memories WHERE id = ? AND event_id IS NOT NULL",
                    [(number, m) for m in card.memories],
                )
        assert number is not None
        return number

    async def line_texts(self) -> list[str]:
        """The text of every conclusion and question of every card."""
        rows = await self._store.db.execute_fetchall(
            "SELECT text FROM card_lines WHERE kind IN ('conclusion', 'question')"
            " ORDER BY card, position"
        )
        return [str(text) for (text,) in rows]

    async def close(
        self, number: int, question: int, answered_by: int, line: int, note: str, now: float
    ) -> None:
        """Record question ``question`` of card ``number`` closed (answered by card
        ``answered_by``'s conclusion ``line``) and append ``note`` to the card."""
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                await db.execute(
                    "INSERT INTO card_closures (card, question, answered_by, line, created)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (number, question, answered_by, line, now),
                )
                await db.execute(
                    "INSERT INTO card_lines (card, position, kind, text, created)"
                    " SELECT ?, coalesce(max(position), -1) + 1, 'note', ?, ?"
                    " FROM card_lines WHERE card = ?",
                    (number, note, now, number),
                )

    async def note(self, number: int, text: str, now: float) -> None:
        """Append a note to card ``number`` (touching it)."""
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                await db.execute(
                    "INSERT INTO card_lines (card, position, kind, text, created)"
                    " SELECT ?, coalesce(max(position), -1) + 1, 'note', ?, ?"
                    " FROM card_lines WHERE card = ?",
                    (number, text, now, number),
                )
                await db.execute(
                    "UPDATE cards SET last_touched = ? WHERE number = ?", (now, number)
                )

    async def load(self, number: int | None) -> list[Card]:
        """Card ``number``, or every card (by number): one query per table whatever the
        number of cards (every draw reads them all)."""
        one = number is not None
        params = (number,) if one else ()
        db = self._store.db
        heads = await db.execute_fetchall(
            "SELECT number, kind, title, source, created, strong_approvals, last_touched"
            f" FROM cards{' WHERE number = ?' if one else ''} ORDER BY number",
            params,
        )
        if not heads:
            return []
        lines = await db.execute_fetchall(
            f"SELECT card, kind, text FROM card_lines{' WHERE card = ?' if one else ''}"
            " ORDER BY card, position",
            params,
        )
        members = await db.execute_fetchall(
            "SELECT protein, member FROM card_members"
            f"{' WHERE protein = ?' if one else ''} ORDER BY protein, member",
            params,
        )
        closed = await db.execute_fetchall(
            f"SELECT card, question FROM card_closures{' WHERE card = ?' if one else ''}"
            " ORDER BY card, question",
            params,
        )
        reached = await db.execute_fetchall(
            "SELECT s.card, max(e.ts) FROM card_sources AS s JOIN events AS e"
            f" ON e.id = s.event_id{' WHERE s.card = ?' if one else ''} GROUP BY s.card",
            params,
        )
        return cards_of(list(heads), list(lines), list(members), list(closed), list(reached))

    async def links(self, threshold: float) -> list[tuple[int, int, float]]:
        """Card pairs whose source events' memories share a Hebbian edge of at least
        ``threshold``, each ordered pair once, with its strongest such edge."""
        rows = await self._store.db.execute_fetchall(
            "SELECT ca.card, cb.card, max(e.weight) FROM edges AS e"
            " JOIN memories AS ma ON ma.id = e.a"
            " JOIN card_sources AS ca ON ca.event_id = ma.event_id"
            " JOIN memories AS mb ON mb.id = e.b"
            " JOIN card_sources AS cb ON cb.event_id = mb.event_id"
            " WHERE e.weight >= ? AND ca.card <> cb.card GROUP BY ca.card, cb.card"
            " ORDER BY ca.card, cb.card",
            (threshold,),
        )
        return [(int(a), int(b), float(w)) for a, b, w in rows]

    async def closures_since(self, since: float) -> int:
        """How many questions were closed at or after ``since``."""
        rows = await self._store.db.execute_fetchall(
            "SELECT count(*) FROM card_closures WHERE created >= ?", (since,)
        )
        return int(next(iter(rows))[0])

    # -- draws and verdicts -------------------------------------------------------

    async def add_draw(self, draw: DrawRow) -> int:
        """Record a draw in the ledger, in one shielded transaction; its number."""
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                cursor = await db.execute(
                    f"INSERT INTO draws ({DRAW_COLUMNS})"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        draw.seed, draw.topic, draw.cards, draw.wildcard, int(draw.presented),
                        draw.criterion, draw.verdicts, draw.created, draw.judge, draw.n,
                        draw.exclude, draw.weights, draw.replay_of,
                    ),
                )  # fmt: skip
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    async def draw(self, number: int) -> DrawRow | None:
        rows = await self._store.db.execute_fetchall(
            f"SELECT id, {DRAW_COLUMNS} FROM draws WHERE id = ?", (number,)
        )
        return draw_of(next(iter(rows)))[1] if rows else None

    async def draws(self, limit: int) -> list[tuple[int, DrawRow]]:
        """The latest ``limit`` draws, the latest first."""
        rows = await self._store.db.execute_fetchall(
            f"SELECT id, {DRAW_COLUMNS} FROM draws ORDER BY id DESC LIMIT ?", (limit,)
        )
        return [draw_of(row) for row in rows]

    async def draws_since(self, since: float) -> list[tuple[int, DrawRow]]:
        """The draws made at or after ``since``, the earliest first."""
        rows = await self._store.db.execute_fetchall(
            f"SELECT id, {DRAW_COLUMNS} FROM draws WHERE created >= ? ORDER BY id", (since,)
        )
        return [draw_of(row) for row in rows]

    async def presented_before(self, before: int | None) -> list[tuple[int, str]]:
        """The presented draws (number, verdicts) below ``before`` (all when None), the
        earliest first."""
        rows = await self._store.db.execute_fetchall(
            "SELECT id, verdicts FROM draws WHERE presented = 1 AND id < ? ORDER BY id",
            (before if before is not None else 2**63 - 1,),
        )
        return [(int(number), str(verdicts)) for number, verdicts in rows]

    async def silence(self) -> tuple[int, int]:
        """How many draws there are that are no reproduction, and how many of them
        were silenced."""
        rows = await self._store.db.execute_fetchall(
            "SELECT count(*), coalesce(sum(1 - presented), 0) FROM draws WHERE replay_of IS NULL"
        )
        total, silent = next(iter(rows))
        return int(total), int(silent)

    async def add_verdict(
        self, draw: int, card: int, verdict: str, line: int | None, now: float
    ) -> str | None:
        """Record the verdict on ``card`` of ``draw`` (a strong one counts on the card),
        in one shielded transaction; when the card already has one for that draw,
        nothing changes and that verdict is returned."""
        with anyio.CancelScope(shield=True):
            async with self._store.transaction() as db:
                done = list(
                    await db.execute_fetchall(
                        "SELECT verdict FROM verdicts WHERE draw = ? AND card = ?", (draw, card)
                    )
                )
                if not done:
                    await db.execute(
                        "INSERT INTO verdicts (draw, card, verdict, line, created)"
                        " VALUES (?, ?, ?, ?, ?)",
                        (draw, card, verdict, line, now),
                    )
                    if verdict == "strong":
                        await db.execute(
                            "UPDATE cards SET strong_approvals = strong_approvals + 1,"
                            " last_touched = ? WHERE number = ?",
                            (now, card),
                        )
        return str(done[0][0]) if done else None

    async def judged(self) -> set[tuple[int, int]]:
        """Every (draw, card) that has a verdict."""
        rows = await self._store.db.execute_fetchall("SELECT draw, card FROM verdicts")
        return {(int(d), int(c)) for d, c in rows}

    async def verdict_counts(self) -> dict[str, int]:
        """How many verdicts of each kind there are (kinds given at least once)."""
        rows = await self._store.db.execute_fetchall(
            "SELECT verdict, count(*) FROM verdicts GROUP BY verdict"
        )
        return {str(v): int(n) for v, n in rows}

    async def strong_since(self, since: float) -> int:
        rows = await self._store.db.execute_fetchall(
            "SELECT count(*) FROM verdicts WHERE verdict = 'strong' AND created >= ?", (since,)
        )
        return int(next(iter(rows))[0])

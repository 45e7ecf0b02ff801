"""A full forget's rows (DESIGN §3.12), on SQLite: what souls/actor/forgetting.py reads
of a soul before it decides (:class:`Forgetting`), and what it decided
(:class:`ForgetPlan`), applied in one transaction with the events' deletion.
:mod:`souls.store.postgres.forgetting` keeps the same rows on PostgreSQL;
``SoulStore.forgetting``, ``SoulStore.forget_all`` and ``SoulStore.compact`` are what
both offer.

The plan holds the decisions (which card lines repeat a forgotten text, which summary
versions cite a forgotten memory, the markers recomputed from the events that remain,
the logs' scrub); the store deletes by event id what derives from the events (their
memories and what hangs on them, card sources, claims, questions, and reopens the
questions they answered), so that a row written between the read and the write goes
all the same."""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite
import msgspec

from souls.store import logs
from souls.store.logs import Scrub

__all__ = [
    "REDACTED",
    "CardText",
    "ForgetPlan",
    "Forgetting",
    "Forgotten",
    "Redaction",
    "apply",
    "matching",
    "read",
]

# What a redacted card line (or title) reads.
REDACTED = "[redacted: forgotten at the user's request]"

# One marker as stored: topic, valence, weight, label.
MarkerRow = tuple[str, str, float, str | None]


class CardText(msgspec.Struct, frozen=True):
    """A card that cites a forgotten event: its title and every line (position, kind,
    text), by position."""

    number: int
    title: str
    lines: list[tuple[int, str, str]]


class Forgetting(msgspec.Struct, frozen=True, kw_only=True):
    """What a forget reads of the soul before it decides."""

    texts: list[str]  # the events' texts (those still stored), by id
    memories: list[int]  # the ids of their memories, by id
    cards: list[CardText]  # the cards citing one of them, by number
    summaries: list[tuple[int, str]]  # every summary version (id, text), by id
    # Every other event (text, salience, person), by id: what the markers come from.
    remaining: list[tuple[str, float, str | None]]


class Redaction(msgspec.Struct, frozen=True):
    """A card's lines (by position) and title that now read :data:`REDACTED`, and the
    note (position, text) that says so, if any."""

    card: int
    lines: list[int]
    title: bool = False
    note: tuple[int, str] | None = None


class ForgetPlan(msgspec.Struct, frozen=True, kw_only=True):
    """A full forget, as decided: the events that go, the card lines redacted (every
    card that cited one of them loses that source, redacted or not), the summary
    versions deleted, every marker as it stands after (the others deleted), the logs'
    scrub, and the time the notes and markers are written at."""

    events: list[int]
    redactions: list[Redaction] = msgspec.field(default_factory=list)
    summaries: list[int] = msgspec.field(default_factory=list)
    markers: list[MarkerRow] = msgspec.field(default_factory=list)
    scrub: Scrub = msgspec.field(default_factory=Scrub)
    now: float = 0.0


class Forgotten(msgspec.Struct, frozen=True):
    """What a forget deleted: events, memories, Hebbian edges, claims and questions."""

    events: int
    memories: int
    edges: int
    claims: int
    questions: int


async def matching(
    db: aiosqlite.Connection,
    *,
    ref: str | None = None,
    match: str | None = None,
    before: float | None = None,
    everything: bool = False,
) -> list[int]:
    """The ids of the events a forget request names, by id: every one, the one of
    ``ref``, those whose text holds ``match`` (ASCII case ignored, as SQLite's
    ``lower``), or those said before ``before`` (exactly one criterion is given)."""
    if everything:
        rows = await db.execute_fetchall("SELECT id FROM events ORDER BY id")
    elif ref is not None:
        rows = await db.execute_fetchall("SELECT id FROM events WHERE ref = ?", (ref,))
    elif match is not None:
        rows = await db.execute_fetchall(
            "SELECT id FROM events WHERE instr(lower(text), lower(?)) > 0 ORDER BY id", (match,)
        )
    else:
        assert before is not None
        rows = await db.execute_fetchall(
            "SELECT id FROM events WHERE ts < ? ORDER BY id", (before,)
        )
    return [event_id for (event_id,) in rows]


async def read(db: aiosqlite.Connection, event_ids: Sequence[int]) -> Forgetting:
    """What a forget of ``event_ids`` reads, as ``db`` sees it."""
    ids = sorted(set(event_ids))
    texts: list[str] = []
    memories: list[int] = []
    numbers: set[int] = set()
    for chunk in _chunks(ids):
        marks = _marks(chunk)
        texts += [
            t
            for (t,) in await db.execute_fetchall(
                f"SELECT text FROM events WHERE id IN ({marks}) ORDER BY id", chunk
            )
        ]
        memories += [
            m
            for (m,) in await db.execute_fetchall(
                f"SELECT id FROM memories WHERE event_id IN ({marks}) ORDER BY id", chunk
            )
        ]
        numbers |= {
            c
            for (c,) in await db.execute_fetchall(
                f"SELECT card FROM card_sources WHERE event_id IN ({marks})", chunk
            )
        }
    cards = []
    for number in sorted(numbers):
        (title,) = await db.execute_fetchall("SELECT title FROM cards WHERE number = ?", (number,))
        lines = await db.execute_fetchall(
            "SELECT position, kind, text FROM card_lines WHERE card = ? ORDER BY position",
            (number,),
        )
        cards.append(CardText(number, title[0], [(p, k, t) for p, k, t in lines]))
    summaries = await db.execute_fetchall("SELECT id, text FROM summaries ORDER BY id")
    gone = set(ids)
    remaining = [
        (text, salience, person)
        for event_id, text, salience, person in await db.execute_fetchall(
            "SELECT id, text, salience, person FROM events ORDER BY id"
        )
        if event_id not in gone
    ]
    return Forgetting(
        texts=texts,
        memories=sorted(memories),
        cards=cards,
        summaries=[(i, t) for i, t in summaries],
        remaining=remaining,
    )


async def apply(db: aiosqlite.Connection, plan: ForgetPlan) -> tuple[int, int]:
    """What of ``plan`` derives from the events besides their memories, in the caller's
    transaction (the store's forget deletes those): card sources and redactions,
    claims, questions (those the events settled reopen), summary versions, markers,
    the logs' scrub. How many claims and questions went."""
    events = plan.events
    for chunk in _chunks(events):
        await db.execute(f"DELETE FROM card_sources WHERE event_id IN ({_marks(chunk)})", chunk)
    for redaction in plan.redactions:
        await db.executemany(
            "UPDATE card_lines SET text = ? WHERE card = ? AND position = ?",
            [(REDACTED, redaction.card, position) for position in redaction.lines],
        )
        if redaction.title:
            await db.execute(
                "UPDATE cards SET title = ? WHERE number = ?", (REDACTED, redaction.card)
            )
        if redaction.note is not None:
            position, text = redaction.note
            await db.execute(
                "INSERT INTO card_lines (card, position, kind, text, created)"
                " VALUES (?, ?, 'note', ?, ?)",
                (redaction.card, position, text, plan.now),
            )
    claims = await _delete(db, "DELETE FROM claims WHERE event_id IN", events)
    questions = await _delete(db, "DELETE FROM questions WHERE event_id IN", events)
    await _delete(
        db,
        "UPDATE questions SET state = 'pending', resolved = NULL, answer = NULL WHERE answer IN",
        events,
    )
    await db.executemany("DELETE FROM summaries WHERE id = ?", [(i,) for i in plan.summaries])
    await db.execute("DELETE FROM markers")
    await db.executemany(
        "INSERT INTO markers (topic, valence, weight, label, updated) VALUES (?, ?, ?, ?, ?)",
        [(*row, plan.now) for row in plan.markers],
    )
    await logs.write(db, plan.scrub)
    return claims, questions


async def _delete(db: aiosqlite.Connection, statement: str, ids: Sequence[int]) -> int:
    """Run ``statement`` (ending in ``IN``) over ``ids`` in chunks; rows it touched."""
    touched = 0
    for chunk in _chunks(ids):
        cursor = await db.execute(f"{statement} ({_marks(chunk)})", chunk)
        touched += cursor.rowcount
    return touched


def _chunks(ids: Sequence[int]) -> list[list[int]]:
    return [list(ids[i : i + 500]) for i in range(0, len(ids), 500)]


def _marks(chunk: Sequence[int]) -> str:
    return ",".join("?" * len(chunk))

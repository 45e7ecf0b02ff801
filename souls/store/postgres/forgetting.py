"""A full forget's rows on PostgreSQL: :mod:`souls.store.forgetting`'s read and plan of
one soul, in the same orders, in the caller's transaction. PostgreSQL keeps no
``memory_sources`` (it holds observations only); a memory's vector and an event's
unspoken items go with them by their cascading keys."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

from souls.store.forgetting import REDACTED, CardText, ForgetPlan, Forgetting
from souls.store.postgres import logs

__all__ = ["apply", "matching", "read"]

# SQLite's lower(): ASCII letters only.
_LOWER = "translate({}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"


async def matching(
    db: asyncpg.Connection,
    soul: int,
    *,
    ref: str | None = None,
    match: str | None = None,
    before: float | None = None,
    everything: bool = False,
) -> list[int]:
    """As :func:`souls.store.forgetting.matching`, of the soul's events."""
    if everything:
        rows = await db.fetch("SELECT id FROM events WHERE soul = $1 ORDER BY id", soul)
    elif ref is not None:
        rows = await db.fetch("SELECT id FROM events WHERE soul = $1 AND ref = $2", soul, ref)
    elif match is not None:
        rows = await db.fetch(
            f"SELECT id FROM events WHERE soul = $1"
            f" AND strpos({_LOWER.format('text')}, {_LOWER.format('$2')}) > 0 ORDER BY id",
            soul,
            match,
        )
    else:
        assert before is not None
        rows = await db.fetch(
            "SELECT id FROM events WHERE soul = $1 AND ts < $2 ORDER BY id", soul, before
        )
    return [int(r[0]) for r in rows]


async def read(db: asyncpg.Connection, soul: int, event_ids: Sequence[int]) -> Forgetting:
    """What a forget of the soul's ``event_ids`` reads."""
    ids = sorted(set(event_ids))
    texts = await db.fetch(
        "SELECT text FROM events WHERE soul = $1 AND id = ANY($2::bigint[]) ORDER BY id",
        soul,
        ids,
    )
    memories = await db.fetch(
        "SELECT id FROM memories WHERE soul = $1 AND event_id = ANY($2::bigint[]) ORDER BY id",
        soul,
        ids,
    )
    cited = await db.fetch(
        "SELECT c.number, c.title FROM cards AS c WHERE c.soul = $1 AND EXISTS"
        " (SELECT 1 FROM card_sources AS s WHERE s.soul = c.soul AND s.card = c.number"
        "  AND s.event_id = ANY($2::bigint[]))"
        " ORDER BY c.number",
        soul,
        ids,
    )
    lines = await db.fetch(
        "SELECT card, position, kind, text FROM card_lines"
        " WHERE soul = $1 AND card = ANY($2::bigint[]) ORDER BY card, position",
        soul,
        [r[0] for r in cited],
    )
    by_card: dict[int, list[tuple[int, str, str]]] = {int(r[0]): [] for r in cited}
    for card, position, kind, text in lines:
        by_card[int(card)].append((int(position), kind, text))
    summaries = await db.fetch("SELECT id, text FROM summaries WHERE soul = $1 ORDER BY id", soul)
    remaining = await db.fetch(
        "SELECT text, salience, person FROM events"
        " WHERE soul = $1 AND NOT id = ANY($2::bigint[]) ORDER BY id",
        soul,
        ids,
    )
    return Forgetting(
        texts=[r[0] for r in texts],
        memories=[int(r[0]) for r in memories],
        cards=[CardText(int(n), title, by_card[int(n)]) for n, title in cited],
        summaries=[(int(r[0]), r[1]) for r in summaries],
        remaining=[(r[0], float(r[1]), r[2]) for r in remaining],
    )


async def apply(db: asyncpg.Connection, soul: int, plan: ForgetPlan) -> tuple[int, int]:
    """What of ``plan`` derives from the events besides their memories (the store's
    forget deletes those), as on SQLite; how many claims and questions went."""
    events = sorted(set(plan.events))
    await db.execute(
        "DELETE FROM card_sources WHERE soul = $1 AND event_id = ANY($2::bigint[])", soul, events
    )
    for redaction in plan.redactions:
        await db.execute(
            "UPDATE card_lines SET text = $3"
            " WHERE soul = $1 AND card = $2 AND position = ANY($4::integer[])",
            soul,
            redaction.card,
            REDACTED,
            redaction.lines,
        )
        if redaction.title:
            await db.execute(
                "UPDATE cards SET title = $3 WHERE soul = $1 AND number = $2",
                soul,
                redaction.card,
                REDACTED,
            )
        if redaction.note is not None:
            position, text = redaction.note
            await db.execute(
                "INSERT INTO card_lines (soul, card, position, kind, text, created)"
                " VALUES ($1, $2, $3, 'note', $4, $5)",
                soul,
                redaction.card,
                position,
                text,
                plan.now,
            )
    claims = await db.execute(
        "DELETE FROM claims WHERE soul = $1 AND event_id = ANY($2::bigint[])", soul, events
    )
    questions = await db.execute(
        "DELETE FROM questions WHERE soul = $1 AND event_id = ANY($2::bigint[])", soul, events
    )
    await db.execute(
        "UPDATE questions SET state = 'pending', resolved = NULL, answer = NULL"
        " WHERE soul = $1 AND answer = ANY($2::bigint[])",
        soul,
        events,
    )
    await db.execute(
        "DELETE FROM summaries WHERE soul = $1 AND id = ANY($2::bigint[])", soul, plan.summaries
    )
    await db.execute("DELETE FROM markers WHERE soul = $1", soul)
    if plan.markers:
        await db.executemany(
            "INSERT INTO markers (soul, topic, valence, weight, label, updated)"
            " VALUES ($1, $2, $3, $4, $5, $6)",
            [(soul, *row, plan.now) for row in plan.markers],
        )
    await logs.write(db, soul, plan.scrub)
    return _count(claims), _count(questions)


def _count(status: str) -> int:
    """The rows a statement's status (``DELETE 3``) says it touched."""
    return int(status.split()[-1])

"""The user's full forget (souls/actor/forgetting.py) on both backends (the fixtures of
tests/backends.py: a real SQLite file, a real PostgreSQL server), through the store
interface alone: after it nothing of the forgotten event stays in any table (its words
nowhere, no row naming it by id), the other events and what derives from them stay, the
markers are those of the events that remain; a dry run counts what the forget does and
changes nothing, nor does a forget that fails half-way; and on PostgreSQL another soul
of the database is untouched."""

from __future__ import annotations

import sqlite3
import struct
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg
import msgspec
import pytest

from souls.actor.forgetting import ForgetResult, forget, markers_of, plan
from souls.mind.somatic import SomaticConfig
from souls.store.cards import DrawRow, NewCard
from souls.store.changes import (
    AssemblyRow,
    Changes,
    GoalRow,
    NewClaim,
    NewQuestion,
    Settlement,
    SummaryVersion,
)
from souls.store.forgetting import REDACTED
from souls.store.interface import SoulStore
from souls.store.knowledge import UnspokenRow
from souls.store.postgres.store import PgStore
from souls.store.store import NewEvent
from souls.text.tokenize import fts_document

Raw = Callable[..., Awaitable[list[tuple[object, ...]]]]
T0 = 1_780_000_000.0
NOW = T0 + 3600
SECRET = "my locker code is behind the blue poster, terrible"
# Words of the secret said nowhere else: none may stay anywhere.
TRACES = ("locker", "poster")
SOMATIC = SomaticConfig()
KEPT = ["where did I put the key to the shed?", "lunch with ada was lovely",
        "the garden needs water, sadly"]  # fmt: skip


def event(text: str, ts: float, sender: str = "ana") -> NewEvent:
    return NewEvent(
        None, "dm", "web", sender, None, False, "s1", ts, ts, 0.5, text, fts_document(text)
    )


def claim(claim_id: int, event_id: int, value: str, quote: str) -> NewClaim:
    return NewClaim(
        claim_id, "fact", "ana", "likes", value, quote, event_id, "rule", "high", "active",
        T0, None, T0, None,
    )  # fmt: skip


def goal(goal_id: int, statement: str, event_id: int | None) -> GoalRow:
    return GoalRow(
        goal_id, "ana", statement, "home", 3, '["a code"]', "active", "[]", T0, T0, event_id
    )


async def seed(store: SoulStore) -> list[int]:
    """Four events of one session (the secret second, a question it answers before it)
    and a row of every kind that derives from them or quotes them; their ids."""
    ids = await store.append(
        [
            event(KEPT[0], T0),
            event(SECRET, T0 + 1),
            event(KEPT[1], T0 + 2),
            event(KEPT[2], T0 + 3),
        ]
    )
    asks, secret, lunch, garden = ids
    m = await store.observation_memories(ids)
    await store.flush(
        Changes(
            edges=Counter({_pair(m[secret], m[lunch]): 0.5, _pair(m[asks], m[lunch]): 0.5}),
            markers={("locker", "negative"): 2.0, ("lunch", "positive"): 1.0},
            marker_labels={"locker": "locker"},
            gaps=[("codes", SECRET), ("sheds", "nothing known")],
            summaries=[
                SummaryVersion("consolidated", f"ana hid a code (m{m[secret]})", 2, "llm", "x"),
                SummaryVersion("consolidated", f"ana had lunch (m{m[lunch]})", 1, "llm", "x"),
            ],
            state={"spark": f"a spark: {SECRET}", "mood": "calm"},
            assemblies=[
                AssemblyRow("h1", "s1", f"is {SECRET}?", "retrieval", 1, 0, False, "[]", "[]"),
                AssemblyRow("h2", "s1", "lunch?", "retrieval", 1, 0, False, "[]", "[]"),
            ],
            claims=[
                claim(1, secret, "the blue poster", SECRET),
                claim(2, lunch, "lunch with ada", "lunch with ada was lovely"),
            ],
            questions=[
                NewQuestion(1, asks, "ana", "s1", "where did I put the key to the shed?", T0),
                NewQuestion(2, secret, "ana", "s1", f"{SECRET}?", T0 + 1),
            ],
            settlements=[Settlement(1, "answered", secret)],
            goals=[goal(1, "my locker code", secret), goal(2, "sleep more", secret)],
        ),
        T0 + 4,
    )  # fmt: skip
    for event_id, sentence in ((secret, SECRET), (garden, "the garden needs water")):
        row = UnspokenRow(f"unspoken.{event_id}", event_id, "ana", sentence, T0 + 5)
        assert await store.knowledge.write_extracted(event_id, [], [], [row]) == 1
    vector = struct.pack("<2f", 1.0, 0.0)
    await store.write_vectors("mini", [(m[secret], vector), (m[lunch], vector)])
    await store.cards.add(
        NewCard(
            "card", "storage", "reflect",
            [("conclusion", SECRET), ("conclusion", "lunch is good"), ("question", "why?")],
            [], [m[secret], m[lunch]], T0 + 6,
        )
    )  # fmt: skip
    await store.cards.add_draw(
        DrawRow(
            seed=7, topic=SECRET, cards="[1]", wildcard=1, presented=True, criterion="novel",
            verdicts='[{"criterion": "novel", "reason": "fine"}]', created=T0 + 7,
            judge="builtin", n=1, exclude="[]", weights=None, replay_of=None,
        )
    )  # fmt: skip
    return ids


def _pair(a: int, b: int) -> tuple[int, int]:
    return (min(a, b), max(a, b))


async def tables(raw: Raw, backend: str | None) -> list[str]:
    if backend is None:
        rows = await raw("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    else:
        rows = await raw(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = 'public' ORDER BY table_name"
        )
    return [str(name) for (name,) in rows]


async def snapshot(raw: Raw, backend: str | None) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table, in a stable order."""
    return {
        table: sorted((await raw(f"SELECT * FROM {table}")), key=repr)
        for table in await tables(raw, backend)
    }


async def test_nothing_of_a_forgotten_event_stays_in_any_table(
    store: SoulStore, raw: Raw, backend: str | None
) -> None:
    asks, secret, lunch, garden = await seed(store)
    m = await store.observation_memories([asks, secret, lunch, garden])
    result, cards = await forget(store, SOMATIC, None, [secret], NOW)

    assert result == ForgetResult(
        events=1, memories=1, edges=1, summaries=1, markers=result.markers, card_lines=1,
        claims=1, questions=1, scrubbed=4, goals=1,
    )  # fmt: skip
    assert cards == [1]
    for table, rows in (await snapshot(raw, backend)).items():
        for row in rows:
            assert not any(t in repr(row).casefold() for t in TRACES), (table, row)
    # No row names the event or its memory by id.
    assert await raw("SELECT id FROM events ORDER BY id") == [(asks,), (lunch,), (garden,)]
    assert await raw("SELECT id FROM memories WHERE event_id = ?", secret) == []
    for sql in (
        "SELECT id FROM claims WHERE event_id = ?",
        "SELECT id FROM questions WHERE event_id = ?",
        "SELECT id FROM questions WHERE answer = ?",
        "SELECT id FROM unspoken WHERE event_id = ?",
        "SELECT id FROM goals WHERE event_id = ?",
        "SELECT card FROM card_sources WHERE event_id = ?",
    ):
        assert await raw(sql, secret) == [], sql
    gone = m[secret]
    assert await raw("SELECT memory_id FROM memory_vectors WHERE memory_id = ?", gone) == []
    assert await raw("SELECT a FROM edges WHERE a = ? OR b = ?", gone, gone) == []
    assert [t for (t,) in await raw("SELECT text FROM summaries")] == [
        f"ana had lunch (m{m[lunch]})"
    ]
    # What the other events said or gave stays; the question the secret answered reopens.
    assert await raw("SELECT id, event_id FROM claims") == [(2, lunch)]
    assert await raw("SELECT id, state, answer FROM questions") == [(1, "pending", None)]
    assert await raw("SELECT event_id FROM unspoken") == [(garden,)]
    assert await raw("SELECT id, event_id FROM goals") == [(2, None)]
    assert await raw("SELECT memory_id FROM memory_vectors") == [(m[lunch],)]
    assert await raw("SELECT card, event_id FROM card_sources") == [(1, lunch)]
    assert await raw("SELECT a, b FROM edges") == [_pair(m[asks], m[lunch])]
    lines = await raw("SELECT position, kind, text FROM card_lines ORDER BY position")
    kinds = ["conclusion", "conclusion", "question", "note"]
    assert [(p, k) for p, k, _ in lines] == list(enumerate(kinds))
    assert [t for _, _, t in lines][:3] == [REDACTED, "lunch is good", "why?"]
    # The markers are those of the events that remain, nothing else.
    remaining = [(text, 0.5, None) for text in KEPT]
    expected = sorted((t, v, w, label) for t, v, w, label in markers_of(remaining, SOMATIC))
    stored = await raw("SELECT topic, valence, weight, label FROM markers")
    assert sorted((t, v, pytest.approx(w), lb) for t, v, w, lb in stored) == expected
    assert result.markers == len(expected)
    # The store reads the rest back as it stands.
    assert [i for i, _ in (await store.logs()).queries] == [1, 2]


async def test_a_dry_run_counts_the_forget_and_changes_nothing(
    store: SoulStore, raw: Raw, backend: str | None
) -> None:
    _, secret, _, _ = await seed(store)
    before = await snapshot(raw, backend)
    counted, cards = await forget(store, SOMATIC, None, [secret], NOW, dry_run=True)
    assert cards == []
    assert counted.dry_run
    assert await snapshot(raw, backend) == before
    done, _ = await forget(store, SOMATIC, None, [secret], NOW)
    assert msgspec.structs.replace(counted, dry_run=False) == done


async def test_a_forget_that_fails_half_way_changes_nothing(
    store: SoulStore, raw: Raw, backend: str | None
) -> None:
    _, secret, _, _ = await seed(store)
    before = await snapshot(raw, backend)
    read = await store.forgetting([secret])
    decided = plan([secret], read, await store.logs(), SOMATIC, NOW)
    # The markers go in after the events and what derives from them, before the scrub:
    # one twice fails there.
    twice = msgspec.structs.replace(decided, markers=[("x", "negative", 1.0, None)] * 2)
    with pytest.raises((sqlite3.IntegrityError, asyncpg.UniqueViolationError)):
        await store.forget_all(twice)
    assert await snapshot(raw, backend) == before
    assert await store.forgetting([secret]) == read


async def test_a_forget_by_pattern_with_no_event_scrubs_the_logs_alone(
    store: SoulStore, raw: Raw
) -> None:
    await seed(store)
    result, cards = await forget(store, SOMATIC, None, [], NOW, match="BLUE POSTER")
    assert (result.events, result.memories, result.scrubbed, cards) == (0, 0, 4, [])
    assert len(await raw("SELECT id FROM events")) == 4
    assert await raw("SELECT id FROM gaps") == [(2,)]


@pytest.fixture
async def two_souls(pg_dsn: str) -> AsyncIterator[tuple[PgStore, PgStore, asyncpg.Pool]]:
    pool = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=4)
    try:
        yield (
            await PgStore.open(pool, "alpha", context_turns=2),
            await PgStore.open(pool, "beta", context_turns=2),
            pool,
        )
    finally:
        await pool.close()


async def test_another_souls_rows_are_untouched_on_postgres(
    two_souls: tuple[PgStore, PgStore, asyncpg.Pool],
) -> None:
    alpha, beta, pool = two_souls
    await seed(alpha)
    await seed(beta)
    async with pool.acquire() as db:
        # Large outputs on their way to the other daemons (supervisor/relay.py), quoting
        # what is forgotten: alpha's go with the forget, beta's stay.
        await db.executemany(
            "INSERT INTO relayed_outputs (soul, payload) VALUES ($1, $2)",
            [(alpha.soul, '{"text": "the locker code"}'), (beta.soul, '{"text": "locker"}')],
        )

    async def rows_of(soul: int) -> dict[str, list[str]]:
        async with pool.acquire() as db:
            names = [
                r[0]
                for r in await db.fetch(
                    "SELECT table_name FROM information_schema.columns"
                    " WHERE table_schema = 'public' AND column_name = 'soul' ORDER BY table_name"
                )
            ]
            query = "SELECT * FROM {} WHERE soul = $1"
            return {
                n: sorted(repr(tuple(r)) for r in await db.fetch(query.format(n), soul))
                for n in names
            }

    before = await rows_of(beta.soul)
    result, _ = await forget(alpha, SOMATIC, None, [2], NOW)
    assert result.events == result.claims == result.questions == 1
    assert await rows_of(beta.soul) == before
    assert any("locker" in row for row in before["events"])
    after = await rows_of(alpha.soul)
    assert not any("locker" in row for rows in after.values() for row in rows)


async def test_the_events_a_forget_request_names(store: SoulStore) -> None:
    ids = await store.append(
        [
            msgspec.structs.replace(event("École de Lyon", T0), ref="a"),
            event("the ÉCOLE is closed", T0 + 10),
            event("lunch at the école", T0 + 20),
        ]
    )
    assert await store.forgettable(everything=True) == ids
    assert await store.forgettable(ref="a") == ids[:1]
    assert await store.forgettable(ref="b") == []
    assert await store.forgettable(before=T0 + 20) == ids[:2]
    # ASCII case ignored alone, on both as SQLite's lower(): É is not é.
    assert await store.forgettable(match="cole") == ids
    assert await store.forgettable(match="ÉCOLE") == ids[:2]
    assert await store.forgettable(match="école") == ids[2:]
    assert await store.forgettable(match="THE") == ids[1:]

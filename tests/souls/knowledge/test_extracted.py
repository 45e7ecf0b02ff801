"""A model's reading of one event written (souls/knowledge/extracted.py) on both backends
(the fixtures of tests/backends.py: a real SQLite file, a real PostgreSQL server),
through the store interface alone: its claims merged against the claims of their slots
(superseded, corroborated, a candidate of the same event seeing what an earlier one
wrote), its unspoken items kept once each and gone with their event, the view of the
entries in force kept equal to the table; nothing at all for an event forgotten first,
nor of a write that fails; and on PostgreSQL, one soul's rows kept from another's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import asyncpg
import msgspec
import pytest

from souls.intake.hygiene_gate import HygieneConfig, HygieneGate
from souls.knowledge.claim_llm import Reading, Unspoken, unspoken_id
from souls.knowledge.claims import Candidate, Confidence
from souls.knowledge.entries import Claim, Entries
from souls.knowledge.extracted import store_reading
from souls.messages import ClaimAdd
from souls.store.changes import ClaimClosing
from souls.store.interface import SoulStore
from souls.store.knowledge import UnspokenRow
from souls.store.postgres.store import PgStore
from souls.store.store import NewEvent
from souls.text.tokenize import fts_document

NOW = 1_800_000_000.0
Opener = Callable[[], Awaitable[SoulStore]]


def event(text: str, ts: float = NOW - 60) -> NewEvent:
    return NewEvent(
        None, "dm", "web", "ana", None, False, "s1", ts, ts, 0.5, text, fts_document(text)
    )


def candidate(slot: str, value: str, confidence: Confidence = "medium") -> Candidate:
    return Candidate(
        subject="ana", slot=slot, value=value, quote=value, source="llm", confidence=confidence
    )


def item(sentence: str) -> Unspoken:
    return Unspoken(id=unspoken_id(sentence), subject="ana", sentence=sentence)


async def entries_of(store: SoulStore) -> Entries:
    entries = Entries(store, HygieneGate(HygieneConfig()), 0.1)
    await entries.load()
    return entries


def shown(claims: list[Claim]) -> list[tuple[object, ...]]:
    return [
        (c.id, c.slot, c.value, c.event_id, c.source, c.confidence, c.state, c.recorded_to)
        for c in claims
    ]


async def test_a_reading_is_merged_and_written_with_its_unspoken_items(
    store: SoulStore, opener: Opener
) -> None:
    entries = await entries_of(store)
    said = await store.append([event("I moved to Lyon."), event("I love the sea. Paris!")])
    first = Reading(
        claims=[candidate("location", "Paris", "low"), candidate("likes", "the sea", "low")]
    )
    assert await store_reading(store, entries, said[1], NOW - 120, first, NOW) is not None
    reading = Reading(
        claims=[
            candidate("location", "Lyon"),  # supersedes Paris
            candidate("likes", "the sea"),  # corroborates: surer than either
            candidate("location", "Lyon"),  # this event's own claim again: a duplicate
        ],
        unspoken=[item("I never call my father."), item("I never call my father.")],
    )
    stored = await store_reading(store, entries, said[0], NOW - 60, reading, NOW + 1)
    assert stored is not None
    assert (stored.duplicates, stored.unspoken) == (1, 1)
    assert shown(stored.claims) == [
        (3, "location", "Lyon", said[0], "llm", "medium", "active", None),
        (4, "likes", "the sea", said[0], "llm", "high", "active", None),
    ]
    reopened = await entries_of(await opener())
    expected = [
        (1, "location", "Paris", said[1], "llm", "low", "superseded", NOW + 1),
        (2, "likes", "the sea", said[1], "llm", "low", "superseded", NOW + 1),
        *shown(stored.claims),
    ]
    for held in (entries, reopened):
        assert shown(await held.claims(every=True)) == expected
        assert (await held.current()).claims == reopened.view.claims
    assert entries.view.fresh  # kept in step with what was written, not read again
    assert await store.knowledge.unspoken() == [
        UnspokenRow(unspoken_id("I never call my father."), said[0], "ana",
                    "I never call my father.", NOW + 1)
    ]  # fmt: skip
    # Said again (by another event): the same sentence is one item, kept once.
    again = Reading(unspoken=[item("I never call my father."), item("I fear the dark.")])
    stored = await store_reading(store, entries, said[1], NOW - 60, again, NOW + 2)
    assert stored is not None
    assert stored.unspoken == 1
    assert [u.sentence for u in await store.knowledge.unspoken()] == [
        "I never call my father.",
        "I fear the dark.",
    ]


async def test_a_reading_at_once_leaves_what_its_candidates_one_by_one_would(
    store: SoulStore,
) -> None:
    """The reads are made before anything is written, yet a candidate sees what an
    earlier one of the same event inserted and closed (here in the opposite slot too),
    as a read inside the write transaction did: ana's candidates written in one reading
    leave the rows that bob's, the same ones written one reading each, leave."""
    entries = await entries_of(store)
    before, said = await store.append(
        [event("Paris. I love the rain.", NOW - 120), event("The rain, no. Lyon, Nice, Paris!")]
    )
    for subject in ("ana", "bob"):
        earlier = [candidate("location", "Paris", "low"), candidate("likes", "the rain", "low")]
        earlier = [msgspec.structs.replace(c, subject=subject) for c in earlier]
        assert await store_reading(
            store, entries, before, NOW - 120, Reading(claims=earlier), NOW - 1
        )
    said_as = {
        subject: [
            msgspec.structs.replace(c, subject=subject)
            for c in (
                candidate("dislikes", "the rain"),
                candidate("likes", "the rain"),
                candidate("location", "Lyon"),
                candidate("location", "Nice", "high"),
                candidate("location", "Paris"),
                candidate("likes", "the rain", "high"),
            )
        ]
        for subject in ("ana", "bob")
    }
    stored = await store_reading(
        store, entries, said, NOW - 60, Reading(claims=said_as["ana"]), NOW
    )
    assert stored is not None
    for one in said_as["bob"]:
        assert await store_reading(store, entries, said, NOW - 60, Reading(claims=[one]), NOW)
    rows = {
        subject: [c for c in await entries.claims(every=True) if c.subject == subject]
        for subject in ("ana", "bob")
    }
    assert len(rows["ana"]) == len(rows["bob"]) > 3
    # The same rows in the same order (ids interleave: the earlier readings came first).
    assert [msgspec.structs.replace(c, id=0, subject="") for c in rows["ana"]] == [
        msgspec.structs.replace(c, id=0, subject="") for c in rows["bob"]
    ]
    assert (await entries.current()).claims == {c.id: c for c in await entries.claims()}


async def test_nothing_is_written_for_a_forgotten_event(store: SoulStore) -> None:
    entries = await entries_of(store)
    said = await store.append([event("I moved to Lyon.")])
    await store.forget(said)
    reading = Reading(claims=[candidate("location", "Lyon")], unspoken=[item("I moved.")])
    assert await store_reading(store, entries, said[0], NOW - 60, reading, NOW) is None
    assert await store.knowledge.claims(every=True) == []
    assert await store.knowledge.unspoken() == []
    assert entries.view.fresh
    assert entries.view.claims == {}


async def test_a_write_that_fails_keeps_nothing_of_it(store: SoulStore) -> None:
    entries = await entries_of(store)
    said = await store.append([event("I moved to Lyon.")])
    await entries.state(ClaimAdd(kind="fact", value="Paris", subject="ana", slot="location"), NOW)
    before = await store.knowledge.claims(every=True)
    (paris,) = before
    lyon = msgspec.structs.replace(paris, id=2, value="Lyon", event_id=said[0], source="llm")
    # Its last row names an event that is not there: the claim and the closing written
    # before it go with it.
    with pytest.raises(Exception, match=r"(?i)foreign key"):
        await store.knowledge.write_extracted(
            said[0],
            [lyon],
            [ClaimClosing(paris.id, "superseded", NOW, NOW)],
            [UnspokenRow(unspoken_id("I moved."), said[0] + 9, "ana", "I moved.", NOW)],
        )
    assert await store.knowledge.claims(every=True) == before
    assert await store.knowledge.unspoken() == []
    stored = await store_reading(
        store, entries, said[0], NOW - 60, Reading(claims=[candidate("location", "Lyon")]), NOW
    )
    assert stored is not None
    assert [c.id for c in stored.claims] == [2]


async def test_unspoken_items_go_with_their_event(store: SoulStore) -> None:
    entries = await entries_of(store)
    said = await store.append([event("I never call my father."), event("I fear the dark.")])
    for event_id, sentence in zip(
        said, ("I never call my father.", "I fear the dark."), strict=True
    ):
        reading = Reading(unspoken=[item(sentence)])
        assert await store_reading(store, entries, event_id, NOW - 60, reading, NOW)
    await store.forget(said[:1])
    assert [(u.event_id, u.sentence) for u in await store.knowledge.unspoken()] == [
        (said[1], "I fear the dark.")
    ]


async def test_each_souls_readings_are_its_own_on_postgres(pg_dsn: str) -> None:
    """Two souls in one database: the same sentence is an unspoken item of each, claims
    are numbered by each, and neither reads the other's."""
    pool = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=2)
    try:
        souls = [await PgStore.open(pool, name) for name in ("alpha", "beta")]
        for soul in souls:
            entries = await entries_of(soul)
            (said,) = await soul.append([event(f"I never call my father. I live in {soul.name}.")])
            reading = Reading(
                claims=[candidate("location", soul.name)],
                unspoken=[item("I never call my father.")],
            )
            stored = await store_reading(soul, entries, said, NOW - 60, reading, NOW)
            assert stored is not None
            assert stored.unspoken == 1
            assert [c.id for c in stored.claims] == [1]
        for soul in souls:
            assert [c.value for c in await soul.knowledge.claims()] == [soul.name]
            assert [u.sentence for u in await soul.knowledge.unspoken()] == [
                "I never call my father."
            ]
        # An event id of the other soul's is none of this one's.
        await souls[1].forget([1])
        assert await souls[1].knowledge.unspoken() == []
        assert len(await souls[0].knowledge.unspoken()) == 1
        assert await souls[1].knowledge.write_extracted(2, [], [], []) is None
    finally:
        await pool.close()

"""Claims as far as recall reads them, on both backends (the fixtures of
tests/backends.py): stored and closed through a turn's Changes (souls/store/changes.py,
souls/store/postgres/claims.py), which memories a later claim superseded and what
became of their fact (``successors``, the ``superseded`` flag), which state a fact in
force (``stating``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable

import asyncpg
import pytest

from souls.store.changes import Changes, ClaimClosing, NewClaim
from souls.store.interface import SoulStore
from souls.store.postgres.store import PgStore
from souls.store.store import NewEvent, Successor
from souls.text.tokenize import fts_document, fts_match, query_terms

T0 = 1_780_000_000.0

Raw = Callable[..., Awaitable[list[tuple[object, ...]]]]


def event(text: str, ref: str | None = None) -> NewEvent:
    return NewEvent(
        ref=ref, kind="message", channel="test", sender="ada", group=None, mentioned=False,
        session=None, ts=T0, recorded=T0, salience=0.5, text=text, doc=fts_document(text),
    )  # fmt: skip


def claim(
    claim_id: int,
    value: str,
    event_id: int | None,
    *,
    slot: str = "employer",
    state: str = "active",
    at: float = T0,
    subject: str = "ada",
) -> NewClaim:
    return NewClaim(
        claim_id, "fact", subject, slot, value, f"I work at {value}", event_id, "rule", "high",
        state, at, None, at, None,
    )  # fmt: skip


def superseding(old: int, at: float) -> ClaimClosing:
    return ClaimClosing(old, "superseded", at, at)


async def test_claims_are_stored_with_their_events_and_closed(store: SoulStore, raw: Raw) -> None:
    await store.append([event("hello")])
    # -1 - offset: the events of the same append, whose ids it hands out.
    await store.append(
        [event("I work at Siemens"), event("my cat is Miso")],
        Changes(claims=[claim(1, "Siemens", -1), claim(2, "Miso", -2, slot="pet"),
                        claim(3, "tea", None, slot="likes")]),
        now=T0,
    )  # fmt: skip
    await store.append(
        [event("I joined Bosch")],
        Changes(claims=[claim(4, "Bosch", -1, at=T0 + 60)], closings=[superseding(1, T0 + 60)]),
        now=T0 + 60,
    )
    assert await raw(
        "SELECT id, type, subject, slot, value, quote, event_id, source, confidence, state,"
        " valid_from, valid_to, recorded_from, recorded_to, due, replaces FROM claims ORDER BY id"
    ) == [
        (1, "fact", "ada", "employer", "Siemens", "I work at Siemens", 2, "rule", "high",
         "superseded", T0, T0 + 60, T0, T0 + 60, None, None),
        (2, "fact", "ada", "pet", "Miso", "I work at Miso", 3, "rule", "high", "active",
         T0, None, T0, None, None, None),
        (3, "fact", "ada", "likes", "tea", "I work at tea", None, "rule", "high", "active",
         T0, None, T0, None, None, None),
        (4, "fact", "ada", "employer", "Bosch", "I work at Bosch", 4, "rule", "high", "active",
         T0 + 60, None, T0 + 60, None, None, None),
    ]  # fmt: skip
    # A closing that ends no time keeps the times it had; a write that fails keeps nothing.
    await store.flush(Changes(closings=[ClaimClosing(2, "retracted", None, None)]), now=T0)
    with pytest.raises((sqlite3.IntegrityError, asyncpg.UniqueViolationError)):
        await store.append(
            [event("again", "r"), event("again", "r")],
            Changes(claims=[claim(5, "Acme", -1)], closings=[superseding(4, T0)]),
            now=T0,
        )
    assert await raw("SELECT id, state, valid_to FROM claims WHERE id >= 2 ORDER BY id") == [
        (2, "retracted", None), (3, "active", None), (4, "active", None)
    ]  # fmt: skip


async def test_a_superseded_fact_leads_to_its_successor(store: SoulStore) -> None:
    await store.append([event("I work at Siemens")], Changes(claims=[claim(1, "Siemens", -1)]))
    await store.append(
        [event("I moved to Initech")],
        Changes(claims=[claim(2, "Initech", -1, at=T0 + 1)], closings=[superseding(1, T0 + 1)]),
    )
    await store.append(
        [event("Now I joined Bosch")],
        Changes(claims=[claim(3, "Bosch", -1, at=T0 + 2)], closings=[superseding(2, T0 + 2)]),
    )
    # Memory 1 stated Siemens; 2 Initech: both superseded by Bosch (memory 3).
    assert await store.successors([1, 2, 3]) == {
        1: Successor(3, "employer: Siemens → Bosch"), 2: Successor(3, "employer: Initech → Bosch")
    }  # fmt: skip
    assert await store.successors([]) == {}
    hits = await store.hits([(1, 1.0), (3, 0.5)])
    assert [(h.memory_id, h.superseded) for h in hits] == [(1, True), (3, False)]
    found = await store.candidates(fts_match(query_terms("work joined Siemens Bosch")), 10)
    assert {c.memory_id: c.superseded for c in found} == {1: 1, 3: 0}
    assert await store.stating(["employer"], 5) == [3]
    assert await store.stating(["pet"], 5) == []
    # An event that also states the fact in force is no older news.
    await store.append(
        [event("Bosch, not Siemens")],
        Changes(
            claims=[claim(4, "Siemens", -1, state="superseded"), claim(5, "Bosch", -1, at=T0 + 3)]
        ),
    )
    assert 4 not in await store.successors([4])
    assert await store.stating(["employer", "pet"], 5) == [4, 3]
    assert await store.stating(["employer"], 1) == [4]
    # A hidden successor leads nowhere.
    await store.hide([3, 4], T0 + 3)
    assert await store.successors([1, 2]) == {}
    assert await store.stating(["employer"], 5) == []


async def test_the_claims_of_one_soul_are_its_own(pg_dsn: str) -> None:
    pool = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=2)
    try:
        alpha, beta = await PgStore.open(pool, "alpha"), await PgStore.open(pool, "beta")
        for store, values in ((alpha, ("Siemens", "Bosch")), (beta, ("Acme", "Initech"))):
            await store.append([event(f"I work at {values[0]}")],
                               Changes(claims=[claim(1, values[0], -1)]))  # fmt: skip
            await store.append([event(f"I joined {values[1]}")],
                               Changes(claims=[claim(2, values[1], -1)],
                                       closings=[superseding(1, T0)]))  # fmt: skip
        assert await alpha.successors([1]) == {1: Successor(2, "employer: Siemens → Bosch")}
        assert await beta.successors([1]) == {1: Successor(2, "employer: Acme → Initech")}
        assert await alpha.stating(["employer"], 5) == [2]
    finally:
        await pool.close()

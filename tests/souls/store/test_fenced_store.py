"""A soul's PostgreSQL store writes under its lease (souls/store/postgres/writing.py): once
another daemon has taken the soul over, every kind of write of the old owner fails with
LeaseLost and stores nothing, while the new owner's store writes on; reads go on."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import asyncpg
import pytest

from souls.results import DueTask
from souls.store.cards import DrawRow, NewCard
from souls.store.changes import Changes, GoalRow
from souls.store.fading import DAY, Fading
from souls.store.forgetting import ForgetPlan
from souls.store.knowledge import UnspokenRow
from souls.store.logs import Scrub
from souls.store.postgres.lease import Fence, Leases
from souls.store.postgres.store import PgStore
from souls.store.store import NewEvent
from souls.text.tokenize import fts_document
from supervisor.errors import LeaseLost

T0 = 1_780_000_000.0
FADING = Fading(permanent_at=0.9, medium_at=0.6, medium_days=30, low_days=7, purge_days=30,
                edge_factor=0.9, edge_floor=0.05, marker_factor=0.9, marker_floor=0.05)  # fmt: skip
DRAW = DrawRow(seed=1, topic="deploys", cards="[1]", wildcard=1, presented=True, criterion=None,
               verdicts="{}", created=T0, judge="rules", n=None, exclude="[]", weights=None,
               replay_of=None)  # fmt: skip


def event(i: int) -> NewEvent:
    text = f"the deploy {i} went fine"
    return NewEvent(
        ref=f"r{i}", kind="message", channel="web", sender="ann", group=None,
        mentioned=False, session="s1", ts=T0 + i, recorded=T0 + i, salience=0.5,
        text=text, doc=fts_document(text),
    )  # fmt: skip


@pytest.fixture
async def pool(pg_dsn: str) -> AsyncIterator[asyncpg.Pool]:
    async with asyncpg.create_pool(pg_dsn, min_size=1, max_size=4) as made:
        yield made


async def _taken(leases: Leases, soul: str) -> Fence:
    with anyio.fail_after(10):
        while (fence := await leases.take(soul)) is None:  # noqa: ASYNC110 - another session
            await anyio.sleep(0.02)
    return fence


async def _counts(pool: asyncpg.Pool) -> dict[str, Any]:
    """Every table's rows and a digest of them: any row written, changed or deleted
    shows."""
    async with pool.acquire() as db:
        tables = await db.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
        return {
            t: await db.fetchrow(
                f"SELECT count(*), md5(coalesce(string_agg(r::text, ',' ORDER BY r::text), ''))"
                f" FROM {t} AS r"
            )
            for (t,) in tables
        }


async def test_the_old_owner_stores_nothing_once_the_soul_was_taken_over(
    pg_dsn: str, pool: asyncpg.Pool
) -> None:
    first = await Leases.open(pg_dsn, "10.0.0.1:7411")
    second = await Leases.open(pg_dsn, "10.0.0.2:7411")
    try:
        old = await PgStore.open(pool, "alpha", fence=await _taken(first, "alpha"))
        ids = await old.append([event(1), event(2)], now=T0)
        assert len(ids) == 2
        number = await old.cards.add(
            NewCard("card", "deploys", "manual", [("conclusion", "deploys fail")], [], [], T0)
        )
        # The first daemon's lease session ends; its store does not know yet.
        async with pool.acquire() as admin:
            assert await admin.fetchval("SELECT pg_terminate_backend($1)", first.pid)
        new = await PgStore.open(pool, "alpha", fence=await _taken(second, "alpha"))
        before = await _counts(pool)
        goal = GoalRow(1, "ann", "run a half marathon", "health", 3, "[]", "active", "[]",
                       T0, T0, None)  # fmt: skip
        card = NewCard("card", "deploys", "manual", [("conclusion", "deploys go fine")], [],
                       [], T0)  # fmt: skip
        writes: dict[str, Callable[[], Awaitable[object]]] = {
            "append": lambda: old.append([event(3)], now=T0),
            "flush": lambda: old.flush(Changes(recalled={ids[0]}), T0),
            "hide": lambda: old.hide([ids[0]], T0),
            "forget": lambda: old.forget([ids[1]]),
            "link_person": lambda: old.link_person("Ann", "web", "ann", T0),
            "write_vectors": lambda: old.write_vectors("m", [(ids[0], b"\0" * 8)]),
            "cards.add": lambda: old.cards.add(card),
            "knowledge.write_goals": lambda: old.knowledge.write_goals([goal]),
            # ... and every other write of the store and its rooms.
            "record_due": lambda: old.record_due([DueTask("k", T0 + 60, "call mum", 1)]),
            "scrub": lambda: old.scrub(Scrub(state=["ran.decay"])),
            "drop_vectors": lambda: old.drop_vectors(),
            "decay": lambda: old.decay(T0 + 400 * DAY, FADING),
            "forget_all": lambda: old.forget_all(ForgetPlan(events=[ids[1]], now=T0)),
            "cards.note": lambda: old.cards.note(number, "still true", T0),
            "cards.close": lambda: old.cards.close(number, 1, 1, 1, "answered", T0),
            "cards.add_draw": lambda: old.cards.add_draw(DRAW),
            "cards.add_verdict": lambda: old.cards.add_verdict(1, number, "useful", None, T0),
            "knowledge.state_entry": lambda: old.knowledge.state_entry(None, [], {"k": "v"}),
            "knowledge.write_extracted": lambda: old.knowledge.write_extracted(
                ids[0], [], [], [UnspokenRow("unspoken.ab12", ids[0], "ann", "she is tired", T0)]
            ),
        }
        for name, write in writes.items():
            with pytest.raises(LeaseLost, match="no longer owns soul 'alpha'"):
                await write()
            assert await _counts(pool) == before, name
        # Reads go on; the new owner writes, and its ids follow on from the old one's.
        assert [h.memory_id for h in await old.search('"deploy"', 5)]
        assert await new.append([event(3)], now=T0) == [ids[-1] + 1]
        await new.cards.add(card)
        assert (await _counts(pool))["cards"][0] == before["cards"][0] + 1
        await old.close()
        await new.close()
    finally:
        await first.close()
        await second.close()


async def test_a_store_gets_its_own_soul_s_fence_only(pg_dsn: str, pool: asyncpg.Pool) -> None:
    leases = await Leases.open(pg_dsn, "10.0.0.1:7411")
    try:
        fence = await _taken(leases, "alpha")
        with pytest.raises(ValueError, match="beta"):
            await PgStore.open(pool, "beta", fence=fence)
    finally:
        await leases.close()


async def test_each_event_records_the_epoch_of_the_lease_it_was_written_under(
    pg_dsn: str, pool: asyncpg.Pool
) -> None:
    leases = await Leases.open(pg_dsn, "10.0.0.1:7411")
    try:
        fence = await _taken(leases, "alpha")
        store = await PgStore.open(pool, "alpha", fence=fence)
        # One event (an insert of arrays) and a batch of 100 (a COPY): both the fence's.
        await store.append([event(1)], now=T0)
        await store.append([event(i) for i in range(2, 102)], now=T0)
        await leases.give_up("alpha")
        again = await _taken(leases, "alpha")
        assert again.epoch > fence.epoch
        store = await PgStore.open(pool, "alpha", fence=again)
        await store.append([event(102)], now=T0)
        # A tool's unfenced store writes under the epoch the soul's row holds.
        tool = await PgStore.open(pool, "alpha")
        await tool.append([event(i) for i in range(103, 203)], now=T0)
        async with pool.acquire() as db:
            # A row without its epoch (a daemon not yet upgraded) gets the soul's.
            await db.execute(
                "INSERT INTO events (soul, id, ref, kind, ts, recorded, salience, text)"
                " VALUES ($1, 203, 'r203', 'message', 0, 0, 0.5, 'old writer')",
                store.soul,
            )
            rows = await db.fetch("SELECT ref, epoch FROM events ORDER BY id")
        epochs = {r["ref"]: r["epoch"] for r in rows}
        assert len(epochs) == 203
        assert {epochs[f"r{i}"] for i in range(1, 102)} == {fence.epoch}
        assert {epochs[f"r{i}"] for i in range(102, 204)} == {again.epoch}
        # A batch written by COPY reads back as one written by arrays.
        hits = await store.search('"deploy"', 300)
        assert len(hits) == 202
        stored = await store.stored_event(150)
        assert stored is not None
        assert (stored.ts, stored.sender) == (T0 + 150, "ann")
        item = await store.memory_item(150)
        assert item is not None
        assert item.text == "the deploy 150 went fine"
    finally:
        await leases.close()

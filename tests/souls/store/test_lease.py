"""Leases on a real PostgreSQL server (souls/store/postgres/lease.py): one owner per soul
by advisory lock on each daemon's lease session; the locks die with the session; a write
made under an epoch the soul has left stores nothing."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
import asyncpg
import pytest

from souls.store.postgres.lease import KEEPALIVE, Fence, Leases, check, current_owner, lock_key
from supervisor.errors import LeaseLost

A, B = "10.0.0.1:7400", "10.0.0.2:7400"


@pytest.fixture
async def admin(pg_dsn: str) -> AsyncIterator[asyncpg.Connection]:
    db = await asyncpg.connect(pg_dsn)
    yield db
    await db.close()


@pytest.fixture
async def first(pg_dsn: str) -> AsyncIterator[Leases]:
    leases = await Leases.open(pg_dsn, A)
    yield leases
    await leases.close()


@pytest.fixture
async def second(pg_dsn: str) -> AsyncIterator[Leases]:
    leases = await Leases.open(pg_dsn, B)
    yield leases
    await leases.close()


async def _write(pool: asyncpg.Pool, fence: Fence, text: str) -> None:
    """A fenced write, as a soul's store makes them."""
    async with pool.acquire() as db, db.transaction():
        await check(db, fence)
        await db.execute("INSERT INTO scratch (soul, text) VALUES ($1, $2)", fence.soul_id, text)


@pytest.fixture
async def pool(pg_dsn: str, first: Leases) -> AsyncIterator[asyncpg.Pool]:
    # (``first`` migrated the database.)
    async with asyncpg.create_pool(pg_dsn, min_size=1, max_size=4) as made:
        await made.execute("CREATE TABLE scratch (soul integer NOT NULL, text text NOT NULL)")
        yield made


async def _until(condition: Callable[[], Awaitable[bool]], seconds: float = 10.0) -> float:
    """Poll ``condition`` (another session's state: nothing to wait on here) until true;
    the seconds it took."""
    start = time.monotonic()
    with anyio.fail_after(seconds):
        while not await condition():  # noqa: ASYNC110
            await anyio.sleep(0.02)
    return time.monotonic() - start


async def test_one_owner_at_a_time(
    first: Leases, second: Leases, admin: asyncpg.Connection
) -> None:
    fence = await first.take("alpha")
    assert fence is not None
    assert fence.soul == "alpha"
    assert await first.take("alpha") == fence  # ours already: the same lease
    # Another daemon (another session) cannot take it, however often it tries.
    for _ in range(3):
        assert await second.take("alpha") is None
    assert await current_owner(admin, "alpha") == A
    # Another soul is free, for anyone; one session holds many.
    beta = await second.take("beta")
    gamma = await second.take("gamma")
    assert beta is not None
    assert gamma is not None
    assert set(second.owned) == {"beta", "gamma"}
    assert await current_owner(admin, "beta") == B
    await first.give_up("alpha")
    assert "alpha" not in first.owned
    assert await current_owner(admin, "alpha") is None
    taken = await second.take("alpha")
    assert taken is not None
    assert taken.epoch > fence.epoch  # every take a new epoch
    assert await current_owner(admin, "alpha") == B
    assert await admin.fetchval("SELECT owner FROM souls WHERE name = 'alpha'") == B


async def test_a_write_under_a_lost_lease_stores_nothing(
    first: Leases, second: Leases, pool: asyncpg.Pool, admin: asyncpg.Connection
) -> None:
    old = await first.take("alpha")
    assert old is not None
    await _write(pool, old, "first owner, in time")
    # The first daemon's lease session dies; it does not know yet, its pool still works.
    assert await admin.fetchval("SELECT pg_terminate_backend($1)", first.pid)
    taken: list[Fence] = []

    async def took() -> bool:
        fence = await second.take("alpha")
        if fence is not None:
            taken.append(fence)
        return fence is not None

    await _until(took)
    new = taken[0]
    await _write(pool, new, "second owner")
    with pytest.raises(LeaseLost) as lost:
        await _write(pool, old, "first owner, too late")
    assert "no longer owns soul 'alpha'" in lost.value.message
    assert lost.value.code == "lease_lost"
    rows = await admin.fetch("SELECT text FROM scratch ORDER BY text")
    assert [r["text"] for r in rows] == ["first owner, in time", "second owner"]
    assert not await first.alive()
    assert first.owned == {}


async def test_a_take_waits_for_the_old_owners_write_under_way(
    first: Leases, second: Leases, pool: asyncpg.Pool, admin: asyncpg.Connection
) -> None:
    # The old owner's write began (its fence checked) before its lease went: it lands,
    # and the new owner's take completes only after it, never in between.
    old = await first.take("alpha")
    assert old is not None
    order: list[str] = []
    async with pool.acquire() as db:
        transaction = db.transaction()
        await transaction.start()
        await check(db, old)
        assert await admin.fetchval("SELECT pg_terminate_backend($1)", first.pid)
        async with anyio.create_task_group() as tasks:

            async def take() -> None:
                async def took() -> bool:
                    return await second.take("alpha") is not None

                await _until(took)
                order.append("taken")

            tasks.start_soon(take)
            # The lock is free once the old session ended; the take then waits for the row.
            sql = "SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1"
            with anyio.fail_after(10):
                while await admin.fetchval(sql, second.pid) != "Lock":  # noqa: ASYNC110 - the server's view
                    await anyio.sleep(0.01)
            assert order == []
            await db.execute("INSERT INTO scratch VALUES ($1, 'old, under way')", old.soul_id)
            order.append("written")
            await transaction.commit()
    assert order == ["written", "taken"]


async def test_give_up_fences_the_writes_still_to_come(
    first: Leases, second: Leases, pool: asyncpg.Pool, admin: asyncpg.Connection
) -> None:
    fence = await first.take("alpha")
    assert fence is not None
    await first.give_up("alpha")
    with pytest.raises(LeaseLost):
        await _write(pool, fence, "after giving up")
    assert await admin.fetchval("SELECT count(*) FROM scratch") == 0
    assert await second.take("alpha") is not None


async def test_the_locks_go_with_a_killed_session(
    first: Leases, second: Leases, admin: asyncpg.Connection
) -> None:
    for soul in ("alpha", "beta"):
        assert await first.take(soul) is not None
    assert await second.take("alpha") is None
    assert await admin.fetchval("SELECT pg_terminate_backend($1)", first.pid)

    async def both() -> bool:
        return all([await second.take("alpha"), await second.take("beta")])

    took = await _until(both)
    assert took < 5  # the bound for a takeover
    assert not await first.alive()
    assert await current_owner(admin, "alpha") == B
    await first.give_up("alpha")  # already gone: nothing to do, no error
    await first.close()


async def test_a_dead_owner_is_not_believed(first: Leases, admin: asyncpg.Connection) -> None:
    assert await first.take("alpha") is not None
    assert await admin.fetchval("SELECT pg_terminate_backend($1)", first.pid)

    async def nobody() -> bool:
        return await current_owner(admin, "alpha") is None

    await _until(nobody)
    # The table still names it; the lock says no one owns the soul.
    assert await admin.fetchval("SELECT owner FROM souls WHERE name = 'alpha'") == A


async def test_a_daemon_killed_by_sigkill_loses_its_souls(
    pg_dsn: str, second: Leases, admin: asyncpg.Connection
) -> None:
    # A real process holds the leases, and dies by kill -9: no goodbye to the server.
    async with await anyio.open_process([sys.executable, "-c", _HOLDER, pg_dsn]) as holder:
        assert holder.stdout is not None
        said = b""
        with anyio.fail_after(30):
            while b"\n" not in said:
                said += await holder.stdout.receive()
        assert said.strip() == b"held"
        assert await second.take("alpha") is None
        assert await current_owner(admin, "alpha") == A
        holder.send_signal(signal.SIGKILL)
        with anyio.fail_after(10):
            await holder.wait()

    async def taken() -> bool:
        return await second.take("alpha") is not None and await second.take("beta") is not None

    assert await _until(taken) < 5
    assert await current_owner(admin, "alpha") == B


_HOLDER = f"""
import asyncio, sys
from souls.store.postgres.lease import Leases

async def main():
    leases = await Leases.open(sys.argv[1], {A!r})
    held = await leases.take("alpha") and await leases.take("beta")
    print("held" if held else "refused", flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


async def test_the_lease_session_probes_its_peer(first: Leases, admin: asyncpg.Connection) -> None:
    # What bounds a takeover when the holder's network is lost (no FIN, no RST): the
    # server's keepalive probes on the lease session, not the server-wide defaults.
    for name, value in KEEPALIVE.items():
        assert await admin.fetchval(f"SHOW {name}") != value
        assert await first._db.fetchval(f"SHOW {name}") == value  # its own session


def test_lock_keys_are_stable_64_bit_and_distinct() -> None:
    keys = {lock_key(f"soul-{i}") for i in range(10_000)}
    assert len(keys) == 10_000
    assert all(-(2**63) <= key < 2**63 for key in keys)
    assert lock_key("alpha") == lock_key("alpha")

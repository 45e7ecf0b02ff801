"""Leases on a real PostgreSQL server (souls/store/postgres/lease.py): one owner per soul
by advisory lock on a dedicated connection; the lock dies with its holder's session."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import AsyncIterator

import anyio
import asyncpg
import pytest

from souls.store.postgres.lease import KEEPALIVE, Lease, current_owner, lock_key


@pytest.fixture
async def admin(pg_dsn: str) -> AsyncIterator[asyncpg.Connection]:
    db = await asyncpg.connect(pg_dsn)
    yield db
    await db.close()


async def test_one_owner_at_a_time(pg_dsn: str, admin: asyncpg.Connection) -> None:
    first = await Lease.acquire(pg_dsn, "alpha", "10.0.0.1:7400")
    assert first is not None
    assert await first.held()
    # Another daemon (another session) cannot take it, however often it tries.
    for _ in range(3):
        assert await Lease.acquire(pg_dsn, "alpha", "10.0.0.2:7400") is None
    assert await current_owner(admin, "alpha") == "10.0.0.1:7400"
    # Another soul is free, for anyone.
    beta = await Lease.acquire(pg_dsn, "beta", "10.0.0.2:7400")
    assert beta is not None
    assert await current_owner(admin, "beta") == "10.0.0.2:7400"
    await first.release()
    assert not await first.held()
    assert await current_owner(admin, "alpha") is None
    second = await Lease.acquire(pg_dsn, "alpha", "10.0.0.2:7400")
    assert second is not None
    assert await current_owner(admin, "alpha") == "10.0.0.2:7400"
    assert await admin.fetchval("SELECT owner FROM souls WHERE name = 'alpha'") == "10.0.0.2:7400"
    await second.release()
    await beta.release()


async def test_the_lock_goes_with_a_killed_holder(pg_dsn: str, admin: asyncpg.Connection) -> None:
    holder = await Lease.acquire(pg_dsn, "alpha", "10.0.0.1:7400")
    assert holder is not None
    assert await Lease.acquire(pg_dsn, "alpha", "10.0.0.2:7400") is None
    # The holder's session dies (what kill -9 or a lost network does to it).
    assert await admin.fetchval("SELECT pg_terminate_backend($1)", holder.pid)
    start = time.monotonic()
    taken = None
    with anyio.fail_after(10):
        while taken is None:
            taken = await Lease.acquire(pg_dsn, "alpha", "10.0.0.2:7400")
            if taken is None:
                await anyio.sleep(0.02)
    assert time.monotonic() - start < 5  # the bound for a takeover
    assert not await holder.held()
    assert await current_owner(admin, "alpha") == "10.0.0.2:7400"
    await taken.release()
    await holder.release()  # already gone: nothing to do, no error


async def test_release_of_a_lease_whose_session_was_killed(
    pg_dsn: str, admin: asyncpg.Connection
) -> None:
    holder = await Lease.acquire(pg_dsn, "alpha", "10.0.0.1:7400")
    assert holder is not None
    assert await admin.fetchval("SELECT pg_terminate_backend($1)", holder.pid)
    await anyio.sleep(0.1)
    await holder.release()  # the connection has not noticed yet: still no error
    assert not await holder.held()


async def test_a_dead_owner_is_not_believed(pg_dsn: str, admin: asyncpg.Connection) -> None:
    holder = await Lease.acquire(pg_dsn, "alpha", "10.0.0.1:7400")
    assert holder is not None
    assert await admin.fetchval("SELECT pg_terminate_backend($1)", holder.pid)
    # The server ends the session a moment after the signal: poll, within a bound.
    for _ in range(500):
        if await current_owner(admin, "alpha") is None:
            break
        await anyio.sleep(0.02)
    assert await current_owner(admin, "alpha") is None
    # The table still names it; the lock says no one owns the soul.
    assert await admin.fetchval("SELECT owner FROM souls WHERE name = 'alpha'") == "10.0.0.1:7400"
    await holder.release()  # its connection, dead on the server's side, is closed on ours


async def test_a_holder_killed_by_sigkill_loses_the_soul(
    pg_dsn: str, admin: asyncpg.Connection
) -> None:
    # A real process holds the lease, and dies by kill -9: no goodbye to the server.
    async with await anyio.open_process([sys.executable, "-c", _HOLDER, pg_dsn]) as holder:
        assert holder.stdout is not None
        said = b""
        with anyio.fail_after(30):
            while b"\n" not in said:
                said += await holder.stdout.receive()
        assert said.strip() == b"held"
        assert await Lease.acquire(pg_dsn, "alpha", "10.0.0.2:7400") is None
        assert await current_owner(admin, "alpha") == "10.0.0.1:7400"
        holder.send_signal(signal.SIGKILL)
        with anyio.fail_after(10):
            await holder.wait()
    start = time.monotonic()
    taken = None
    for _ in range(250):
        taken = await Lease.acquire(pg_dsn, "alpha", "10.0.0.2:7400")
        if taken is not None:
            break
        await anyio.sleep(0.02)
    assert taken is not None
    assert time.monotonic() - start < 5
    assert await current_owner(admin, "alpha") == "10.0.0.2:7400"
    await taken.release()


_HOLDER = """
import asyncio, sys, time
from souls.store.postgres.lease import Lease

async def main():
    lease = await Lease.acquire(sys.argv[1], "alpha", "10.0.0.1:7400")
    print("held" if lease is not None else "refused", flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


async def test_the_lease_session_probes_its_peer(pg_dsn: str, admin: asyncpg.Connection) -> None:
    # What bounds a takeover when the holder's network is lost (no FIN, no RST): the
    # server's keepalive probes on the lease's session, not the server-wide defaults.
    lease = await Lease.acquire(pg_dsn, "alpha", "10.0.0.1:7400")
    assert lease is not None
    for name, value in KEEPALIVE.items():
        assert await admin.fetchval(f"SHOW {name}") != value
        assert await lease._db.fetchval(f"SHOW {name}") == value  # its own session
    await lease.release()


def test_lock_keys_are_stable_64_bit_and_distinct() -> None:
    keys = {lock_key(f"soul-{i}") for i in range(10_000)}
    assert len(keys) == 10_000
    assert all(-(2**63) <= key < 2**63 for key in keys)
    # Every daemon, on any Python, computes the same key (no salted hash()).
    assert lock_key("alpha") == -8742533284559531564

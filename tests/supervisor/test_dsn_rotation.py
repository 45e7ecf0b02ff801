"""A rotated database password (issue #21): the shared store's ``dsn_file`` is read again
for every new pool connection and every new lease session (supervisor/shared.py), so
once an operator has changed the role's password and rewritten the file, the daemon
connects with the new one without a restart; a file that cannot be read, or holds no
DSN, leaves the last good one in use and says so in one warning, never in a secret.

Real PostgreSQL, nothing mocked: the session's test server trusts every loopback
connection, so these tests start a server of their own (tests/pgserver.py) whose
pg_hba.conf asks every role but the superuser for its password.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import anyio
import asyncpg
import pytest
from pgserver import USER, PgServer, required
from shared_parts import note, postgres_config
from structlog.testing import capture_logs

import supervisor.shared
from supervisor.errors import SoulUnavailable
from supervisor.shared import SharedStore, _scrubbed

T = TypeVar("T")

ADDRESS = "http://10.0.0.1:7411"
OLD, NEW = "Alpha-0ld-s3cret", "Bravo-n3w-s3cret"

# The superuser (the tests' admin) is trusted; every other role gives its password.
HBA = (
    "local all all trust\n"
    f"host all {USER} 127.0.0.1/32 trust\n"
    "host all all 127.0.0.1/32 scram-sha-256\n"
)

# Seconds a reconnection may take (the lease watch probes every LEASE_PROBE, set short).
BOUND = 15.0

# What a call may raise while the server has just ended its session: the pool may hand
# out a connection whose end asyncpg has not read yet (that call fails, the next one
# connects anew).
_RECONNECTING = (
    OSError,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    SoulUnavailable,
)

_roles = itertools.count(1)


@pytest.fixture(scope="module")
def password_server() -> Iterator[PgServer]:
    """A server of this module's own, its pg_hba.conf :data:`HBA` (loaded: see
    :func:`rotor`, which waits for it)."""
    required()
    server = PgServer.start()
    try:
        (server.root / "data" / "pg_hba.conf").write_text(HBA)  # in place: owner kept
        server.reload()
        yield server
    finally:
        server.stop()


@dataclass
class Rotor:
    """A role of its own (password :data:`OLD` at first) owning a database of its own,
    and its DSN file (mode 0600)."""

    server: PgServer
    role: str
    file: Path
    hosts: int = 1  # a DSN may name several (asyncpg tries them in turn)

    def dsn(self, password: str) -> str:
        hosts = ",".join([f"127.0.0.1:{self.server.port}"] * self.hosts)
        return f"postgresql://{self.role}:{password}@{hosts}/{self.role}"

    def write(self, text: str, mode: int = 0o600) -> None:
        """The file replaced as a secret manager does: a new file renamed over it."""
        new = self.file.with_suffix(".new")
        new.write_text(text)
        new.chmod(mode)
        new.replace(self.file)

    async def admin(self, sql: str, *args: object) -> list[asyncpg.Record]:
        db = await asyncpg.connect(self.server.dsn)
        try:
            rows: list[asyncpg.Record] = await db.fetch(sql, *args)
            return rows
        finally:
            await db.close()

    async def terminate(self) -> set[int]:
        """End every session of the role (pg_terminate_backend waits for each to end);
        their server pids."""
        rows = await self.admin(
            "SELECT pid, pg_terminate_backend(pid, 5000) AS ended FROM pg_stat_activity"
            " WHERE usename = $1",
            self.role,
        )
        assert rows, "the role has no session to end"
        assert all(row["ended"] for row in rows)
        return {row["pid"] for row in rows}


@pytest.fixture(params=[1, 2], ids=["one host", "two hosts"])
async def rotor(
    password_server: PgServer, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Rotor]:
    role = f"rotor_{os.getpid()}_{next(_roles)}"
    found = Rotor(password_server, role, tmp_path / "dsn", hosts=request.param)
    await found.admin(f"CREATE ROLE {role} LOGIN PASSWORD '{OLD}'")
    await found.admin(f"CREATE DATABASE {role} OWNER {role} TEMPLATE template0")
    await _until_passwords_asked(found)
    found.write(found.dsn(OLD) + "\n")
    yield found
    await found.admin(f"DROP DATABASE {role} WITH (FORCE)")
    await found.admin(f"DROP ROLE {role}")


async def _until_passwords_asked(rotor: Rotor) -> None:
    """Return once the server refuses a wrong password (the reload of :data:`HBA` is
    asynchronous: until it is done, loopback is trusted)."""
    with anyio.fail_after(BOUND):
        while True:
            try:
                db = await asyncpg.connect(rotor.dsn("wrong"))
            except asyncpg.InvalidPasswordError:
                return
            await db.close()
            await anyio.sleep(0.05)


@pytest.fixture(autouse=True)
def _quick_lease_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lease watch looks at its session every 50 ms here, not every second."""
    monkeypatch.setattr(supervisor.shared, "LEASE_PROBE", 0.05)


async def _eventually(call: Callable[[], Awaitable[T]]) -> T:
    """``call``'s result once it succeeds, within :data:`BOUND` seconds: the first calls
    after the server ended the sessions may meet one the pool has not seen end yet."""
    with anyio.fail_after(BOUND):
        while True:
            try:
                return await call()
            except _RECONNECTING:
                await anyio.sleep(0.05)


async def _new_lease_session(shared: SharedStore, ended: set[int]) -> None:
    """Return once the lease watch has opened a new session (not one of ``ended``)."""
    with anyio.fail_after(BOUND):
        while True:
            if shared.leases.pid not in ended and await shared.leases.alive():
                return
            await anyio.sleep(0.05)


async def _served(shared: SharedStore, soul: str, i: int) -> None:
    """``soul`` taken (its lease) and written to through the pool."""
    store = await shared.open_soul(soul, context_turns=0)
    try:
        assert await store.append([note(i)], now=1.0 + i) == [1]
    finally:
        await store.close()


async def _watched(shared: SharedStore, test: Callable[[], Awaitable[None]]) -> None:
    """``test`` run while ``shared``'s lease session is watched, then the store closed."""
    try:
        async with anyio.create_task_group() as tasks:
            await tasks.start(shared.watch)
            await test()
            tasks.cancel_scope.cancel()
    finally:
        await shared.close()


def _text(logs: object) -> str:
    """Every log entry captured, as one text to look for secrets in."""
    return repr(logs)


async def test_a_rotated_password_is_used_by_new_connections_without_a_restart(
    rotor: Rotor,
) -> None:
    with capture_logs() as logs:
        shared = await SharedStore.open(
            postgres_config(dsn_file=str(rotor.file)), ADDRESS, config_file="soupd.toml"
        )

        async def rotate() -> None:
            await _served(shared, "alpha", 1)
            await rotor.admin(f"ALTER ROLE {rotor.role} PASSWORD '{NEW}'")
            rotor.write(rotor.dsn(NEW) + "\n")
            ended = await rotor.terminate()
            with pytest.raises(asyncpg.InvalidPasswordError):
                await asyncpg.connect(rotor.dsn(OLD))  # whatever connects now has NEW

            await _new_lease_session(shared, ended)
            assert "alpha" in shared.leases.owned  # taken back under the new session
            assert await _eventually(lambda: shared.owner("alpha")) == ADDRESS
            await _eventually(lambda: _served(shared, "beta", 1))
            now = await rotor.admin(
                "SELECT pid FROM pg_stat_activity WHERE usename = $1", rotor.role
            )
            assert now
            assert not {row["pid"] for row in now} & ended  # every session a new one

            # An error quoting either DSN or password is shown with neither.
            said = _scrubbed(
                ValueError(f"{rotor.dsn(OLD)} {rotor.dsn(NEW)} {OLD} {NEW}"),
                *shared._dsn.known,
            )
            assert OLD not in said
            assert NEW not in said

        await _watched(shared, rotate)
    assert "store.dsn_changed" in [entry["event"] for entry in logs]
    assert "store.dsn_reread_failed" not in [entry["event"] for entry in logs]
    assert OLD not in _text(logs)
    assert NEW not in _text(logs)


@pytest.mark.parametrize(
    ("replace", "problem"),
    [
        (lambda rotor: rotor.write("hunter2 is not a DSN\n"), "does not hold a postgresql://"),
        (lambda rotor: rotor.write(rotor.dsn("hunter2") + "\n", 0o644), "has mode 0644"),
        (lambda rotor: rotor.file.unlink(), "cannot read the PostgreSQL DSN"),
    ],
    ids=["garbage", "readable-by-all", "removed"],
)
async def test_a_file_not_to_be_used_leaves_the_last_good_dsn_in_use(
    rotor: Rotor, replace: Callable[[Rotor], None], problem: str
) -> None:
    with capture_logs() as logs:
        shared = await SharedStore.open(
            postgres_config(dsn_file=str(rotor.file)), ADDRESS, config_file="soupd.toml"
        )

        async def spoil() -> None:
            await _served(shared, "alpha", 1)
            replace(rotor)
            ended = await rotor.terminate()
            await _new_lease_session(shared, ended)
            assert await _eventually(lambda: shared.owner("alpha")) == ADDRESS
            await _eventually(lambda: _served(shared, "beta", 1))

        await _watched(shared, spoil)
    failed = [entry for entry in logs if entry["event"] == "store.dsn_reread_failed"]
    # One warning for the problem, however many connections were opened meanwhile.
    assert len(failed) == 1, failed
    for entry in failed:
        assert entry["log_level"] == "warning"
        assert entry["file"] == str(rotor.file)
        assert problem in entry["problem"]
    assert OLD not in _text(logs)
    assert "hunter2" not in _text(logs)


async def test_a_dsn_from_the_environment_is_read_once(
    rotor: Rotor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOUPD_TEST_DSN", rotor.dsn(OLD))
    with capture_logs() as logs:
        shared = await SharedStore.open(
            postgres_config(dsn_env="SOUPD_TEST_DSN"), ADDRESS, config_file="soupd.toml"
        )

        async def change() -> None:
            await _served(shared, "alpha", 1)
            monkeypatch.setenv("SOUPD_TEST_DSN", "not a DSN")  # not read again
            ended = await rotor.terminate()
            await _new_lease_session(shared, ended)
            assert await _eventually(lambda: shared.owner("alpha")) == ADDRESS

        await _watched(shared, change)
    events = [entry["event"] for entry in logs]
    assert "store.dsn_reread_failed" not in events
    assert "store.dsn_changed" not in events

"""Shared fixtures.

End-to-end fixtures start the real daemon (``soupd start``, the console script next to
this interpreter) in a subprocess with its own XDG directories and speak its real Unix
socket; the machinery lives in ``tests/e2e/harness.py``.
"""

from __future__ import annotations

import gc
import itertools
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
from backends import backend, opener, raw, store
from e2e.harness import FAULT_INJECTION, Daemon, Home, StartSoupd
from pgserver import PgServer, required

from souls.actor.mailbox import Mailbox
from supervisor.errors import SoulUnavailable


@pytest.fixture
def soupd_home(tmp_path: Path) -> Iterator[Home]:
    """Empty XDG config/state/runtime directories for one daemon (no soupd.toml, no souls)."""
    home = Home(tmp_path / "home")
    yield home
    home.cleanup()


@pytest.fixture
def start_soupd(soupd_home: Home) -> Iterator[StartSoupd]:
    """``start_soupd(*global_args)`` starts a daemon on ``soupd_home`` and returns once it
    is ready; call it again after a stop to restart on the same state.

    At teardown every daemon still running gets SIGTERM and must exit 0 within the
    harness's bound (it is killed, and the test fails, otherwise).
    """
    daemons: list[Daemon] = []

    def start(*args: str) -> Daemon:
        daemon = Daemon.start(soupd_home, *args)
        daemons.append(daemon)
        return daemon

    yield start
    for daemon in daemons:
        if daemon.proc.poll() is None:
            code = daemon.stop()
            assert code == 0, f"soupd exited with {code} on SIGTERM:\n{daemon.output()}"


@pytest.fixture
def soupd(soupd_home: Home, start_soupd: StartSoupd) -> Daemon:
    """A running daemon with two souls, ``alpha`` and ``beta`` (all defaults), and fault
    injection on (``debug.crash``)."""
    soupd_home.write_config(FAULT_INJECTION)
    soupd_home.add_soul("alpha")
    soupd_home.add_soul("beta")
    return start_soupd()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A real PostgreSQL server on loopback for the whole session (tests/pgserver.py).
    Skipped without the binaries, except in CI, where that fails the test."""
    required()
    server = PgServer.start()
    yield server
    server.stop()


_databases = itertools.count(1)

# The store on both backends (tests/backends.py), for tests/souls/store.
__all__ = ["backend", "opener", "raw", "store"]


@pytest.fixture
async def pg_dsn(pg_server: PgServer) -> AsyncIterator[str]:
    """The DSN of a fresh, empty database of its own for one test, dropped after it."""
    name = f"test_{os.getpid()}_{next(_databases)}"
    admin = await asyncpg.connect(pg_server.dsn)
    try:
        await admin.execute(f"CREATE DATABASE {name} TEMPLATE template0 STRATEGY FILE_COPY")
    finally:
        await admin.close()
    yield pg_server.dsn_for(name)
    admin = await asyncpg.connect(pg_server.dsn)
    try:
        await admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
    finally:
        await admin.close()


@pytest.fixture
def close_leftover_mailboxes() -> Iterator[None]:
    """Discard the mailboxes a test left open, so no warning surfaces in another test.

    A mailbox still referenced after its test (a failure's traceback keeps frames
    alive) would otherwise warn whenever it is finally collected. Modules that make
    mailboxes use ``MAILBOX_HYGIENE`` as their ``pytestmark``.
    """
    yield
    for obj in gc.get_objects():
        # type(), not isinstance(): isinstance asks a weak proxy for its __class__,
        # which raises ReferenceError once the proxied object is gone.
        if issubclass(type(obj), Mailbox):
            obj.discard(SoulUnavailable("the test is over"))
    gc.collect()


# Tests drop mailboxes they never close (a mailbox in a test is often just a fixture),
# and an open one warns when collected; the fixture above discards leftovers.
MAILBOX_HYGIENE = [
    pytest.mark.filterwarnings("ignore:Unclosed <MemoryObject(Send|Receive)Stream:ResourceWarning"),
    pytest.mark.usefixtures("close_leftover_mailboxes"),
]

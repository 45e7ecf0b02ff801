"""Fixtures of the store tests that run on both backends (souls/store/interface.py):
``store`` (and ``opener``, to open the same soul again) on a real SQLite file and on a
real PostgreSQL server (tests/pgserver.py), and ``raw``, to read the soul's tables with
a connection of its own (what another process sees). Registered by tests/conftest.py
(a conftest.py of tests/souls/store would shadow its ``conftest`` module, which other
tests import from); a test module that defines its own ``store`` keeps it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import closing
from pathlib import Path

import anyio
import asyncpg
import pytest

from souls.store.interface import SoulStore
from souls.store.postgres.pool import RANKING_SETTINGS, create_pool
from souls.store.postgres.store import PgStore
from souls.store.store import Store

Opener = Callable[[], Awaitable[SoulStore]]
Raw = Callable[..., Awaitable[list[tuple[object, ...]]]]

_MARK = re.compile(r"\?")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str | None:
    """None for SQLite; for PostgreSQL, the DSN of a fresh database (tests/pgserver.py)."""
    if request.param == "sqlite":
        return None
    dsn: str = request.getfixturevalue("pg_dsn")
    return dsn


@pytest.fixture
async def opener(backend: str | None, tmp_path: Path) -> AsyncIterator[Opener]:
    """Opens the soul's store (again: the same soul) on the backend of the parameter;
    every store opened is closed at the end."""
    opened: list[SoulStore] = []
    pool: asyncpg.Pool | None = None
    ranking: asyncpg.Pool | None = None
    if backend is not None:
        # The pools a daemon opens (supervisor.shared): its sessions' settings, and the
        # searches' sessions with their generic plans.
        pool = await create_pool(backend, min_size=1, max_size=4)
        ranking = await create_pool(backend, min_size=1, max_size=2, settings=RANKING_SETTINGS)

    async def open_store() -> SoulStore:
        with anyio.fail_after(20):
            if pool is None:
                store: SoulStore = await Store.open(tmp_path / "soul.db", context_turns=2)
            else:
                store = await PgStore.open(pool, "alpha", context_turns=2, ranking=ranking)
        opened.append(store)
        return store

    yield open_store
    for store in opened:
        await store.close()
    for each in (pool, ranking):
        if each is not None:
            await each.close()


@pytest.fixture
async def store(opener: Opener) -> SoulStore:
    return await opener()


@pytest.fixture
def raw(backend: str | None, tmp_path: Path) -> Raw:
    """``await raw(sql, *params)``: the rows of a query (``?`` marks its parameters) on
    a connection of its own. The soul is the only one of its database on PostgreSQL
    (a fresh one a test), so its tables need no ``soul =`` filter."""

    async def query(sql: str, *params: object) -> list[tuple[object, ...]]:
        if backend is None:
            with closing(sqlite3.connect(tmp_path / "soul.db")) as db:
                return db.execute(sql, params).fetchall()
        numbered = _numbered(sql)
        db = await asyncpg.connect(backend)
        try:
            return [tuple(row) for row in await db.fetch(numbered, *params)]
        finally:
            await db.close()

    return query


def _numbered(sql: str) -> str:
    """``?`` marks as PostgreSQL's ``$1``, ``$2``... (the tests' SQL has no ``?`` in
    its literals)."""
    count = iter(range(1, 1 + sql.count("?")))
    return _MARK.sub(lambda _: f"${next(count)}", sql)

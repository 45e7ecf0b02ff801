"""The throw-away PostgreSQL server of the tests (tests/pgserver.py): real, on loopback,
its socket in its own temp dir, fsync off, one fresh database per test."""

from __future__ import annotations

import os

import asyncpg
from pgserver import PgServer


async def test_server_is_real_on_loopback_with_fsync_off(pg_server: PgServer, pg_dsn: str) -> None:
    db = await asyncpg.connect(pg_dsn)
    try:
        assert int(await db.fetchval("SHOW server_version_num")) >= 150000
        assert await db.fetchval("SHOW listen_addresses") == "127.0.0.1"
        assert await db.fetchval("SHOW fsync") == "off"
        assert await db.fetchval("SHOW unix_socket_directories") == str(pg_server.root)
        assert await db.fetchval("SELECT inet_server_addr()::text") == "127.0.0.1/32"
        # The server's files are an unprivileged user's (initdb refuses root).
        if os.geteuid() == 0:
            assert (pg_server.root / "data").stat().st_uid != 0
    finally:
        await db.close()


async def test_each_test_gets_a_fresh_database_first(pg_dsn: str) -> None:
    db = await asyncpg.connect(pg_dsn)
    try:
        assert await db.fetchval("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == 0
        await db.execute("CREATE TABLE left_behind (x int)")
    finally:
        await db.close()


async def test_each_test_gets_a_fresh_database_second(pg_dsn: str) -> None:
    # The table the previous test left is in its database, not in this one.
    db = await asyncpg.connect(pg_dsn)
    try:
        assert await db.fetchval("SELECT to_regclass('left_behind') IS NULL")
    finally:
        await db.close()

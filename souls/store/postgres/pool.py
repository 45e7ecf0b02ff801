"""The connection pool a daemon's souls share on PostgreSQL."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from souls.store.postgres.lease import KEEPALIVE

__all__ = ["RANKING_SETTINGS", "SESSION_SETTINGS", "DsnReader", "create_pool"]

# Gives the DSN for a connection about to be opened: read again each time, so a rotated
# password file is used by the next connection without a restart.
DsnReader = Callable[[], Awaitable[str]]

# Every statement planned for the table sizes it meets. A session plans a foreign key's
# check once and keeps it, and asyncpg keeps its statements prepared: one planned while
# a soul's tables were small scans them whole ever after, until autovacuum happens to
# analyse them (a memory's check took 0.5 ms at 6,000 events, a hundredth of that by the
# index; a push's lookup of its ref the same). Planning each time costs a few
# microseconds a statement; a scan of a growing table costs more each time.
#
# And the server's keepalive probes on every session, as on the lease session: a write
# holds its soul's row FOR SHARE (souls.store.postgres.lease.check), so one whose host
# went silent would hold a takeover back for the kernel's two hours; the probes end such
# a session within seconds. A transaction left idle (a client hung mid-transaction) is
# ended too.
SESSION_SETTINGS = {
    "plan_cache_mode": "force_custom_plan",
    "idle_in_transaction_session_timeout": "30s",
    **KEEPALIVE,
}
# ... but for the searches, planned once a session and kept (a generic plan): a search's
# statement is the same shape whatever its terms (their postings, by the key; the
# candidates' rows, by the key), and its planning with the values took a third of it
# (0.4-0.7 ms of a recall at 10k memories, bench/shared_store.py). A plan made while the
# tables were small is made again when they are next analysed (autovacuum's analyse
# invalidates it); the plans seen at 10k and 100k memories read every table by its key.
RANKING_SETTINGS = {**SESSION_SETTINGS, "plan_cache_mode": "force_generic_plan"}


async def _kept(db: asyncpg.Connection) -> None:
    """A connection goes back to the pool as it is: the stores leave no session state
    (no LISTEN, no advisory lock, no cursor held, no SET outside a transaction: the
    lease session, which holds locks, is not the pool's), so asyncpg's reset
    (``pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL``) would be a round
    trip for nothing at every release: two of a recall's five."""


async def create_pool(
    dsn: str | DsnReader,
    *,
    min_size: int,
    max_size: int,
    connect_timeout: float = 10,
    settings: dict[str, str] = SESSION_SETTINGS,
) -> asyncpg.Pool:
    """A pool of sessions with ``settings`` (:data:`SESSION_SETTINGS`, or
    :data:`RANKING_SETTINGS` for the searches); ``connect_timeout``: seconds a
    connection may take to open. ``dsn`` is the DSN, or what gives it anew for every
    connection the pool opens (asyncpg's ``connect=`` hook: the pool's own logic of
    when to connect is kept, only the DSN it connects with changes)."""
    pool: asyncpg.Pool = await asyncpg.create_pool(
        None if callable(dsn) else dsn,
        connect=_connector(dsn) if callable(dsn) else None,
        min_size=min_size,
        max_size=max_size,
        timeout=connect_timeout,
        server_settings=settings,
        reset=_kept,
    )
    return pool


def _connector(dsn: DsnReader) -> Callable[..., Awaitable[asyncpg.Connection]]:
    """The pool's ``connect=``: asyncpg's connect, with the DSN ``dsn`` gives now.

    The pool calls it with the DSN it was made with (None) and its keyword arguments
    (timeout, server settings, connection and record classes), passed on as they are."""

    async def connect(*_dsn: object, **options: Any) -> asyncpg.Connection:
        db: asyncpg.Connection = await asyncpg.connect(await dsn(), **options)
        return db

    return connect

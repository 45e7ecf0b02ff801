"""The daemon's shared PostgreSQL store (``[store] backend = "postgres"``, issue #21).

Several daemons share one database; each soul is owned by one of them at a time, by
lease (:mod:`souls.store.postgres.lease`). :class:`SharedStore` is one daemon's part:
the connection pool its souls' stores share, and its lease session. A soul's store is
opened only under the soul's lease (:meth:`SharedStore.open_soul`), so every write it
makes is fenced: once another daemon has taken the soul over, it stores nothing more.

The DSN is read from ``dsn_env`` or ``dsn_file`` (:func:`supervisor.secrets.read_secret`)
when the store opens, and never appears in a message or a log line: errors name where
it came from.

What is not here yet (#21): forwarding a request to the soul's owner over the HTTP API,
taking souls over within a bounded time, and running the daemon on it.
"""

from __future__ import annotations

import contextlib
import re
from urllib.parse import unquote, urlsplit

import anyio
import anyio.abc
import asyncpg
import structlog

from souls.store.postgres.lease import Fence, Leases, current_owner
from souls.store.postgres.pool import create_pool
from souls.store.postgres.schema import migrate
from souls.store.postgres.store import PgStore
from supervisor.config import StoreBackendConfig
from supervisor.errors import ConfigError, SharedStoreUnusable, SoulElsewhere, SoulUnavailable
from supervisor.secrets import read_secret

__all__ = ["LEASE_PROBE", "SharedStore", "dsn_source", "migrate_database"]

# Seconds between looks at the lease session (see SharedStore.watch).
LEASE_PROBE = 1.0

# What connecting may raise when the server or the DSN is wrong.
# (A session the server just ended may say "another operation is in progress" while
# asyncpg still reads its goodbye: an InternalClientError.)
_UNUSABLE = (
    OSError,
    asyncpg.PostgresError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    ValueError,
    OverflowError,
    TimeoutError,
)


def dsn_source(config: StoreBackendConfig) -> str:
    """Where the DSN comes from, as messages name it."""
    if config.dsn_env is not None:
        return f"[store] dsn_env (${config.dsn_env})"
    return f"[store] dsn_file ({config.dsn_file})"


async def _dsn(config: StoreBackendConfig, config_file: str) -> str:
    key = "store.dsn_env" if config.dsn_env is not None else "store.dsn_file"
    try:
        return await read_secret("", "the PostgreSQL DSN", config.dsn_env, config.dsn_file)
    except ValueError as exc:
        raise ConfigError(config_file, key, str(exc)) from None


async def migrate_database(
    config: StoreBackendConfig, *, config_file: str
) -> tuple[list[str], list[str]]:
    """``soupd migrate``: bring the shared database to this soupd's schema; the
    migrations applied now, and all those applied. (A daemon migrates at start too;
    this is for doing it ahead, once, with the daemons stopped or still on the old
    schema, which every migration keeps readable.)"""
    where = dsn_source(config)
    dsn = await _dsn(config, config_file)
    try:
        db = await asyncpg.connect(dsn, timeout=10)
    except _UNUSABLE as exc:
        raise SharedStoreUnusable(where, _scrubbed(exc, dsn)) from None
    try:
        applied = await migrate(db)
        every = [row[0] for row in await db.fetch("SELECT name FROM migrations ORDER BY name")]
    except _UNUSABLE as exc:
        raise SharedStoreUnusable(where, _scrubbed(exc, dsn)) from None
    finally:
        await db.close()
    return applied, every


class SharedStore:
    """One daemon's part of the shared store: a pool and a lease session, both open."""

    def __init__(
        self, pool: asyncpg.Pool, leases: Leases, where: str, dsn: str, address: str
    ) -> None:
        self._pool = pool
        self.leases = leases
        self.where = where
        self._dsn = dsn  # kept for a new lease session; never logged
        self.address = address
        self._log = structlog.get_logger("soupd.store")

    @classmethod
    async def open(
        cls, config: StoreBackendConfig, address: str, *, config_file: str
    ) -> SharedStore:
        """Read the DSN, open the pool (migrating the database when needed) and the
        lease session of the daemon advertised at ``address``. ConfigError when the DSN
        cannot be read, SharedStoreUnusable when the database cannot be used."""
        where = dsn_source(config)
        dsn = await _dsn(config, config_file)
        try:
            pool = await create_pool(dsn, min_size=config.pool_min, max_size=config.pool_max)
        except _UNUSABLE as exc:
            raise SharedStoreUnusable(where, _scrubbed(exc, dsn)) from None
        try:
            leases = await Leases.open(dsn, address)
        except BaseException as exc:
            await pool.close()
            if isinstance(exc, _UNUSABLE):
                raise SharedStoreUnusable(where, _scrubbed(exc, dsn)) from None
            raise
        return cls(pool, leases, where, dsn, address)

    async def claim(self, name: str) -> Fence:
        """``name``'s lease, taken now unless this daemon holds it already: SoulElsewhere
        (naming the owner) when another daemon holds it, SoulUnavailable when the store
        cannot be reached now (worth a retry: the lease session is watched and opened
        again)."""
        held = self.leases.owned.get(name)
        if held is not None:
            return held
        try:
            fence = await self.leases.take(name)
            owner = None if fence is not None else await self.owner(name)
        except _UNUSABLE as exc:
            raise SoulUnavailable(
                f"soul {name!r} cannot be served now: the shared store is out of reach "
                f"({_scrubbed(exc, self._dsn)}); retry shortly"
            ) from None
        if fence is None:
            raise SoulElsewhere(name, owner)
        self._log.info("soul.lease_taken", soul=name, epoch=fence.epoch)
        return fence

    async def open_soul(self, name: str, *, context_turns: int) -> PgStore:
        """Open ``name``'s store under its lease (:meth:`claim`, taken when not held)."""
        fence = await self.claim(name)
        try:
            return await PgStore.open(
                self._pool, name, context_turns=context_turns, fence=fence, migrating=False
            )
        except _UNUSABLE as exc:
            with anyio.CancelScope(shield=True):
                await self.give_up(name)
            raise SoulUnavailable(
                f"soul {name!r} cannot be served now: its store did not open "
                f"({_scrubbed(exc, self._dsn)}); retry shortly"
            ) from None
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.give_up(name)
            raise

    def fence(self, name: str) -> Fence | None:
        """The lease this daemon holds on ``name``, if it holds one."""
        return self.leases.owned.get(name)

    async def owner(self, name: str) -> str | None:
        """The advertised address of the daemon that owns ``name`` now, if any."""
        async with self._pool.acquire() as db:
            return await current_owner(db, name)

    async def give_up(self, name: str) -> None:
        """Give ``name``'s lease up (its store is closed): another daemon may take it."""
        await self.leases.give_up(name)
        self._log.info("soul.lease_given_up", soul=name)

    async def watch(
        self, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Look at the lease session every ``LEASE_PROBE`` seconds; when it has ended
        (the server restarted, the network was lost), every soul of this daemon was free
        for another daemon to take: open a new session and take back those still free."""
        task_status.started()
        while True:
            await anyio.sleep(LEASE_PROBE)
            owned = list(self.leases.owned)
            if await self.leases.alive():
                continue
            self._log.error("store.lease_session_lost", where=self.where, souls=len(owned))
            delay = LEASE_PROBE
            while True:
                try:
                    leases = await Leases.open(self._dsn, self.address)
                except _UNUSABLE as exc:
                    self._log.error("store.lease_session_failed", problem=_scrubbed(exc, self._dsn))
                    await anyio.sleep(delay)
                    delay = min(2 * delay, 30.0)
                    continue
                old, self.leases = self.leases, leases
                await old.close()
                # The souls this daemon served are taken again where still free, under
                # a new epoch: their stores' old fences fail, so each rests, and its
                # next mail opens it under the new lease (or is told where it moved).
                kept = 0
                for soul in owned:
                    with contextlib.suppress(*_UNUSABLE):
                        kept += await leases.take(soul) is not None
                self._log.info("store.lease_session_opened", kept=kept, lost=len(owned) - kept)
                break

    async def close(self) -> None:
        """Give every lease up and close the lease session and the pool."""
        await self.leases.close()
        await self._pool.close()


def _scrubbed(exc: BaseException, dsn: str) -> str:
    """What ``exc`` says, with the DSN and its password cut out: the password as the
    URL writes it and as it decodes (``p%40ss`` is ``p@ss`` to the driver), and a
    ``password=`` of a key-value DSN or query (a parse error of the DSN may quote it)."""
    text = f"{type(exc).__name__}: {exc}"
    given = [found.strip("'") for found in _KEYWORD_PASSWORD.findall(dsn)]
    secrets = {dsn, *given, *(unquote(found) for found in given)}
    try:
        password = urlsplit(dsn).password
    except ValueError:
        password = None
    if password:
        secrets |= {password, unquote(password)}
    for secret in sorted(secrets, key=len, reverse=True):  # the DSN before its parts
        if secret:
            text = text.replace(secret, "***")
    return text


# A password given as a keyword: "password=s3cret" (libpq's key-value form, or a URL's
# query), quoted or not.
_KEYWORD_PASSWORD = re.compile(r"password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&]+)", re.IGNORECASE)

"""The daemon's shared PostgreSQL store (``[store] backend = "postgres"``, issue #21).

Several daemons share one database; each soul is owned by one of them at a time, by
lease (:mod:`souls.store.postgres.lease`). :class:`SharedStore` is one daemon's part:
the connection pool its souls' stores share, and its lease session. A soul's store is
opened only under the soul's lease (:meth:`SharedStore.open_soul`), so every write it
makes is fenced: once another daemon has taken the soul over, it stores nothing more.

The DSN is read from ``dsn_env`` or ``dsn_file`` (:func:`supervisor.secrets.read_secret`)
when the store opens, and never appears in a message or a log line: errors name where
it came from. A ``dsn_file`` is read again for every new connection of the pool and every
new lease session, so a rotated password (the file rewritten by a secret manager or
systemd credentials) is used from the next connection on, without a restart; a file
that cannot be read then, or does not hold a DSN, leaves the last one read in use (and
a warning logged). An environment variable cannot change under a running process: it
is read once.

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

from souls.store.postgres.lease import KEEPALIVE, Fence, Leases, current_owner
from souls.store.postgres.pool import RANKING_SETTINGS, create_pool
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


# How many of the DSNs read lately an error is scrubbed of: a connection under way when
# the file changed may fail quoting the one before.
_KNOWN_DSNS = 4


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


class _Dsn:
    """The DSN in use, read again from ``dsn_file`` whenever a connection is about to
    open (:meth:`current`): a rotated password is picked up without a restart. It is
    never logged; :attr:`known` holds the DSNs read lately, for scrubbing errors."""

    def __init__(self, config: StoreBackendConfig, first: str) -> None:
        self._file = config.dsn_file if config.dsn_env is None else None
        self._good = first
        self._problem: str | None = None  # why the file was last unusable, if it is now
        self.known: tuple[str, ...] = (first,)
        self._log = structlog.get_logger("soupd.store")

    @classmethod
    async def read(cls, config: StoreBackendConfig, config_file: str) -> _Dsn:
        """The DSN read now; ConfigError when it cannot be."""
        return cls(config, await _dsn(config, config_file))

    async def current(self) -> str:
        """The DSN to connect with now: the file's, read again (off the event loop, with
        :func:`read_secret`'s checks), or the last good one (the last the file held that
        could be read and was a DSN) when it cannot be read now or holds no DSN (logged:
        ``store.dsn_reread_failed``, naming the file and why, never its content). A DSN
        from the environment is the one read at start: it cannot have changed."""
        if self._file is None:
            return self._good
        try:
            read = await read_secret("", "the PostgreSQL DSN", None, self._file)
            dsn = _checked(read, self._file)
        except ValueError as exc:
            if str(exc) != self._problem:  # once a problem, not once a connection
                self._problem = str(exc)
                self._log.warning(
                    "store.dsn_reread_failed",
                    file=self._file,
                    problem=self._problem,
                    using="the DSN read last",
                )
            return self._good
        if self._problem is not None:
            self._problem = None
            self._log.info("store.dsn_readable_again", file=self._file)
        if dsn != self._good:
            self.known = (dsn, *self.known)[:_KNOWN_DSNS]
            self._good = dsn
            self._log.info("store.dsn_changed", file=self._file)
        return dsn


def _checked(dsn: str, file: str) -> str:
    """``dsn`` if it is a ``postgresql://`` or ``postgres://`` URL, else ValueError, which
    never quotes it: a file caught half-written, or replaced by something else, is not
    connected with. The rest is asyncpg's to judge (several hosts, ``host:port,host:port``,
    are a DSN too)."""
    if not dsn.startswith(("postgresql://", "postgres://")):
        raise ValueError(f"{file} (the PostgreSQL DSN) does not hold a postgresql:// URL")
    return dsn


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
        self,
        pool: asyncpg.Pool,
        ranking: asyncpg.Pool,
        leases: Leases,
        where: str,
        dsn: _Dsn,
        address: str,
    ) -> None:
        self._pool = pool
        self._ranking = ranking  # the searches' sessions (souls.store.postgres.pool)
        self.leases = leases
        self.where = where
        self._dsn = dsn  # read again for a new lease session; never logged
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
        dsn = await _Dsn.read(config, config_file)
        pools: list[asyncpg.Pool] = []
        try:
            pools.append(
                await create_pool(dsn.current, min_size=config.pool_min, max_size=config.pool_max)
            )
            # The searches' own sessions, half as many at most: the pool the writes and
            # other reads wait for is not taken by them.
            pools.append(
                await create_pool(
                    dsn.current,
                    min_size=1,
                    max_size=max(1, config.pool_max // 2),
                    settings=RANKING_SETTINGS,
                )
            )
            leases = await Leases.open(await dsn.current(), address)
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                for pool in pools:
                    await pool.close()
            if isinstance(exc, _UNUSABLE):
                raise SharedStoreUnusable(where, _scrubbed(exc, *dsn.known)) from None
            raise
        return cls(pools[0], pools[1], leases, where, dsn, address)

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
                f"({_scrubbed(exc, *self._dsn.known)}); retry shortly"
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
                self._pool,
                name,
                context_turns=context_turns,
                fence=fence,
                migrating=False,
                ranking=self._ranking,
            )
        except _UNUSABLE as exc:
            with anyio.CancelScope(shield=True):
                await self.give_up(name)
            raise SoulUnavailable(
                f"soul {name!r} cannot be served now: its store did not open "
                f"({_scrubbed(exc, *self._dsn.known)}); retry shortly"
            ) from None
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.give_up(name)
            raise

    @property
    def pool(self) -> asyncpg.Pool:
        """The pool the souls' stores share (the outputs relay sends through it too)."""
        return self._pool

    async def connect(self, name: str) -> asyncpg.Connection:
        """A session of its own for one task of this daemon (``name``: its
        application_name), neither the pool's nor the lease session, with the DSN read
        now and the server's keepalive probes on it (the outputs relay listens on one).
        Raises what connecting raises (describe it with :meth:`problem`)."""
        settings = {"application_name": name[:63], **KEEPALIVE}
        db: asyncpg.Connection = await asyncpg.connect(
            await self._dsn.current(), server_settings=settings, timeout=10
        )
        return db

    def problem(self, exc: BaseException) -> str:
        """What ``exc`` says, with the DSN and its password cut out."""
        return _scrubbed(exc, *self._dsn.known)

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
                    leases = await Leases.open(await self._dsn.current(), self.address)
                except _UNUSABLE as exc:
                    self._log.error(
                        "store.lease_session_failed", problem=_scrubbed(exc, *self._dsn.known)
                    )
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
        """Give every lease up and close the lease session and the pools (each, whatever
        closing the one before raised)."""
        try:
            await self.leases.close()
        finally:
            try:
                await self._pool.close()
            finally:
                await self._ranking.close()


def _scrubbed(exc: BaseException, *dsns: str) -> str:
    """What ``exc`` says, with the DSNs and their passwords cut out (every DSN read
    lately: an error may quote the one before a rotation)."""
    text = f"{type(exc).__name__}: {exc}"
    secrets = set().union(*(_secrets(dsn) for dsn in dsns))
    for secret in sorted(secrets, key=len, reverse=True):  # the DSN before its parts
        if secret:
            text = text.replace(secret, "***")
    return text


def _secrets(dsn: str) -> set[str]:
    """``dsn`` and every form of its password: as the URL writes it and as it decodes
    (``p%40ss`` is ``p@ss`` to the driver), and a ``password=`` of a key-value DSN or
    query (a parse error of the DSN may quote it)."""
    given = [found.strip("'") for found in _KEYWORD_PASSWORD.findall(dsn)]
    secrets = {dsn, *given, *(unquote(found) for found in given)}
    try:
        password = urlsplit(dsn).password
    except ValueError:
        password = None
    if password:
        secrets |= {password, unquote(password)}
    return secrets


# A password given as a keyword: "password=s3cret" (libpq's key-value form, or a URL's
# query), quoted or not.
_KEYWORD_PASSWORD = re.compile(r"password\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&]+)", re.IGNORECASE)

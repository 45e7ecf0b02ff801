"""Which daemon owns which soul on a shared PostgreSQL store (issue #21, DESIGN §5).

A daemon owns a soul while it holds that soul's session-level advisory lock
(``pg_try_advisory_lock``) on the daemon's *lease session*: one connection of its own,
opened for its leases and used for nothing else (no pool may hand it to other work, or
the locks would go with the wrong session). One session holds the locks of every soul
the daemon owns, so a daemon with thousands of souls needs one connection for them, not
thousands. The locks are PostgreSQL's: there is no clock and no heartbeat to trust.
When the holder dies (kill -9, a lost network, ``pg_terminate_backend``) its session
ends and every lock with it, and the next daemon to try takes those souls over.

A lock alone does not stop a daemon that has lost it from writing: its pool's sessions
are not the lease's, and it learns of the loss only when it next looks. So every take
also bumps the soul's *epoch* (``souls.epoch``), and every write transaction of a
soul's store begins by reading the epoch ``FOR SHARE`` (:func:`check`): a write made
under an older epoch than the soul's fails (:class:`~supervisor.errors.LeaseLost`)
and stores nothing. The bump waits for the row lock, so a write the old owner had begun
before the take completes before the new owner's first read: the owners' writes never
interleave, whatever the timing of the loss.

The ``souls`` table records the owner's advertised address (where requests for the soul
are forwarded), written with the bump. The column can outlive its writer;
:func:`current_owner` only believes it while the lock is held.

What is not here yet (#21): forwarding to the owner, and the daemon taking souls over
on request or within a bounded time (the supervisor's part).
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass

import anyio
import asyncpg

from souls.store.postgres.schema import migrate
from supervisor.errors import LeaseLost

__all__ = ["KEEPALIVE", "TAKE_WAIT", "Fence", "Leases", "check", "current_owner", "lock_key"]

# The lease session's settings. The server notices a holder that vanished without closing
# its connection (a lost network, a frozen host: no FIN, no RST) only by TCP keepalive,
# two hours by default on Linux; probing after 1 s idle, every 1 s, 3 probes, it ends the
# session (and frees the locks) about 4 s after the peer went silent.
KEEPALIVE = {
    "tcp_keepalives_idle": "1",
    "tcp_keepalives_interval": "1",
    "tcp_keepalives_count": "3",
}

# Whether the advisory lock of key $1 (a bigint: pg_locks shows its high and low 32 bits
# as classid and objid, objsubid 1) is held by some session now.
_HELD = """
    EXISTS (SELECT 1 FROM pg_locks AS l
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
              AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
              AND l.classid = (($1::bigint >> 32) & 4294967295)::oid
              AND l.objid = ($1::bigint & 4294967295)::oid)
"""

# What a lost session's calls raise (a connection still reading the server's goodbye says
# "another operation is in progress": an InternalClientError)...
_CLOSED = (
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    OSError,
)
# ...and what any of its calls may raise.
_GONE = (asyncpg.PostgresError, *_CLOSED)

# Seconds a take waits for a write of the old owner that holds the soul's row.
TAKE_WAIT = 5.0


def lock_key(soul: str) -> int:
    """The soul's advisory lock key: a signed 64-bit hash of its name (the same on every
    daemon, whatever its Python: no ``hash()``)."""
    digest = hashlib.blake2b(f"soupd soul {soul}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass(frozen=True, slots=True)
class Fence:
    """What a soul's writes are made under: its row in ``souls`` and the epoch of the
    lease they belong to."""

    soul: str
    soul_id: int
    epoch: int


async def check(db: asyncpg.Connection, fence: Fence) -> None:
    """In a write transaction, before its first write: hold the soul's epoch (``FOR
    SHARE``: a take waits until the transaction ends) and fail with LeaseLost, storing
    nothing, unless it is still ``fence``'s."""
    now: int | None = await db.fetchval(
        "SELECT epoch FROM souls WHERE id = $1 FOR SHARE", fence.soul_id
    )
    if now != fence.epoch:
        raise LeaseLost(fence.soul, fence.epoch, now)


class Leases:
    """The leases of one daemon, advertised at ``address``: one dedicated session holding
    the advisory lock of every soul the daemon owns. Open with :meth:`open`; the session
    is used by one call at a time."""

    def __init__(self, db: asyncpg.Connection, address: str) -> None:
        self._db = db
        self.address = address
        self._owned: dict[str, Fence] = {}
        self._lock = anyio.Lock()

    @classmethod
    async def open(cls, dsn: str, address: str) -> Leases:
        """Connect the lease session (migrating the database when needed)."""
        settings = {"application_name": f"soupd leases {address}"[:63], **KEEPALIVE}
        db = await asyncpg.connect(dsn, server_settings=settings)
        try:
            await migrate(db)
        except BaseException:
            db.terminate()
            raise
        return cls(db, address)

    @property
    def owned(self) -> Mapping[str, Fence]:
        """The souls this daemon has taken (and not given up), whether or not the
        session still holds them: :meth:`alive` says."""
        return dict(self._owned)

    @property
    def pid(self) -> int:
        """The server process of the lease session (what pg_terminate_backend takes)."""
        pid: int = self._db.get_server_pid()
        return pid

    async def take(self, soul: str) -> Fence | None:
        """Take ``soul`` unless another session holds it: its fence (a new epoch: whoever
        wrote under an older one cannot any more), or None — also when a write of the
        old owner still holds the soul's row after ``TAKE_WAIT`` seconds (a writer whose
        host went silent, until the server ends its session). Taking a soul already
        ours gives the fence it has. Raises what asyncpg raises when the session has
        ended (see :meth:`alive`)."""
        async with self._lock:
            held = self._owned.get(soul)
            if held is not None:
                return held
            key = lock_key(soul)
            # Shielded, and bounded: a lock the server granted is never left behind by a
            # cancellation between the grant and its answer.
            with anyio.CancelScope(shield=True), anyio.fail_after(2 * TAKE_WAIT):
                if not await self._db.fetchval("SELECT pg_try_advisory_lock($1)", key):
                    return None
                try:
                    row = await self._bump(soul)
                except asyncpg.LockNotAvailableError:
                    row = None
                except BaseException:
                    await self._unlock(key)
                    raise
                if row is None:
                    await self._unlock(key)
                    return None
            fence = self._owned[soul] = Fence(soul, row["id"], row["epoch"])
            return fence

    async def _bump(self, soul: str) -> asyncpg.Record:
        """The soul's row made if new, its epoch bumped and its owner ours, in one
        transaction that waits at most ``TAKE_WAIT`` for a write under way."""
        async with self._db.transaction():
            await self._db.execute(f"SET LOCAL lock_timeout = '{int(TAKE_WAIT * 1000)}ms'")
            await self._db.execute(
                "INSERT INTO souls (name, created) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                soul,
                time.time(),
            )
            row: asyncpg.Record | None = await self._db.fetchrow(
                "UPDATE souls SET epoch = epoch + 1, owner = $2, owner_since = $3"
                " WHERE name = $1 RETURNING id, epoch",
                soul,
                self.address,
                time.time(),
            )
        assert row is not None
        return row

    async def give_up(self, soul: str) -> None:
        """Give ``soul`` up: its owner cleared (if still ours: same epoch), its lock
        released. Its writes fail from now on."""
        async with self._lock:
            fence = self._owned.pop(soul, None)
            if fence is None:
                return
            with anyio.CancelScope(shield=True), anyio.move_on_after(2 * TAKE_WAIT):
                try:
                    # A new epoch too: a write of ours still under way cannot land after.
                    await self._db.execute(
                        "UPDATE souls SET owner = NULL, owner_since = NULL, epoch = epoch + 1"
                        " WHERE id = $1 AND epoch = $2",
                        fence.soul_id,
                        fence.epoch,
                    )
                except _CLOSED:
                    return  # the session is gone already, and the lock with it
                except asyncpg.PostgresError:
                    pass  # (a timeout set on the role, say): the lock goes all the same
                await self._unlock(lock_key(soul))

    async def alive(self) -> bool:
        """Whether the lease session is alive (so still holds every soul taken). Once
        it has ended, however it ended, nothing is ours any more (``owned`` is empty)
        and it stays dead: the daemon opens new leases."""
        async with self._lock:
            if not self._db.is_closed():
                try:
                    await self._db.fetchval("SELECT 1")
                    return True
                except _GONE:
                    self._db.terminate()
            self._owned.clear()
            return False

    async def close(self) -> None:
        """Give every soul up and close the session (its end frees the locks anyway)."""
        for soul in list(self._owned):
            await self.give_up(soul)
        if self._db.is_closed():
            return
        try:
            await self._db.close(timeout=5)
        except _GONE:
            self._db.terminate()

    async def _unlock(self, key: int) -> None:
        with contextlib.suppress(*_GONE):  # the session ended: the lock went with it
            await self._db.fetchval("SELECT pg_advisory_unlock($1)", key)


async def current_owner(db: asyncpg.Connection, soul: str) -> str | None:
    """The advertised address of the daemon that owns ``soul`` now, or None when no one
    holds its lock (whatever the ``souls`` table still says)."""
    owner: str | None = await db.fetchval(
        f"SELECT owner FROM souls WHERE name = $2 AND {_HELD.strip()}", lock_key(soul), soul
    )
    return owner

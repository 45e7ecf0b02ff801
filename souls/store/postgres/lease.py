"""A soul's lease on PostgreSQL: which daemon owns it (issue #21, DESIGN §5).

A daemon owns a soul while it holds that soul's session-level advisory lock
(``pg_try_advisory_lock``) on a connection of its own, opened for the lease and used
for nothing else: no pool may hand it to other work, or the lock would go with the
wrong session. The lock is PostgreSQL's, so there is no clock and no heartbeat to trust:
when the holder dies (kill -9, a lost network, ``pg_terminate_backend``) its session
ends and the lock with it, and the next daemon to try takes the soul over.

The ``souls`` table records the owner's advertised address (where requests for the soul
are forwarded), written by the holder once it has the lock. The column can outlive its
writer; :func:`current_owner` therefore only believes it while the lock is held.

What is not here yet (#21): forwarding to the owner, takeover on request or within a
bounded time, and the scheduler running a soul's jobs only on its owner.
"""

from __future__ import annotations

import hashlib
import time

import asyncpg

from souls.store.postgres.schema import migrate
from souls.store.postgres.store import soul_id

__all__ = ["KEEPALIVE", "Lease", "current_owner", "lock_key"]

# The lease's session settings. The server notices a holder that vanished without closing
# its connection (a lost network, a frozen host: no FIN, no RST) only by TCP keepalive,
# two hours by default on Linux; probing after 1 s idle, every 1 s, 3 probes, it ends the
# session (and frees the lock) about 4 s after the peer went silent.
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


def lock_key(soul: str) -> int:
    """The soul's advisory lock key: a signed 64-bit hash of its name (the same on every
    daemon, whatever its Python: no ``hash()``)."""
    digest = hashlib.blake2b(f"soupd soul {soul}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class Lease:
    """A held lease on one soul. Get one with :meth:`acquire`; :meth:`release` it (or
    let the connection die: the lock goes with it)."""

    def __init__(self, db: asyncpg.Connection, soul: str, key: int, address: str) -> None:
        self._db = db
        self.soul = soul
        self.key = key
        self.address = address

    @classmethod
    async def acquire(cls, dsn: str, soul: str, address: str) -> Lease | None:
        """Try once to take ``soul`` for the daemon advertised at ``address``, on a new
        dedicated connection: the lease, or None when another session holds it."""
        settings = {"application_name": f"soupd {address}", **KEEPALIVE}
        db = await asyncpg.connect(dsn, server_settings=settings)
        try:
            await migrate(db)
            await soul_id(db, soul)
            key = lock_key(soul)
            if not await db.fetchval("SELECT pg_try_advisory_lock($1)", key):
                await db.close()
                return None
            await db.execute(
                "UPDATE souls SET owner = $2, owner_since = $3 WHERE name = $1",
                soul,
                address,
                time.time(),
            )
        except BaseException:
            db.terminate()
            raise
        return cls(db, soul, key, address)

    @property
    def pid(self) -> int:
        """The server process of the lease's session (what pg_terminate_backend takes)."""
        pid: int = self._db.get_server_pid()
        return pid

    async def held(self) -> bool:
        """Whether the lease still holds: its session is alive and has the lock."""
        if self._db.is_closed():
            return False
        try:
            found: bool = await self._db.fetchval(
                "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = pg_backend_pid()"
                f" AND locktype = 'advisory' AND granted) AND {_HELD.strip()}",
                self.key,
            )
        except (
            asyncpg.PostgresError,
            asyncpg.InterfaceError,
            asyncpg.InternalClientError,
            OSError,
        ):
            return False
        return found

    async def release(self) -> None:
        """Give the soul up: the owner column cleared (if still ours), the lock
        released, the connection closed."""
        if self._db.is_closed():
            return
        try:
            await self._db.execute(
                "UPDATE souls SET owner = NULL, owner_since = NULL WHERE name = $1 AND owner = $2",
                self.soul,
                self.address,
            )
            await self._db.fetchval("SELECT pg_advisory_unlock($1)", self.key)
        except (
            asyncpg.PostgresError,
            asyncpg.InterfaceError,
            asyncpg.InternalClientError,
            OSError,
        ):
            # The session is gone already (killed, network lost): so is the lock. (A
            # connection that is still reading the server's goodbye says "another
            # operation is in progress": an InternalClientError.)
            self._db.terminate()
            return
        await self._db.close()


async def current_owner(db: asyncpg.Connection, soul: str) -> str | None:
    """The advertised address of the daemon that owns ``soul`` now, or None when no one
    holds its lock (whatever the ``souls`` table still says)."""
    owner: str | None = await db.fetchval(
        f"SELECT owner FROM souls WHERE name = $2 AND {_HELD.strip()}", lock_key(soul), soul
    )
    return owner

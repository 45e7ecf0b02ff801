"""A soul's write transactions on PostgreSQL: each one fenced by the soul's lease."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from souls.store.postgres.lease import Fence, check

__all__ = ["writing"]


@asynccontextmanager
async def writing(pool: asyncpg.Pool, fence: Fence | None) -> AsyncIterator[asyncpg.Connection]:
    """A connection of ``pool`` in a transaction, committed when the block ends (rolled
    back on any exception or cancellation). With ``fence`` (a soul's store on a daemon:
    always), the transaction first holds the soul's epoch and fails with
    :class:`~supervisor.errors.LeaseLost`, storing nothing, if the soul's lease is no
    longer the fence's (:func:`souls.store.postgres.lease.check`). Without (tools and
    tests that own the database alone), it is a plain transaction."""
    async with pool.acquire() as db, db.transaction():
        if fence is not None:
            await check(db, fence)
        yield db

"""Workers beside a soul's turns: the tasks a soul owns while it handles mail.

A worker is an ``async def run(*, task_status)`` that calls ``task_status.started()``
once ready and returns only by cancellation (or when it has nothing left to do). The
soul runs its workers in one task group around its turns; when the turns end, for
whatever reason, the workers are cancelled and waited for, and the turns' exception
leaves as itself, not in a group.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc

__all__ = ["Worker", "beside"]

Worker = Callable[..., Coroutine[Any, Any, None]]


@asynccontextmanager
async def beside(*workers: Worker) -> AsyncIterator[None]:
    """Run ``workers`` (each started before the body) while the body runs."""
    if not workers:
        yield
        return
    try:
        async with anyio.create_task_group() as tg:
            for worker in workers:
                await tg.start(worker)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise

"""The pacer gives the event loop back once work has held it a slice, and only then."""

from __future__ import annotations

import os

import anyio
import anyio.lowlevel

from supervisor.pace import WORKER_NICE, Pacer, in_worker


async def test_a_spent_slice_yields_to_the_other_tasks() -> None:
    ran: list[int] = []

    async def other() -> None:
        while True:
            ran.append(len(ran))
            await anyio.lowlevel.checkpoint()

    pace = Pacer(slice=0.0)
    async with anyio.create_task_group() as tg:
        tg.start_soon(other)
        await anyio.lowlevel.checkpoint()  # let it start
        before = len(ran)
        for _ in range(5):
            await pace()
        tg.cancel_scope.cancel()
    assert pace.yields == 5
    assert len(ran) - before >= 5


async def test_work_within_its_slice_never_yields() -> None:
    pace = Pacer(slice=3600.0)
    for _ in range(1000):
        await pace()
    assert pace.yields == 0


async def test_a_cancelled_turn_is_cancelled_at_its_next_yield() -> None:
    pace = Pacer(slice=0.0)
    with anyio.CancelScope() as scope:
        scope.cancel()
        await pace()
        raise AssertionError("a yield is a cancellation point")  # pragma: no cover
    assert scope.cancelled_caught


def _priority() -> int:
    return os.getpriority(os.PRIO_PROCESS, 0)


async def test_a_worker_runs_nicer_than_the_daemon() -> None:
    # The loop that serves every soul comes first when the cores are busy.
    ours = _priority()
    expected = min(ours + WORKER_NICE, 19)
    assert await in_worker(_priority) == expected
    assert await in_worker(_priority) == expected  # lowered once, not again per call
    assert _priority() == ours

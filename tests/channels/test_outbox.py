"""The reply outbox: bounded by bytes per connection and in total, drained in pieces."""

from __future__ import annotations

import json

import anyio
import pytest
from e2e.chatter import conversation

from channels.outbox import SMALL_FRAME, Budget, Outbox


def page(seed: int, size: int) -> bytes:
    """An export-like result frame of about ``size`` bytes."""
    records = [{"type": "event", "text": conversation(seed * 100 + i, 2000)} for i in range(64)]
    frame = json.dumps({"id": seed, "result": {"records": records}}, ensure_ascii=False)
    return (frame.encode() * (size // len(frame) + 1))[:size] + b"\n"


def test_acks_always_fit_and_large_results_only_within_the_limits() -> None:
    budget = Budget(limit=3 << 20)
    outbox = Outbox(limit=1 << 20, budget=budget)
    big = page(1, 900_000)
    assert outbox.admits(len(big))
    outbox.put(big)
    # A second page would take the connection over its share.
    assert not outbox.admits(len(big))
    assert outbox.admits(SMALL_FRAME)  # an ack or an error always fits
    # Alone on its connection a result may be bigger than the share, not than the total.
    other = Outbox(limit=1 << 20, budget=budget)
    assert other.admits(2 << 20)
    assert not other.admits(3 << 20)
    assert budget.used == len(big)


async def test_frames_leave_in_pieces_and_count_when_done() -> None:
    budget = Budget(limit=8 << 20)
    outbox = Outbox(limit=4 << 20, budget=budget, piece=64 << 10)
    acks = [b'{"id": %d, "result": {"status": "stored"}}\n' % i for i in range(3)]
    big = page(2, 200_000)
    for frame in [*acks, big]:
        outbox.put(frame)
    first = await outbox.take()
    assert first.data == b"".join(acks)
    assert first.frames == 3
    pieces = [await outbox.take() for _ in range(4)]
    assert b"".join(p.data for p in pieces) == big
    assert [p.frames for p in pieces] == [0, 0, 0, 1]
    assert outbox.bytes == 0
    assert budget.used == 0


async def test_a_reader_waits_until_the_outbox_drains_below_its_limit() -> None:
    budget = Budget(limit=8 << 20)
    outbox = Outbox(limit=100_000, budget=budget, piece=64 << 10)
    outbox.put(page(3, 150_000))
    assert outbox.full
    drained = False

    async def drain() -> None:
        nonlocal drained
        await anyio.sleep(0.01)
        await outbox.take()
        drained = True

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(drain)
            await outbox.wait_until_not_full()
            assert drained
    assert not outbox.full


async def test_drop_releases_everything_and_close_ends_the_writer() -> None:
    budget = Budget(limit=8 << 20)
    outbox = Outbox(limit=4 << 20, budget=budget)
    for i in range(5):
        outbox.put(page(i, 10_000))
    assert outbox.drop() == 5
    assert budget.used == 0
    outbox.close()
    with pytest.raises(anyio.EndOfStream):
        await outbox.take()
    with pytest.raises(anyio.ClosedResourceError):
        outbox.put(b"{}\n")

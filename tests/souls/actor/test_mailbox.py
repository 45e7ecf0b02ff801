"""The bounded mailbox: backpressure, busy, ask, batch receive, close and settle-once replies."""

from __future__ import annotations

import gc
import warnings
from typing import Any

import anyio
import pytest
from conftest import MAILBOX_HYGIENE

from souls.actor.mailbox import CallbackReply, Envelope, Future, Mailbox, MailboxStatistics
from supervisor.errors import AskTimeout, SoulBusy, SoulUnavailable, SoupdError

pytestmark = MAILBOX_HYGIENE


def messages(batch: list[Envelope[str]]) -> list[str]:
    return [envelope.message for envelope in batch]


async def test_capacity_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Mailbox("alpha", 0)


async def test_tell_waits_for_room_and_resumes_once_drained() -> None:
    mailbox: Mailbox[str] = Mailbox("alpha", 2)
    await mailbox.tell("a")
    await mailbox.tell("b")
    delivered = anyio.Event()

    async def third() -> None:
        await mailbox.tell("c")
        delivered.set()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(third)
            await anyio.wait_all_tasks_blocked()
            # Full: the sender waits, and nothing is queued beyond capacity.
            assert not delivered.is_set()
            assert mailbox.statistics().queued == 2
            assert messages(await mailbox.receive_batch(1)) == ["a"]
            await delivered.wait()
    assert messages(mailbox.receive_ready(10)) == ["b", "c"]


async def test_tell_nowait_on_a_full_mailbox_raises_busy() -> None:
    mailbox: Mailbox[str] = Mailbox("alpha", 2)
    mailbox.tell_nowait("a")
    mailbox.tell_nowait("b")
    with pytest.raises(SoulBusy) as caught:
        mailbox.tell_nowait("c")
    assert caught.value.code == "busy"
    assert "'alpha'" in caught.value.message
    assert "retry" in caught.value.message
    # The refused message was not queued.
    assert messages(mailbox.receive_ready(10)) == ["a", "b"]


async def test_statistics_count_told_queued_and_busy() -> None:
    mailbox: Mailbox[str] = Mailbox("alpha", 3)
    assert mailbox.statistics() == MailboxStatistics(capacity=3, queued=0, told=0, rejected_busy=0)
    await mailbox.tell("a")
    mailbox.tell_nowait("b")
    mailbox.tell_nowait("c")
    for _ in range(2):
        with pytest.raises(SoulBusy):
            mailbox.tell_nowait("x")
    assert mailbox.statistics() == MailboxStatistics(capacity=3, queued=3, told=3, rejected_busy=2)
    await mailbox.receive_batch(2)
    assert mailbox.statistics().queued == 1
    assert mailbox.statistics().told == 3


async def test_ask_returns_the_answer() -> None:
    mailbox: Mailbox[str] = Mailbox("alpha", 4)

    async def answer() -> None:
        (envelope,) = await mailbox.receive_batch(1)
        assert envelope.reply is not None
        envelope.reply.resolve(envelope.message.upper())

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(answer)
            assert await mailbox.ask("hello", timeout=5) == "HELLO"


async def test_ask_raises_the_error_the_reply_failed_with() -> None:
    mailbox: Mailbox[str] = Mailbox("alpha", 4)

    async def refuse() -> None:
        (envelope,) = await mailbox.receive_batch(1)
        assert envelope.reply is not None
        envelope.reply.fail(SoulBusy("no"))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(refuse)
            with pytest.raises(SoulBusy):
                await mailbox.ask("hello", timeout=5)


async def test_ask_times_out_when_nobody_answers() -> None:
    mailbox: Mailbox[str] = Mailbox("alpha", 4)
    with anyio.fail_after(5), pytest.raises(AskTimeout) as caught:
        await mailbox.ask("hello", timeout=0.01)
    assert caught.value.code == "timeout"
    assert "'alpha'" in caught.value.message
    # The question was queued; only the wait for the answer gave up.
    assert mailbox.statistics().queued == 1


async def test_ask_times_out_while_waiting_for_room() -> None:
    mailbox: Mailbox[str] = Mailbox("alpha", 1)
    mailbox.tell_nowait("a")
    with anyio.fail_after(5), pytest.raises(AskTimeout):
        await mailbox.ask("b", timeout=0.01)
    assert messages(mailbox.receive_ready(10)) == ["a"]


async def test_receive_batch_respects_limit_and_order() -> None:
    mailbox: Mailbox[str] = Mailbox("alpha", 10)
    for letter in "abcde":
        mailbox.tell_nowait(letter)
    with anyio.fail_after(5):
        assert messages(await mailbox.receive_batch(3)) == ["a", "b", "c"]
        assert messages(await mailbox.receive_batch(10)) == ["d", "e"]


async def test_receive_batch_waits_for_the_first_envelope() -> None:
    mailbox: Mailbox[str] = Mailbox("alpha", 10)
    received: list[list[str]] = []

    async def receive() -> None:
        received.append(messages(await mailbox.receive_batch(10)))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(receive)
            await anyio.wait_all_tasks_blocked()
            assert received == []
            await mailbox.tell("a")
    assert received == [["a"]]


async def test_receive_ready_never_waits() -> None:
    mailbox: Mailbox[str] = Mailbox("alpha", 10)
    assert mailbox.receive_ready(5) == []
    for letter in "abc":
        mailbox.tell_nowait(letter)
    assert messages(mailbox.receive_ready(2)) == ["a", "b"]
    assert messages(mailbox.receive_ready(2)) == ["c"]


async def test_closed_mailbox_refuses_mail_but_queued_mail_is_still_received() -> None:
    mailbox: Mailbox[str] = Mailbox("alpha", 10)
    mailbox.tell_nowait("a")
    mailbox.tell_nowait("b")
    mailbox.close()
    with pytest.raises(SoulUnavailable) as caught:
        await mailbox.tell("c")
    assert caught.value.code == "soul_unavailable"
    assert "'alpha'" in caught.value.message
    with pytest.raises(SoulUnavailable):
        mailbox.tell_nowait("c")
    with pytest.raises(SoulUnavailable):
        await mailbox.ask("c", timeout=1)
    with anyio.fail_after(5):
        assert messages(await mailbox.receive_batch(10)) == ["a", "b"]
        with pytest.raises(anyio.EndOfStream):
            await mailbox.receive_batch(10)
    assert mailbox.receive_ready(10) == []


async def test_close_wakes_a_waiting_receiver_with_end_of_stream() -> None:
    mailbox: Mailbox[str] = Mailbox("alpha", 10)
    ended = anyio.Event()

    async def receive() -> None:
        with pytest.raises(anyio.EndOfStream):
            await mailbox.receive_batch(10)
        ended.set()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(receive)
            await anyio.wait_all_tasks_blocked()
            mailbox.close()
    assert ended.is_set()


async def test_fail_pending_fails_every_queued_reply() -> None:
    mailbox: Mailbox[str] = Mailbox("alpha", 10)
    futures = [Future(), Future()]
    mailbox.tell_nowait("a", futures[0])
    mailbox.tell_nowait("b")  # no reply: still taken out of the queue and counted
    mailbox.tell_nowait("c", futures[1])
    mailbox.close()
    assert mailbox.fail_pending(SoulUnavailable("gone")) == 3
    assert mailbox.statistics().queued == 0
    with anyio.fail_after(5):
        for future in futures:
            assert future.settled
            with pytest.raises(SoulUnavailable, match="gone"):
                await future.wait()
    assert mailbox.fail_pending(SoulUnavailable("again")) == 0


async def test_future_is_settled_once_resolve_first() -> None:
    future = Future()
    unsettled = future.settled
    assert not unsettled
    future.resolve(1)
    future.resolve(2)
    future.fail(SoulBusy("late"))
    assert future.settled
    with anyio.fail_after(5):
        assert await future.wait() == 1


async def test_future_is_settled_once_fail_first() -> None:
    future = Future()
    future.fail(SoulBusy("first"))
    future.resolve(2)
    future.fail(SoulUnavailable("second"))
    with anyio.fail_after(5), pytest.raises(SoulBusy, match="first"):
        await future.wait()


async def test_callback_reply_is_called_exactly_once() -> None:
    calls: list[tuple[Any, SoupdError | None]] = []
    reply = CallbackReply(lambda value, error: calls.append((value, error)))
    reply.resolve("v")
    reply.fail(SoulBusy("late"))
    reply.resolve("w")
    assert calls == [("v", None)]

    failed: list[tuple[Any, SoupdError | None]] = []
    error = SoulBusy("first")
    other = CallbackReply(lambda value, error: failed.append((value, error)))
    other.fail(error)
    other.resolve("late")
    assert failed == [(None, error)]


async def test_a_closed_and_drained_mailbox_leaks_nothing() -> None:
    """Once closed and emptied, a mailbox holds no open stream: dropping it must not warn."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        drained: Mailbox[str] = Mailbox("alpha", 4)
        drained.tell_nowait("a")
        drained.close()
        with anyio.fail_after(5):
            assert messages(await drained.receive_batch(4)) == ["a"]
            with pytest.raises(anyio.EndOfStream):
                await drained.receive_batch(4)
        failed: Mailbox[str] = Mailbox("beta", 4)
        failed.tell_nowait("b", Future())
        failed.close()
        assert failed.fail_pending(SoulUnavailable("gone")) == 1
        del drained, failed
        gc.collect()
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaks == []

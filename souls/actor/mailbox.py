"""A soul's bounded mailbox: ``tell`` / ``tell_nowait`` / ``ask`` and batch receive.

Invariants:

* The mailbox outlives the actor task that drains it: a soul restarted after a crash
  keeps its mailbox, so mail queued behind the crash is handled by the next incarnation.
* Capacity is fixed; ``tell`` waits for room (backpressure), ``tell_nowait`` raises
  :class:`SoulBusy`. Nothing is ever queued beyond capacity.
* Every envelope's :class:`Reply` is settled exactly once — by the soul, or with
  :class:`SoulUnavailable` when the mailbox is closed with mail still in it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from supervisor.errors import AskTimeout, SoulBusy, SoulUnavailable, SoupdError

__all__ = ["Envelope", "Future", "Mailbox", "MailboxStatistics", "Reply"]

M = TypeVar("M")


class Reply:
    """Where the answer to one message goes. Subclasses decide how it is delivered.

    ``resolve`` / ``fail`` may be called once; later calls are ignored, so a reply
    settled by the soul cannot be overwritten by a late failure path.
    """

    __slots__ = ("_settled",)

    def __init__(self) -> None:
        self._settled = False

    @property
    def settled(self) -> bool:
        return self._settled

    def resolve(self, value: Any) -> None:
        if not self._settled:
            self._settled = True
            self._deliver(value, None)

    def fail(self, error: SoupdError) -> None:
        if not self._settled:
            self._settled = True
            self._deliver(None, error)

    def _deliver(self, value: Any, error: SoupdError | None) -> None:
        raise NotImplementedError


class Future(Reply):
    """A reply awaited in-process (what ``ask`` uses)."""

    __slots__ = ("_error", "_event", "_value")

    def __init__(self) -> None:
        super().__init__()
        self._event = anyio.Event()
        self._value: Any = None
        self._error: SoupdError | None = None

    def _deliver(self, value: Any, error: SoupdError | None) -> None:
        self._value, self._error = value, error
        self._event.set()

    async def wait(self) -> Any:
        await self._event.wait()
        if self._error is not None:
            raise self._error
        return self._value


class CallbackReply(Reply):
    """A reply handed to a callback (``value``, ``error``); used by socket connections."""

    __slots__ = ("_callback",)

    def __init__(self, callback: Callable[[Any, SoupdError | None], None]) -> None:
        super().__init__()
        self._callback = callback

    def _deliver(self, value: Any, error: SoupdError | None) -> None:
        self._callback(value, error)


@dataclass(slots=True)
class Envelope(Generic[M]):
    message: M
    reply: Reply | None = None
    # Set by the receiver once the message has been fully handled, so a turn that is
    # interrupted can be finished without handling anything twice.
    done: bool = False


@dataclass(frozen=True, slots=True)
class MailboxStatistics:
    capacity: int
    queued: int
    told: int
    rejected_busy: int


class Mailbox(Generic[M]):
    """Bounded FIFO of envelopes for one soul."""

    def __init__(self, name: str, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("mailbox capacity must be at least 1")
        self.name = name
        self.capacity = capacity
        send: MemoryObjectSendStream[Envelope[M]]
        receive: MemoryObjectReceiveStream[Envelope[M]]
        send, receive = anyio.create_memory_object_stream(capacity)
        self._send = send
        self._receive = receive
        self._told = 0
        self._busy = 0
        self._redelivered: deque[Envelope[M]] = deque()
        self._ended = False

    async def tell(self, message: M, reply: Reply | None = None) -> None:
        """Queue ``message``, waiting for room. Raises SoulUnavailable once closed.

        When there is room this returns without yielding to the event loop: on the
        ingest path a checkpoint per message costs more than the rest of the work.
        Callers that loop over ``tell`` yield whenever the mailbox is full.
        """
        envelope = Envelope(message, reply)
        try:
            try:
                self._send.send_nowait(envelope)
            except anyio.WouldBlock:
                await self._send.send(envelope)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise self._closed_error() from None
        self._told += 1

    def tell_nowait(self, message: M, reply: Reply | None = None) -> None:
        """Queue ``message`` or raise SoulBusy at once when the mailbox is full."""
        try:
            self._send.send_nowait(Envelope(message, reply))
        except anyio.WouldBlock:
            self._busy += 1
            raise SoulBusy(
                f"soul {self.name!r} is busy: its mailbox holds {self.capacity} messages; "
                "retry shortly or send with backpressure"
            ) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise self._closed_error() from None
        self._told += 1

    async def ask(self, message: M, timeout: float | None = None) -> Any:  # noqa: ASYNC109
        """Send ``message`` and wait for its answer, at most ``timeout`` seconds."""
        future = Future()
        deadline = math.inf if timeout is None else timeout
        with anyio.move_on_after(deadline) as scope:
            await self.tell(message, future)
            return await future.wait()
        assert scope.cancelled_caught
        raise AskTimeout(
            f"soul {self.name!r} did not answer within {timeout:g} s; it may be overloaded, "
            "retry later or raise the timeout"
        )

    async def receive_batch(self, limit: int) -> list[Envelope[M]]:
        """Wait for at least one envelope, then take up to ``limit`` without waiting.

        Redelivered envelopes (see :meth:`redeliver`) come first. Raises
        ``anyio.EndOfStream`` once the mailbox is closed and empty.
        """
        batch = self.receive_ready(limit)
        if batch:
            return batch
        if self._ended:
            raise anyio.EndOfStream
        try:
            batch.append(await self._receive.receive())
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._end()
            raise anyio.EndOfStream from None
        return batch + self.receive_ready(limit - 1)

    def receive_ready(self, limit: int) -> list[Envelope[M]]:
        """Up to ``limit`` envelopes that are queued right now; never waits."""
        batch: list[Envelope[M]] = []
        while self._redelivered and len(batch) < limit:
            batch.append(self._redelivered.popleft())
        receive_nowait = self._receive.receive_nowait
        while len(batch) < limit and not self._ended:
            try:
                batch.append(receive_nowait())
            except anyio.WouldBlock:
                break
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                self._end()
        return batch

    def _end(self) -> None:
        """Closed and drained: release the receiving side too."""
        self._ended = True
        self._receive.close()

    def redeliver(self, envelopes: Iterable[Envelope[M]]) -> None:
        """Put envelopes back at the head of the queue, in order.

        For a receiver that crashed with a batch in hand: the mail it had not got to is
        handled by its next incarnation instead of being lost. At most one batch is
        ever held here, so the bound on the mailbox stays a bound.
        """
        self._redelivered.extendleft(reversed(list(envelopes)))

    def close(self) -> None:
        """Refuse new mail; queued mail can still be received."""
        self._send.close()

    def discard(self, error: SoupdError) -> int:
        """Close for good: refuse new mail, fail what is queued, release both ends."""
        self.close()
        return self.fail_pending(error)

    def fail_pending(self, error: SoupdError) -> int:
        """Fail every queued envelope's reply with ``error``; returns how many."""
        failed = 0
        while True:
            batch = self.receive_ready(256)
            if not batch:
                return failed
            for envelope in batch:
                if envelope.reply is not None:
                    envelope.reply.fail(error)
            failed += len(batch)

    def statistics(self) -> MailboxStatistics:
        stats = self._send.statistics()
        return MailboxStatistics(
            capacity=self.capacity,
            queued=stats.current_buffer_used + len(self._redelivered),
            told=self._told,
            rejected_busy=self._busy,
        )

    def _closed_error(self) -> SoulUnavailable:
        return SoulUnavailable(
            f"soul {self.name!r} is stopping or stopped; check `soupd souls` and retry "
            "once it runs again"
        )

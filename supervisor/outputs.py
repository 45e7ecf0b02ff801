"""The outputs hub: what souls publish (reflects, internal signals, wake-ups, sparks)
fanned out to whoever subscribed.

Invariants:

* Publishing never waits: a soul calls :meth:`Outputs.publish` synchronously and it
  returns at once, whatever the subscribers do.
* Each subscription has its own bounded buffer. When a subscriber falls behind, what
  does not fit is dropped *for that subscriber only*, counted, and reported to it in
  the stream (an ``overflow`` output) as soon as there is room again.
* Only the kinds of :data:`supervisor.output_kinds.OUTPUT_KINDS` are published: another
  is a programming error (ValueError), never a stream nobody can subscribe to.
* On a shared PostgreSQL store the outputs of this daemon's souls go to the other
  daemons too (the relay, :mod:`supervisor.relay`, a hook :meth:`Outputs.relay_to` sets,
  which never waits either), and theirs come in by :meth:`Outputs.publish_relayed`:
  fanned out here like this daemon's own, never relayed again. A relayed ``direct``
  output reaches the clients' subscriptions only, not the daemon's own (channels, the
  responder): a direct message is answered by the responder of the daemon that serves
  its soul, once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from supervisor.output_kinds import OUTPUT_KINDS

__all__ = ["OUTPUT_KINDS", "Output", "Outputs", "Subscription"]


class Output(msgspec.Struct, frozen=True):
    soul: str
    kind: str
    ts: float
    payload: dict[str, Any]


class Subscription:
    def __init__(
        self, souls: frozenset[str], kinds: frozenset[str], capacity: int, internal: bool = False
    ) -> None:
        self.souls = souls
        self.kinds = kinds
        self.internal = internal
        send: MemoryObjectSendStream[Output]
        receive: MemoryObjectReceiveStream[Output]
        send, receive = anyio.create_memory_object_stream(capacity)
        self._send = send
        self._receive = receive
        self.dropped = 0
        self._reported = 0

    def wants(self, output: Output) -> bool:
        return (not self.souls or output.soul in self.souls) and (
            not self.kinds or output.kind in self.kinds
        )

    def offer(self, output: Output) -> None:
        try:
            self._send.send_nowait(output)
        except anyio.WouldBlock:
            self.dropped += 1

    async def receive(self) -> Output:
        """The next output; an ``overflow`` report first when some were dropped."""
        if self.dropped > self._reported:
            missed, self._reported = self.dropped - self._reported, self.dropped
            return Output("", "overflow", time.time(), {"dropped": missed, "total": self.dropped})
        return await self._receive.receive()

    def close(self) -> None:
        self._send.close()
        self._receive.close()


class Outputs:
    def __init__(self) -> None:
        self._subscriptions: list[Subscription] = []
        self._internal = 0
        self._relay: Callable[[Output], None] | None = None
        self.published = 0
        self.relayed = 0  # published here by another daemon's souls (publish_relayed)

    def publish(self, soul: str, kind: str, payload: dict[str, Any]) -> None:
        if kind not in OUTPUT_KINDS:
            raise ValueError(f"unknown output kind {kind!r}; add it to OUTPUT_KINDS")
        output = Output(soul, kind, time.time(), payload)
        self.published += 1
        for subscription in self._subscriptions:
            if subscription.wants(output):
                subscription.offer(output)
        if self._relay is not None:
            self._relay(output)

    def relay_to(self, relay: Callable[[Output], None] | None) -> None:
        """Hand every output published from now on to ``relay`` too (None: no more). It
        is called in :meth:`publish`: it must return at once and never raise."""
        self._relay = relay

    def publish_relayed(self, output: Output) -> None:
        """An output another daemon of the shared store published (:mod:`supervisor.relay`),
        fanned out here as it came (its time is the publisher's) and not relayed again; a
        ``direct`` one to the clients' subscriptions only."""
        if output.kind not in OUTPUT_KINDS:
            raise ValueError(f"unknown output kind {output.kind!r}; add it to OUTPUT_KINDS")
        self.relayed += 1
        for subscription in self._subscriptions:
            if subscription.internal and output.kind == "direct":
                continue
            if subscription.wants(output):
                subscription.offer(output)

    @contextmanager
    def subscribe(
        self,
        souls: frozenset[str] = frozenset(),
        kinds: frozenset[str] = frozenset(),
        capacity: int = 256,
        *,
        internal: bool = False,
    ) -> Iterator[Subscription]:
        """A subscription for the block's duration. ``internal``: the daemon's own
        (channels, the responder), not counted among :attr:`subscribers`."""
        subscription = Subscription(souls, kinds, capacity, internal)
        self._subscriptions.append(subscription)
        self._internal += internal
        try:
            yield subscription
        finally:
            self._internal -= internal
            self._subscriptions.remove(subscription)
            subscription.close()

    @property
    def subscribers(self) -> int:
        """Subscriptions of clients (``subscribe`` over the socket)."""
        return len(self._subscriptions) - self._internal

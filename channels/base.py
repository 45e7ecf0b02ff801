"""What every chat or webhook channel shares: the reconnect loop, handing events to
souls, and the outbound queue.

A channel is a supervised child (:mod:`channels.supervisor`). A subclass implements
:meth:`Channel.serve` (connect, call :meth:`Channel.up`, relay until the upstream is
lost) and, when it can answer, :meth:`Channel.send`. The base class guarantees:

* **Reconnects never end.** Whatever ends ``serve`` — the upstream closing, a network
  error, a refused token, a payload it could not map — the channel waits a jittered,
  capped exponential delay (:class:`Backoff`) and connects again. Its state
  (``connecting`` / ``up`` / ``backoff`` with the last error and the next retry) is
  what ``daemon.status`` shows.
* **Acknowledged means stored.** :meth:`Channel.deliver` returns only once every soul
  the channel feeds has acknowledged the event (stored, duplicate or dropped by its
  gates: each a final answer); otherwise it raises :class:`NotAcknowledged` and the
  subclass must not acknowledge upstream, so the upstream sends the event again.
  ``ref`` makes that redelivery idempotent.
* **A soul another daemon owns is still fed.** On a shared PostgreSQL store a soul of
  the channel may be served by another daemon (:mod:`channels.forwarding`): the event
  goes to that owner as an ``event.push`` of the same fields, and its answer counts as a
  local one. An owner that cannot be reached, or a daemon that forwards nothing, leaves
  the event unacknowledged: the upstream sends it again, and it is taken over here once
  the owner is gone.
* **No channel ever blocks a soul.** Outputs reach a channel through its own bounded
  subscription and outbox; when either is full the output is dropped for this channel
  only, counted (``outbox_overflow``) and logged. A slow upstream slows nobody else.
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import anyio
import anyio.abc
import msgspec
import structlog
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from channels.config import ChannelConfig
from channels.conversations import Conversations
from channels.methods import PushParams
from souls.actor.mailbox import Future
from souls.events import EventIn
from souls.intake.field_screen import shown
from souls.messages import Observe
from souls.results import PushResult
from supervisor.errors import (
    RejectedInput,
    RemoteError,
    SoulElsewhere,
    SoulUnavailable,
    SoupdError,
)
from supervisor.outputs import Output, Outputs
from supervisor.registry import Registry

if TYPE_CHECKING:
    from channels.forwarding import Forwarder

__all__ = [
    "Backoff",
    "Channel",
    "ChannelError",
    "ChannelState",
    "ChannelStatistics",
    "NotAcknowledged",
    "Outgoing",
    "chat_event",
]

ChannelState = Literal["connecting", "up", "backoff", "failed", "stopped"]

# A failed send is tried this many times in all before the message is dropped.
_SEND_ATTEMPTS = 3


class ChannelError(SoupdError):
    """An upstream failed or refused; the message names the upstream and what to do."""

    code = "channel.upstream"


class NotAcknowledged(ChannelError):
    """A soul did not acknowledge an inbound event; the upstream must send it again."""

    code = "channel.unacknowledged"


class Backoff:
    """Delays for reconnecting: ``initial * 2**n`` capped at ``maximum``, each drawn
    uniformly between half and all of it so that many channels do not retry in step."""

    def __init__(self, initial: float, maximum: float, rng: random.Random | None = None) -> None:
        self.initial = initial
        self.maximum = maximum
        self.attempts = 0
        self._rng = rng or random.Random()

    def next(self) -> float:
        ceiling = min(self.maximum, self.initial * 2 ** min(self.attempts, 64))
        self.attempts += 1
        return self._rng.uniform(ceiling / 2, ceiling)

    def reset(self) -> None:
        self.attempts = 0


class Outgoing(msgspec.Struct, frozen=True):
    """One message to send upstream, to a conversation of this channel."""

    conversation: str
    text: str
    soul: str
    kind: str


@dataclass(slots=True)
class ChannelStatistics:
    """Counters since the channel started."""

    # Inbound: events mapped, and what the souls made of them.
    received: int = 0
    stored: int = 0
    duplicate: int = 0
    dropped: int = 0
    rejected: int = 0
    # Inbound events the souls did not acknowledge (the upstream sends them again).
    unacknowledged: int = 0
    # Answers that came from the daemon owning the soul (a shared store), counted above too.
    forwarded: int = 0
    # Upstream items that are no event for a soul (own messages, joins, edits...).
    skipped: int = 0
    # Outbound.
    sent: int = 0
    send_failed: int = 0
    outbox_overflow: int = 0
    unroutable: int = 0
    reconnects: int = 0


def chat_event(
    channel: str,
    *,
    text: str,
    conversation: str,
    ref: str,
    sender: str | None,
    group: str | None,
    mentioned: bool,
    ts: float | str | None = None,
    voice: bool = False,
) -> EventIn:
    """The event for one chat message, the same way for every chat channel.

    A private chat is kind ``dm`` and counts as addressed to the soul (``mentioned``),
    so a voice message there scores like a typed one; in a group only a mention does.
    Speech-to-text is kind ``voice``. The session ``<channel>:<conversation>`` is how
    an answer finds its way back.
    """
    private = group is None
    return EventIn(
        text=text,
        kind="voice" if voice else "dm" if private else "message",
        channel=channel,
        sender=sender,
        group=group,
        mentioned=private or mentioned,
        ref=ref,
        ts=ts,
        session=f"{channel}:{conversation}",
    )


class Channel:
    """Base of every channel; see the module docstring for what it guarantees."""

    kind: ClassVar[str] = "channel"

    def __init__(
        self,
        config: ChannelConfig,
        registry: Registry,
        outputs: Outputs,
        conversations: Conversations,
        *,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.name = config.name
        self.stats = ChannelStatistics()
        self.state: ChannelState = "connecting"
        self.last_error: str | None = None
        self.next_retry_at: float | None = None
        self._registry = registry
        self._outputs = outputs
        self._conversations = conversations
        self._rng = rng or random.Random()
        self._backoff = Backoff(config.backoff_initial, config.backoff_max, self._rng)
        # The outbox exists while run() does (it owns and closes both ends).
        self._outbox: MemoryObjectSendStream[Outgoing] | None = None
        # Set by the daemon on a shared store: an event for a soul another daemon owns is
        # forwarded to it (channels.forwarding); None: such an event is not acknowledged.
        self.forwarder: Forwarder | None = None
        self.log = structlog.get_logger("soupd.channels").bind(channel=self.name)

    # -- what a subclass implements ------------------------------------------------

    async def serve(self) -> None:
        """Connect, call :meth:`up`, relay until the upstream is lost (return or raise)."""
        raise NotImplementedError

    async def send(self, conversation: str, text: str) -> None:
        """Send ``text`` to ``conversation``; raise on failure (it is retried)."""
        raise NotImplementedError

    def details(self) -> dict[str, Any]:
        """Kind-specific facts for the status (say, the address a webhook listens on)."""
        return {}

    # -- the child -----------------------------------------------------------------

    async def run(self, task_status: anyio.abc.TaskStatus[Any]) -> None:
        """The channel's life: outbound relay, then reconnect forever until cancelled.

        ``started()`` comes at once: an unreachable upstream must not hold up the
        daemon's start; it shows as ``backoff`` in the status instead.
        """
        send: MemoryObjectSendStream[Outgoing]
        receive: MemoryObjectReceiveStream[Outgoing]
        send, receive = anyio.create_memory_object_stream(self.config.outbox)
        self._outbox = send
        try:
            async with anyio.create_task_group() as tg:
                if self.config.deliver:
                    await tg.start(self._route_outputs)
                    tg.start_soon(self._send_loop, receive)
                task_status.started()
                await self._connect_loop()
        finally:
            self.state = "stopped"
            self.next_retry_at = None
            self._outbox = None
            send.close()
            receive.close()

    def up(self) -> None:
        """Called by :meth:`serve` once connected: the backoff starts over."""
        self.state = "up"
        self.next_retry_at = None
        self._backoff.reset()
        self.log.info("channel.up", kind=self.kind)

    async def _connect_loop(self) -> None:
        while True:
            self.state = "connecting"
            try:
                await self.serve()
                problem = "the upstream closed the connection"
            except ChannelError as exc:
                problem = exc.message
            except Exception as exc:  # any failure means: reconnect later
                problem = f"{type(exc).__name__}: {exc}".rstrip(": ")
                self.log.debug("channel.failure", exc_info=exc)
            delay = self._backoff.next()
            self.stats.reconnects += 1
            self.state = "backoff"
            self.last_error = problem
            self.next_retry_at = time.time() + delay
            self.log.warning("channel.backoff", error=problem, retry_in_s=round(delay, 3))
            await anyio.sleep(delay)

    # -- inbound -------------------------------------------------------------------

    async def deliver(self, event: EventIn) -> dict[str, str]:
        """Hand ``event`` to every soul of this channel and wait for all their answers.

        Returns once each soul acknowledged it (stored, duplicate, dropped by the
        attention gate, or refused by the hygiene gate: all final), with what each
        soul made of it (``stored``, ``duplicate``, ``dropped``, ``hygiene.<rule>``). Raises
        :class:`NotAcknowledged` otherwise; the caller must then not acknowledge the
        event upstream. A soul another daemon owns answers through that daemon
        (:meth:`_owner_answer`), within the same ``ack_timeout``.
        """
        self.stats.received += 1
        timeout = self.config.ack_timeout
        futures: list[tuple[str, Future]] = []
        answers: dict[str, Any] = {}
        failures: list[SoupdError] = []

        async def forward(soul: str, elsewhere: SoulElsewhere, scope: anyio.CancelScope) -> None:
            # A failure ends the other forwards: the event is not acknowledged anyway.
            try:
                answers[soul] = await self._owner_answer(soul, event, elsewhere)
                self.stats.forwarded += 1
            except SoupdError as error:
                failures.append(error)
                scope.cancel()
            except Exception as exc:  # (the token file unreadable, say): not acknowledged
                self.log.warning(
                    "channel.forward_failed", soul=soul, owner=elsewhere.owner, exc_info=exc
                )
                failures.append(
                    SoulUnavailable(
                        f"soul {soul!r} is served by the daemon at {elsewhere.owner}, and the "
                        f"event could not be sent there ({type(exc).__name__}); it will come again"
                    )
                )
                scope.cancel()

        try:
            with anyio.fail_after(timeout):
                for soul in self.config.souls:
                    future = Future()
                    await self._registry.lookup(soul).mailbox.tell(Observe(event), future)
                    futures.append((soul, future))
                # Forwards run beside the waiting: each starts as soon as its soul says
                # it is served elsewhere, and the souls' answers keep coming meanwhile.
                async with anyio.create_task_group() as forwards:
                    for soul, future in futures:
                        try:
                            answers[soul] = await future.wait()
                        except RejectedInput as rejected:
                            answers[soul] = rejected
                        except SoulElsewhere as elsewhere:
                            forwards.start_soon(forward, soul, elsewhere, forwards.cancel_scope)
                        except SoupdError as error:
                            failures.append(error)
                            forwards.cancel_scope.cancel()
                            break
            if failures:
                raise failures[0]
        except TimeoutError:
            self.stats.unacknowledged += 1
            raise NotAcknowledged(
                f"the souls did not acknowledge event {shown(event.ref)} within {timeout:g} s; "
                "it will come again (raise ack_timeout if the souls are just slow)"
            ) from None
        except SoupdError as error:
            self.stats.unacknowledged += 1
            raise NotAcknowledged(
                f"event {shown(event.ref)} not acknowledged: {error.message}"
            ) from error
        return {soul: self._count(soul, event, answers[soul]) for soul, _ in futures}

    async def _owner_answer(self, soul: str, event: EventIn, elsewhere: SoulElsewhere) -> Any:
        """What the daemon owning ``soul`` made of ``event``: an ``event.push`` of the
        event's fields, as a client would send it, by :class:`Forwarder`."""
        if self.forwarder is None:
            where = f"the daemon at {elsewhere.owner}" if elsewhere.owner else "another daemon"
            raise SoulUnavailable(
                f"soul {soul!r} is served by {where}, and this daemon forwards no channel "
                "event to it; the event is stored once that daemon gives the soul up"
            )
        params = PushParams(soul=soul, **msgspec.structs.asdict(event))
        try:
            value = await self.forwarder.forward(
                "event.push", msgspec.json.encode(params), elsewhere
            )
        except RemoteError as error:
            if error.code.startswith("hygiene."):
                # The owner's hygiene gate refused it: a final answer, as here.
                return RejectedInput(error.code.removeprefix("hygiene."), error.message)
            raise
        try:
            return msgspec.convert(value, PushResult)
        except msgspec.ValidationError:
            raise SoulUnavailable(
                f"soul {soul!r} is served by the daemon at {elsewhere.owner}, which answered "
                "the event with no push result; check its version and log"
            ) from None

    def _count(self, soul: str, event: EventIn, result: Any) -> str:
        if isinstance(result, RejectedInput):
            self.stats.rejected += 1
            self.log.warning(
                "channel.rejected",
                soul=soul,
                ref=shown(event.ref),
                rule=result.rule,
                field=result.field,
            )
            return result.code
        assert isinstance(result, PushResult)
        if result.status == "stored":
            self.stats.stored += 1
        elif result.status == "duplicate":
            self.stats.duplicate += 1
        else:
            self.stats.dropped += 1
        prefix = f"{self.name}:"
        if event.session is not None and event.session.startswith(prefix):
            self._conversations.note(soul, self.name, event.session[len(prefix) :])
        return result.status

    # -- outbound ------------------------------------------------------------------

    def offer(self, item: Outgoing) -> bool:
        """Queue ``item`` for sending without waiting; False (counted) when full."""
        try:
            self._outbox_or_full().send_nowait(item)
        except anyio.WouldBlock:
            self.stats.outbox_overflow += 1
            self.log.warning("channel.outbox_overflow", soul=item.soul, kind=item.kind)
            return False
        return True

    def _outbox_or_full(self) -> MemoryObjectSendStream[Outgoing]:
        if self._outbox is None:
            raise anyio.WouldBlock  # not running: nowhere to keep it
        return self._outbox

    def route(self, output: Output) -> str | None:
        """The conversation of this channel an output belongs to, or None.

        An output naming a session goes to that session's conversation (if it is one
        of ours); one naming none, to where its soul last heard from someone.
        """
        session = output.payload.get("session")
        if isinstance(session, str):
            prefix = f"{self.name}:"
            return session[len(prefix) :] if session.startswith(prefix) else None
        latest = self._conversations.latest(output.soul)
        if latest is None:
            self.stats.unroutable += 1
            return None
        channel, conversation = latest
        return conversation if channel == self.name else None

    async def _route_outputs(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        souls, kinds = frozenset(self.config.souls), frozenset(self.config.deliver)
        with self._outputs.subscribe(
            souls, kinds, self.config.outbox, internal=True
        ) as subscription:
            task_status.started()
            while True:
                output = await subscription.receive()
                if output.kind == "overflow":
                    self.stats.outbox_overflow += int(output.payload.get("dropped", 0))
                    self.log.warning("channel.outbox_overflow", dropped=output.payload)
                    continue
                text = output.payload.get("text")
                conversation = self.route(output)
                if conversation is not None and isinstance(text, str) and text.strip():
                    self.offer(Outgoing(conversation, text, output.soul, output.kind))

    async def _send_loop(self, outbox: MemoryObjectReceiveStream[Outgoing]) -> None:
        async for item in outbox:
            backoff = Backoff(self.config.backoff_initial, self.config.backoff_max, self._rng)
            for attempt in range(1, _SEND_ATTEMPTS + 1):
                try:
                    await self.send(item.conversation, item.text)
                except Exception as exc:  # noqa: BLE001 -- retried, then dropped and counted
                    self.log.warning(
                        "channel.send_failed", attempt=attempt, error=f"{type(exc).__name__}: {exc}"
                    )
                    if attempt < _SEND_ATTEMPTS:
                        await anyio.sleep(backoff.next())
                else:
                    self.stats.sent += 1
                    break
            else:
                self.stats.send_failed += 1

    # -- status --------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        queued = self._outbox.statistics().current_buffer_used if self._outbox else 0
        retry_in = None
        if self.next_retry_at is not None:
            retry_in = round(max(0.0, self.next_retry_at - time.time()), 3)
        return {
            "name": self.name,
            "kind": self.kind,
            "state": self.state,
            "souls": list(self.config.souls),
            "last_error": self.last_error,
            "next_retry_at": self.next_retry_at,
            "retry_in_s": retry_in,
            "outbox_queued": queued,
            **asdict(self.stats),
            **self.details(),
        }

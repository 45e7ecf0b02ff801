"""One client connection of the socket server: frames in, replies out.

Invariants:

* At most ``max_in_flight`` requests are between "frame read" and "reply written"; the
  reader waits for a slot, so a slow client or a full mailbox slows its own connection
  down. The reader also stops reading while the connection's unread replies fill its
  :class:`~channels.outbox.Outbox` (``max_buffered_bytes``): a client that does not
  read gets no more of its requests taken.
* Every frame gets exactly one reply, even one that could not be decoded (id null) or
  one over the size cap (the rest of that line is skipped, the connection goes on). A
  result that does not fit the reply bytes is replaced by ``reply_buffer_full``.
* A begun frame must reach its newline within ``frame_timeout`` seconds, counted from
  its first byte but not while the connection waits for the daemon (a free slot); a
  connection that owes nothing and is owed nothing for ``idle_timeout`` seconds, or
  whose replies go unread that long, is closed. A timed-out reader sends one error
  frame (id null) and the replies already owed, then the connection closes.
* A peer that hangs up (not a half-close) forfeits its replies: every request of it
  still queued in a soul's mailbox is settled at once, so the soul skips it instead of
  working for nobody.
* On shutdown the connection stops reading first, then lets the requests already read
  finish (within its shutdown budget) before closing.
"""

from __future__ import annotations

import math
import select
import socket
import time
from typing import Any

import anyio
import anyio.abc
import msgspec
import structlog

from channels.framing import FrameSplitter
from channels.limits import LimitReports, ServerStatistics, SocketLimits
from channels.methods import Methods
from channels.outbox import Budget, Outbox
from channels.protocol import (
    RequestId,
    decode_params,
    decode_request,
    encode_error,
    encode_output,
    encode_result,
)
from channels.socket_reader import SocketReader
from souls.actor.mailbox import Reply
from supervisor.errors import (
    ConnectionLimit,
    FrameTimeout,
    FrameTooLarge,
    IdleTimeout,
    ReplyBufferFull,
    SoulElsewhere,
    SoulUnavailable,
    SoupdError,
    UnknownSoul,
)
from supervisor.output_kinds import kinds_problem
from supervisor.outputs import Outputs
from supervisor.tree import shielded_cleanup

__all__ = ["Connection", "SubscribeParams"]

_log = structlog.get_logger("soupd.socket")
_CHUNK = 65536
# What a hung-up peer's queued requests are settled with; nobody ever reads it.
_ABANDONED = SoulUnavailable("the client closed the connection before its reply")


class SubscribeParams(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    # Only outputs of these souls (all when empty).
    souls: list[str] = []
    # Only outputs of these kinds (all when empty): OUTPUT_KINDS, no other.
    kinds: list[str] = []
    # Outputs held for this subscriber while it is slow; beyond, they are dropped and
    # counted (an "overflow" output says how many).
    buffer: int = 256

    def __post_init__(self) -> None:
        if not 1 <= self.buffer <= 65536:
            raise ValueError("buffer must be between 1 and 65536")
        if (problem := kinds_problem(self.kinds)) is not None:
            raise ValueError(problem)


class _Pending(Reply):
    """The reply to one request of this connection, wherever it is being worked on."""

    __slots__ = ("_connection", "id", "method", "params", "started")

    def __init__(
        self,
        connection: Connection,
        request_id: RequestId,
        method: str,
        params: msgspec.Raw | None = None,
    ) -> None:
        super().__init__()
        self._connection = connection
        self.id = request_id
        self.method = method
        # Kept only on a daemon that forwards (the shared store): sent on to the owner
        # when the soul is served elsewhere (channels.forwarding), dropped once answered.
        self.params = params
        self.started = time.perf_counter()

    def _deliver(self, value: Any, error: SoupdError | None) -> None:
        self._connection._answered(self, value, error)


class Connection:
    def __init__(
        self,
        stream: anyio.abc.SocketStream,
        raw: socket.socket,
        *,
        limits: SocketLimits,
        methods: Methods,
        outputs: Outputs,
        budget: Budget,
        partial: Budget,
        stats: ServerStatistics,
        reports: LimitReports,
    ) -> None:
        self._stream = stream
        self._raw = raw  # the stream's socket, for what the stream does not tell
        self._reader: SocketReader | None = None  # made in serve: it needs the loop
        self._limits = limits
        self._methods = methods
        self._outputs = outputs
        self._budget = budget
        self._partial = partial  # begun frames' share of the budget
        self._stats = stats
        self._reports = reports
        self._outbox = Outbox(limits.max_buffered_bytes, budget)
        self._in_flight = 0
        # Made only when someone waits: most connections never wait for either.
        self._slot_freed: anyio.Event | None = None
        self._idle: anyio.Event | None = None
        self._pending: set[_Pending] = set()
        self._subscriptions = 0
        self._gone = False
        self._held = 0  # bytes of a begun frame counted in the budget
        self._last_activity = anyio.current_time()
        # The reader's wait for bytes while it may time out as idle (re-armed on settle).
        self._idle_wait: anyio.CancelScope | SocketReader | None = None
        self._reading = anyio.CancelScope()
        self._writing = anyio.CancelScope(shield=True)
        self._tasks: anyio.abc.TaskGroup | None = None
        self._writer = False  # started with the first slot taken: silent peers cost no task
        self._subscribed: list[anyio.CancelScope] = []  # one per subscription's task
        # The peer (peer_uid, peer_pid) the server bound for this connection's task: a
        # reply is often settled from a soul's task, where that binding does not reach.
        self._log = _log.bind(**structlog.contextvars.get_contextvars())

    async def serve(self) -> None:
        async with anyio.create_task_group() as tg:
            self._tasks = tg
            try:
                with self._reading:
                    self._reader = SocketReader(self._raw, _CHUNK)
                    try:
                        await self._read_loop()
                    finally:
                        self._reader.close()
                self._unsubscribe()
                await self._settled()  # what was read is answered (stalls time out)
            finally:
                self._unsubscribe()
                if self._in_flight:
                    with shielded_cleanup():
                        await self._settled()
                    if self._in_flight:
                        self._abandon(read=True)
                self._outbox.close()

    # --- reading ---------------------------------------------------------------------

    async def _read_loop(self) -> None:
        frames = FrameSplitter(self._limits.max_frame_bytes)
        frame_deadline = math.inf
        try:
            while True:
                try:
                    chunk = await self._receive(frame_deadline if frames.begun else None)
                except ConnectionLimit as expired:
                    self._expire(expired)
                    return
                if chunk is None:
                    break
                for frame in frames.feed(chunk):
                    if frame is None:
                        await self._oversized()
                    else:
                        await self._frame(frame)
                self._hold(frames.held)
                if not frames.begun:
                    frame_deadline = math.inf
                elif frames.fresh or frame_deadline == math.inf:
                    frame_deadline = anyio.current_time() + self._limits.frame_timeout
            if _hung_up(self._raw):
                self._abandon(read=True)
                return
            tail = frames.finish()
            if tail is not None:
                await self._frame(tail)
        finally:
            self._hold(0)

    async def _receive(self, frame_deadline: float | None) -> bytes | None:
        """The next chunk, or None at end of stream. Raises FrameTimeout when a begun
        frame is overdue, IdleTimeout when the connection sat idle too long."""
        begun = frame_deadline is not None
        if self._outbox.full or (begun and self._blocked()):
            # Rare: hold back until the peer reads its replies, or the daemon has room.
            deadline = frame_deadline if frame_deadline is not None else self._idle_deadline()
            with anyio.CancelScope(deadline=deadline) as wait:
                if not begun:
                    self._idle_wait = wait
                try:
                    if self._outbox.full:
                        await self._outbox.wait_until_not_full()
                    while begun and self._blocked():
                        full = self._budget if self._budget.full else self._partial
                        await full.wait_for_release()
                finally:
                    self._idle_wait = None
            if wait.cancelled_caught:
                raise self._timed_out(begun)
        reader = self._reader
        assert reader is not None
        if not begun:
            self._idle_wait = reader
        try:
            chunk = await reader.receive(
                frame_deadline if frame_deadline is not None else self._idle_deadline()
            )
        except TimeoutError:
            raise self._timed_out(begun) from None
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return None
        finally:
            self._idle_wait = None
        self._last_activity = anyio.current_time()
        return chunk

    def _timed_out(self, begun: bool) -> ConnectionLimit:
        limits = self._limits
        if begun:
            return FrameTimeout(
                f"a frame was begun but its newline did not arrive within "
                f"{limits.frame_timeout:g} s ([socket] frame_timeout); send each request as "
                "one complete line. The connection is closed"
            )
        return IdleTimeout(
            f"no request for {limits.idle_timeout:g} s ([socket] idle_timeout); the "
            "connection is closed, connect again when there is something to send"
        )

    def _idle_deadline(self) -> float:
        if self._in_flight or self._subscriptions:
            return math.inf
        return self._last_activity + self._limits.idle_timeout

    def _blocked(self) -> bool:
        """Whether the begun frame must wait for room before more of it is read: the
        budgets are full and another connection's frame is the one let through.

        A connection skipping an oversized line keeps nothing and is never held back.
        With the budgets full, the first connection to find them so is let through
        (``exempt``) until its frame ends: some frame always completes, at the cost of
        one frame over the limit."""
        if not self._held or not (self._budget.full or self._partial.full):
            return False
        if self._partial.exempt is None:
            self._partial.exempt = self
        return self._partial.exempt is not self

    def _hold(self, size: int) -> None:
        """Count ``size`` bytes of a begun frame in the server's budgets."""
        if size == 0 and self._partial.exempt is self:
            self._partial.exempt = None
        if size > self._held:
            self._budget.take(size - self._held)
            self._partial.take(size - self._held)
        elif size < self._held:
            self._budget.release(self._held - size)
            self._partial.release(self._held - size)
        self._held = size

    def _expire(self, error: ConnectionLimit) -> None:
        self._stats.timed_out += 1
        self._reports.note(f"socket.{error.code}", in_flight=self._in_flight)
        self._take_slot()
        self._reply(None, None, error)

    async def _oversized(self) -> None:
        await self._begin()
        max_frame = self._limits.max_frame_bytes
        error = FrameTooLarge(
            f"frame exceeds {max_frame} bytes; split the request (e.g. import in "
            "smaller batches) — the rest of that line was skipped"
        )
        self._reply(None, None, error)

    async def _frame(self, frame: bytes) -> None:
        await self._begin()
        self._stats.requests += 1
        try:
            request = decode_request(frame)
        except SoupdError as error:
            self._reply(None, None, error)
            return
        except Exception:  # noqa: BLE001 - see below
            # The slot taken above must get its reply (the connection waits for it to
            # close), and an error escaping here would end the connection.
            _log.exception("socket.decode_failed", frame_bytes=len(frame))
            self._reply(
                None,
                None,
                SoupdError(
                    "internal error reading this frame; the daemon log has the details "
                    "(please report it)"
                ),
            )
            return
        forwards = self._methods.forwarder is not None
        reply = _Pending(self, request.id, request.method, request.params if forwards else None)
        self._pending.add(reply)
        try:
            if request.method == "subscribe":
                await self._subscribe(request.params, reply)
                return
            await self._methods.dispatch(request.method, request.params, reply)
        except anyio.get_cancelled_exc_class():
            # Shutting down while waiting for room in a mailbox: the request was not
            # queued, so say so rather than leave it unanswered.
            reply.fail(SoulUnavailable("soupd is shutting down; send this again once it is back"))
            raise
        except SoupdError as error:
            reply.fail(error)
        except Exception:  # noqa: BLE001 - a bug in one method must not end the connection
            _log.exception("socket.method_failed", method=request.method)
            reply.fail(
                SoupdError(
                    f"internal error in {request.method}; the daemon log has the details "
                    "(please report it)"
                )
            )

    async def _subscribe(self, raw: msgspec.Raw, reply: _Pending) -> None:
        """Start streaming outputs on this connection, tagged with the request's id."""
        params = decode_params("subscribe", raw, SubscribeParams)
        unknown = [name for name in params.souls if not self._methods.has_soul(name)]
        if unknown:
            raise UnknownSoul(unknown[0])
        assert self._tasks is not None
        await self._tasks.start(self._forward, reply.id, params)
        reply.resolve({"subscribed": True, "souls": params.souls, "kinds": params.kinds})

    async def _forward(
        self,
        request_id: RequestId,
        params: SubscribeParams,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        subscribe = self._outputs.subscribe
        with (
            anyio.CancelScope() as scope,
            subscribe(frozenset(params.souls), frozenset(params.kinds), params.buffer) as sub,
        ):
            self._subscribed.append(scope)
            self._subscriptions += 1
            try:
                task_status.started()
                while True:
                    output = await sub.receive()
                    # A subscriber that does not read is not buffered for: its outputs
                    # wait in the subscription, which drops (and counts) past its buffer.
                    await self._outbox.wait_until_not_full()
                    await self._begin()
                    if self._gone:
                        self._settle(1)
                    else:
                        self._outbox.put(encode_output(request_id, output))
            finally:
                self._subscriptions -= 1

    def _unsubscribe(self) -> None:
        for scope in self._subscribed:
            scope.cancel()

    # --- slots and replies -----------------------------------------------------------

    async def _begin(self) -> None:
        """Take an in-flight slot, waiting while all are taken.

        A hand-rolled counter rather than a Semaphore: the common case (a free slot)
        must not cost an event-loop checkpoint per frame.
        """
        while self._in_flight >= self._limits.max_in_flight:
            self._slot_freed = anyio.Event()
            await self._slot_freed.wait()
        self._take_slot()

    def _take_slot(self) -> None:
        self._in_flight += 1
        if not self._writer:
            # Every slot ends in a frame to write. Started here, in the reader (or a
            # subscription), never from a reply's callback in a soul's task.
            assert self._tasks is not None
            self._writer = True
            self._tasks.start_soon(self._write_loop)

    async def _settled(self) -> None:
        """Wait until every slot taken is settled."""
        while self._in_flight:
            self._idle = anyio.Event()
            await self._idle.wait()

    def _settle(self, count: int) -> None:
        """``count`` slots are done: their frames were written (or dropped)."""
        if not count:
            return
        self._in_flight -= count
        if self._slot_freed is not None:
            self._slot_freed.set()
        if self._in_flight == 0:
            if self._idle is not None:
                self._idle.set()
            self._last_activity = now = anyio.current_time()
            if self._idle_wait is not None and not self._subscriptions:
                self._idle_wait.deadline = now + self._limits.idle_timeout

    def _answered(self, reply: _Pending, value: Any, error: SoupdError | None) -> None:
        params, reply.params = reply.params, None
        if isinstance(error, SoulElsewhere) and params is not None and not self._gone:
            # The soul is another daemon's: the request goes on to it, its slot kept.
            assert self._tasks is not None
            self._tasks.start_soon(self._forwarded, reply, bytes(params), error)
            return
        self._pending.discard(reply)
        ms = round((time.perf_counter() - reply.started) * 1000, 3)
        # One line a request, with the peer and the method: refusals at info, the rest
        # (thousands a second) at debug.
        if error is None:
            self._log.debug("socket.request", method=reply.method, id=reply.id, ms=ms)
        else:
            self._log.info(
                "socket.request_failed", method=reply.method, id=reply.id, ms=ms, code=error.code
            )
        self._reply(reply.id, value, error)

    async def _forwarded(self, reply: _Pending, raw: bytes, elsewhere: SoulElsewhere) -> None:
        """Answer ``reply`` with what the soul's owner answers (channels.forwarding)."""
        forwarder = self._methods.forwarder
        assert forwarder is not None
        try:
            value, error = await forwarder.forward(reply.method, raw, elsewhere), None
        except SoupdError as failed:
            value, error = None, failed
        except anyio.get_cancelled_exc_class():
            self._answered(reply, None, SoulUnavailable("soupd is shutting down; send this again"))
            raise
        self._answered(reply, value, error)

    def _reply(self, request_id: RequestId, value: Any, error: SoupdError | None) -> None:
        """Queue the one reply of a slot taken with ``_begin``."""
        if self._gone:
            self._settle(1)
            return
        if error is None:
            frame = encode_result(request_id, value)
            if self._outbox.admits(len(frame)):
                self._outbox.put(frame)
                return
            error = self._refused(len(frame))
        self._stats.errors += 1
        self._outbox.put(encode_error(request_id, error))

    def _refused(self, size: int) -> ReplyBufferFull:
        outbox = self._outbox
        self._stats.replies_refused += 1
        self._reports.note(
            "socket.reply_refused",
            reply_bytes=size,
            waiting_bytes=outbox.bytes,
            buffered_total=self._budget.used,
        )
        if outbox.bytes:
            return ReplyBufferFull(
                f"this {size}-byte result was dropped: {outbox.bytes} bytes of replies "
                f"already wait unread on this connection ([socket] max_buffered_bytes = "
                f"{outbox.limit}); the request was carried out — read replies while "
                "sending, or send fewer large requests (export pages) at once"
            )
        return ReplyBufferFull(
            f"this {size}-byte result was dropped: replies waiting on all connections "
            f"fill the daemon's buffer ([socket] max_buffered_total = {self._budget.limit}"
            "); the request was carried out — retry shortly"
        )

    # --- writing ---------------------------------------------------------------------

    async def _write_loop(self) -> None:
        # Shielded: replies keep flowing while the reader is being cancelled; the loop
        # ends when the outbox is closed and empty, or the peer is gone or stalled.
        with self._writing:
            while True:
                try:
                    piece = await self._outbox.take()
                except anyio.EndOfStream:
                    return
                try:
                    with anyio.move_on_after(self._limits.idle_timeout) as stall:
                        await self._stream.send(piece.data)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    self._abandon()
                    return
                finally:
                    self._settle(piece.frames)
                if stall.cancelled_caught:
                    self._stats.timed_out += 1
                    self._reports.note("socket.replies_unread", waiting_bytes=self._outbox.bytes)
                    self._abandon()
                    return

    def _abandon(self, *, read: bool = False) -> None:
        """The peer is gone or will not read: drop its replies, settle its queued work.
        ``read``: the reader is done already, nothing to cancel there."""
        if self._gone:
            return
        self._gone = True
        # Only the scopes that hold a task are cancelled: a cancel costs anyio a repr of
        # the current task, and a wave of hung-up connections pays it per connection.
        if not read:
            self._reading.cancel()
        if self._writer:
            self._writing.cancel()
        self._settle(self._outbox.drop())
        if self._pending:
            self._stats.abandoned += 1
            self._stats.abandoned_requests += len(self._pending)
            self._reports.note("socket.abandoned", requests=len(self._pending))
            for reply in list(self._pending):
                reply.fail(_ABANDONED)


def _hung_up(sock: socket.socket) -> bool:
    """Whether the peer closed its end for good (a half-close still reads replies)."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return any(events & (select.POLLHUP | select.POLLERR) for _fd, events in poller.poll(0))

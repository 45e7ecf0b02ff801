"""The async client (anyio: asyncio or trio): the same methods as :class:`soupd.Client`,
awaited.

One connection, shared: calls from many tasks are pipelined on it and their replies
matched by id (the daemon answers in any order). The rules for timeouts and
reconnecting are the blocking client's (see :mod:`soupd._sync`), except that a call
that times out or is cancelled while waiting leaves the connection to the others: its
reply, when it comes, is dropped. Only a request cut off while being written makes
the connection unusable; it is then replaced for the calls that follow.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import select
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

import anyio
import anyio.abc

from soupd._calls import Call, calls, method_signature, subscribe_params
from soupd._errors import ClientTimeout, ConnectionLost, DaemonNotRunning, SoupdError
from soupd._imports import ImportPlan
from soupd._paths import find_socket
from soupd._sync import DEFAULT_TIMEOUT, ClientStatistics
from soupd._types import ImportResult, Output
from soupd._wire import MAX_REPLY_BYTES, Frames, Reply, decode_output, encode_request

__all__ = ["AsyncClient", "AsyncSubscription"]

P = ParamSpec("P")
T = TypeVar("T")
# How long closing a connection may take when the call that owned it was cancelled.
_CLOSE_WITHIN = 1.0


class _Broken(Exception):
    """The connection ended or failed under a call."""


def _method(
    build: Callable[P, Call[T]],
) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]:
    async def method(self: AsyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(build(*args, **kwargs))

    functools.update_wrapper(method, build)
    method.__qualname__ = f"AsyncClient.{build.__name__}"
    method.__signature__ = method_signature(build)  # type: ignore[attr-defined]
    return method


class _Connection:
    def __init__(self, stream: anyio.abc.SocketStream, max_reply_bytes: int) -> None:
        self.stream = stream
        self.frames = Frames(max_reply_bytes)
        self.pending: list[Reply] = []

    @classmethod
    async def open(cls, path: Path, max_reply_bytes: int) -> _Connection:
        try:
            stream = await anyio.connect_unix(path)
        except (FileNotFoundError, ConnectionRefusedError):
            raise DaemonNotRunning(
                f"soupd is not running (no daemon listens on {path}); start it with "
                "`soupd start`, or point the client at its socket (socket=... or $SOUPD_SOCKET)"
            ) from None
        except PermissionError:
            raise DaemonNotRunning(
                f"permission denied on {path}; run as the daemon's user (or a member of its group)"
            ) from None
        return cls(stream, max_reply_bytes)

    def readable(self) -> bool:
        """Bytes (or the end) wait to be read: a poll that never blocks."""
        raw = self.stream.extra(anyio.abc.SocketAttribute.raw_socket)
        readable, _, _ = select.select([raw], [], [], 0)
        return bool(readable)

    async def send(self, data: bytes) -> None:
        try:
            await self.stream.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise _Broken(str(exc) or type(exc).__name__) from None

    async def receive(self) -> Reply:
        while not self.pending:
            self.pending.extend(await self.read())
        return self.pending.pop(0)

    async def read(self) -> list[Reply]:
        """The replies the next chunk completes (maybe none). Cancelled, it takes no
        bytes: nothing is lost for the next reader."""
        try:
            chunk = await self.stream.receive(1 << 16)
        except anyio.EndOfStream:
            raise _Broken("the daemon closed the connection") from None
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise _Broken(str(exc) or type(exc).__name__) from None
        return self.frames.feed(chunk)

    async def aclose(self) -> None:
        with anyio.move_on_after(_CLOSE_WITHIN, shield=True):
            await self.stream.aclose()


class _Waiter:
    __slots__ = ("failure", "reply")

    def __init__(self) -> None:
        self.reply: Reply | None = None
        self.failure: BaseException | None = None


class _Pipeline:
    """One connection shared by concurrent calls.

    Whoever waits reads: a caller takes the read lock, reads one chunk, hands out every
    reply in it (to callers still waiting; the others' are dropped) and lets the lock
    go, so the next caller in line finds its reply there or reads in turn. Invariant:
    once ``broken`` is set no request is sent on it; the calls still waiting learn it
    from the reader that met the break (or, for a cut-off request, get their replies).
    """

    def __init__(self, connection: _Connection) -> None:
        self.connection = connection
        self.waiting: dict[int, _Waiter] = {}
        self._send_lock = anyio.Lock()
        self._read_lock = anyio.Lock()
        self.broken: BaseException | None = None
        # Replaced by a new connection: closed by the last call still waiting on it.
        self.retired = False

    async def usable(self) -> bool:
        """Whether a request may be sent on it. With no call waiting, what arrived
        meanwhile is read first: replies to calls that gave up (dropped), or the
        daemon's reason for closing and the end (then it is not usable)."""
        if not self.waiting:
            while self.broken is None and self.connection.readable():
                async with self._read_lock:
                    await self._read()  # readable: returns without waiting
        return self.broken is None

    async def call(self, request_id: int, frame: bytes) -> Reply:
        if self.broken is not None:
            raise _Broken(str(self.broken))
        waiter = self.waiting[request_id] = _Waiter()
        try:
            async with self._send_lock:
                try:
                    await self.connection.send(frame)
                except _Broken as exc:
                    self._fail(exc)
                    raise
                except BaseException:
                    # Cancelled while writing: part of the frame may be out, and the next
                    # request would be read as its continuation.
                    self.broken = _Broken("a request was cut off while being sent")
                    raise
            while waiter.reply is None and waiter.failure is None:
                async with self._read_lock:
                    if waiter.reply is None and waiter.failure is None:
                        await self._read()
        finally:
            del self.waiting[request_id]
            if self.retired and not self.waiting:
                await self.connection.aclose()
        if waiter.failure is not None:
            raise waiter.failure
        assert waiter.reply is not None
        return waiter.reply

    async def _read(self) -> None:
        try:
            replies = await self.connection.read()
        except (_Broken, SoupdError) as exc:
            # The end, or bytes that are no reply (or one over max_reply_bytes): what
            # follows on this connection cannot be trusted, for any call waiting.
            self._fail(exc)
            return
        for reply in replies:
            if reply.id is None and reply.error is not None:
                # The daemon ends the connection with its reason (a [socket] limit).
                failure = reply.failure()
                assert failure is not None
                self._fail(failure)
                continue
            waiter = self.waiting.get(reply.id) if isinstance(reply.id, int) else None
            if waiter is not None:
                waiter.reply = reply

    def _fail(self, failure: BaseException) -> None:
        self.broken = failure
        for waiter in self.waiting.values():
            if waiter.reply is None:
                waiter.failure = failure


class AsyncClient:
    """An async client of the daemon's socket; arguments as for :class:`soupd.Client`.

    ``async with AsyncClient() as c: await c.push("default", "text", sender="ana")``
    """

    def __init__(
        self,
        socket: str | os.PathLike[str] | None = None,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        self.path = find_socket(socket)
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes
        self._pipeline: _Pipeline | None = None
        self._ids = itertools.count(1)
        # Held while a connection is made, so that tasks calling at once share one.
        self._connecting = anyio.Lock()
        # How often a connection was replaced (the daemon restarted, or one broke).
        self.reconnects = 0

    async def __aenter__(self) -> AsyncClient:
        with anyio.fail_after(self.timeout):
            await self._connected()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection (calls still waiting on it fail with ConnectionLost)."""
        pipeline, self._pipeline = self._pipeline, None
        if pipeline is not None:
            await pipeline.connection.aclose()

    def statistics(self) -> ClientStatistics:
        """Requests out on the connection now, and connections replaced so far."""
        pipeline = self._pipeline
        in_flight = len(pipeline.waiting) if pipeline is not None else 0
        return ClientStatistics(in_flight=in_flight, reconnects=self.reconnects)

    async def _connected(self) -> _Pipeline:
        async with self._connecting:
            pipeline = self._pipeline
            if pipeline is not None and not await pipeline.usable():
                await self._retire(pipeline)
                self.reconnects += 1
                pipeline = None
            if pipeline is None:
                connection = await _Connection.open(self.path, self.max_reply_bytes)
                pipeline = self._pipeline = _Pipeline(connection)
            return pipeline

    async def _retire(self, pipeline: _Pipeline) -> None:
        """Stop using ``pipeline`` for new calls; close it once no call waits on it."""
        if self._pipeline is pipeline:
            self._pipeline = None
        pipeline.retired = True
        if not pipeline.waiting:
            await pipeline.connection.aclose()

    async def _run(self, call: Call[T]) -> T:
        timeout = self.timeout if call.timeout is None else call.timeout
        deadline = math.inf if timeout is None else anyio.current_time() + timeout
        for attempt in (1, 2):
            request_id = next(self._ids)
            frame = encode_request(request_id, call.method, call.params)
            pipeline = None
            try:
                with anyio.fail_after(max(0.0, deadline - anyio.current_time())):
                    pipeline = await self._connected()
                    reply = await pipeline.call(request_id, frame)
            except _Broken as exc:
                if pipeline is not None:
                    await self._retire(pipeline)
                if call.retry and attempt == 1:
                    self.reconnects += 1
                    continue
                raise ConnectionLost(
                    f"the connection to soupd broke before {call.method} was answered "
                    f"({exc}); it may or may not have been carried out"
                ) from None
            except SoupdError:
                # The daemon closed the connection with its reason (or none was made).
                if pipeline is not None:
                    await self._retire(pipeline)
                raise
            except TimeoutError:
                raise ClientTimeout(
                    f"no reply to {call.method} within {timeout} s; the daemon may still "
                    "carry it out (pass a larger timeout=, or check `soupd status`)"
                ) from None
            failure = reply.failure()
            if failure is not None:
                raise failure
            return call.decode(reply.result)
        raise AssertionError("unreachable")  # pragma: no cover

    def subscribe(
        self,
        souls: list[str] | None = None,
        kinds: list[str] | None = None,
        *,
        buffer: int = 256,
        timeout: float | None = None,
    ) -> AsyncSubscription:
        """As :meth:`soupd.Client.subscribe`: ``async with c.subscribe() as sub:`` then
        ``async for output in sub``."""
        params = subscribe_params(souls, kinds, buffer)
        return AsyncSubscription(self.path, params, timeout, self.max_reply_bytes)

    # The same timeout= as every method's: it bounds each request, not the whole import.
    async def import_events(
        self,
        soul: str,
        events: Iterable[Mapping[str, Any]],
        *,
        timeout: float | None = None,  # noqa: ASYNC109
    ) -> ImportResult:
        """Store many events (each a mapping of :meth:`push`'s fields, ``text`` required)
        in requests of at most 2000 events and 512 KiB; the result sums them, each
        rejection naming the event's position in ``events``. ``timeout`` bounds each
        request."""
        plan = ImportPlan(soul, events, timeout)
        return plan.merge([await self._run(call) for call in plan.calls])

    push = _method(calls.push)
    recall = _method(calls.recall)
    context = _method(calls.context)
    why = _method(calls.why)
    forget = _method(calls.forget)
    list_memories = _method(calls.list_memories)
    get_memory = _method(calls.get_memory)
    update_memory = _method(calls.update_memory)
    delete_memory = _method(calls.delete_memory)
    claims = _method(calls.claims)
    add_claim = _method(calls.add_claim)
    correct_claim = _method(calls.correct_claim)
    retract_claim = _method(calls.retract_claim)
    goals = _method(calls.goals)
    add_goal = _method(calls.add_goal)
    update_goal = _method(calls.update_goal)
    persons = _method(calls.persons)
    link_person = _method(calls.link_person)
    remind = _method(calls.remind)
    tasks = _method(calls.tasks)
    souls = _method(calls.souls)
    create_soul = _method(calls.create_soul)
    delete_soul = _method(calls.delete_soul)


class AsyncSubscription:
    """Outputs as they come: ``async for`` it inside ``async with``."""

    def __init__(
        self, path: Path, params: dict[str, Any], timeout: float | None, max_reply_bytes: int
    ) -> None:
        self._path, self._params, self._timeout = path, params, timeout
        self._max = max_reply_bytes
        self._connection: _Connection | None = None

    async def __aenter__(self) -> AsyncSubscription:
        try:
            with anyio.fail_after(self._timeout):
                connection = self._connection = await _Connection.open(self._path, self._max)
                await connection.send(encode_request(1, "subscribe", self._params))
                reply = await connection.receive()
        except _Broken as exc:
            await self.aclose()
            raise ConnectionLost(
                f"the connection broke before subscribe was confirmed: {exc}"
            ) from None
        except SoupdError:
            await self.aclose()
            raise
        except TimeoutError:
            await self.aclose()
            raise ClientTimeout(f"subscribe not confirmed within {self._timeout} s") from None
        except BaseException:
            await self.aclose()
            raise
        failure = reply.failure()
        if failure is not None:
            await self.aclose()
            raise failure
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.aclose()

    def __aiter__(self) -> AsyncSubscription:
        return self

    async def __anext__(self) -> Output:
        connection = self._connection
        if connection is None:
            raise SoupdError(
                "use the subscription inside `async with client.subscribe(...) as sub:`"
            )
        while True:
            try:
                with anyio.fail_after(self._timeout):
                    reply = await connection.receive()
            except TimeoutError:
                raise ClientTimeout(f"no output within {self._timeout} s") from None
            except _Broken as exc:
                await self.aclose()
                raise ConnectionLost(f"the subscription's connection ended: {exc}") from None
            failure = reply.failure()
            if failure is not None:
                await self.aclose()
                raise failure
            if reply.output:
                return decode_output(reply.output)

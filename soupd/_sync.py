"""The blocking client: one Unix socket connection, one call at a time.

Calls are serialised on the connection (a lock, so threads may share a client), each
bounded by its ``timeout``. A connection found closed before a request is sent (the
daemon restarted, or closed an idle connection) is replaced first, whatever the call;
one that breaks after the request went out is replaced and the request sent once
more only when the call is safe to repeat (see :mod:`soupd._calls`).
"""

from __future__ import annotations

import functools
import itertools
import os
import select
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

from soupd._calls import Call, calls, method_signature, subscribe_params
from soupd._errors import ClientTimeout, ConnectionLost, DaemonNotRunning, SoupdError
from soupd._imports import ImportPlan
from soupd._paths import find_socket
from soupd._types import ImportResult, Output
from soupd._wire import MAX_REPLY_BYTES, Frames, Reply, decode_output, encode_request

__all__ = ["Client", "ClientStatistics", "Subscription"]

P = ParamSpec("P")
T = TypeVar("T")
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class ClientStatistics:
    # Requests sent on the connection and not answered yet.
    in_flight: int
    # Connections replaced (the daemon restarted, or one broke under a call).
    reconnects: int


class _Broken(Exception):
    """The connection ended or failed under a call."""


def _method(build: Callable[P, Call[T]]) -> Callable[Concatenate[Client, P], T]:
    def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(build(*args, **kwargs))

    functools.update_wrapper(method, build)
    method.__qualname__ = f"Client.{build.__name__}"
    method.__signature__ = method_signature(build)  # type: ignore[attr-defined]
    return method


class _Connection:
    """One blocking socket and what has arrived on it."""

    def __init__(self, path: Path, timeout: float | None, max_reply_bytes: int) -> None:
        self.sock = _connect(path, timeout)
        self.frames = Frames(max_reply_bytes)
        self.pending: list[Reply] = []

    def stale(self) -> bool:
        """Something (an end, or a frame nobody asked for) is waiting to be read while
        no request is out: the daemon closed or is closing the connection."""
        readable, _, _ = select.select([self.sock], [], [], 0)
        return bool(readable or self.pending)

    def send(self, data: bytes, deadline: float | None) -> None:
        self.sock.settimeout(_left(deadline))
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise _Broken(str(exc)) from None

    def receive(self, deadline: float | None) -> Reply:
        while not self.pending:
            self.sock.settimeout(_left(deadline))
            try:
                chunk = self.sock.recv(1 << 16)
            except ConnectionResetError as exc:
                raise _Broken(str(exc)) from None
            if not chunk:
                raise _Broken("the daemon closed the connection")
            self.pending.extend(self.frames.feed(chunk))
        return self.pending.pop(0)

    def close(self) -> None:
        self.sock.close()


def _connect(path: Path, timeout: float | None) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(os.fspath(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        raise DaemonNotRunning(
            f"soupd is not running (no daemon listens on {path}); start it with "
            "`soupd start`, or point the client at its socket (socket=... or $SOUPD_SOCKET)"
        ) from None
    except PermissionError:
        sock.close()
        raise DaemonNotRunning(
            f"permission denied on {path}; run as the daemon's user (or a member of its group)"
        ) from None
    except BaseException:
        sock.close()
        raise
    return sock


def _left(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


class Client:
    """A blocking client of the daemon's socket.

    ``socket``: the socket path (default: found as the CLI finds it, ``$SOUPD_SOCKET``
    first). ``timeout``: seconds each call may take unless it says otherwise (None:
    wait as long as it takes). Use as a context manager, or call :meth:`close`.
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
        self._connection: _Connection | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        # How often a connection was replaced (the daemon restarted, or one broke).
        self.reconnects = 0
        self._in_flight = 0

    def __enter__(self) -> Client:
        with self._lock:
            self._connected(self.timeout)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._drop()

    def statistics(self) -> ClientStatistics:
        """Requests out on the connection now, and connections replaced so far."""
        return ClientStatistics(in_flight=self._in_flight, reconnects=self.reconnects)

    def _drop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _connected(self, timeout: float | None) -> _Connection:
        if self._connection is not None and self._connection.stale():
            self._drop()
            self.reconnects += 1
        if self._connection is None:
            self._connection = _Connection(self.path, timeout, self.max_reply_bytes)
        return self._connection

    def _run(self, call: Call[T]) -> T:
        timeout = self.timeout if call.timeout is None else call.timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            for attempt in (1, 2):
                request_id = next(self._ids)
                frame = encode_request(request_id, call.method, call.params)
                self._in_flight = 1
                try:
                    connection = self._connected(_left(deadline))
                    connection.send(frame, deadline)
                    reply = self._reply(connection, request_id, deadline)
                except _Broken as exc:
                    self._drop()
                    if call.retry and attempt == 1:
                        self.reconnects += 1
                        continue
                    raise ConnectionLost(
                        f"the connection to soupd broke before {call.method} was answered "
                        f"({exc}); it may or may not have been carried out"
                    ) from None
                except TimeoutError:
                    self._drop()
                    raise ClientTimeout(
                        f"no reply to {call.method} within {timeout} s; the daemon may still "
                        "carry it out (pass a larger timeout=, or check `soupd status`)"
                    ) from None
                except BaseException:
                    self._drop()
                    raise
                finally:
                    self._in_flight = 0
                failure = reply.failure()
                if failure is not None:
                    raise failure
                return call.decode(reply.result)
        raise AssertionError("unreachable")  # pragma: no cover

    def _reply(self, connection: _Connection, request_id: int, deadline: float | None) -> Reply:
        while True:
            reply = connection.receive(deadline)
            if reply.id == request_id:
                return reply
            if reply.id is None and reply.error is not None:
                # The daemon ends the connection with its reason (a [socket] limit).
                self._drop()
                failure = reply.failure()
                assert failure is not None
                raise failure

    def subscribe(
        self,
        souls: list[str] | None = None,
        kinds: list[str] | None = None,
        *,
        buffer: int = 256,
        timeout: float | None = None,
    ) -> Subscription:
        """The daemon's outputs of ``souls`` (all when None) of ``kinds`` (all when
        None), on a connection of their own. Use as a context manager: entering it
        returns once the daemon has confirmed, so nothing published after is missed.
        ``timeout`` bounds the confirmation and each wait for an output (None: forever)."""
        params = subscribe_params(souls, kinds, buffer)
        return Subscription(self.path, params, timeout, self.max_reply_bytes)

    def import_events(
        self, soul: str, events: Iterable[Mapping[str, Any]], *, timeout: float | None = None
    ) -> ImportResult:
        """Store many events (each a mapping of :meth:`push`'s fields, ``text`` required)
        in requests of at most 2000 events and 512 KiB; the result sums them, each
        rejection naming the event's position in ``events``. ``timeout`` bounds each
        request."""
        plan = ImportPlan(soul, events, timeout)
        return plan.merge([self._run(call) for call in plan.calls])

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


class Subscription:
    """Outputs as they come: iterate it (blocking) inside ``with``."""

    def __init__(
        self, path: Path, params: dict[str, Any], timeout: float | None, max_reply_bytes: int
    ) -> None:
        self._path, self._params, self._timeout = path, params, timeout
        self._max = max_reply_bytes
        self._connection: _Connection | None = None

    def __enter__(self) -> Subscription:
        connection = _Connection(self._path, self._timeout, self._max)
        self._connection = connection
        try:
            deadline = None if self._timeout is None else time.monotonic() + self._timeout
            connection.send(encode_request(1, "subscribe", self._params), deadline)
            reply = connection.receive(deadline)
        except TimeoutError:
            self.close()
            raise ClientTimeout(f"subscribe not confirmed within {self._timeout} s") from None
        except _Broken as exc:
            self.close()
            raise ConnectionLost(
                f"the connection broke before subscribe was confirmed: {exc}"
            ) from None
        except BaseException:
            self.close()
            raise
        failure = reply.failure()
        if failure is not None:
            self.close()
            raise failure
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __iter__(self) -> Iterator[Output]:
        return self

    def __next__(self) -> Output:
        connection = self._connection
        if connection is None:
            raise SoupdError("use the subscription inside `with client.subscribe(...) as sub:`")
        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        while True:
            try:
                reply = connection.receive(deadline)
            except TimeoutError:
                raise ClientTimeout(f"no output within {self._timeout} s") from None
            except _Broken as exc:
                self.close()
                raise ConnectionLost(f"the subscription's connection ended: {exc}") from None
            failure = reply.failure()
            if failure is not None:
                self.close()
                raise failure
            if reply.output:
                return decode_output(reply.output)

"""The socket client: what the CLI (and any Python caller) uses to talk to the daemon.

``Client.connect(path)`` is an async context manager owning one connection and the
task that reads replies; ``call`` may be used by many tasks at once (requests are
pipelined and matched to replies by id).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from channels.protocol import encode_request
from supervisor.errors import ClientError, DaemonNotRunning, RemoteError

__all__ = ["Client"]


class _Reply(msgspec.Struct):
    id: int | str | None = None
    result: Any = None
    error: dict[str, str] | None = None
    output: dict[str, Any] | None = None


_decoder = msgspec.json.Decoder(_Reply)


class Client:
    def __init__(self, stream: anyio.abc.ByteStream, path: Path) -> None:
        self._stream = stream
        self.path = path
        self._ids = itertools.count(1)
        self._waiting: dict[int, tuple[anyio.Event, list[_Reply]]] = {}
        self._closed: ClientError | None = None
        self._send_lock = anyio.Lock()
        # Streams opened by ``subscribe``: request id -> where its outputs go.
        self._streams: dict[int, MemoryObjectSendStream[dict[str, Any]]] = {}

    @classmethod
    @asynccontextmanager
    async def connect(cls, path: Path) -> AsyncIterator[Client]:
        try:
            stream = await anyio.connect_unix(path)
        except (FileNotFoundError, ConnectionRefusedError):
            raise DaemonNotRunning(
                f"soupd is not running (no daemon listens on {path}); start it with "
                "`soupd start`, or point at its socket with --socket / $SOUPD_SOCKET"
            ) from None
        except PermissionError:
            raise DaemonNotRunning(
                f"permission denied on {path}; run as the daemon's user (or a member of its group)"
            ) from None
        client = cls(stream, path)
        # The caller's error is re-raised after the task group, unwrapped, so callers
        # catch SoupdError rather than an ExceptionGroup around it.
        failure: Exception | None = None
        async with stream, anyio.create_task_group() as tg:
            tg.start_soon(client._read_loop)
            try:
                yield client
            except Exception as exc:  # noqa: BLE001 - re-raised below, unwrapped
                failure = exc
            finally:
                tg.cancel_scope.cancel()
        if failure is not None:
            raise failure

    async def call(self, method: str, params: Any = None) -> Any:
        """Send one request and return its result; raises RemoteError on an error reply."""
        return await self._call_with_id(next(self._ids), method, params)

    async def _call_with_id(self, request_id: int, method: str, params: Any) -> Any:
        if self._closed is not None:
            raise self._closed
        event = anyio.Event()
        slot: list[_Reply] = []
        self._waiting[request_id] = (event, slot)
        try:
            try:
                async with self._send_lock:
                    await self._stream.send(encode_request(request_id, method, params or {}))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the daemon closed the connection: the read loop learns why
            await event.wait()
        finally:
            self._waiting.pop(request_id, None)
        if not slot:
            raise self._closed or ClientError("connection closed before the reply arrived")
        reply = slot[0]
        if reply.error is not None:
            raise RemoteError(reply.error.get("code", "error"), reply.error.get("message", ""))
        return reply.result

    @asynccontextmanager
    async def subscribe(
        self, souls: list[str] | None = None, kinds: list[str] | None = None, buffer: int = 256
    ) -> AsyncIterator[MemoryObjectReceiveStream[dict[str, Any]]]:
        """Stream the daemon's outputs (``{"soul", "kind", "ts", "payload"}``)."""
        request_id = next(self._ids)
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](buffer)
        self._streams[request_id] = send
        try:
            await self._call_with_id(
                request_id,
                "subscribe",
                {"souls": souls or [], "kinds": kinds or [], "buffer": buffer},
            )
            with receive:
                yield receive
        finally:
            self._streams.pop(request_id, None)
            send.close()

    async def _read_loop(self) -> None:
        buffer = b""
        try:
            while True:
                try:
                    chunk = await self._stream.receive(1 << 16)
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    break
                buffer += chunk
                *frames, buffer = buffer.split(b"\n")
                for frame in frames:
                    self._deliver(_decoder.decode(frame))
        finally:
            # The daemon's own reason (too_many_connections, idle_timeout, ...) wins
            # over the bare fact that the connection ended.
            if not isinstance(self._closed, RemoteError):
                self._closed = ClientError(
                    "the daemon closed the connection; check `soupd status` and the daemon log"
                )
            for event, _slot in self._waiting.values():
                event.set()
            for stream in self._streams.values():
                stream.close()

    def _deliver(self, reply: _Reply) -> None:
        if reply.id is None:
            # A reply to no request: the daemon refused the connection or a frame.
            if reply.error is not None:
                self._closed = RemoteError(reply.error["code"], reply.error["message"])
            return
        if reply.output is not None:
            stream = self._streams.get(reply.id)  # type: ignore[arg-type]
            if stream is not None:
                # A reader that keeps up never loses anything: the daemon buffers
                # for us; only a full local buffer drops (and the daemon reports its own).
                with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError):
                    stream.send_nowait(reply.output)
            return
        waiting = self._waiting.get(reply.id)  # type: ignore[arg-type]
        if waiting is not None:
            event, slot = waiting
            slot.append(reply)
            event.set()

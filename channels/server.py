"""The Unix-socket server: frames in, replies out, many requests in flight.

Invariants:

* Each connection has at most ``max_in_flight`` requests between "frame read" and
  "reply written"; the reader waits for a slot, so a slow client or a full mailbox
  slows its own connection down and memory stays bounded.
* Every frame gets exactly one reply, even a frame that could not be decoded (id
  null) or one over the size cap (the rest of that line is skipped, the connection
  goes on).
* On shutdown the server stops accepting and reading first, then lets the requests
  already read finish (within its shutdown budget) before closing connections.
* A peer whose uid is neither ours, root's, nor explicitly allowed is refused.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import msgspec
import structlog
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from channels.methods import Methods
from channels.protocol import (
    decode_params,
    decode_request,
    encode_error,
    encode_output,
    encode_result,
)
from souls.actor.mailbox import CallbackReply
from supervisor.errors import (
    AlreadyRunning,
    FrameTooLarge,
    PeerRefused,
    SoulUnavailable,
    SoupdError,
    UnknownSoul,
)
from supervisor.outputs import Outputs
from supervisor.tree import shielded_cleanup

__all__ = ["Server", "ServerConfig", "prepare_socket_path"]

_log = structlog.get_logger("soupd.socket")


@dataclass(frozen=True, slots=True)
class ServerConfig:
    path: Path
    # A listening socket handed over by systemd (socket activation): used instead of
    # binding ``path``, and left in place at exit (systemd owns it).
    inherited: socket.socket | None = None
    mode: int = 0o600
    allow_uids: tuple[int, ...] = ()
    max_frame_bytes: int = 1 << 20
    max_in_flight: int = 512


@dataclass(slots=True)
class ServerStatistics:
    connections: int = 0
    connections_total: int = 0
    requests: int = 0
    errors: int = 0
    refused_peers: int = 0


class SubscribeParams(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    # Only outputs of these souls (all when empty).
    souls: list[str] = []
    # Only outputs of these kinds: wakeup, internal_signal, reflect, spark... (all when empty).
    kinds: list[str] = []
    # Outputs held for this subscriber while it is slow; beyond, they are dropped and
    # counted (an "overflow" output says how many).
    buffer: int = 256

    def __post_init__(self) -> None:
        if not 1 <= self.buffer <= 65536:
            raise ValueError("buffer must be between 1 and 65536")


class Server:
    def __init__(self, config: ServerConfig, methods: Methods, outputs: Outputs) -> None:
        self.config = config
        self.methods = methods
        self.outputs = outputs
        self.stats = ServerStatistics()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Listen until cancelled; ``started()`` once the socket accepts connections."""
        path = self.config.path
        if self.config.inherited is not None:
            listener = await anyio.abc.SocketListener.from_socket(self.config.inherited)
            identity = None
            _log.info("socket.activated", fd=self.config.inherited.fileno())
        else:
            await prepare_socket_path(path)
            listener = await anyio.create_unix_listener(path, mode=self.config.mode)
            identity = os.stat(path)
        try:
            async with listener, anyio.create_task_group() as tg:
                _log.info("socket.listening", path=str(path), mode=oct(self.config.mode))
                task_status.started()
                await listener.serve(self._connection, task_group=tg)
        finally:
            if identity is not None:
                _unlink_if_ours(path, identity)

    async def _connection(self, stream: anyio.abc.SocketStream) -> None:
        pid, uid, _gid = _peer_credentials(stream)
        structlog.contextvars.bind_contextvars(peer_uid=uid, peer_pid=pid)
        async with stream:
            if not self._allowed(uid):
                self.stats.refused_peers += 1
                _log.warning("socket.peer_refused", peer_uid=uid, peer_pid=pid)
                refusal = PeerRefused(
                    f"uid {uid} may not use this soupd socket; run as the daemon's user or add "
                    "the uid to [socket] allow_uids in soupd.toml"
                )
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await stream.send(encode_error(None, refusal))
                return
            self.stats.connections += 1
            self.stats.connections_total += 1
            try:
                await _Connection(self, stream).serve()
            finally:
                self.stats.connections -= 1

    def _allowed(self, uid: int) -> bool:
        return uid in (os.getuid(), 0) or uid in self.config.allow_uids


class _Connection:
    def __init__(self, server: Server, stream: anyio.abc.SocketStream) -> None:
        self._server = server
        self._stream = stream
        limit = server.config.max_in_flight
        self._limit = limit
        # Capacity equals the slot count: a reply is queued only by a request holding a
        # slot, and the slot is freed only once its reply is written, so this never fills.
        send: MemoryObjectSendStream[bytes]
        receive: MemoryObjectReceiveStream[bytes]
        send, receive = anyio.create_memory_object_stream(limit)
        self._outbox_send = send
        self._outbox_receive = receive
        self._in_flight = 0
        self._idle = anyio.Event()
        self._idle.set()
        self._slot_freed = anyio.Event()

    async def serve(self) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._write_loop)
            async with anyio.create_task_group() as streams:
                self._streams = streams
                try:
                    await self._read_loop()
                finally:
                    streams.cancel_scope.cancel()
                    with shielded_cleanup():
                        await self._idle.wait()
                    self._outbox_send.close()

    async def _read_loop(self) -> None:
        max_frame = self._server.config.max_frame_bytes
        buffer = bytearray()
        skipping = False  # inside an oversized frame: drop bytes up to its newline
        while True:
            try:
                chunk = await self._stream.receive(65536)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                break
            start = 0
            while True:
                newline = chunk.find(b"\n", start)
                if newline < 0:
                    if not skipping:
                        buffer += chunk[start:]
                        if len(buffer) > max_frame:
                            buffer.clear()
                            skipping = True
                            await self._oversized(max_frame)
                    break
                if skipping:
                    skipping = False
                elif buffer:
                    buffer += chunk[start:newline]
                    if len(buffer) > max_frame:
                        await self._oversized(max_frame)
                    else:
                        await self._frame(bytes(buffer))
                    buffer.clear()
                elif newline - start > max_frame:
                    await self._oversized(max_frame)
                else:
                    await self._frame(chunk[start:newline])
                start = newline + 1
        if buffer.strip() and not skipping:
            await self._frame(bytes(buffer))

    async def _oversized(self, max_frame: int) -> None:
        await self._begin()
        self._reply(None)(
            None,
            FrameTooLarge(
                f"frame exceeds {max_frame} bytes; split the request (e.g. import in "
                "smaller batches) — the rest of that line was skipped"
            ),
        )

    async def _frame(self, frame: bytes) -> None:
        if not frame.strip():
            return
        await self._begin()
        self._server.stats.requests += 1
        try:
            request = decode_request(frame)
        except SoupdError as error:
            self._reply(None)(None, error)
            return
        except Exception:  # noqa: BLE001 - see below
            # The slot taken above must get its reply (the connection waits for it to
            # close), and an error escaping here would end every connection with the
            # listener's task group.
            _log.exception("socket.decode_failed", frame_bytes=len(frame))
            self._reply(None)(
                None,
                SoupdError(
                    "internal error reading this frame; the daemon log has the details "
                    "(please report it)"
                ),
            )
            return
        reply = CallbackReply(self._reply(request.id))
        try:
            if request.method == "subscribe":
                await self._subscribe(request.id, request.params, reply)
                return
            await self._server.methods.dispatch(request.method, request.params, reply)
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

    async def _subscribe(self, request_id: Any, raw: msgspec.Raw, reply: CallbackReply) -> None:
        """Start streaming outputs on this connection, tagged with the request's id."""
        params = decode_params("subscribe", raw, SubscribeParams)
        unknown = [name for name in params.souls if not self._server.methods.has_soul(name)]
        if unknown:
            raise UnknownSoul(unknown[0])
        await self._streams.start(self._forward, request_id, params)
        reply.resolve({"subscribed": True, "souls": params.souls, "kinds": params.kinds})

    async def _forward(
        self,
        request_id: Any,
        params: SubscribeParams,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        subscribe = self._server.outputs.subscribe
        with subscribe(frozenset(params.souls), frozenset(params.kinds), params.buffer) as sub:
            task_status.started()
            while True:
                output = await sub.receive()
                await self._begin()
                self._outbox_send.send_nowait(encode_output(request_id, output))

    async def _begin(self) -> None:
        """Take an in-flight slot, waiting while all are taken.

        A hand-rolled counter rather than a Semaphore: the common case (a free slot)
        must not cost an event-loop checkpoint per frame.
        """
        while self._in_flight >= self._limit:
            self._slot_freed = anyio.Event()
            await self._slot_freed.wait()
        self._in_flight += 1
        if self._in_flight == 1:
            self._idle = anyio.Event()

    def _reply(self, request_id: Any) -> Any:
        def deliver(value: Any, error: SoupdError | None) -> None:
            if error is not None:
                self._server.stats.errors += 1
                frame = encode_error(request_id, error)
            else:
                frame = encode_result(request_id, value)
            self._outbox_send.send_nowait(frame)

        return deliver

    async def _write_loop(self) -> None:
        # Shielded: replies keep flowing while the reader is being cancelled; the loop
        # ends when the outbox is closed and empty, or the peer went away.
        with anyio.CancelScope(shield=True):
            receive = self._outbox_receive
            while True:
                try:
                    frames = [await receive.receive()]
                except anyio.EndOfStream:
                    return
                while True:
                    try:
                        frames.append(receive.receive_nowait())
                    except (anyio.WouldBlock, anyio.EndOfStream):
                        break
                try:
                    await self._stream.send(b"".join(frames))
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass  # peer gone: keep consuming so slots are freed
                finally:
                    self._settle(len(frames))

    def _settle(self, count: int) -> None:
        self._in_flight -= count
        self._slot_freed.set()
        if self._in_flight == 0:
            self._idle.set()


def _peer_credentials(stream: anyio.abc.SocketStream) -> tuple[int, int, int]:
    sock: socket.socket = stream.extra(anyio.abc.SocketAttribute.raw_socket)
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", creds)
    return pid, uid, gid


async def prepare_socket_path(path: Path) -> None:
    """Remove a socket file left by a dead daemon; refuse to touch a live one."""
    await anyio.Path(path.parent).mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        info = await anyio.Path(path).lstat()
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(info.st_mode):
        raise AlreadyRunning(
            f"{path} exists and is not a socket; remove it or choose another path with --socket"
        )
    try:
        stream = await anyio.connect_unix(path)
    except OSError:
        await anyio.Path(path).unlink()  # nobody listens: a stale socket from a dead daemon
        return
    await stream.aclose()
    raise AlreadyRunning(
        f"another soupd is already listening on {path}; stop it first (soupd status tells "
        "which) or start this one with --socket PATH"
    )


def _unlink_if_ours(path: Path, identity: os.stat_result) -> None:
    """Unlink the socket only if it is still the file we bound (not a newer daemon's)."""
    try:
        current = os.lstat(path)
    except FileNotFoundError:
        return
    if (current.st_ino, current.st_dev) == (identity.st_ino, identity.st_dev):
        os.unlink(path)

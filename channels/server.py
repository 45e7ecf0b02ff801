"""The Unix-socket server: the listening socket and the connections it admits.

Invariants:

* At most ``max_connections`` connections are served at once, and never more than
  three quarters of the daemon's open-file limit (the rest is for soul databases);
  one more gets a ``too_many_connections`` error frame and is closed, at once, without
  a task.
* Running out of file descriptors (EMFILE, ENFILE) never ends the server: it refuses
  the waiting connections through a descriptor it keeps in reserve, backs off, and
  keeps serving the connections it has.
* A peer whose uid is neither ours, root's, nor explicitly allowed, and who is not in the
  socket's group when its mode lets a group in (0660), is refused; the refusal names the rule.
* An error in one connection ends that connection only (and is logged).

What happens on a connection is :mod:`channels.connection`.
"""

from __future__ import annotations

import contextlib
import errno
import grp
import os
import resource
import socket
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.abc
import structlog

from channels.connection import Connection
from channels.limits import LimitReports, ServerStatistics, SocketLimits
from channels.methods import Methods
from channels.outbox import Budget
from channels.protocol import encode_error
from supervisor.errors import AlreadyRunning, PeerRefused, SoupdError, TooManyConnections
from supervisor.outputs import Outputs

__all__ = ["Server", "ServerConfig", "ServerStatistics", "prepare_socket_path"]

_log = structlog.get_logger("soupd.socket")

# accept() errors that mean "no descriptor (or memory) for one more connection now".
_EXHAUSTED = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_BACKOFF_FIRST = 0.01
_BACKOFF_MOST = 1.0
# Connections accepted in a row before the listener yields to the connections it serves:
# each new one costs its first turn of the event loop, so a burst must stay short.
_ACCEPT_BATCH = 16


@dataclass(frozen=True, slots=True)
class ServerConfig:
    path: Path
    # The [socket] limits (``supervisor.config.SocketConfig``).
    limits: SocketLimits
    # A listening socket handed over by systemd (socket activation): used instead of
    # binding ``path``, and left in place at exit (systemd owns it).
    inherited: socket.socket | None = None
    mode: int = 0o600
    allow_uids: tuple[int, ...] = ()


class Server:
    def __init__(self, config: ServerConfig, methods: Methods, outputs: Outputs) -> None:
        self.config = config
        self.methods = methods
        self.outputs = outputs
        self.stats = ServerStatistics()
        self.budget = Budget(config.limits.max_buffered_total)
        self.partial = Budget(config.limits.max_partial_total)
        # Accepted and not yet closed, refused peers included.
        self._open = 0
        self._reports = LimitReports()
        # The group whose members may connect (the socket file's, when its mode lets a
        # group in); set once listening.
        self._group: int | None = None

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Listen until cancelled; ``started()`` once the socket accepts connections."""
        path = self.config.path
        if self.config.inherited is not None:
            listener = await anyio.abc.SocketListener.from_socket(self.config.inherited)
            identity = None
            _log.info("socket.activated", fd=self.config.inherited.fileno())
            self._group = _socket_group(self.config.inherited.getsockname())
        else:
            await prepare_socket_path(path)
            listener = await anyio.create_unix_listener(path, mode=self.config.mode)
            identity = os.stat(path)
            self._group = _socket_group(str(path))
        cap, open_files = connection_cap(self.config.limits.max_connections)
        try:
            async with listener, anyio.create_task_group() as tg:
                _log.info(
                    "socket.listening",
                    path=str(path),
                    mode=oct(self.config.mode),
                    max_connections=cap,
                    open_files=open_files,
                )
                task_status.started()
                raw: socket.socket = listener.extra(anyio.abc.SocketAttribute.raw_socket)
                await self._accept_loop(raw, tg, cap)
        finally:
            if identity is not None:
                _unlink_if_ours(path, identity)

    async def _accept_loop(
        self, listening: socket.socket, tg: anyio.abc.TaskGroup, cap: int
    ) -> None:
        listening.setblocking(False)
        spare = _Spare()
        backoff = 0.0
        try:
            while True:
                await anyio.wait_readable(listening)
                for _ in range(_ACCEPT_BATCH):
                    try:
                        client, _address = listening.accept()
                    except (BlockingIOError, InterruptedError):
                        break
                    except OSError as exc:
                        if exc.errno not in _EXHAUSTED:
                            raise
                        backoff = min(max(2 * backoff, _BACKOFF_FIRST), _BACKOFF_MOST)
                        open_files = _open_file_limit()
                        refused = spare.refuse_waiting(listening, _out_of_files(open_files))
                        self.stats.refused_connections += refused
                        self._reports.note(
                            "socket.descriptors_exhausted",
                            refused=refused,
                            error=errno.errorcode.get(exc.errno or 0, str(exc.errno)),
                            open=self._open,
                            open_files=open_files,
                            backoff_s=backoff,
                        )
                        await anyio.sleep(backoff)
                        break
                    backoff = 0.0
                    if self._open >= cap:
                        self.stats.refused_connections += 1
                        _refuse(client, _too_many(cap, self.config.limits.max_connections))
                        self._reports.note("socket.connection_refused", open=self._open)
                        continue
                    self._open += 1
                    tg.start_soon(self._connection, client)
        finally:
            spare.close()

    async def _connection(self, client: socket.socket) -> None:
        try:
            stream = await anyio.abc.UNIXSocketStream.from_socket(client)
            async with stream:
                await self._serve(stream, client)
        except Exception:  # noqa: BLE001 - one connection's failure must not end the others
            _log.exception("socket.connection_failed")
        finally:
            client.close()
            self._open -= 1

    async def _serve(self, stream: anyio.abc.SocketStream, raw: socket.socket) -> None:
        pid, uid, gid = _peer_credentials(raw)
        structlog.contextvars.bind_contextvars(peer_uid=uid, peer_pid=pid)
        if not self._allowed(uid, gid, raw):
            self.stats.refused_peers += 1
            _log.warning("socket.peer_refused", peer_uid=uid, peer_pid=pid, rule=self._rule())
            refusal = PeerRefused(
                f"uid {uid} may not use this soupd socket: {self._rule()} may; run as one "
                "of them, or add the uid to [socket] allow_uids in soupd.toml"
            )
            with contextlib.suppress(
                anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream
            ):
                await stream.send(encode_error(None, refusal))
                # Read what the peer sent first (a moment at most): closing over unread
                # bytes resets the connection, and the peer may lose the refusal.
                with anyio.move_on_after(0.5):
                    await stream.receive(1 << 16)
            return
        self.stats.connections += 1
        self.stats.connections_total += 1
        try:
            connection = Connection(
                stream,
                raw,
                limits=self.config.limits,
                methods=self.methods,
                outputs=self.outputs,
                budget=self.budget,
                partial=self.partial,
                stats=self.stats,
                reports=self._reports,
            )
            await connection.serve()
        finally:
            self.stats.connections -= 1

    def _allowed(self, uid: int, gid: int, raw: socket.socket) -> bool:
        """The daemon's own uid, root, ``allow_uids``; and, when the socket's mode lets
        its group in (0660, a system install), the members of the socket's group
        (DESIGN §2), by the peer's groups as the kernel has them."""
        if uid in (os.getuid(), 0) or uid in self.config.allow_uids:
            return True
        if self._group is None:
            return False
        return gid == self._group or self._group in _peer_groups(raw)

    def _rule(self) -> str:
        """Who may connect, in words (for the refusal)."""
        who = [f"the daemon's user (uid {os.getuid()})", "root"]
        if self._group is not None:
            who.append(f"members of the socket's group {_group_name(self._group)}")
        if self.config.allow_uids:
            who.append(f"the allow_uids {list(self.config.allow_uids)}")
        return ", ".join(who[:-1]) + " and " + who[-1]


def connection_cap(configured: int) -> tuple[int, int | None]:
    """The connections to serve at once, and the open-file limit (None: unlimited)."""
    soft = _open_file_limit()
    if soft is None:
        return configured, None
    return max(1, min(configured, soft * 3 // 4)), soft


def _open_file_limit() -> int | None:
    """The soft RLIMIT_NOFILE of the daemon now (None: unlimited)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def _too_many(cap: int, configured: int) -> TooManyConnections:
    why = (
        f"[socket] max_connections = {cap}"
        if cap == configured
        else f"{cap}, three quarters of its open-file limit; raise LimitNOFILE"
    )
    return TooManyConnections(
        f"soupd already serves as many connections as it may ({why}); close idle "
        "connections or raise the limit, then connect again"
    )


def _out_of_files(open_files: int | None) -> TooManyConnections:
    limit = f" (open-file limit {open_files})" if open_files is not None else ""
    return TooManyConnections(
        f"soupd has run out of file descriptors{limit}; connect again shortly, close "
        "idle connections, or raise the daemon's LimitNOFILE"
    )


def _refuse(client: socket.socket, error: SoupdError) -> None:
    """Send ``error`` and close ``client`` without waiting: a refusal costs no task."""
    try:
        client.setblocking(False)
        with contextlib.suppress(OSError):
            client.send(encode_error(None, error))
        # Read what the peer already sent, so that closing does not reset the
        # connection before it reads the error.
        with contextlib.suppress(OSError):
            client.recv(1 << 16)
    finally:
        client.close()


class _Spare:
    """One descriptor held in reserve, given up for a moment at EMFILE so that waiting
    connections can be accepted, told why, and closed (instead of hanging)."""

    def __init__(self) -> None:
        self._fd = self._reserve()

    @staticmethod
    def _reserve() -> int | None:
        try:
            return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None

    def refuse_waiting(self, listening: socket.socket, error: SoupdError) -> int:
        """Refuse up to a batch of waiting connections; returns how many."""
        if self._fd is None:
            self._fd = self._reserve()
            return 0
        os.close(self._fd)
        self._fd = None
        refused = 0
        try:
            while refused < _ACCEPT_BATCH:
                try:
                    client, _address = listening.accept()
                except OSError:
                    break
                _refuse(client, error)
                refused += 1
        finally:
            self._fd = self._reserve()
        return refused

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _socket_group(path: str | bytes) -> int | None:
    """The group a socket file lets in (rw for its group), or None when it lets in no
    group (0600) or the path cannot be read (an abstract socket)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_gid if info.st_mode & 0o060 == 0o060 else None


# Linux's SO_PEERGROUPS (since 4.13): the peer's supplementary groups at connect time.
_SO_PEERGROUPS = getattr(socket, "SO_PEERGROUPS", 59)
_MOST_GROUPS = 256


def _peer_groups(sock: socket.socket) -> set[int]:
    size = struct.calcsize("I")
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, _SO_PEERGROUPS, size * _MOST_GROUPS)
    except OSError:
        return set()  # an older kernel: the primary group is all that is known
    return set(struct.unpack(f"{len(raw) // size}I", raw[: len(raw) // size * size]))


def _group_name(gid: int) -> str:
    try:
        return f"{grp.getgrgid(gid).gr_name!r} (gid {gid})"
    except KeyError:
        return f"gid {gid}"


def _peer_credentials(sock: socket.socket) -> tuple[int, int, int]:
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

"""Reading a connection's socket with one wake-up per arrival of bytes.

anyio's UNIX stream, for each receive that has to wait, registers the descriptor with
the selector and removes it again, raises and catches ``BlockingIOError`` and adds a
checkpoint: about 60 us a wait, paid in full by a peer that trickles its frame a byte
at a time. ``bench/abuse.py``'s slow-loris (some 500 such connections, a byte each a
quarter second) stalled the event loop ~35 ms per round. :class:`SocketReader` keeps
the descriptor watched while a receive waits and hands the bytes to the waiting task
from the selector's callback: one ``recv`` and one task step per arrival.

Invariants:

* Bytes are taken from the kernel only for a receive that waits for them: when the
  descriptor turns readable with nobody waiting, watching stops until the next receive
  (a peer that outpaces its reader is held back by the kernel's buffer, as before).
* :meth:`close` stops watching; it is called before the socket is closed, whose number
  the next connection may get.
* A chunk received for a receive that was cancelled in the same moment is kept for the
  next receive, never dropped.
"""

from __future__ import annotations

import asyncio
import math
import socket

import anyio

__all__ = ["SocketReader"]


class SocketReader:
    __slots__ = (
        "_deadline",
        "_early",
        "_fd",
        "_loop",
        "_max",
        "_sock",
        "_timer",
        "_waiter",
        "_watching",
    )

    def __init__(self, sock: socket.socket, max_bytes: int) -> None:
        self._sock = sock
        self._fd = sock.fileno()
        self._max = max_bytes
        self._loop = asyncio.get_running_loop()
        self._waiter: asyncio.Future[bytes] | None = None
        self._watching = False
        self._early: bytes | None = None
        self._deadline = math.inf
        self._timer: asyncio.TimerHandle | None = None

    async def receive(self, deadline: float = math.inf) -> bytes:
        """The next bytes (at most ``max_bytes``). Raises ``TimeoutError`` when none came
        by ``deadline`` (the loop's clock, ``anyio.current_time()``; movable while
        waiting, see :attr:`deadline`), ``anyio.EndOfStream`` at the end of the stream,
        ``anyio.BrokenResourceError`` when the socket failed.

        The deadline is a timer of the loop's own, not a cancel scope: entering and
        leaving a scope with a deadline per receive cost more than the receive."""
        if self._early is not None:
            early, self._early = self._early, None
            return early
        waiter: asyncio.Future[bytes] = self._loop.create_future()
        self._waiter = waiter
        if not self._watching:
            self._loop.add_reader(self._fd, self._readable)
            self._watching = True
        self.deadline = deadline
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                self._early = waiter.result()
            raise
        finally:
            self._waiter = None
            self.deadline = math.inf
            # The future keeps the exception it raised, whose traceback keeps this
            # frame: without this, each closed connection would wait in a reference
            # cycle (with its unfinished frame's bytes) for the cyclic collector.
            del waiter

    @property
    def deadline(self) -> float:
        """When the waiting receive gives up (inf: never)."""
        return self._deadline

    @deadline.setter
    def deadline(self, deadline: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._deadline = deadline
        if deadline != math.inf and self._waiter is not None:
            self._timer = self._loop.call_at(deadline, self._expired)

    def _expired(self) -> None:
        self._timer = None
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(TimeoutError())

    def close(self) -> None:
        """Stop watching the descriptor (before the socket is closed)."""
        self._unwatch()
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(anyio.ClosedResourceError())

    def _unwatch(self) -> None:
        if self._watching:
            self._watching = False
            self._loop.remove_reader(self._fd)

    def _readable(self) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            self._unwatch()
            return
        try:
            data = self._sock.recv(self._max)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._unwatch()
            error = anyio.BrokenResourceError(f"reading the socket failed: {exc}")
            error.__cause__ = exc
            waiter.set_exception(error)
            return
        if data:
            waiter.set_result(data)
        else:
            self._unwatch()
            waiter.set_exception(anyio.EndOfStream())

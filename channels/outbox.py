"""Reply frames waiting to be written to one connection, bounded by bytes.

Invariants:

* :class:`Budget` counts every byte the socket server holds for its peers — replies
  not yet handed to the kernel and frames half received — across all connections;
  :meth:`Outbox.admits` refuses a large result when either the connection's bytes or
  the budget would go over its limit. A result alone on its connection may exceed the
  connection's limit (one export page can be bigger than it), never the budget.
* Frames up to :data:`SMALL_FRAME` bytes are always admitted: an acknowledgement or an
  error must never be lost for want of room, and there are at most ``max_in_flight``
  of them per connection, so they stay bounded by count.
* A frame leaves the outbox in pieces of at most ``piece`` bytes, so the writer holds
  no more than one piece outside the count, and a stalled peer is noticed piece by
  piece, not after a whole large frame.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import anyio

__all__ = ["SMALL_FRAME", "Budget", "Outbox", "Piece"]

# Acknowledgements and errors are a few hundred bytes; results this small always fit.
SMALL_FRAME = 4096


class Budget:
    """Bytes held for peers by the whole server; waiters wake when bytes are released."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self._released = anyio.Event()
        # The one holder of bytes that may go on past the limit (see Connection._blocked):
        # some begun frame must always be able to reach its newline, or frames that fill
        # the budget between them would wait for each other until they all time out.
        self.exempt: object | None = None

    @property
    def full(self) -> bool:
        return self.used >= self.limit

    def take(self, size: int) -> None:
        self.used += size

    def release(self, size: int) -> None:
        self.used -= size
        self._released.set()

    async def wait_for_release(self) -> None:
        """Return after the next release (at once if one came since the last wait)."""
        if self._released.is_set():
            self._released = anyio.Event()
            return
        await self._released.wait()

    async def wait_for_room(self) -> None:
        """Return once the budget is below its limit (at once if it is)."""
        while self.full:
            if self._released.is_set():
                self._released = anyio.Event()
            await self._released.wait()


@dataclass(frozen=True, slots=True)
class Piece:
    """Bytes for one write, and how many frames it completes."""

    data: bytes
    frames: int


class Outbox:
    """FIFO of encoded frames for one connection; the connection's writer drains it."""

    def __init__(self, limit: int, budget: Budget, piece: int = 256 << 10) -> None:
        self.limit = limit
        self._budget = budget
        self._piece = piece
        self._frames: deque[bytes] = deque()
        self._offset = 0  # bytes of the first frame already handed out
        self.bytes = 0
        # Made only when someone waits (the writer for frames, a reader for room).
        self._ready: anyio.Event | None = None
        self._changed: anyio.Event | None = None
        self._closed = False

    @property
    def full(self) -> bool:
        """At or over the connection's limit: its reader should stop reading."""
        return self.bytes >= self.limit

    def admits(self, size: int) -> bool:
        """Whether a result frame of ``size`` bytes may be queued (see the invariants)."""
        if size <= SMALL_FRAME:
            return True
        if self.bytes and self.bytes + size > self.limit:
            return False
        return self._budget.used + size <= self._budget.limit

    def put(self, frame: bytes) -> None:
        """Queue ``frame`` (callers check :meth:`admits` for results first)."""
        if self._closed:
            raise anyio.ClosedResourceError
        self._frames.append(frame)
        self.bytes += len(frame)
        self._budget.take(len(frame))
        if self._ready is not None:
            self._ready.set()

    async def take(self) -> Piece:
        """The next piece to write; raises ``anyio.EndOfStream`` once closed and empty.

        Several small frames are joined into one piece; a frame bigger than a piece is
        handed out in slices, and counts as done with its last slice.
        """
        while not self._frames:
            if self._closed:
                raise anyio.EndOfStream
            self._ready = anyio.Event()
            await self._ready.wait()
        head = self._frames[0]
        if len(head) - self._offset > self._piece:
            data = head[self._offset : self._offset + self._piece]
            self._offset += self._piece
            self._hand_out(len(data))
            return Piece(data, 0)
        parts = [head[self._offset :] if self._offset else head]
        size = len(parts[0])
        self._frames.popleft()
        self._offset = 0
        while self._frames and size + len(self._frames[0]) <= self._piece:
            frame = self._frames.popleft()
            parts.append(frame)
            size += len(frame)
        self._hand_out(size)
        return Piece(parts[0] if len(parts) == 1 else b"".join(parts), len(parts))

    def _hand_out(self, size: int) -> None:
        self.bytes -= size
        self._budget.release(size)
        if self._changed is not None:
            self._changed.set()

    async def wait_until_not_full(self) -> None:
        while self.full:
            if self._changed is None or self._changed.is_set():
                self._changed = anyio.Event()
            await self._changed.wait()

    def drop(self) -> int:
        """Discard every queued frame (the peer is gone); returns how many."""
        dropped = len(self._frames)
        self._budget.release(self.bytes)
        self._frames.clear()
        self._offset = 0
        self.bytes = 0
        if self._changed is not None:
            self._changed.set()
        return dropped

    def close(self) -> None:
        """No more frames; :meth:`take` ends once the queued ones are out."""
        self._closed = True
        if self._ready is not None:
            self._ready.set()

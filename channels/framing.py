"""Cutting a byte stream into newline-terminated frames, with a size cap.

:class:`FrameSplitter` is plain data: chunks in, frames out, no I/O and no clock. A
frame over the cap is reported once, as ``None`` in place of its bytes, and the rest of
its line is skipped without being kept, so a peer can never make the splitter hold more
than ``max_frame`` bytes plus one chunk.
"""

from __future__ import annotations

__all__ = ["FrameSplitter"]

_SMALL = 4096  # pieces shorter than this are gathered ...
_GATHERED = 65536  # ... into runs of about this many bytes


class FrameSplitter:
    def __init__(self, max_frame: int) -> None:
        self.max_frame = max_frame
        # The begun frame's pieces, joined once at its newline: growing one buffer
        # instead re-copies it (``bytearray +=`` grows by an eighth: ~5 ms for a 1 MiB
        # frame in 64 KiB chunks), and a buffer that doubles costs fresh pages at every
        # step. Small pieces gather in ``_tail`` first, so that a frame sent a byte at
        # a time costs a byte a byte, not a bytes object a byte.
        self._parts: list[bytes] = []
        self._tail = bytearray()
        self._held = 0
        # Inside an oversized frame: dropping bytes up to its newline.
        self._skipping = False
        self._fresh = False

    @property
    def begun(self) -> bool:
        """Part of a frame has arrived but not its newline."""
        return self._skipping or self._held > 0

    @property
    def fresh(self) -> bool:
        """The frame begun (see :attr:`begun`) started in the last chunk fed."""
        return self._fresh

    @property
    def held(self) -> int:
        """Bytes of the begun frame kept in memory."""
        return self._held

    def feed(self, chunk: bytes) -> list[bytes | None]:
        """The frames ``chunk`` completes, in order, without their newlines; ``None``
        stands for a frame over the cap. Blank lines are left out."""
        frames: list[bytes | None] = []
        max_frame = self.max_frame
        start = 0
        fresh = not self.begun
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                if not self._skipping and start < len(chunk):
                    self._keep(chunk[start:])
                    if self._held > max_frame:
                        self._drop()
                        self._skipping = True
                        frames.append(None)
                break
            fresh = True
            if self._skipping:
                self._skipping = False
            elif self._held:
                if self._held + newline - start > max_frame:
                    frames.append(None)
                else:
                    self._keep(chunk[start:newline])
                    frame = self._joined()
                    if not frame.isspace():
                        frames.append(frame)
                self._drop()
            elif newline - start > max_frame:
                frames.append(None)
            elif newline > start and not (frame := chunk[start:newline]).isspace():
                frames.append(frame)
            start = newline + 1
        self._fresh = fresh and self.begun
        return frames

    def finish(self) -> bytes | None:
        """At end of stream: the unterminated last frame, if one was (wholly) kept."""
        tail = self._joined() if self._held and not self._skipping else None
        self._drop()
        self._skipping = False
        return tail if tail and not tail.isspace() else None

    def _keep(self, piece: bytes) -> None:
        tail = self._tail
        if len(piece) < _SMALL:
            tail += piece
            if len(tail) >= _GATHERED:
                self._parts.append(bytes(tail))
                tail.clear()
        else:
            if tail:
                self._parts.append(bytes(tail))
                tail.clear()
            self._parts.append(piece)
        self._held += len(piece)

    def _joined(self) -> bytes:
        return b"".join([*self._parts, self._tail])

    def _drop(self) -> None:
        self._parts.clear()
        self._tail.clear()
        self._held = 0

"""Cutting a byte stream into newline-terminated frames, with a size cap.

:class:`FrameSplitter` is plain data: chunks in, frames out, no I/O and no clock. A
frame over the cap is reported once, as ``None`` in place of its bytes, and the rest of
its line is skipped without being kept, so a peer can never make the splitter hold more
than ``max_frame`` bytes plus one chunk.
"""

from __future__ import annotations

__all__ = ["FrameSplitter"]


class FrameSplitter:
    def __init__(self, max_frame: int) -> None:
        self.max_frame = max_frame
        self._buffer = bytearray()
        # Inside an oversized frame: dropping bytes up to its newline.
        self._skipping = False
        self._fresh = False

    @property
    def begun(self) -> bool:
        """Part of a frame has arrived but not its newline."""
        return self._skipping or bool(self._buffer)

    @property
    def fresh(self) -> bool:
        """The frame begun (see :attr:`begun`) started in the last chunk fed."""
        return self._fresh

    @property
    def held(self) -> int:
        """Bytes of the begun frame kept in memory."""
        return len(self._buffer)

    def feed(self, chunk: bytes) -> list[bytes | None]:
        """The frames ``chunk`` completes, in order, without their newlines; ``None``
        stands for a frame over the cap. Blank lines are left out."""
        frames: list[bytes | None] = []
        buffer, max_frame = self._buffer, self.max_frame
        start = 0
        fresh = not self.begun
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                if not self._skipping and start < len(chunk):
                    buffer += chunk[start:]
                    if len(buffer) > max_frame:
                        buffer.clear()
                        self._skipping = True
                        frames.append(None)
                break
            fresh = True
            if self._skipping:
                self._skipping = False
            elif buffer:
                buffer += chunk[start:newline]
                if len(buffer) > max_frame:
                    frames.append(None)
                elif not buffer.isspace():
                    frames.append(bytes(buffer))
                buffer.clear()
            elif newline - start > max_frame:
                frames.append(None)
            elif newline > start and not (frame := chunk[start:newline]).isspace():
                frames.append(frame)
            start = newline + 1
        self._fresh = fresh and self.begun
        return frames

    def finish(self) -> bytes | None:
        """At end of stream: the unterminated last frame, if one was (wholly) kept."""
        kept = self._buffer and not self._buffer.isspace() and not self._skipping
        tail = bytes(self._buffer) if kept else None
        self._buffer.clear()
        self._skipping = False
        return tail

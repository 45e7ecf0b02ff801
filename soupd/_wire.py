"""The socket protocol as the client speaks it: newline-delimited JSON frames.

Request ``{"id": 1, "method": "recall", "params": {...}}``; reply ``{"id": 1,
"result": ...}`` or ``{"id": 1, "error": {"code": ..., "message": ...}}``; a
subscription's outputs come as ``{"id": <its request>, "output": {...}}``; an error
with ``"id": null`` is the daemon refusing or closing the connection.

The client keeps its own few lines of codec rather than importing the daemon's
(``channels.protocol`` raises the daemon's exception tree and sits in a package that
pulls in the whole runtime): :class:`Frames` is plain data, bytes in and replies out,
shared by the blocking and the async client.
"""

from __future__ import annotations

from typing import Any

import msgspec

from soupd._errors import SoupdError, from_wire
from soupd._types import Output

__all__ = ["MAX_REPLY_BYTES", "Frames", "Reply", "decode_output", "encode_request"]

# A reply larger than this is refused rather than held (an export page, the largest
# reply, stays far below it).
MAX_REPLY_BYTES = 64 << 20

_encoder = msgspec.json.Encoder()


class _ErrorBody(msgspec.Struct, frozen=True):
    code: str = "error"
    message: str = ""


class Reply(msgspec.Struct, frozen=True):
    id: int | str | None = None
    # Left raw: the call that asked decodes it into its own type.
    result: msgspec.Raw = msgspec.Raw()
    error: _ErrorBody | None = None
    output: msgspec.Raw = msgspec.Raw()

    def failure(self) -> SoupdError | None:
        if self.error is None:
            return None
        return from_wire(self.error.code, self.error.message)


_decoder = msgspec.json.Decoder(Reply)
_output_decoder = msgspec.json.Decoder(Output)


def decode_output(raw: msgspec.Raw) -> Output:
    return _output_decoder.decode(raw)


def encode_request(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    return _encoder.encode({"id": request_id, "method": method, "params": params}) + b"\n"


class Frames:
    """Bytes in, decoded replies out; a reply over ``max_bytes`` raises SoupdError."""

    def __init__(self, max_bytes: int = MAX_REPLY_BYTES) -> None:
        self.max_bytes = max_bytes
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[Reply]:
        self._buffer += chunk
        if b"\n" not in chunk:
            if len(self._buffer) > self.max_bytes:
                self._buffer.clear()
                raise SoupdError(
                    f"a reply is larger than {self.max_bytes} bytes; pass a larger "
                    "max_reply_bytes to the client, or ask for less (k, limit)"
                )
            return []
        *lines, rest = self._buffer.split(b"\n")
        self._buffer = bytearray(rest)
        replies = []
        for line in lines:
            if line.strip():
                try:
                    replies.append(_decoder.decode(line))
                except msgspec.DecodeError as exc:
                    raise SoupdError(
                        f"the daemon sent a frame that is not a reply ({exc}); is {line[:40]!r} "
                        "from soupd?"
                    ) from None
        return replies

"""The wire: newline-delimited JSON frames on a stream Unix socket.

Request  ``{"id": 1, "method": "event.push", "params": {...}}``
Reply    ``{"id": 1, "result": ...}`` or ``{"id": 1, "error": {"code": "...", "message": "..."}}``

Replies carry the id of their request and may come back in any order; a frame that
could not be read at all is answered with ``"id": null``. This module only encodes and
decodes frames; it knows nothing of souls or sockets.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from supervisor.errors import InvalidParams, MalformedFrame, SoupdError

__all__ = [
    "MAX_FRAME_BYTES",
    "ErrorBody",
    "Request",
    "RequestId",
    "decode_params",
    "decode_request",
    "encode_error",
    "encode_output",
    "encode_request",
    "encode_result",
]

MAX_FRAME_BYTES = 1 << 20

RequestId = int | str | None
T = TypeVar("T")


class Request(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    method: str
    id: RequestId = None
    params: msgspec.Raw = msgspec.Raw(b"{}")


class ErrorBody(msgspec.Struct, frozen=True):
    code: str
    message: str


class _Result(msgspec.Struct, frozen=True):
    id: RequestId
    result: Any


class _Output(msgspec.Struct, frozen=True):
    id: RequestId
    output: Any


class _Error(msgspec.Struct, frozen=True):
    id: RequestId
    error: ErrorBody


_request_decoder = msgspec.json.Decoder(Request)
_encoder = msgspec.json.Encoder()


def decode_request(frame: bytes) -> Request:
    """Decode one frame (without its newline). Raises MalformedFrame.

    The whole frame must be UTF-8: ``params`` is kept raw until its method decodes
    it, so it is checked here, once, rather than left to each method.
    """
    if not frame.isascii():
        try:
            frame.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedFrame(
                f"frame is not valid UTF-8 (byte {exc.start}); send UTF-8 JSON, one object a line"
            ) from None
    try:
        return _request_decoder.decode(frame)
    except msgspec.ValidationError as exc:
        raise MalformedFrame(
            f"frame is not a request object ({_describe(exc)}); send "
            '{"id": 1, "method": "...", "params": {...}} on one line'
        ) from None
    except msgspec.DecodeError as exc:
        raise MalformedFrame(
            f"frame is not valid UTF-8 JSON ({exc}); send one JSON object per line"
        ) from None
    except RecursionError:
        # msgspec recurses per nesting level, even to skip over ``params``.
        raise MalformedFrame(f"frame is {_TOO_DEEP}") from None


# No request needs more than a few levels; JSON nested deeper than the decoder can
# follow is refused like any other unreadable input.
_TOO_DEEP = "nested too deeply (hundreds of levels of JSON arrays or objects); flatten it"

_param_decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {}


def decode_params(method: str, raw: msgspec.Raw, kind: type[T]) -> T:
    """Decode a request's params as ``kind``. Raises InvalidParams naming the key."""
    decoder = _param_decoders.get(kind)
    if decoder is None:
        decoder = _param_decoders[kind] = msgspec.json.Decoder(kind)
    try:
        return decoder.decode(raw)  # type: ignore[no-any-return]
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise InvalidParams(
            f"invalid params for {method}: {_describe(exc)}; see the protocol section of the README"
        ) from None
    except RecursionError:
        raise InvalidParams(f"invalid params for {method}: params are {_TOO_DEEP}") from None


def encode_request(id: RequestId, method: str, params: Any) -> bytes:
    return _encoder.encode({"id": id, "method": method, "params": params}) + b"\n"


def encode_result(id: RequestId, result: Any) -> bytes:
    return _encoder.encode(_Result(id, result)) + b"\n"


def encode_output(id: RequestId, output: Any) -> bytes:
    """A streamed output for the subscription opened by request ``id``."""
    return _encoder.encode(_Output(id, output)) + b"\n"


def encode_error(id: RequestId, error: SoupdError) -> bytes:
    return _encoder.encode(_Error(id, ErrorBody(error.code, error.message))) + b"\n"


def _describe(exc: msgspec.MsgspecError) -> str:
    """msgspec's message with ``$.a.b`` turned into ``params.a.b``-style key paths."""
    text = str(exc)
    head, sep, path = text.partition(" - at `$")
    if not sep:
        return text[:1].lower() + text[1:]
    path = path.rstrip("`")
    key = path.lstrip(".")
    return f"{head[:1].lower()}{head[1:]} at `{key or '(top level)'}`"

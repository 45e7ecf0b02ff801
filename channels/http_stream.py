"""``subscribe`` over HTTP: Server-Sent Events from the daemon's outputs hub.

Invariants:

* The subscription is open before the response's first byte (an event ``subscribed``),
  so what is published once a client has seen it reaches the client.
* Each stream has the subscription's own bounded buffer: a slow reader loses outputs,
  counted in an ``overflow`` output, never the daemon's memory.
* A stream ends when its client goes away or :meth:`EventStreams.close` is called (the
  daemon stopping): it never holds a stop up.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio
import msgspec
import structlog
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from channels.asgi import log_request
from channels.connection import SubscribeParams
from channels.http_errors import error_response, status_of
from channels.protocol import decode_params
from supervisor.errors import InvalidParams, SoupdError, UnknownSoul
from supervisor.outputs import Outputs

__all__ = ["EventStreams"]

_log = structlog.get_logger("soupd.http")

# Seconds between keep-alive comments on an idle event stream.
_HEARTBEAT = 15.0


class EventStreams:
    """The event-stream endpoints of one API server, and the streams open on them."""

    def __init__(
        self,
        outputs: Outputs,
        *,
        has_soul: Callable[[str], bool],
        authorize: Callable[[Scope], None],
    ) -> None:
        self.open = 0
        self._outputs = outputs
        self._has_soul = has_soul
        self._authorize = authorize
        self._closing = anyio.Event()

    def reopen(self) -> None:
        """Accept streams again (a server starting anew)."""
        self._closing = anyio.Event()

    def close(self) -> None:
        """End every open stream, and any opened from now on at once."""
        self._closing.set()

    def endpoint(self, route: str) -> ASGIApp:
        """The ASGI endpoint of ``route``: a raw one (an object, which Starlette does not
        wrap in a request/response), as the stream outlives any Response."""
        return _Endpoint(self, route)

    async def _stream(self, route: str, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        try:
            self._authorize(scope)
            params = self._params(scope)
        except SoupdError as error:
            await error_response(error)(scope, receive, send)
            log_request(_log, scope, route, status_of(error.code), started)
            return
        souls, kinds = frozenset(params.souls), frozenset(params.kinds)
        with self._outputs.subscribe(souls, kinds, params.buffer) as subscription:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream; charset=utf-8"),
                        (b"cache-control", b"no-cache"),
                        (b"x-accel-buffering", b"no"),
                    ],
                }
            )
            log_request(_log, scope, route, 200, started)
            hello = {"subscribed": True, "souls": params.souls, "kinds": params.kinds}
            await _event(send, "subscribed", msgspec.json.encode(hello))
            self.open += 1
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_until_disconnect, receive, tg.cancel_scope)
                    tg.start_soon(_until_set, self._closing, tg.cancel_scope)
                    while True:
                        with anyio.move_on_after(_HEARTBEAT):
                            output = await subscription.receive()
                            await _event(send, "output", msgspec.json.encode(output))
                            continue
                        await _chunk(send, b": ping\n\n")
            finally:
                self.open -= 1
        with anyio.CancelScope(shield=True):
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _params(self, scope: Scope) -> SubscribeParams:
        query = Request(scope).query_params
        given: dict[str, Any] = {}
        soul = scope.get("path_params", {}).get("soul")
        given["souls"] = [soul] if soul is not None else _split(query.get("souls"))
        given["kinds"] = _split(query.get("kinds"))
        if "buffer" in query:
            if not query["buffer"].isdigit():
                raise InvalidParams("invalid params for subscribe: buffer must be a number")
            given["buffer"] = int(query["buffer"])
        unknown = set(query) - {"souls", "kinds", "buffer"}
        if unknown:
            raise InvalidParams(
                f"invalid params for subscribe: unknown query parameter {sorted(unknown)[0]!r}; "
                "use souls, kinds, buffer"
            )
        raw = msgspec.Raw(msgspec.json.encode(given))
        params = decode_params("subscribe", raw, SubscribeParams)
        for name in params.souls:
            if not self._has_soul(name):
                raise UnknownSoul(name)
        return params


class _Endpoint:
    def __init__(self, streams: EventStreams, route: str) -> None:
        self._streams = streams
        self._route = route

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._streams._stream(self._route, scope, receive, send)


def _split(value: str | None) -> list[str]:
    return [part for part in (value or "").split(",") if part]


async def _event(send: Send, name: str, data: bytes) -> None:
    await _chunk(send, b"event: " + name.encode() + b"\ndata: " + data + b"\n\n")


async def _chunk(send: Send, data: bytes) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": True})


async def _until_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


async def _until_set(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()

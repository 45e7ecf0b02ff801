"""Fakes of the upstream APIs the channels speak, served for real on loopback.

Each fake is a real HTTP/1.1 server (h11 over anyio) or WebSocket server
(``websockets``) on 127.0.0.1, answering with the payload shapes of the public API
docs: Telegram's Bot API (``{"ok": …, "result": …}``, ``getUpdates`` with
``offset``/``timeout``), Slack's Web API and Socket Mode (``hello``, ``events_api``
envelopes, ``disconnect``), signal-cli's ``daemon --http`` (JSON-RPC on
``/api/v1/rpc``, SSE on ``/api/v1/events`` with ``id`` and ``Last-Event-ID`` replay).
They record what the channel did so tests can assert on it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc
import h11
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else {}


@dataclass
class Response:
    status: int = 200
    body: Any = None
    # A streamed body (text/event-stream): chunks until the iterator ends.
    stream: AsyncIterator[bytes] | None = None
    raw: bytes | None = None


Handler = Callable[[Request], Awaitable[Response]]


@asynccontextmanager
async def http_server(handler: Handler) -> AsyncIterator[str]:
    """Serve ``handler`` on 127.0.0.1; yields the base URL."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)

    async def connection(stream: anyio.abc.ByteStream) -> None:
        async with stream:
            conn = h11.Connection(h11.SERVER)
            while True:
                request = await _read(conn, stream)
                if request is None:
                    return
                response = await handler(request)
                await _respond(conn, stream, response)
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return
                conn.start_next_cycle()

    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, connection)
        yield f"http://127.0.0.1:{port}"
        tg.cancel_scope.cancel()


async def _read(conn: h11.Connection, stream: anyio.abc.ByteStream) -> Request | None:
    head: h11.Request | None = None
    body = b""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            try:
                conn.receive_data(await stream.receive())
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                conn.receive_data(b"")
            continue
        if isinstance(event, h11.ConnectionClosed):
            return None
        if isinstance(event, h11.Request):
            head = event
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            assert head is not None
            url = urlsplit(head.target.decode())
            headers = {k.decode().lower(): v.decode() for k, v in head.headers}
            return Request(head.method.decode(), url.path, parse_qs(url.query), headers, body)


async def _respond(conn: h11.Connection, stream: anyio.abc.ByteStream, r: Response) -> None:
    try:
        if r.stream is not None:
            headers = [("content-type", "text/event-stream"), ("transfer-encoding", "chunked")]
            await stream.send(conn.send(h11.Response(status_code=r.status, headers=headers)))
            async for chunk in r.stream:
                await stream.send(conn.send(h11.Data(data=chunk)))
            await stream.send(conn.send(h11.EndOfMessage()))
            return
        body = r.raw if r.raw is not None else json.dumps(r.body).encode()
        kind = "application/octet-stream" if r.raw is not None else "application/json"
        headers = [("content-type", kind), ("content-length", str(len(body)))]
        await stream.send(conn.send(h11.Response(status_code=r.status, headers=headers)))
        await stream.send(conn.send(h11.Data(data=body)))
        await stream.send(conn.send(h11.EndOfMessage()))
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, h11.LocalProtocolError):
        pass


class Feed:
    """Items appended by the test, awaited by a fake's long poll or stream."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._changed = anyio.Event()

    def add(self, item: Any) -> None:
        self.items.append(item)
        self._changed.set()
        self._changed = anyio.Event()

    async def wait(self, seconds: float) -> None:
        """Until an item is added, or ``seconds`` passed (a long poll's timeout)."""
        with anyio.move_on_after(seconds):
            await self._changed.wait()


# -- Telegram Bot API ---------------------------------------------------------------


@dataclass
class FakeTelegram:
    token: str
    bot: dict[str, Any] = field(
        default_factory=lambda: {
            "id": 4242,
            "is_bot": True,
            "first_name": "Ada",
            "username": "ada_bot",
        }
    )
    updates: Feed = field(default_factory=Feed)
    offsets: list[int | None] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    voice: bytes = b"OggS fake opus"
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def message(self, chat: dict[str, Any], text: str | None, **extra: Any) -> int:
        """Queue an update with a message; returns its update_id."""
        update_id = 1000 + next(self._ids)
        message = {
            "message_id": update_id - 900,
            "from": {"id": 7, "is_bot": False, "first_name": "Kim", "username": "kim"},
            "chat": chat,
            "date": 1_780_000_000,
            **({"text": text} if text is not None else {}),
            **extra,
        }
        self.updates.add({"update_id": update_id, "message": message})
        return update_id

    async def handle(self, r: Request) -> Response:
        prefix = f"/bot{self.token}/"
        if r.path.startswith(f"/file/bot{self.token}/"):
            return Response(raw=self.voice)
        if not r.path.startswith(prefix):
            return Response(401, {"ok": False, "error_code": 401, "description": "Unauthorized"})
        method, params = r.path.removeprefix(prefix), r.json()
        if method == "getMe":
            return _ok(self.bot)
        if method == "getUpdates":
            offset = params.get("offset")
            self.offsets.append(offset)
            # An offset confirms every update before it: they are never sent again.
            self.updates.items = [u for u in self.updates.items if u["update_id"] >= (offset or 0)]
            if not self.updates.items:
                await self.updates.wait(float(params.get("timeout", 0)))
            return _ok(list(self.updates.items))
        if method == "sendMessage":
            self.sent.append(params)
            return _ok({"message_id": 1, "chat": {"id": params["chat_id"]}, "text": params["text"]})
        if method == "getFile":
            return _ok({"file_id": params["file_id"], "file_path": "voice/file_1.oga"})
        return Response(404, {"ok": False, "error_code": 404, "description": "Not Found"})


def _ok(result: Any) -> Response:
    return Response(200, {"ok": True, "result": result})


@dataclass
class FakeTranscriber:
    """An OpenAI-compatible ``/v1/audio/transcriptions``."""

    text: str
    requests: list[Request] = field(default_factory=list)

    async def handle(self, r: Request) -> Response:
        self.requests.append(r)
        if not r.headers.get("content-type", "").startswith("multipart/form-data"):
            return Response(400, {"error": {"message": "expected multipart"}})
        return Response(200, {"text": self.text})


# -- Slack Web API + Socket Mode ----------------------------------------------------


@dataclass
class FakeSlack:
    app_token: str
    bot_token: str
    ws_url: str = ""
    envelopes: Feed = field(default_factory=Feed)
    acks: list[str] = field(default_factory=list)
    posted: list[dict[str, Any]] = field(default_factory=list)
    connections: int = 0
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def event(self, event: dict[str, Any]) -> str:
        """Queue an events_api envelope; returns its envelope_id."""
        envelope_id = f"env-{next(self._ids)}"
        payload = {
            "token": "verification",
            "team_id": "T1",
            "api_app_id": "A1",
            "event": event,
            "type": "event_callback",
            "event_id": f"Ev{envelope_id}",
            "event_time": 1_780_000_000,
        }
        self.envelopes.add(
            {
                "envelope_id": envelope_id,
                "payload": payload,
                "type": "events_api",
                "accepts_response_payload": False,
                "retry_attempt": 0,
                "retry_reason": "",
            }
        )
        return envelope_id

    def disconnect(self) -> None:
        self.envelopes.add({"type": "disconnect", "reason": "refresh_requested"})

    async def handle(self, r: Request) -> Response:
        auth = r.headers.get("authorization", "")
        method = r.path.strip("/")
        wanted = self.app_token if method == "apps.connections.open" else self.bot_token
        if auth != f"Bearer {wanted}":
            return Response(200, {"ok": False, "error": "invalid_auth"})
        if method == "auth.test":
            return Response(200, {"ok": True, "user_id": "UBOT", "bot_id": "B1", "team_id": "T1"})
        if method == "apps.connections.open":
            return Response(
                200, {"ok": True, "url": f"{self.ws_url}/link/?ticket={next(self._ids)}"}
            )
        if method == "chat.postMessage":
            self.posted.append(r.json())
            return Response(200, {"ok": True, "channel": r.json()["channel"], "ts": "1.000100"})
        return Response(200, {"ok": False, "error": "unknown_method"})

    async def socket(self, ws: ServerConnection) -> None:
        self.connections += 1
        await ws.send(
            json.dumps(
                {
                    "type": "hello",
                    "num_connections": 1,
                    "debug_info": {"host": "fake"},
                    "connection_info": {"app_id": "A1"},
                }
            )
        )
        sent = 0

        async def read_acks() -> None:
            with suppress(ConnectionClosed):
                async for raw in ws:
                    self.acks.append(json.loads(raw)["envelope_id"])
            tg.cancel_scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(read_acks)
            with suppress(ConnectionClosed):
                while True:
                    while sent < len(self.envelopes.items):
                        item = self.envelopes.items[sent]
                        sent += 1
                        await ws.send(json.dumps(item))
                        if item["type"] == "disconnect":
                            # Slack drops what this connection had sent; later ones go
                            # to the next connection.
                            del self.envelopes.items[:sent]
                            tg.cancel_scope.cancel()
                            return
                    await self.envelopes.wait(1.0)


@asynccontextmanager
async def slack_server(slack: FakeSlack) -> AsyncIterator[str]:
    """Both halves of the fake Slack; yields the Web API base URL."""
    async with serve(slack.socket, "127.0.0.1", 0) as ws_server:
        port = ws_server.sockets[0].getsockname()[1]
        slack.ws_url = f"ws://127.0.0.1:{port}"
        async with http_server(slack.handle) as url:
            yield url


# -- signal-cli daemon --http -------------------------------------------------------


@dataclass
class FakeSignal:
    account: str
    events: Feed = field(default_factory=Feed)
    last_event_ids: list[str | None] = field(default_factory=list)
    rpc: list[dict[str, Any]] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _drop: anyio.Event = field(default_factory=anyio.Event)

    def message(self, source: str, text: str, **data_message: Any) -> int:
        """Queue a receive event for a data message; returns its SSE id."""
        event_id = next(self._ids)
        timestamp = 1_780_000_000_000 + event_id
        envelope = {
            "source": source,
            "sourceNumber": source,
            "sourceUuid": f"uuid-{source}",
            "sourceName": "Kim",
            "sourceDevice": 1,
            "timestamp": timestamp,
            "dataMessage": {
                "timestamp": timestamp,
                "message": text,
                "expiresInSeconds": 0,
                "viewOnce": False,
                **data_message,
            },
        }
        self.events.add((event_id, {"envelope": envelope, "account": self.account}))
        return event_id

    def drop_streams(self) -> None:
        """End every open event stream (signal-cli restarting, a proxy timing out)."""
        self._drop.set()
        self._drop = anyio.Event()

    async def handle(self, r: Request) -> Response:
        if r.path == "/api/v1/rpc" and r.method == "POST":
            request = r.json()
            self.rpc.append(request)
            return Response(
                200, {"jsonrpc": "2.0", "result": {"timestamp": 1}, "id": request["id"]}
            )
        if r.path == "/api/v1/events":
            last = r.headers.get("last-event-id")
            self.last_event_ids.append(last)
            return Response(200, stream=self._stream(int(last) if last else 0))
        if r.path == "/api/v1/check":
            return Response(200, {})
        return Response(404, {})

    async def _stream(self, after: int) -> AsyncIterator[bytes]:
        drop = self._drop
        yield b": signal-cli fake\n\n"
        while not drop.is_set():
            for event_id, data in list(self.events.items):
                if event_id > after:
                    after = event_id
                    yield f"event:receive\nid:{event_id}\ndata:{json.dumps(data)}\n\n".encode()
            with anyio.move_on_after(1.0):
                async with anyio.create_task_group() as tg:

                    async def on_drop() -> None:
                        await drop.wait()
                        tg.cancel_scope.cancel()

                    tg.start_soon(on_drop)
                    await self.events.wait(1.0)
                    tg.cancel_scope.cancel()

"""The webhook channel: an HTTP listener (loopback by default) taking JSON events.

``POST`` any path with a JSON body. With a secret configured, the body must be signed
GitHub style (``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>``), compared
in constant time; a missing or wrong signature is 401 and nothing is stored. A
request with ``X-GitHub-Event`` is mapped by :mod:`channels.github` (``ping`` is
answered); any other body is one event object (``text``, optional ``kind``,
``sender``, ``group``, ``mentioned``, ``ref``, ``ts``, ``session``, and
``transcribed``: true for speech-to-text).

Responses: 200 once every soul acknowledged the event, with what each made of it
(``{"souls": {"ada": "stored"}}``: stored, duplicate, dropped, hygiene.<rule>); 202 for
a delivery that is no event; 400 malformed; 401 bad signature; 413 body over
``max_body``; 503 when a soul did not acknowledge (send it again).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import anyio
import anyio.abc
import h11
import msgspec

from channels.base import Channel, NotAcknowledged
from channels.config import WebhookConfig, read_secret
from channels.github import github_event
from souls.events import EventIn

__all__ = ["WebhookChannel"]

# A request (headers and body) must arrive within this many seconds.
_REQUEST_SECONDS = 30.0


class _Body(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    text: str
    kind: str = "webhook"
    sender: str | None = None
    group: str | None = None
    mentioned: bool = False
    ref: str | None = None
    ts: float | str | None = None
    session: str | None = None
    # Text transcribed from speech: stored as kind "voice".
    transcribed: bool = False


class _Reply(Exception):
    """Ends a request early with ``status`` and a JSON ``{"error": message}``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class WebhookChannel(Channel):
    kind = "webhook"
    config: WebhookConfig

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.address: str | None = None
        self.unauthorized = 0
        self._secret: bytes | None = None

    def details(self) -> dict[str, Any]:
        return {"address": self.address, "unauthorized": self.unauthorized}

    async def serve(self) -> None:
        c = self.config
        secret = None
        if c.secret_env is not None or c.secret_file is not None:
            secret = await read_secret(c.name, "secret", c.secret_env, c.secret_file)
        self._secret = secret.encode() if secret is not None else None
        listener = await anyio.create_tcp_listener(local_host=c.host, local_port=c.port)
        async with listener:
            port = listener.extra(anyio.abc.SocketAttribute.local_port)
            self.address = f"{c.host}:{port}"
            self.log.info(
                "webhook.listening", address=self.address, signed=self._secret is not None
            )
            if self._secret is None:
                self.log.warning(
                    "webhook.unauthenticated",
                    address=self.address,
                    problem="unsigned requests are accepted from anyone who can reach the port",
                    fix="set secret_env or secret_file",
                )
            self.up()
            await listener.serve(self._connection)

    async def _connection(self, stream: anyio.abc.ByteStream) -> None:
        async with stream:
            conn = h11.Connection(h11.SERVER)
            while True:
                outcome = await self._exchange(conn, stream)
                if outcome is None:
                    return  # the peer went away or was too slow
                status, answer = outcome
                body = json.dumps(answer).encode()
                headers = [("content-type", "application/json")]
                headers.append(("content-length", str(len(body))))
                if status == 503:
                    headers.append(("retry-after", "30"))
                try:
                    await _write(stream, conn, h11.Response(status_code=status, headers=headers))
                    await _write(stream, conn, h11.Data(data=body))
                    await _write(stream, conn, h11.EndOfMessage())
                except (h11.LocalProtocolError, anyio.BrokenResourceError):
                    return
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    return  # a body left unread (413) or the peer asked to close
                conn.start_next_cycle()

    async def _exchange(
        self, conn: h11.Connection, stream: anyio.abc.ByteStream
    ) -> tuple[int, dict[str, Any]] | None:
        """Read one request and handle it; None when there is nobody to answer."""
        try:
            with anyio.fail_after(_REQUEST_SECONDS):
                request = await _next(conn, stream)
                if isinstance(request, h11.ConnectionClosed):
                    return None
                assert isinstance(request, h11.Request)
                headers = {k.decode().lower(): v.decode("latin-1") for k, v in request.headers}
                body = await self._body(conn, stream, headers)
            return await self._handle(request.method, headers, body)
        except TimeoutError:
            return None
        except _Reply as reply:
            return reply.status, {"error": reply.message}
        except h11.RemoteProtocolError as exc:
            return exc.error_status_hint, {"error": f"bad HTTP request: {exc}"}

    async def _body(
        self, conn: h11.Connection, stream: anyio.abc.ByteStream, headers: dict[str, str]
    ) -> bytes:
        limit = self.config.max_body
        length = headers.get("content-length", "0")
        if not length.isdigit() or int(length) > limit:
            raise _Reply(413, f"body over {limit} bytes; send smaller events")
        chunks: list[bytes] = []
        size = 0
        while True:
            event = await _next(conn, stream)
            if isinstance(event, h11.EndOfMessage):
                return b"".join(chunks)
            if not isinstance(event, h11.Data):
                raise _Reply(400, "incomplete request body")
            size += len(event.data)
            if size > limit:
                raise _Reply(413, f"body over {limit} bytes; send smaller events")
            chunks.append(bytes(event.data))

    def _verify(self, headers: dict[str, str], body: bytes) -> None:
        if self._secret is None:
            return
        expected = "sha256=" + hmac.new(self._secret, body, hashlib.sha256).hexdigest()
        given = headers.get("x-hub-signature-256", "")
        if not hmac.compare_digest(expected.encode(), given.encode()):
            self.unauthorized += 1
            self.log.warning("webhook.bad_signature", signed=bool(given))
            raise _Reply(401, "missing or wrong X-Hub-Signature-256; sign with the secret")

    async def _handle(
        self, method: bytes, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, Any]]:
        if method != b"POST":
            raise _Reply(405, "POST a JSON event")
        self._verify(headers, body)
        try:
            payload = json.loads(body)
        except ValueError:
            raise _Reply(400, "the body is not JSON") from None
        github = headers.get("x-github-event")
        if github == "ping":
            return 200, {"pong": True}
        if github is not None:
            delivery = headers.get("x-github-delivery") or hashlib.sha256(body).hexdigest()[:32]
            try:
                event = github_event(self.name, github, delivery, payload)
            except (KeyError, TypeError) as exc:
                raise _Reply(400, f"a {github} payload without {exc}") from None
            if event is None:
                self.stats.skipped += 1
                return 202, {"status": "ignored", "event": github}
        else:
            event = self._event(payload, body)
        try:
            souls = await self.deliver(event)
        except NotAcknowledged as exc:
            raise _Reply(503, exc.message) from None
        return 200, {"status": "accepted", "ref": event.ref, "souls": souls}

    def _event(self, payload: Any, body: bytes) -> EventIn:
        try:
            given = msgspec.convert(payload, _Body)
        except msgspec.ValidationError as exc:
            raise _Reply(400, f"not an event object: {exc}") from None
        ref = given.ref or f"webhook:{hashlib.sha256(body).hexdigest()[:32]}"
        return EventIn(
            text=given.text,
            kind="voice" if given.transcribed else given.kind,
            channel=self.name,
            sender=given.sender,
            group=given.group,
            mentioned=given.mentioned,
            ref=ref,
            ts=given.ts,
            session=given.session,
        )


async def _next(conn: h11.Connection, stream: anyio.abc.ByteStream) -> Any:
    while True:
        event = conn.next_event()
        if event is not h11.NEED_DATA:
            return event
        try:
            data = await stream.receive(65536)
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            data = b""
        conn.receive_data(data)


async def _write(stream: anyio.abc.ByteStream, conn: h11.Connection, event: Any) -> None:
    data = conn.send(event)
    if data:
        await stream.send(data)

"""The webhook channel: an HTTP listener (loopback by default) taking JSON events.

A Starlette app of one route, served by uvicorn in the daemon's loop like the HTTP API
(:mod:`channels.asgi`), on the channel's own address: a webhook often faces the
internet through a proxy, which the API's token-guarded port must not.

``POST`` any path with a JSON body. With a secret configured, the body must be signed
GitHub style (``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>``), compared
in constant time; a missing or wrong signature is 401 and nothing is stored. A
request with ``X-GitHub-Event`` is mapped by :mod:`channels.github` (``ping`` is
answered); any other body is one event object (``text``, optional ``kind``,
``sender``, ``group``, ``mentioned``, ``ref``, ``ts``, ``session``, and
``transcribed``: true for speech-to-text).

Responses: 200 once every soul acknowledged the event, with what each made of it
(``{"souls": {"ada": "stored"}}``: stored, duplicate, dropped, hygiene.<rule>); 202 for
a delivery that is no event; 400 malformed; 401 bad signature; 405 not a POST; 408 a
body that took over 30 s; 413 body over ``max_body``; 503 when a soul did not
acknowledge (send it again). An error's body is the HTTP API's,
``{"error": {"code": ..., "message": ...}}`` (:mod:`channels.http_errors`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

import msgspec
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from channels.asgi import BodyTimeout, BodyTooLarge, log_request, read_body, serve
from channels.base import Channel
from channels.config import WebhookConfig, read_secret
from channels.github import github_event
from channels.http_errors import Refused, error_response
from souls.events import EventIn
from supervisor.errors import FrameTooLarge, InvalidParams, MalformedFrame, SoupdError

__all__ = ["WebhookChannel"]

# A request's head, and then its body, must each arrive within this many seconds.
_REQUEST_SECONDS = 30.0
# A 503's Retry-After: a soul that did not acknowledge is restarting or busy.
_RETRY_SECONDS = 30


_ANY = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


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


class WebhookChannel(Channel):
    kind = "webhook"
    config: WebhookConfig

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.address: str | None = None
        self.unauthorized = 0
        self._secret: bytes | None = None
        # Every method reaches the handler, which answers all but POST with 405.
        self.app = Starlette(routes=[Route("/{path:path}", self._request, methods=_ANY)])

    def details(self) -> dict[str, Any]:
        return {"address": self.address, "unauthorized": self.unauthorized}

    async def serve(self) -> None:
        c = self.config
        secret = None
        if c.secret_env is not None or c.secret_file is not None:
            secret = await read_secret(c.name, "secret", c.secret_env, c.secret_file)
        self._secret = secret.encode() if secret is not None else None
        await serve(
            self.app, c.host, c.port, on_listening=self._listening, head_timeout=_REQUEST_SECONDS
        )

    def _listening(self, address: str) -> None:
        self.address = address
        self.log.info("webhook.listening", address=address, signed=self._secret is not None)
        if self._secret is None:
            self.log.warning(
                "webhook.unauthenticated",
                address=address,
                problem="unsigned requests are accepted from anyone who can reach the port",
                fix="set secret_env or secret_file",
            )
        self.up()

    async def _request(self, request: Request) -> Response:
        return await self.handle(request, "/{path}")

    async def handle(self, request: Request, route: str) -> Response:
        """Answer one delivery: on the channel's own port, or routed to it by the HTTP API
        (``POST /v1/webhooks/<name>``), with the same signature rule and statuses."""
        started = time.perf_counter()
        response: Response
        try:
            status, answer = await self._handle(request)
            response = JSONResponse(answer, status_code=status)
        except SoupdError as error:
            response = error_response(error, retry_after=_RETRY_SECONDS)
        except ClientDisconnect:
            # Nobody reads it.
            gone = Refused("client_disconnected", "the client disconnected before its body")
            response = error_response(gone)
        log_request(self.log, request.scope, route, response.status_code, started)
        return response

    @property
    def signed(self) -> bool:
        """Whether deliveries must be signed (a secret is configured)."""
        return self.config.secret_env is not None or self.config.secret_file is not None

    async def _body(self, request: Request) -> bytes:
        limit = self.config.max_body
        try:
            return await read_body(request, limit, _REQUEST_SECONDS)
        except BodyTooLarge:
            raise FrameTooLarge(f"body over {limit} bytes; send smaller events") from None
        except BodyTimeout:
            message = f"the body did not arrive within {_REQUEST_SECONDS:g} s; send it at once"
            raise Refused("frame_timeout", message) from None

    def _verify(self, headers: Mapping[str, str], body: bytes) -> None:
        if self._secret is None:
            return
        expected = "sha256=" + hmac.new(self._secret, body, hashlib.sha256).hexdigest()
        given = headers.get("x-hub-signature-256", "")
        if not hmac.compare_digest(expected.encode(), given.encode()):
            self.unauthorized += 1
            self.log.warning("webhook.bad_signature", signed=bool(given))
            message = "missing or wrong X-Hub-Signature-256; sign with the secret"
            raise Refused("bad_signature", message)

    async def _handle(self, request: Request) -> tuple[int, dict[str, Any]]:
        if request.method != "POST":
            message = f"{request.method} is not served; POST a JSON event"
            raise Refused("method_not_allowed", message)
        if self.signed and self._secret is None:
            # The secret is not read yet (or could not be): nothing is accepted.
            message = f"the webhook is not ready ({self.state}); send it again"
            raise Refused("channel.not_ready", message)
        body = await self._body(request)
        headers = request.headers
        self._verify(headers, body)
        try:
            payload = json.loads(body)
        except ValueError:
            raise MalformedFrame("the body is not JSON; send a JSON event") from None
        github = headers.get("x-github-event")
        if github == "ping":
            return 200, {"pong": True}
        if github is not None:
            delivery = headers.get("x-github-delivery") or hashlib.sha256(body).hexdigest()[:32]
            try:
                event = github_event(self.name, github, delivery, payload)
            except (KeyError, TypeError) as exc:
                raise InvalidParams(f"a {github} payload without {exc}") from None
            if event is None:
                self.stats.skipped += 1
                return 202, {"status": "ignored", "event": github}
        else:
            event = self._event(payload, body)
        # NotAcknowledged (channel.unacknowledged) is a 503: send it again.
        souls = await self.deliver(event)
        return 200, {"status": "accepted", "ref": event.ref, "souls": souls}

    def _event(self, payload: Any, body: bytes) -> EventIn:
        try:
            given = msgspec.convert(payload, _Body)
        except msgspec.ValidationError as exc:
            raise InvalidParams(f"not an event object: {exc}") from None
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

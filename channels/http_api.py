"""The HTTP API: the socket's methods as JSON over HTTP, on the daemon's own loop.

Routes are those of :mod:`channels.openapi` (``GET /openapi.json`` lists them all);
every one but the document itself needs ``Authorization: Bearer <token>``, the token
being the content of the token file (:mod:`channels.http_token`). Invariants:

* Same path as the socket: a request's body is decoded by the method's own params
  Struct (:meth:`channels.methods.Methods.dispatch`), its reply is the socket's
  ``result`` as the JSON body, and an error is ``{"error": {"code", "message"}}`` with
  the socket's code and a status by cause (:mod:`channels.http_errors`).
* Bounded: a body is at most ``[socket] max_frame_bytes`` (413) and must arrive within
  ``[http] body_timeout`` (408); an answer is waited for ``request_timeout`` (504);
  at most ``max_connections`` connections and requests at once (past it 503
  ``too_many_connections``, the same JSON error, with Retry-After; counted as
  ``refused``).
* ``subscribe`` is Server-Sent Events from the same outputs hub as the socket's
  (:mod:`channels.http_stream`); streams end when the daemon stops.
* One log line per request (``http.request``: method, route, status, ms, peer; never a
  body or the token): at info when it failed, at debug otherwise.
* Not being able to listen (the port taken) does not stop the daemon: it is logged,
  shown in ``daemon.status`` and tried again with backoff. A token file others may
  read (or not a plain file of ours) keeps the API off, logged and shown; the socket
  serves on.
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

import anyio
import msgspec
import structlog
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from channels import openapi as spec
from channels.asgi import BodyTimeout, BodyTooLarge, log_request, read_body, serve
from channels.base import Backoff, Channel
from channels.connection import SubscribeParams
from channels.forwarding import FORWARDED
from channels.http_errors import Refused, Unauthorized, error_response, status_of
from channels.http_stream import EventStreams
from channels.http_token import load_or_create_token, token_matches
from channels.methods import Methods
from channels.webhook import WebhookChannel
from souls.actor.mailbox import Future
from supervisor.errors import (
    AskTimeout,
    FrameTooLarge,
    InvalidParams,
    MalformedFrame,
    SoulElsewhere,
    SoupdError,
    TooManyConnections,
    UnknownMethod,
)
from supervisor.outputs import Outputs

__all__ = ["HttpApi", "HttpSettings", "Webhooks"]

_log = structlog.get_logger("soupd.http")


class HttpSettings(Protocol):
    """The ``[http]`` table of ``soupd.toml`` (``supervisor.config.HttpConfig``)."""

    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...
    @property
    def request_timeout(self) -> float: ...
    @property
    def body_timeout(self) -> float: ...
    @property
    def max_connections(self) -> int: ...


class Webhooks(Protocol):
    """The running channels (``channels.supervisor.Channels``), by name."""

    def get(self, name: str) -> Channel: ...


class HttpApi:
    """The API's server: a supervised child of the daemon (:meth:`run`)."""

    def __init__(
        self,
        settings: HttpSettings,
        *,
        token_file: Path,
        methods: Methods,
        outputs: Outputs,
        max_body: int,
        version: str,
        webhooks: Webhooks | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.settings = settings
        self.token_file = token_file
        self.address: str | None = None
        self.state = "starting"
        self.last_error: str | None = None
        self.requests = 0
        self.unauthorized = 0
        self.refused = 0  # requests past max_connections
        self._methods = methods
        self._max_body = max_body
        self._version = version
        self._webhooks = webhooks
        self._token = ""
        self._document: bytes | None = None
        self.streams = EventStreams(outputs, has_soul=methods.has_soul, authorize=self.authorized)
        streams = self.streams
        self._backoff = Backoff(1.0, 60.0, rng)
        self.app = Starlette(
            routes=[
                Route(spec.OPENAPI, self._logged(spec.OPENAPI, self._openapi), methods=["GET"]),
                Route(spec.RPC, self._logged(spec.RPC, self._rpc), methods=["POST"]),
                Route(spec.SOUL_SUBSCRIBE, streams.endpoint(spec.SOUL_SUBSCRIBE), methods=["GET"]),
                Route(spec.SUBSCRIBE, streams.endpoint(spec.SUBSCRIBE), methods=["GET"]),
                Route(spec.EVENTS, self._logged(spec.EVENTS, self._events), methods=["POST"]),
                Route(
                    spec.SOUL_METHOD, self._logged(spec.SOUL_METHOD, self._soul), methods=["POST"]
                ),
                Route(spec.WEBHOOK, self._webhook, methods=["POST"]),
            ],
            exception_handlers={HTTPException: self._http_error},
        )

    def status(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "address": self.address,
            "token_file": str(self.token_file),
            "last_error": self.last_error,
            "requests": self.requests,
            "unauthorized": self.unauthorized,
            "refused": self.refused,
            "streams": self.streams.open,
        }

    async def run(self, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Serve until cancelled; ``started()`` once listening or, when the address
        cannot be bound, once that is logged (it is tried again with backoff)."""
        try:
            self._token = await anyio.to_thread.run_sync(load_or_create_token, self.token_file)
        except SoupdError as error:
            # Serving with a token others may know is worse than not serving: the API
            # stays off until the file is fixed and the daemon restarted; the socket and
            # the rest run on.
            self.state, self.last_error = "failed", error.message
            _log.error("http.token_refused", file=str(self.token_file), problem=error.message)
            task_status.started()
            await anyio.sleep_forever()
        self.streams.reopen()
        started = False
        try:
            while True:
                try:
                    await serve(
                        self.app,
                        self.settings.host,
                        self.settings.port,
                        on_listening=self._listening(task_status),
                        on_stopping=self.streams.close,
                        max_connections=self.settings.max_connections,
                        refused=self._refused,
                        head_timeout=self.settings.body_timeout,
                    )
                except OSError as exc:
                    if self.state == "up":
                        raise
                    delay = self._backoff.next()
                    self.state, self.last_error = "backoff", f"{exc.strerror or exc}"
                    _log.warning(
                        "http.bind_failed",
                        host=self.settings.host,
                        port=self.settings.port,
                        error=self.last_error,
                        retry_in_s=round(delay, 3),
                        fix="free the port or set [http] port (0: any free one)",
                    )
                    if not started:
                        started = True
                        task_status.started()
                    await anyio.sleep(delay)
        finally:
            self.streams.close()
            self.state = "stopped"

    def _listening(self, task_status: anyio.abc.TaskStatus[None]) -> Callable[[str], None]:
        def listening(address: str) -> None:
            first = self.state == "starting"
            self.address, self.state, self.last_error = address, "up", None
            self._backoff.reset()
            _log.info("http.listening", address=address, token_file=str(self.token_file))
            if first:
                task_status.started()

        return listening

    # --- routes --------------------------------------------------------------------

    async def _refused(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request past ``max_connections``: the JSON error, and the connection goes."""
        started = time.perf_counter()
        self.refused += 1
        limit = self.settings.max_connections
        error = TooManyConnections(
            f"the HTTP API serves at most {limit} connections and requests at once "
            "([http] max_connections); retry in a moment, or use fewer connections"
        )
        await error_response(error, close=True)(scope, receive, send)
        log_request(_log, scope, "*", status_of(error.code), started)

    def authorized(self, request: Request | Scope) -> None:
        """Raise :class:`_Unauthorized` unless the request has the bearer token."""
        headers = request.headers if isinstance(request, Request) else Request(request).headers
        if not token_matches(self._token, headers.get("authorization")):
            self.unauthorized += 1
            raise Unauthorized(
                "missing or wrong bearer token; send Authorization: Bearer <the content of "
                f"{self.token_file}>"
            )

    async def _openapi(self, request: Request) -> Response:
        if self._document is None:
            names = [n for n in self._methods.names if n != "subscribe"]
            methods = {name: self._methods.params_of(name) for name in names}
            results = {name: self._methods.result_of(name) for name in names}
            typed = {name: kind for name, kind in results.items() if kind is not None}
            document = spec.openapi(self._version, methods, SubscribeParams, typed)
            self._document = msgspec.json.encode(document)
        return Response(self._document, media_type="application/json")

    async def _rpc(self, request: Request) -> Response:
        self.authorized(request)
        method = request.path_params["method"]
        if method == "subscribe":
            raise InvalidParams(f"subscribe is a stream over HTTP: GET {spec.SUBSCRIBE}")
        body = await self._body(request)
        return await self._call(method, msgspec.Raw(body or b"{}"), _forwarded(request))

    async def _events(self, request: Request) -> Response:
        self.authorized(request)
        return await self._for_soul(request, "event.push")

    async def _soul(self, request: Request) -> Response:
        self.authorized(request)
        method = request.path_params["method"]
        if method == "subscribe":
            raise InvalidParams(f"subscribe is a stream over HTTP: GET {spec.SOUL_SUBSCRIBE}")
        return await self._for_soul(request, method)

    async def _for_soul(self, request: Request, method: str) -> Response:
        if method not in self._methods.names:
            raise UnknownMethod(
                f"unknown method {method!r}; GET {spec.OPENAPI} lists the routes there are"
            )
        if not spec.takes_soul(self._methods.params_of(method)):
            raise UnknownMethod(f"{method} takes no soul; POST {spec.RPC.format(method=method)}")
        soul = request.path_params["soul"]
        body = await self._body(request)
        try:
            params = msgspec.json.decode(body) if body.strip() else {}
        except (msgspec.DecodeError, RecursionError) as exc:
            raise MalformedFrame(f"the body is not JSON ({exc}); send a JSON object") from None
        if not isinstance(params, dict):
            raise InvalidParams(f"invalid params for {method}: the body must be a JSON object")
        if params.setdefault("soul", soul) != soul:
            raise InvalidParams(
                f"invalid params for {method}: the body names soul {params['soul']!r} and the "
                f"path {soul!r}; leave soul out of the body"
            )
        return await self._call(
            method, msgspec.Raw(msgspec.json.encode(params)), _forwarded(request)
        )

    async def _webhook(self, request: Request) -> Response:
        """A delivery for a webhook channel, answered by the channel itself (its signature
        rule, its statuses and its error bodies); no bearer token."""
        self.requests += 1
        name = request.path_params["channel"]
        try:
            channel = self._webhooks.get(name) if self._webhooks is not None else None
        except KeyError:
            channel = None
        if not isinstance(channel, WebhookChannel):
            message = f"no webhook channel {name!r}; see [[channels]] in soupd.toml"
            return self._webhook_refused(request, Refused("unknown_channel", message))
        if not channel.signed:
            # Unsigned deliveries come from anyone who reaches the port, a web page in a
            # local browser too: they stay on the channel's own port, not the API's.
            message = (
                f"webhook channel {name!r} takes unsigned deliveries, which are served on its "
                f"own port only ({channel.address}); give it a secret to route it here"
            )
            return self._webhook_refused(request, Refused("unsigned_webhook", message))
        return await channel.handle(request, spec.WEBHOOK)

    def _webhook_refused(self, request: Request, error: Refused) -> Response:
        response = error_response(error)
        log_request(_log, request.scope, spec.WEBHOOK, response.status_code, time.perf_counter())
        return response

    async def _body(self, request: Request) -> bytes:
        try:
            return await read_body(request, self._max_body, self.settings.body_timeout)
        except BodyTooLarge:
            raise FrameTooLarge(
                f"the body is over {self._max_body} bytes ([socket] max_frame_bytes); "
                "send less at once (import in smaller batches)"
            ) from None
        except BodyTimeout as exc:
            raise HTTPException(408, f"{exc}; send the whole body at once") from None

    async def _call(self, method: str, raw: msgspec.Raw, forwarded: bool = False) -> Response:
        """Run ``method``; on a shared store, a soul another daemon owns gets the request
        forwarded there (channels.forwarding), unless it was forwarded here already."""
        timeout = self.settings.request_timeout
        reply = Future()
        forwarder = None if forwarded else self._methods.forwarder
        try:
            with anyio.fail_after(timeout):
                await self._methods.dispatch(method, raw, reply)
                try:
                    value = await reply.wait()
                except SoulElsewhere as elsewhere:
                    if forwarder is None:
                        raise
                    value = await forwarder.forward(method, bytes(raw), elsewhere)
        except TimeoutError:
            raise AskTimeout(
                f"no answer within {timeout:g} s ([http] request_timeout); it may still be "
                "carried out: check before sending it again"
            ) from None
        return Response(msgspec.json.encode(value), media_type="application/json")

    def _logged(
        self, route: str, endpoint: Callable[[Request], Awaitable[Response]]
    ) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            started = time.perf_counter()
            self.requests += 1
            try:
                response = await endpoint(request)
            except SoupdError as error:
                response = error_response(error)
            except HTTPException as exc:
                response = await self._http_error(request, exc)
            except anyio.get_cancelled_exc_class():
                raise
            except ClientDisconnect:
                # Gone before its body was in: nobody to answer, nothing was done.
                gone = Refused("client_disconnected", "the client disconnected before its body")
                response = error_response(gone)
            except Exception:  # noqa: BLE001 - one request's bug must not end the server
                _log.exception("http.request_failed", route=route)
                response = error_response(
                    SoupdError("internal error; the daemon log has the details (please report it)")
                )
            log_request(_log, request.scope, route, response.status_code, started)
            return response

        return handle

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = {404: "not_found", 405: "method_not_allowed", 408: "timeout"}.get(
            exc.status_code, "http_error"
        )
        message = exc.detail
        if exc.status_code == 404:
            message = f"no route {request.url.path}; GET {spec.OPENAPI} lists the routes"
        elif exc.status_code == 405:
            message = f"{request.method} is not served here; GET {spec.OPENAPI} says what is"
        body = {"error": {"code": code, "message": message}}
        return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)


def _forwarded(request: Request) -> bool:
    """Whether another daemon forwarded the request here (it is never sent on again)."""
    return FORWARDED in request.headers

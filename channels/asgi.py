"""Serving an ASGI app (Starlette) with uvicorn inside the daemon's own event loop.

Shared by the HTTP API (:mod:`channels.http_api`) and the webhook channel
(:mod:`channels.webhook`). :func:`serve` guarantees:

* No thread, no process, no signal handler of uvicorn's (the daemon owns SIGTERM and
  SIGHUP), no lifespan, no log configuration: only uvicorn's errors are logged.
* The listening socket is bound before anything is served: an address in use raises
  :class:`OSError` from :func:`serve` itself, and ``on_listening`` is told the address
  (with the port picked when 0 was asked for).
* A connection must complete its first request head within ``head_timeout`` seconds,
  or it is closed: a client that connects and trickles (or sends nothing) holds no
  connection slot for long.
* Past ``max_connections`` connections or requests at once, a request is answered by
  the ``refused`` app the caller gives (the HTTP API's JSON error, 503 with
  Retry-After), not by uvicorn's plain-text 503, and its connection is closed.
* Cancelling :func:`serve` stops it gracefully: no new connection is taken, requests in
  hand may finish within ``grace`` seconds, then what is left is cancelled.

:func:`read_body` reads a request body up to a byte limit and within a deadline, so an
oversized or trickled body costs at most ``limit`` bytes and ``timeout`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import uvicorn
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["BodyTimeout", "BodyTooLarge", "log_request", "read_body", "serve"]

# How long a request in hand may take to finish once the server is asked to stop.
_GRACE = 5.0


class BodyTooLarge(Exception):
    """The body is over the limit (413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"body over {limit} bytes")
        self.limit = limit


class BodyTimeout(Exception):
    """The body did not arrive within the deadline (408)."""


async def read_body(request: Request, limit: int, timeout: float) -> bytes:  # noqa: ASYNC109
    """The whole body of ``request``: at most ``limit`` bytes, within ``timeout`` s.

    A Content-Length over the limit is refused before a byte is read.
    """
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > limit):
        raise BodyTooLarge(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        with anyio.fail_after(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise BodyTooLarge(limit)
                chunks.append(chunk)
    except TimeoutError:
        raise BodyTimeout(f"the body did not arrive within {timeout:g} s") from None
    return b"".join(chunks)


def log_request(log: Any, scope: Scope, route: str, status: int, started: float) -> None:
    """The one line of a request (``http.request``): method, route, status, ms, peer,
    and the route's ``soul`` and ``method`` when it has them; never a body or a header.
    At info when it failed (status >= 400), at debug otherwise."""
    ms = round((time.perf_counter() - started) * 1000, 3)
    client = scope.get("client")
    fields: dict[str, Any] = {
        "method": scope.get("method"),
        "route": route,
        "status": status,
        "ms": ms,
        "peer": f"{client[0]}:{client[1]}" if client else None,
    }
    path_params = scope.get("path_params") or {}
    if "method" in path_params:
        fields["rpc"] = path_params["method"]
    if "soul" in path_params:
        fields["soul"] = path_params["soul"]
    if status >= 400:
        log.info("http.request", **fields)
    else:
        log.debug("http.request", **fields)


class _Limited:
    """``app`` while at most ``limit`` connections and requests are in hand (this one
    counted), ``refused`` past that: uvicorn's own limit_concurrency, but answered by
    an app of the caller's."""

    def __init__(self, app: ASGIApp, limit: int, refused: ASGIApp) -> None:
        self._app, self._limit, self._refused = app, limit, refused
        self.server: uvicorn.Server | None = None  # set once the server exists

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._over():
            await self._refused(scope, receive, send)
            return
        await self._app(scope, receive, send)

    def _over(self) -> bool:
        if self.server is None:
            return False
        state = self.server.server_state
        return len(state.connections) > self._limit or len(state.tasks) > self._limit


class _Server(uvicorn.Server):
    """uvicorn's server without its signal handlers: the daemon has its own."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class _Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for a connection's first request head
    (uvicorn bounds the wait between requests, not the one before the first)."""

    head_timeout = 30.0
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer = self.loop.call_later(self.head_timeout, self._head_overdue)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._begun():  # a request's head is in: uvicorn's own timers take over
            self._stop_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_overdue(self) -> None:
        self._head_timer = None
        if not self._begun() and not self.transport.is_closing():
            self.transport.close()

    def _begun(self) -> bool:
        # uvicorn types ``cycle`` as always set; it is None until the first request head.
        return getattr(self, "cycle", None) is not None


def _protocol(head_timeout: float) -> type[H11Protocol]:
    return type("_Protocol", (_Protocol,), {"head_timeout": head_timeout})


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY only on sockets that say so, and
    # without it a response's head and body wait on each other (40 ms delayed ACKs).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def _address(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def serve(
    app: Any,
    host: str,
    port: int,
    *,
    on_listening: Callable[[str], None],
    on_stopping: Callable[[], None] | None = None,
    max_connections: int | None = None,
    refused: ASGIApp | None = None,
    keep_alive: int = 5,
    head_timeout: float = 30.0,
    grace: float = _GRACE,
) -> None:
    """Serve ``app`` on ``host:port`` until cancelled (see the module docstring).

    ``on_stopping`` is called first when it is cancelled (to end open streams, which
    would hold the stop up for ``grace``). ``max_connections``: connections and
    requests at once; past it ``refused`` answers (it should close the connection).
    """
    limited = None
    if max_connections is not None:
        if refused is None:
            raise ValueError("max_connections needs the app that answers past it: refused")
        app = limited = _Limited(app, max_connections, refused)
    sock = _bind(host, port)
    try:
        config = uvicorn.Config(
            app,
            lifespan="off",
            log_config=None,
            # uvicorn warns once per refused or malformed request: a flood of them must
            # not flood the log (each request has its own http.request line anyway).
            log_level=logging.ERROR,
            access_log=False,
            http=_protocol(head_timeout),
            ws="none",
            interface="asgi3",
            proxy_headers=False,
            server_header=False,
            timeout_keep_alive=keep_alive,
            timeout_graceful_shutdown=max(1, round(grace)),
        )
        server = _Server(config)
        if limited is not None:
            limited.server = server
        finished = anyio.Event()
        # uvicorn stops when asked (should_exit), not when cancelled: its task is shielded
        # until it has had its grace period.
        serving = anyio.CancelScope(shield=True)

        began = False

        async def run() -> None:
            nonlocal began
            began = True
            try:
                with serving:
                    await server.serve(sockets=[sock])
            finally:
                finished.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            try:
                while not server.started and not finished.is_set():  # noqa: ASYNC110
                    await anyio.sleep(0.005)
                if not finished.is_set():
                    on_listening(_address(sock))
                await finished.wait()
                raise RuntimeError("the HTTP server stopped by itself")
            finally:
                if on_stopping is not None:
                    on_stopping()
                server.should_exit = True
                if began:  # else it was cancelled before it ran, or sees should_exit at once
                    deadline = anyio.current_time() + grace + 1
                    with anyio.CancelScope(shield=True, deadline=deadline):
                        await finished.wait()
                serving.cancel()
    finally:
        sock.close()

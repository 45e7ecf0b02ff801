"""Requests forwarded to the daemon that owns their soul (the shared PostgreSQL store,
issue #21, DESIGN §5).

On a shared store each soul is owned by one daemon at a time (its lease). A request
reaching another daemon, by the socket or the HTTP API, is answered there by the soul's
host with :class:`~supervisor.errors.SoulElsewhere`, which names the owner's advertised
address; the :class:`Forwarder` sends the request on to the owner's HTTP API
(``POST {owner}/v1/rpc/{method}``, the request's params as they came) and answers with
the owner's reply, result or error, as if it had been served here.

* Authentication is the daemon's own bearer token: daemons sharing a store share one
  ``[http] token_file``.
* A request is forwarded once: the forwarded one carries ``X-Soupd-Forwarded``, and a
  daemon meeting SoulElsewhere for such a request answers it rather than forwarding it
  again (no loops while ownership moves; the client retries).
* A forward that cannot reach the owner (it died: its lease goes with it) is answered
  ``soul_unavailable``, worth a retry: the next request takes the soul over here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import msgspec
import structlog

from channels.http_token import load_or_create_token
from supervisor.errors import RemoteError, SoulElsewhere, SoulUnavailable

__all__ = ["FORWARDED", "Forwarder"]

# The header a forwarded request carries (its value: the forwarding daemon's address).
FORWARDED = "x-soupd-forwarded"

_log = structlog.get_logger("soupd.forwarding")


class _TooLarge(Exception):
    """An owner's answer larger than the forwarder reads."""


class _Error(msgspec.Struct):
    code: str
    message: str


class _Failed(msgspec.Struct):
    error: _Error


class Forwarder:
    """Forwards requests to the owners of their souls. ``address``: this daemon's own
    advertised address (sent along, for the owner's log); ``timeout``: seconds a
    forwarded request may take ([http] request_timeout)."""

    def __init__(
        self, token_file: Path, address: str, timeout: float, max_bytes: int = 64 << 20
    ) -> None:
        self._token_file = token_file
        self._token: str | None = None
        self._address = address
        self._max_bytes = max_bytes  # the most of an owner's answer read
        # No proxy nor .netrc from the environment: the token goes to the owner only.
        self._http = httpx.AsyncClient(timeout=timeout, trust_env=False)
        self.forwarded = 0
        self.failed = 0

    async def forward(self, method: str, raw: bytes, elsewhere: SoulElsewhere) -> Any:
        """The owner's answer to ``method`` with ``raw`` params (JSON); raises its error
        as a RemoteError of the same code, ``elsewhere`` itself when it names no owner,
        SoulUnavailable when the owner cannot be reached."""
        if not elsewhere.owner:
            raise elsewhere
        if elsewhere.owner.rstrip("/") == self._address.rstrip("/"):
            # The soul's row still names this daemon (a session of its own not yet ended
            # on the server): not a place to send it; the lock frees in a moment.
            raise SoulUnavailable(
                f"soul {elsewhere.soul!r} is being handed over; retry shortly"
            ) from None
        if self._token is None:
            self._token = await anyio.to_thread.run_sync(load_or_create_token, self._token_file)
        url = f"{elsewhere.owner.rstrip('/')}/v1/rpc/{method}"
        headers = {
            "authorization": f"Bearer {self._token}",
            "content-type": "application/json",
            FORWARDED: self._address,
        }
        try:
            status, body = await self._post(url, raw or b"{}", headers)
        except (httpx.TimeoutException, httpx.RemoteProtocolError):
            self.failed += 1
            raise SoulUnavailable(
                f"soul {elsewhere.soul!r} is served by the daemon at {elsewhere.owner}, which "
                "did not answer in time; it may have carried the request out: check before "
                "sending it again"
            ) from None
        except (httpx.HTTPError, httpx.InvalidURL, _TooLarge) as exc:
            self.failed += 1
            _log.warning("soul.forward_failed", soul=elsewhere.soul, owner=elsewhere.owner,
                         error=type(exc).__name__)  # fmt: skip
            raise SoulUnavailable(
                f"soul {elsewhere.soul!r} is served by the daemon at {elsewhere.owner}, which "
                f"cannot be reached ({type(exc).__name__}); retry shortly: if it is gone, its "
                "souls are taken over here"
            ) from None
        self.forwarded += 1
        try:
            if 200 <= status < 300:
                return msgspec.json.decode(body)
            failed = msgspec.json.decode(body, type=_Failed)
        except (msgspec.ValidationError, msgspec.DecodeError):
            raise SoulUnavailable(
                f"soul {elsewhere.soul!r} is served by the daemon at {elsewhere.owner}, which "
                f"answered HTTP {status} with no soupd reply; check its log"
            ) from None
        raise RemoteError(failed.error.code, failed.error.message)

    async def _post(self, url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        """POST ``body``; the status and at most ``max_bytes`` of the answer (_TooLarge
        past that)."""
        async with self._http.stream("POST", url, content=body, headers=headers) as response:
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > self._max_bytes:
                    raise _TooLarge(size)
                chunks.append(chunk)
            return response.status_code, b"".join(chunks)

    async def aclose(self) -> None:
        await self._http.aclose()

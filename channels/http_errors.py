"""The HTTP API's errors: a soupd error code's HTTP status, and the JSON body.

The body is the socket's error object, ``{"error": {"code": ..., "message": ...}}``; the
status says the cause (:func:`status_of`), so plain HTTP clients can branch on it too.
"""

from __future__ import annotations

import msgspec
from starlette.responses import Response

from supervisor.errors import SoupdError

__all__ = ["Refused", "Unauthorized", "error_response", "status_of"]

_STATUS = {
    "invalid_params": 400,
    "bad_frame": 400,
    "config.invalid": 400,
    "client_disconnected": 400,
    "unauthorized": 401,
    "bad_signature": 401,
    "peer_refused": 403,
    "unsigned_webhook": 403,
    "unknown_soul": 404,
    "unknown_method": 404,
    "not_found": 404,
    "method_not_allowed": 405,
    "frame_timeout": 408,
    "already_exists": 409,
    "frame_too_large": 413,
    "busy": 429,
    "llm_unavailable": 502,
    "soul_unavailable": 503,
    "store_unusable": 503,
    # Another daemon of the shared store owns the soul (RFC 9110 §15.5.20: this server
    # is not the one to answer for it), or took it over mid-request (retry).
    "soul_elsewhere": 421,
    "lease_lost": 503,
    "unsupported": 501,
    "unsafe_file": 503,
    "too_many_connections": 503,
    "channel.not_ready": 503,
    "channel.unacknowledged": 503,
    "timeout": 504,
    "disk_full": 507,
}


def status_of(code: str) -> int:
    """The HTTP status for a soupd error code (500 for one not known here)."""
    if code in _STATUS:
        return _STATUS[code]
    if code.startswith("hygiene."):
        return 422
    if code.startswith("unknown_") or code.endswith("not_found"):
        return 404
    if code.endswith("exists"):
        return 409
    return 500


class Unauthorized(SoupdError):
    """No bearer token, or the wrong one."""

    code = "unauthorized"


class Refused(SoupdError):
    """A request refused over HTTP alone (no socket error says it): ``code`` is one of
    :func:`status_of`'s, such as ``bad_signature`` or ``unknown_channel``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def error_response(error: SoupdError, *, close: bool = False, retry_after: int = 1) -> Response:
    """The response for ``error``: its status, Retry-After (``retry_after`` seconds) when
    it is worth a retry; ``close``: the connection is closed after it (a load shed)."""
    status = status_of(error.code)
    headers = {}
    if status in (429, 503):
        headers["retry-after"] = str(retry_after)
    if close:
        headers["connection"] = "close"
    if error.code == "unauthorized":
        headers["www-authenticate"] = 'Bearer realm="soupd"'
    body = msgspec.json.encode({"error": {"code": error.code, "message": error.message}})
    return Response(body, status_code=status, media_type="application/json", headers=headers)

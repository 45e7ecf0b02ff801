"""The socket's limits as the server reads them, its counters, and its limit log lines."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

import structlog

__all__ = ["LimitReports", "ServerStatistics", "SocketLimits"]

_log = structlog.get_logger("soupd.socket")


class SocketLimits(Protocol):
    """The ``[socket]`` limits of ``soupd.toml`` (``supervisor.config.SocketConfig``)."""

    @property
    def max_frame_bytes(self) -> int: ...
    @property
    def max_in_flight(self) -> int: ...
    @property
    def max_connections(self) -> int: ...
    @property
    def max_buffered_bytes(self) -> int: ...
    @property
    def max_buffered_total(self) -> int: ...
    @property
    def max_partial_total(self) -> int: ...
    @property
    def frame_timeout(self) -> float: ...
    @property
    def idle_timeout(self) -> float: ...


@dataclass(slots=True)
class ServerStatistics:
    connections: int = 0
    connections_total: int = 0
    requests: int = 0
    errors: int = 0
    refused_peers: int = 0
    # Connections refused at connect (max_connections, or out of file descriptors).
    refused_connections: int = 0
    # Connections closed by frame_timeout or idle_timeout.
    timed_out: int = 0
    # Results replaced by reply_buffer_full.
    replies_refused: int = 0
    # Peers that hung up with requests outstanding, and those requests.
    abandoned: int = 0
    abandoned_requests: int = 0


class LimitReports:
    """Log lines for limits that were hit, at most one a second per event, each with
    ``count``: how many times it happened since the last line. A flood of refusals or
    timeouts must not flood the log (nor stall the loop writing it) as well."""

    def __init__(self, every: float = 1.0) -> None:
        self._every = every
        self._since: dict[str, tuple[float, int]] = {}

    def note(self, event: str, count: int = 1, **context: object) -> None:
        now = time.monotonic()
        last, pending = self._since.get(event, (-self._every, 0))
        pending += count
        if now - last >= self._every:
            _log.warning(event, count=pending, **context)
            self._since[event] = (now, 0)
        else:
            self._since[event] = (last, pending)

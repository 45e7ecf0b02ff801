"""The daemon's own log, offered over the socket (``soupd logs``) for users without
journald: a logging handler that keeps the last lines and publishes each new one as a
``log`` output.

Each line is kept as a JSON object, whatever the daemon's standard output is (console
rendering on a terminal, journald's ``<N>`` prefix): the client renders it for its own
terminal (:mod:`supervisor.cli.logview`).

Log records may come from other threads (aiosqlite's, the scheduler's executor); only
the event loop's thread touches the outputs hub, so records from elsewhere are handed
over with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque

from supervisor.logs import json_formatter
from supervisor.outputs import Outputs

__all__ = ["LogStream"]


class LogStream(logging.Handler):
    def __init__(self, outputs: Outputs, keep: int = 1000) -> None:
        super().__init__()
        self._outputs = outputs
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self.lines: deque[tuple[str, str]] = deque(maxlen=keep)  # (soul, line)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:  # noqa: BLE001 - logging must never raise into the caller
            self.handleError(record)
            return
        soul = str(record.msg.get("soul", "")) if isinstance(record.msg, dict) else ""
        if threading.get_ident() == self._thread:
            self._publish(soul, line)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._publish, soul, line)

    def _publish(self, soul: str, line: str) -> None:
        self.lines.append((soul, line))
        self._outputs.publish(soul, "log", {"line": line})

    def recent(self, soul: str | None, limit: int) -> list[str]:
        """The latest ``limit`` lines (of one soul's, or all), oldest first."""
        if limit <= 0:
            return []  # picked[-0:] would be every line
        picked = [line for who, line in self.lines if soul is None or who == soul]
        return picked[-limit:]

    def attach(self) -> None:
        self.setFormatter(json_formatter())
        logging.getLogger().addHandler(self)

    def detach(self) -> None:
        logging.getLogger().removeHandler(self)

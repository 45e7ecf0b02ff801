"""``soupd logs``: the daemon's log lines as a terminal shows them.

The daemon keeps and streams its lines as JSON objects (:mod:`supervisor.logstream`),
whatever its own standard output is. On a terminal each is rendered the way the
daemon renders its lines on one (structlog's console renderer, in colour); piped or
under ``--json`` the JSON line is printed as it came, for ``jq`` and friends. A line
that is not a JSON object (from an older daemon) is printed as it came.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["LogView"]


class LogView:
    def __init__(self, *, tty: bool) -> None:
        self._renderer: Any = None
        if tty:
            import structlog

            self._renderer = structlog.dev.ConsoleRenderer(
                colors=True, exception_formatter=structlog.dev.plain_traceback
            )

    def render(self, line: str) -> str:
        if self._renderer is None:
            return line
        body = line[3:] if line[:1] == "<" and line[2:3] == ">" else line  # journald's <N>
        try:
            record = json.loads(body)
        except ValueError:
            return line
        if not isinstance(record, dict) or "event" not in record:
            return line
        rendered: str = self._renderer(None, str(record.get("level", "info")), record)
        return rendered

"""Logging: one structlog pipeline, configured once by the daemon's ``main``.

JSON lines on stdout when it is not a TTY (journald-friendly), console rendering on a
TTY. ``soul``, ``peer_uid``, ``event_id`` come from contextvars bound where they are
known. Standard-library loggers (apscheduler, aiosqlite, asyncio) are routed through
the same processors so every line has one shape.
"""

from __future__ import annotations

import logging
import sys
from typing import Literal

import msgspec
import structlog

__all__ = ["configure_logging"]

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR}  # fmt: skip


def _json_serializer(obj: object, **_: object) -> str:
    return msgspec.json.encode(obj, enc_hook=str).decode()


def configure_logging(
    level: str = "info", output: Literal["auto", "json", "console"] = "auto"
) -> None:
    """Configure structlog and the stdlib root logger. Call once, from ``main``."""
    use_json = output == "json" or (output == "auto" and not sys.stdout.isatty())
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.typing.Processor
    if use_json:
        shared.append(structlog.processors.dict_tracebacks)
        renderer = structlog.processors.JSONRenderer(serializer=_json_serializer)
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stdout.isatty())
    numeric = _LEVELS[level]
    structlog.configure(
        processors=[
            *shared,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    # aiosqlite logs every statement at debug; keep it quiet unless asked.
    logging.getLogger("aiosqlite").setLevel(max(numeric, logging.INFO))

"""Logging: one structlog pipeline, configured once by the daemon's ``main``.

JSON lines on stdout when it is not a TTY (journald-friendly, with a ``<priority>``
prefix when stdout is the journal's stream), console rendering on a TTY. ``soul``,
``peer_uid``, ``event_id`` come from contextvars bound where they are known.
Standard-library loggers (apscheduler, aiosqlite, asyncio) are routed through the same
processors so every line has one shape; apscheduler's own lines ("Added job", "Running
job Scheduler._fire") are kept to warnings, since :mod:`supervisor.scheduler` logs each
job it runs itself, naming the soul and the job. :func:`json_formatter` renders a record
as the JSON line the daemon keeps for ``soupd logs`` (:mod:`supervisor.logstream`),
whatever its standard output is.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import Any, Literal

import msgspec
import structlog
import structlog.tracebacks

__all__ = ["configure_logging", "json_formatter"]

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR}  # fmt: skip


def _json_serializer(obj: object, **_: object) -> str:
    return msgspec.json.encode(obj, enc_hook=str).decode()


# syslog priorities, so that `journalctl -p warning` filters soupd's lines.
_PRIORITIES = {"debug": 7, "info": 6, "warning": 4, "error": 3, "critical": 2, "exception": 3}


def _journal_stream(environ: Mapping[str, str]) -> bool:
    """Whether stdout is the journal's stream ($JOURNAL_STREAM names its device:inode)."""
    device, _, inode = environ.get("JOURNAL_STREAM", "").partition(":")
    if not (device.isdigit() and inode.isdigit()):
        return False
    try:
        info = os.fstat(sys.stdout.fileno())
    except (OSError, ValueError):
        return False
    return (info.st_dev, info.st_ino) == (int(device), int(inode))


def _priority_prefix(_logger: Any, method: str, line: Any) -> str:
    """Prefix a rendered line with ``<N>``: journald strips it and keeps N as priority.

    Runs after the renderer, so ``line`` is the rendered string, not an event dict.
    """
    return f"<{_PRIORITIES.get(method, 6)}>{line}"


def configure_logging(
    level: str = "info",
    output: Literal["auto", "json", "console"] = "auto",
    environ: Mapping[str, str] = os.environ,
) -> None:
    """Configure structlog and the stdlib root logger. Call once, from ``main``."""
    use_json = output == "json" or (output == "auto" and not sys.stdout.isatty())
    shared = _shared(use_json)
    renderer: structlog.typing.Processor
    if use_json:
        renderer = structlog.processors.JSONRenderer(serializer=_json_serializer)
    else:
        renderer = structlog.dev.ConsoleRenderer(
            colors=sys.stdout.isatty(), exception_formatter=structlog.dev.plain_traceback
        )
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
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                renderer,
                *([_priority_prefix] if use_json and _journal_stream(environ) else []),
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    # aiosqlite logs every statement at debug; keep it quiet unless asked.
    logging.getLogger("aiosqlite").setLevel(max(numeric, logging.INFO))
    # apscheduler says "Added job" and "Running job" for every job, naming only
    # Scheduler._fire; the scheduler's own line names the soul and the job.
    logging.getLogger("apscheduler").setLevel(max(numeric, logging.WARNING))


def _shared(use_json: bool) -> list[structlog.typing.Processor]:
    """The processors every record passes before it is rendered."""
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    # Tracebacks carry types, messages, files and lines, never frame locals: a crashing
    # frame's locals hold the event text, and logs must never contain it.
    if use_json:
        shared.append(
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            )
        )
    return shared


def json_formatter() -> logging.Formatter:
    """A formatter of records as JSON lines (no journald prefix), as they are kept for
    ``soupd logs``."""
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_shared(True),
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            # A console daemon's own records reach here with exc_info still unrendered.
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            ),
            structlog.processors.JSONRenderer(serializer=_json_serializer),
        ],
    )

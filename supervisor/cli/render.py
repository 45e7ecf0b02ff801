"""How a result is written: for people (no Python reprs: no ``None``, no ``{'a': 0}``)
and for programs (``--json``, with every time an ISO 8601 string in UTC).

The daemon's replies carry times as Unix seconds under the keys of :data:`TIME_KEYS`;
:func:`iso_times` rewrites those, wherever they sit in the result, so ``soupd --json``
prints ``"created": "2026-05-01T09:30:00.052965+00:00"``. ``soupd export`` writes its
records as the daemon sends them (they are ``soupd import``'s input).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

__all__ = ["TIME_KEYS", "human_value", "iso", "iso_times", "key_values"]

# Keys whose number is a point in time (Unix seconds) in the daemon's replies.
TIME_KEYS = frozenset(
    {
        "asked",
        "at",
        "created",
        "due",
        "fired_at",
        "hidden_at",
        "last_recalled",
        "last_touched",
        "reached",
        "recorded",
        "recorded_from",
        "recorded_to",
        "resolved",
        "since",  # a tide's week, from ...
        "ts",
        "until",  # ... to
        "updated",
        "valid_from",
        "valid_to",
        "when",
    }
)


def iso(seconds: float) -> str:
    """Unix seconds as ISO 8601 in UTC, with its zone."""
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat()


def iso_times(value: Any, key: str = "") -> Any:
    """``value`` with the number under each of :data:`TIME_KEYS` made an ISO 8601 string."""
    if isinstance(value, dict):
        return {k: iso_times(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [iso_times(v, key) for v in value]
    if key in TIME_KEYS and isinstance(value, int | float) and not isinstance(value, bool):
        return iso(value)
    return value


def human_value(value: Any) -> str:
    """One value for people: ``-`` for none, yes/no, ``a 1, b 2`` for a mapping."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{k} {human_value(v)}" for k, v in value.items()) or "(none)"
    if isinstance(value, list):
        return ", ".join(human_value(v) for v in value) or "(none)"
    return str(value)


def key_values(result: dict[str, Any]) -> str:
    """A result as ``key: value`` lines, times in UTC."""
    return "\n".join(
        f"{key}: {_human_time(value) if key in TIME_KEYS else human_value(value)}"
        for key, value in result.items()
    )


def _human_time(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return dt.datetime.fromtimestamp(value, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return human_value(value)

"""What an event is when it reaches a soul, and how its time is read.

``EventIn`` is the one shape of an incoming event, whatever channel it came from.
Its fields are checked for type by msgspec at the edge; its *text* is checked once,
by the hygiene gate inside the soul (the one write boundary).
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

__all__ = ["EventIn", "event_time"]


class EventIn(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One incoming event. Only ``text`` is required."""

    text: str
    # What sort of event: message, dm, soul, heartbeat, cron, webhook, wakeup, assistant...
    kind: str = "message"
    # Where it came from (socket, telegram, slack...), free text.
    channel: str | None = None
    # Who said it, as the channel names them.
    sender: str | None = None
    # The group chat it was said in; None for a one-to-one conversation.
    group: str | None = None
    # Whether the soul was addressed directly (an @-mention in a group).
    mentioned: bool = False
    # Idempotency key: the same (soul, ref) is stored once.
    ref: str | None = None
    # When it happened: ISO 8601 (UTC when no zone) or Unix seconds; default: now.
    ts: float | str | None = None
    # The conversation/session it belongs to.
    session: str | None = None


def event_time(ts: float | str | None, now: float) -> float:
    """Unix seconds for ``ts``; ``now`` when absent. Raises ValueError on a bad value."""
    if ts is None:
        return now
    if isinstance(ts, str):
        try:
            parsed = datetime.fromisoformat(ts.strip())
        except ValueError:
            raise ValueError(
                f"ts {ts!r} is not an ISO 8601 date-time; use e.g. 2026-11-29T09:30:00Z "
                "or Unix seconds"
            ) from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.timestamp()
    if isinstance(ts, bool) or not (0 <= ts < 1e11):
        raise ValueError(f"ts {ts!r} is not a plausible Unix time in seconds")
    return float(ts)

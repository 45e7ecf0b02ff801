"""What an event is when it reaches a soul, and how its time is read.

``EventIn`` is the one shape of an incoming event, whatever channel it came from.
Its fields are checked for type by msgspec at the edge; its *text* is checked once,
by the hygiene gate inside the soul (the one write boundary).
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import msgspec

__all__ = ["HEARD", "MAX_TS", "EventIn", "event_time", "with_replay_ref"]


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


# How a text that came through speech-to-text (kind "voice") is shown to a model, in a
# recalled item or a summary line alike: the words may not be what was said.
HEARD = "(heard, via speech-to-text: words may be misheard) "

# What a stored time may be, in Unix seconds: 1970-01-01 up to 5138-11-16. Every derived
# path (due dates, the memory map, decay) adds bounded spans to it and stays within the
# years datetime can hold, so the boundary makes them total.
MAX_TS = 1e11


def event_time(ts: float | str | None, now: float) -> float:
    """Unix seconds for ``ts``; ``now`` when absent. Raises ValueError on a bad value:
    not a date-time, or outside [0, MAX_TS) whether given as ISO 8601 or as seconds."""
    if ts is None:
        return now
    if isinstance(ts, str):
        try:
            parsed = datetime.fromisoformat(ts.strip())
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            seconds = parsed.timestamp()
        except ValueError:
            raise ValueError(
                f"ts {ts!r} is not an ISO 8601 date-time; use e.g. 2026-11-29T09:30:00Z "
                "or Unix seconds"
            ) from None
        except OverflowError:
            seconds = -1.0  # beyond what datetime holds once its offset applies
        if not 0 <= seconds < MAX_TS:
            raise ValueError(
                f"ts {ts!r} is outside the times soupd stores (1970-01-01 to 5138-11-16); "
                "check the date"
            )
        return seconds
    if isinstance(ts, bool) or not (0 <= ts < MAX_TS):
        raise ValueError(f"ts {ts!r} is not a plausible Unix time in seconds")
    return float(ts)


def with_replay_ref(event: EventIn) -> EventIn:
    """``event`` with an idempotency key derived from what it is, when it has no ``ref``
    but says when it happened: replaying an import file (after a crash, or twice) then
    stores each such event once. ``import:`` and a hash of its text, sender, time,
    session, kind, channel and group; an event without ``ts`` is stamped with the time
    it arrives, so a replay would be another event, and it gets no key."""
    if event.ref is not None or event.ts is None:
        return event
    what = [event.text, event.sender, event.ts, event.session, event.kind, event.channel]
    what.append(event.group)
    digest = hashlib.sha256(json.dumps(what, ensure_ascii=False).encode()).hexdigest()
    return msgspec.structs.replace(event, ref=f"import:{digest[:32]}")

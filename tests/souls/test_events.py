"""The incoming event shape and how its time is read."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

import msgspec
import pytest

from souls.events import MAX_TS, EventIn, event_time

NOW = 1_780_000_000.0


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> float:
    return datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp()


def test_no_time_means_now() -> None:
    assert event_time(None, NOW) == NOW


@pytest.mark.parametrize(
    ("ts", "expected"),
    [
        ("2026-11-29T09:30:00Z", utc(2026, 11, 29, 9, 30)),
        ("2026-11-29T09:30:00+00:00", utc(2026, 11, 29, 9, 30)),
        ("2026-11-29T10:30:00+01:00", utc(2026, 11, 29, 9, 30)),
        ("2026-11-29T04:00:00-05:30", utc(2026, 11, 29, 9, 30)),
        # No zone: UTC, never the machine's local zone.
        ("2026-11-29T09:30:00", utc(2026, 11, 29, 9, 30)),
        ("2026-11-29 09:30:00", utc(2026, 11, 29, 9, 30)),
        ("  2026-11-29T09:30:00Z \n", utc(2026, 11, 29, 9, 30)),
        ("2026-11-29T09:30:00.250Z", utc(2026, 11, 29, 9, 30) + 0.25),
        ("2026-11-29", utc(2026, 11, 29)),
    ],
)
def test_iso_times(ts: str, expected: float) -> None:
    assert event_time(ts, NOW) == pytest.approx(expected, abs=1e-6)


def test_naive_iso_time_ignores_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "IST-05:30")  # POSIX form: needs no tz database
    time.tzset()
    try:
        assert event_time("2026-11-29T09:30:00", NOW) == utc(2026, 11, 29, 9, 30)
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("ts", [0, 0.0, 1_700_000_000, 1_700_000_000.125, 99_999_999_999.0])
def test_unix_seconds(ts: float) -> None:
    assert event_time(ts, NOW) == float(ts)
    assert isinstance(event_time(ts, NOW), float)


@pytest.mark.parametrize(
    "ts", ["yesterday", "", "2026-13-01T00:00:00Z", "29/11/2026", "1700000000", "2026-11-29T25:00"]
)
def test_bad_strings_say_what_to_send(ts: str) -> None:
    with pytest.raises(ValueError, match="ISO 8601") as caught:
        event_time(ts, NOW)
    message = str(caught.value)
    assert repr(ts) in message
    assert "Unix seconds" in message
    assert "2026-11-29T09:30:00Z" in message  # an example of what works


@pytest.mark.parametrize(
    "ts", [-1, -0.5, 1e11, 1.7e12, 1.7e15, math.inf, -math.inf, math.nan, True, False]
)
def test_implausible_numbers_are_refused(ts: float) -> None:
    with pytest.raises(ValueError, match="plausible Unix time in seconds") as caught:
        event_time(ts, NOW)
    assert repr(ts) in str(caught.value)


def test_event_defaults_and_required_text() -> None:
    event = msgspec.json.decode(b'{"text": "hi"}', type=EventIn)
    assert event == EventIn(text="hi")
    assert (event.kind, event.mentioned, event.ref, event.ts) == ("message", False, None, None)
    with pytest.raises(msgspec.ValidationError, match="text"):
        msgspec.json.decode(b'{"kind": "dm"}', type=EventIn)


def test_event_rejects_unknown_fields_and_wrong_types() -> None:
    with pytest.raises(msgspec.ValidationError, match="unknown field `txt`"):
        msgspec.json.decode(b'{"text": "hi", "txt": "x"}', type=EventIn)
    with pytest.raises(msgspec.ValidationError, match=r"\$\.mentioned"):
        msgspec.json.decode(b'{"text": "hi", "mentioned": "yes"}', type=EventIn)


def test_event_ts_accepts_numbers_and_strings() -> None:
    as_int = msgspec.json.decode(b'{"text": "hi", "ts": 1700000000}', type=EventIn)
    as_str = msgspec.json.decode(b'{"text": "hi", "ts": "2026-11-29"}', type=EventIn)
    assert event_time(as_int.ts, NOW) == 1_700_000_000.0
    assert event_time(as_str.ts, NOW) == utc(2026, 11, 29)


@pytest.mark.parametrize(
    "ts",
    [
        "9999-12-31",
        "0001-01-01",
        "9999-12-31T23:59:59-12:00",
        "0001-01-01T00:00:00+14:00",
        "1969-12-31T23:59:59Z",
        "5138-11-17",
    ],
)
def test_an_iso_time_outside_the_stored_range_is_refused_like_seconds(ts: str) -> None:
    with pytest.raises(ValueError, match="outside the times soupd stores") as refused:
        event_time(ts, NOW)
    assert repr(ts) in str(refused.value)


def test_the_range_ends_alike_for_iso_and_seconds() -> None:
    assert event_time("1970-01-01T00:00:00Z", NOW) == 0.0
    assert event_time("5138-11-16", NOW) < MAX_TS
    assert event_time(MAX_TS - 1, NOW) == MAX_TS - 1
    with pytest.raises(ValueError, match="plausible Unix time"):
        event_time(MAX_TS, NOW)

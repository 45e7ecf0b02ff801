"""The dates a query names, as time ranges recall can prefer memories from.

"on 8 May, 2023", "May 8th 2023", "in May 2023", "2023-05-08", and relative to now:
"today", "yesterday", "this/last week|month|year", "3 days ago". A bare year names too
much of a long memory to prefer anything, and a month without a year is ambiguous:
neither is read. Times are UTC (as event times without a zone are).

Invariants a caller may rely on:

- Pure and deterministic: same text and ``now``, same ranges, in text order.
- A stretch of text is read once, as its most precise form (a full date is not also a
  month); a range never starts after it ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

__all__ = ["Grain", "Span", "spans"]

Grain = Literal["day", "week", "month"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
_M = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_D = r"(\d{1,2})(?:st|nd|rd|th)?"
_Y = r"((?:19|20)\d\d)"
_UNITS = {"day": 1, "days": 1, "week": 7, "weeks": 7}
_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("dmy", re.compile(rf"\b{_D}\s+(?:of\s+)?{_M},?\s*{_Y}\b", re.I)),
    ("mdy", re.compile(rf"\b{_M}\s+{_D},?\s*{_Y}\b", re.I)),
    ("my", re.compile(rf"\b{_M},?\s+(?:of\s+)?{_Y}\b", re.I)),
    ("rel", re.compile(r"\b(today|yesterday|(?:this|last)\s+(?:week|month|year))\b", re.I)),
    ("ago", re.compile(r"\b(\d{1,3}|a|one|two|three)\s+(days?|weeks?)\s+ago\b", re.I)),
)
_SMALL = {"a": 1, "one": 1, "two": 2, "three": 3}
# Every form needs a digit or one of these words: most queries are ruled out at once.
_HINT = re.compile(r"\d|today|yesterday|this|last|ago", re.I)
_DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class Span:
    """A stretch of time a query names: [start, end) in Unix seconds."""

    grain: Grain
    start: float
    end: float
    text: str  # the words that named it

    def holds(self, ts: float) -> bool:
        return self.start <= ts < self.end


def spans(text: str, now: float) -> list[Span]:
    """The time ranges ``text`` names, in text order. A day reaches a day either side
    (a date said in one zone is often stored in another)."""
    if _HINT.search(text) is None:
        return []
    found: list[tuple[int, Span]] = []
    taken: list[tuple[int, int]] = []
    for form, pattern in _FORMS:
        for match in pattern.finditer(text):
            a, b = match.span()
            if any(a < end and start < b for start, end in taken):
                continue
            try:
                span = _read(form, match.groups(), now, match.group(0))
            except ValueError:  # 31 February and the like
                continue
            if span is not None:
                taken.append((a, b))
                found.append((a, span))
    return [span for _, span in sorted(found, key=lambda pair: pair[0])]


def _read(form: str, groups: tuple[str, ...], now: float, words: str) -> Span | None:
    if form == "iso":
        return _day(datetime(int(groups[0]), int(groups[1]), int(groups[2]), tzinfo=UTC), words)
    if form == "dmy":
        day, month, year = int(groups[0]), _MONTHS[groups[1].lower()], int(groups[2])
        return _day(datetime(year, month, day, tzinfo=UTC), words)
    if form == "mdy":
        month, day, year = _MONTHS[groups[0].lower()], int(groups[1]), int(groups[2])
        return _day(datetime(year, month, day, tzinfo=UTC), words)
    if form == "my":
        return _month(int(groups[1]), _MONTHS[groups[0].lower()], words)
    today = datetime.fromtimestamp(now, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if form == "ago":
        count = _SMALL.get(groups[0].lower()) or int(groups[0])
        return _day(today - timedelta(days=count * _UNITS[groups[1].lower()]), words)
    phrase = " ".join(groups[0].lower().split())
    if phrase == "today":
        return _day(today, words)
    if phrase == "yesterday":
        return _day(today - _DAY, words)
    which, unit = phrase.split()
    if unit == "week":
        monday = today - timedelta(days=today.weekday())
        start = monday if which == "this" else monday - timedelta(days=7)
        return Span("week", start.timestamp(), (start + timedelta(days=7)).timestamp(), words)
    if unit == "month":
        year, month = today.year, today.month
        if which == "last":
            year, month = (year - 1, 12) if month == 1 else (year, month - 1)
        return _month(year, month, words)
    return None  # a year is too coarse to prefer anything


def _day(day: datetime, words: str) -> Span:
    return Span("day", (day - _DAY).timestamp(), (day + 2 * _DAY).timestamp(), words)


def _month(year: int, month: int, words: str) -> Span:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return Span("month", start.timestamp(), end.timestamp(), words)

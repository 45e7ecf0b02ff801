"""The dates a recall query names (souls.recall.dates): absolute forms, relative ones, and what
is deliberately not read."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from souls.recall.dates import spans

NOW = datetime(2026, 11, 29, 15, 30, tzinfo=UTC).timestamp()


def day(y: int, m: int, d: int) -> float:
    return datetime(y, m, d, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    "text",
    [
        "When did Melanie paint on 8 May, 2023?",
        "on 8th May 2023",
        "on May 8, 2023",
        "on May 8th,2023",
        "the 8 of May 2023",
        "on 2023-05-08",
        "on 8 may 2023",
    ],
)
def test_a_full_date_is_that_day_and_a_day_either_side(text: str) -> None:
    (span,) = spans(text, NOW)
    assert span.grain == "day"
    assert (span.start, span.end) == (day(2023, 5, 7), day(2023, 5, 10))
    assert span.holds(day(2023, 5, 8) + 13 * 3600)
    assert not span.holds(day(2023, 5, 10))


def test_a_month_and_year_is_that_month() -> None:
    (span,) = spans("What did Joanna write in August 2022?", NOW)
    assert (span.grain, span.start, span.end) == ("month", day(2022, 8, 1), day(2022, 9, 1))
    (december,) = spans("in December, 2023", NOW)
    assert (december.start, december.end) == (day(2023, 12, 1), day(2024, 1, 1))


def test_relative_dates_count_from_now() -> None:
    (today,) = spans("what did we decide today", NOW)
    assert (today.start, today.end) == (day(2026, 11, 28), day(2026, 12, 1))
    (yesterday,) = spans("the deploy yesterday", NOW)
    assert (yesterday.start, yesterday.end) == (day(2026, 11, 27), day(2026, 11, 30))
    (ago,) = spans("the outage 3 days ago", NOW)
    assert ago.start == day(2026, 11, 25)
    (week,) = spans("last week's retro", NOW)  # 29 Nov 2026 is a Sunday
    assert (week.grain, week.start, week.end) == ("week", day(2026, 11, 16), day(2026, 11, 23))
    (month,) = spans("this month", NOW)
    assert (month.start, month.end) == (day(2026, 11, 1), day(2026, 12, 1))
    (last_month,) = spans("last month", datetime(2027, 1, 5, tzinfo=UTC).timestamp())
    assert (last_month.start, last_month.end) == (day(2026, 12, 1), day(2027, 1, 1))


def test_a_day_that_does_not_exist_reads_as_its_month() -> None:
    (span,) = spans("on 31 February 2023", NOW)
    assert (span.grain, span.text) == ("month", "February 2023")


def test_several_dates_in_text_order_each_read_once() -> None:
    found = spans("between August 11, 2023 and August 15 2023, or in May 2024", NOW)
    assert [(s.grain, s.text) for s in found] == [
        ("day", "August 11, 2023"),
        ("day", "August 15 2023"),
        ("month", "May 2024"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "What is Caroline's identity?",
        "in 2023",  # a year prefers nothing in a long memory
        "in May",  # which May?
        "this year",
        "version 2.3 of the tool",
        "you may 2 go",
    ],
)
def test_what_is_not_a_date(text: str) -> None:
    assert spans(text, NOW) == []

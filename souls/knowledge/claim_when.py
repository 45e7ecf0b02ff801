"""When a told event happened: the past time phrase of a sentence, resolved against the
date the sentence was said (DESIGN §3.10, event entries).

``find_when(text, ts)`` reads English and Chinese phrases that point back in time
(yesterday, last week, three years ago, last Saturday, in 2019, 昨天, 上周, 去年, 三年前,
上个月) and returns where the phrase is, the moment it names and how precise it is.
What a caller may rely on:

- Everything resolves in UTC against ``ts`` (the event's own date, not the clock): "last
  year" said on 2023-05-08 is 2022, "yesterday" is 2023-05-07.
- The moment is the start of the period named (midnight of a day, Monday of a week, the
  1st of a month, 1 January of a year); ``precision`` says which ("day", "week",
  "month", "year"), so a reader shows "2022" for "last year", never a made-up day.
- "last Monday" is the latest Monday before the day said; "this morning", "today",
  "tonight", 今天 and 刚才 are that day. Chinese numerals count (三天前, 两年前).
- A phrase that is not in the past ("next week", 明天) is not read here: plans have
  ``souls.knowledge.claim_dates.find_due``.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Literal, NamedTuple

from souls.knowledge.claim_dates import zh_number
from souls.knowledge.claim_scan import Cue

__all__ = ["Precision", "When", "find_when", "shown"]

Precision = Literal["day", "week", "month", "year"]


class When(NamedTuple):
    start: int  # text[start:end] is the phrase
    end: int
    at: float  # UTC epoch of the start of the period named
    precision: Precision


_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_EN_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_COUNT = (
    r"\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|a\s+couple(?:\s+of)?"
    r"|several|couple(?:\s+of)?"
)
_COUNTS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a few": 3, "few": 3, "several": 3,
    "a couple": 2, "a couple of": 2, "couple": 2, "couple of": 2,
}  # fmt: skip
_ZH_NUM = "零一二两三四五六七八九十百"
_WHEN = re.compile(
    r"(?i:(?P<yesterday>\byesterday\b)"
    r"|(?P<today>\b(?:this\s+(?:morning|afternoon|evening)|earlier\s+today|today|tonight"
    r"|last\s+night)\b)"
    r"|(?P<other_day>\bthe\s+other\s+day\b)"
    r"|\b(?P<ago>(?P<n>" + _COUNT + r")\s+(?P<unit>day|week|month|year)s?\s+ago)\b"
    r"|\blast\s+(?P<last_unit>week(?:end)?|month|year|summer|winter|spring|fall|autumn)\b"
    r"|\b(?:last|this\s+past|past)\s+(?P<last_wd>" + "|".join(_EN_WEEKDAYS) + r")\b"
    r"|\bthis\s+(?:past\s+)?(?P<this_unit>week(?:end)?|month|year)\b"
    r"|\bin\s+(?P<year>(?:19|20)\d\d)\b"
    r"|\b(?:in|last|this\s+past)\s+(?P<month>" + "|".join(_EN_MONTHS) + r")\b(?!\s+\d))"
    r"|(?P<zh_day>前天|昨天|昨晚|今天|今早|今晚|刚才|早上|上午|下午)"
    r"|(?P<zh_last>上(?:个)?(?:周末|周|星期|礼拜|月)|去年|前年)"
    r"|(?P<zh_ago>(?P<zn>[" + _ZH_NUM + r"\d]{1,3}|几)(?:个)?(?P<zunit>天|周|星期|礼拜|月|年)"
    r"(?:前|以前|之前))"
)
_ZH_DAYS = {"前天": 2, "昨天": 1, "昨晚": 1}
# What every alternative of _WHEN needs: most sentences name no time and skip the scan.
_CUE = Cue(
    "yesterday|today|tonight|this|other|ago|last|past|19|20|" + "|".join(_EN_MONTHS),
    "前|昨|今|刚才|早上|午|上|去年",
)


def _start(day: date, precision: Precision) -> float:
    if precision == "week":
        day -= timedelta(days=day.weekday())
    elif precision == "month":
        day = day.replace(day=1)
    elif precision == "year":
        day = day.replace(month=1, day=1)
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()


def _back(today: date, n: int, unit: str) -> tuple[date, Precision]:
    if unit in ("day", "天"):
        return today - timedelta(days=n), "day"
    if unit in ("week", "周", "星期", "礼拜"):
        return today - timedelta(weeks=n), "week"
    if unit in ("month", "月"):
        months = today.year * 12 + today.month - 1 - n
        return date(months // 12, months % 12 + 1, 1), "month"
    return date(today.year - n, 1, 1), "year"


def find_when(text: str, ts: float) -> When | None:
    """The first past time phrase of ``text``, resolved against ``ts``; None if none."""
    if _CUE.absent(text):
        return None
    today = datetime.fromtimestamp(ts, UTC).date()
    for m in _WHEN.finditer(text):
        resolved = _resolve(m, today)
        if resolved is not None:
            day, precision = resolved
            return When(m.start(), m.end(), _start(day, precision), precision)
    return None


def _resolve(m: re.Match[str], today: date) -> tuple[date, Precision] | None:
    g = m.group
    if g("yesterday"):
        return today - timedelta(days=1), "day"
    if g("today"):
        return today, "day"
    if g("other_day"):
        return today - timedelta(days=2), "week"
    if g("ago"):
        return _back(today, _COUNTS.get(" ".join(g("n").lower().split()), 0) or int(
            g("n") if g("n").isdigit() else 1), g("unit").lower())  # fmt: skip
    if g("last_unit"):
        unit = g("last_unit").lower()
        if unit == "weekend":
            saturday = today - timedelta(days=(today.weekday() - 5) % 7 or 7)
            return saturday, "day"
        if unit in ("week", "month", "year"):
            return _back(today, 1, unit)
        return date(today.year - 1, 1, 1), "year"  # last summer: the year before
    if g("last_wd"):
        weekday = _EN_WEEKDAYS.index(g("last_wd").lower())
        return today - timedelta(days=(today.weekday() - weekday) % 7 or 7), "day"
    if g("this_unit"):
        unit = g("this_unit").lower()
        if unit == "weekend":
            return today - timedelta(days=(today.weekday() - 5) % 7), "day"
        return today, "week" if unit == "week" else "month" if unit == "month" else "year"
    if g("year"):
        year = int(g("year"))
        return (date(year, 1, 1), "year") if year <= today.year else None
    if g("month"):
        month = _EN_MONTHS.index(g("month").lower()) + 1
        year = today.year if month <= today.month else today.year - 1
        return date(year, month, 1), "month"
    if g("zh_day"):
        return today - timedelta(days=_ZH_DAYS.get(g("zh_day"), 0)), "day"
    if g("zh_last"):
        word = g("zh_last")
        if word == "去年":
            return date(today.year - 1, 1, 1), "year"
        if word == "前年":
            return date(today.year - 2, 1, 1), "year"
        if word.endswith("月"):
            return _back(today, 1, "month")
        if word.endswith("周末"):
            return today - timedelta(days=(today.weekday() - 5) % 7 or 7), "day"
        return _back(today, 1, "week")
    count = g("zn")
    n = 3 if count == "几" else int(count) if count.isdigit() else zh_number(count)
    return None if n is None else _back(today, n, g("zunit"))


def shown(at: float, precision: Precision) -> str:
    """The moment as a reader should see it: 2022, 2022-05, the week of 2022-05-02, or
    2022-05-08."""
    day = datetime.fromtimestamp(at, UTC).date()
    if precision == "year":
        return f"{day.year}"
    if precision == "month":
        return f"{day.year}-{day.month:02d}"
    if precision == "week":
        return f"week of {day.isoformat()}"
    return day.isoformat()

# ruff: noqa: RUF001  (Chinese numerals are what the date patterns read)
"""Due dates of plans and commitments: the first date phrase of a sentence, as a day.

``find_due(text, ts)`` reads ISO dates, English and Chinese month-day dates, relative
days (tomorrow, 后天, in 3 days) and weekdays, resolved against ``ts`` in UTC. What a
caller may rely on: the day is midnight UTC, as a bare date in TASKS.md is read (DESIGN
§3.9); "next Monday" and 下周一 are the Monday of next week, "this Monday" and 这周一
the Monday of this week, and a bare weekday ("on Friday", 周五) its next occurrence after
today; a month-day without a year is its next occurrence from today. Chinese numerals
count in month-days (五月八号, 十二月二十五日; ``zh_number``), and a phrase naming no real
day (2月30日) is skipped.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from souls.knowledge.claim_fragments import MONTH
from souls.knowledge.claim_scan import Cue

__all__ = ["ZH_MONTH_DAY", "find_due", "zh_number"]

# Dates. Each alternative is one named group; find_due resolves the first match.
_MONTH_PREFIXES = (
    "jan",
    "feb",
    "mar",
    "apr",
    "may",
    "jun",
    "jul",
    "aug",
    "sep",
    "oct",
    "nov",
    "dec",
)
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_WEEKDAYS = "一二三四五六日"
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_RELATIVE = {"今天": 0, "今晚": 0, "明天": 1, "明早": 1, "明晚": 1, "后天": 2, "大后天": 3}
_ZH_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2, "〇": 0}
_ZH_NUMERAL = "[零〇一二两三四五六七八九十]{1,3}"
# A Chinese month-day, the year optional, in digits or numerals (5月8号, 五月八号).
ZH_MONTH_DAY = (
    rf"(?:(?P<zy>\d{{4}})年)?(?P<zm>\d{{1,2}}|{_ZH_NUMERAL})月(?P<zd>\d{{1,2}}|{_ZH_NUMERAL})[日号]"
)


def zh_number(text: str) -> int | None:
    """A Chinese numeral from 0 to 99 (八, 十二, 二十三, 两) or digits; None otherwise."""
    if text.isdigit():
        return int(text)
    if not text or any(c not in _ZH_DIGITS and c != "十" for c in text) or text.count("十") > 1:
        return None
    if "十" not in text:
        return _ZH_DIGITS[text] if len(text) == 1 else None
    tens, _, ones = text.partition("十")
    if len(tens) > 1 or len(ones) > 1:
        return None
    return (_ZH_DIGITS[tens] if tens else 1) * 10 + (_ZH_DIGITS[ones] if ones else 0)


_DATE = re.compile(
    r"(?P<iso>\b(?P<iy>\d{4})-(?P<im>\d\d)-(?P<id>\d\d)\b)"
    rf"|(?P<zh_md>{ZH_MONTH_DAY})"
    r"|(?P<zh_rel>大后天|后天|明天|明早|明晚|今天|今晚)"
    r"|(?P<zh_wd>(?P<zpre>下个?|这个?|本)?(?:周|星期|礼拜)(?P<zday>[一二三四五六日天])(?![定直起样般些点]))"
    r"|(?i:(?P<en_rel>\bthe\s+day\s+after\s+tomorrow\b|\btomorrow\b|\btoday\b|\btonight\b))"
    r"|(?i:(?P<en_wd>(?:\b(?P<epre>next|this|coming|on|by|until|before)\s+)?\b"
    r"(?P<eday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b(?!s)))"
    rf"|(?i:(?P<en_md>\b(?P<mon1>{MONTH})\.?\s+(?P<day1>\d{{1,2}})(?:st|nd|rd|th)?\b"
    r"(?:,?\s+(?P<year1>\d{4})\b)?))"
    rf"|(?i:(?P<en_dm>\b(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon2>{MONTH})\b"
    r"(?:,?\s+(?P<year2>\d{4})\b)?))"
    r"|(?i:(?P<en_in>\bin\s+(?P<n>\d{1,2}|one|two|three|four|five|six|seven)\s+days?\b))"
)


# What every alternative of _DATE needs, with a digit (ISO and month-day dates): most
# sentences name no date and skip the scan.
_CUE = Cue("day|tomorrow|tonight", "月|后天|明|今|周|星期|礼拜")
_DIGIT = re.compile(r"\d")


def find_due(text: str, ts: float) -> tuple[int, int, float] | None:
    """(start, end, midnight UTC epoch) of the first date phrase in ``text`` that names a
    real day, resolved against ``ts``; None when there is none."""
    if _CUE.absent(text) and _DIGIT.search(text) is None:
        return None
    today = datetime.fromtimestamp(ts, UTC).date()
    for m in _DATE.finditer(text):
        day = _resolve(m, today)
        if day is not None:
            epoch = datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()
            return m.start(), m.end(), epoch
    return None


def _resolve(m: re.Match[str], today: date) -> date | None:
    g = m.group
    monday = today - timedelta(days=today.weekday())
    try:
        if g("iso"):
            return date(int(g("iy")), int(g("im")), int(g("id")))
        if g("zh_md"):
            month, day = zh_number(g("zm")), zh_number(g("zd"))
            if month is None or day is None:
                return None
            return _month_day(today, g("zy"), month, day)
        if g("en_md") or g("en_dm"):
            month = _month_number(g("mon1") or g("mon2"))
            return _month_day(today, g("year1") or g("year2"), month, int(g("day1") or g("day2")))
    except ValueError:  # 2月30日, February 31
        return None
    if g("zh_rel"):
        return today + timedelta(days=_RELATIVE[g("zh_rel")])
    if g("en_rel"):
        word = g("en_rel").lower()
        return today + timedelta(days=2 if "after" in word else 1 if word == "tomorrow" else 0)
    if g("zh_wd"):
        weekday = _ZH_WEEKDAYS.find(g("zday").replace("天", "日"))
        return _weekday(today, monday, weekday, (g("zpre") or "")[:1] or None)
    if g("en_wd"):
        prefix = {"next": "下", "this": "这"}.get((g("epre") or "").lower())
        return _weekday(today, monday, _EN_WEEKDAYS.index(g("eday").lower()), prefix)
    n = g("n").lower()
    return today + timedelta(days=int(n) if n.isdigit() else _NUMBERS[n])


def _weekday(today: date, monday: date, weekday: int, prefix: str | None) -> date:
    if prefix == "下":
        return monday + timedelta(days=7 + weekday)
    if prefix in ("这", "本"):
        return monday + timedelta(days=weekday)
    return today + timedelta(days=(weekday - today.weekday()) % 7 or 7)


def _month_number(name: str) -> int:
    return _MONTH_PREFIXES.index(name.lower()[:3]) + 1


def _month_day(today: date, year: str | None, month: int, day: int) -> date:
    if year:
        return date(int(year), month, day)
    this_year = date(today.year, month, day)
    return this_year if this_year >= today else date(today.year + 1, month, day)

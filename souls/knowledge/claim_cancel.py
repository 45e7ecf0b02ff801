# ruff: noqa: RUF001  (full-width punctuation is what the Chinese patterns match)
"""Plans called off: "we cancelled the trip to Paris", "I'm not going to the gym anymore",
"the party is off", 我们取消了去巴黎的旅行, 成都不去了 (DESIGN §3.10: cancellations close
plans).

``find_cancelled(sentence)`` finds what a statement calls off, verbatim; ``closes(plan,
cancelled)`` says whether a stored plan is the one called off. What a caller may rely
on: only first-person cancellations and cancelled things with a determiner ("the
party", "our trip") are read; a plan is closed only when it shares a content term with
what was called off (a word of three letters or more that is no time word, or a
Chinese bigram), so "we cancelled dinner" never closes "fly to Tokyo".
"""

from __future__ import annotations

import re

from souls.knowledge.claim_fragments import AP, HAN
from souls.knowledge.claim_scan import Claimed, Cue
from souls.text.tokenize import query_terms

__all__ = ["closes", "find_cancelled"]

_THING = r"(?P<v>[A-Za-z][A-Za-z0-9'’\- ]{1,60}?)"
# The guard first: the end is tried after every character of the lazy _THING.
_END = (
    r"(?![^\s,;:.!?()])(?=\s*$|\s*[,;:.!?()]"
    r"|\s+(?i:but|because|since|so|and|after\s+all|anymore|any\s+more)\b)"
)
_ZH_THING = rf"(?P<v>[{HAN}A-Za-z0-9]{{2,20}}?)"
_ZH_END = r"(?=$|[\s，。！？、,.!?；;：:~～…]|了|啦|吧|哦|呢)"
# Each pattern with what it needs (claim_scan.Cue): most sentences call nothing off.
_PATTERNS: tuple[tuple[Cue, re.Pattern[str]], ...] = (
    (
        Cue("cancel|off|gave|scrap|dropped|postponed"),
        re.compile(
            rf"(?i:\b(?:i|we)(?:{AP}ve|\s+have|{AP}d|\s+had)?\s+(?:just\s+|finally\s+|already\s+"
            rf"|had\s+to\s+|decided\s+to\s+)?(?:cancel(?:l?ed)?|called\s+off|call\s+off|gave\s+up\s+on"
            rf"|scrapped|scrap|dropped|postponed)\s+(?:the\s+|our\s+|my\s+|this\s+|that\s+)?){_THING}"
            rf"{_END}"
        ),
    ),
    (
        Cue("cancel|off"),
        re.compile(
            rf"(?i:\b(?:the|our|my)\s+){_THING}(?i:\s+(?:is|was|got|has\s+been|had\s+to\s+be)\s+"
            r"(?:cancel(?:l?ed)|called\s+off|off)\b)"
        ),
    ),
    (
        Cue("more|after"),
        re.compile(
            rf"(?i:\b(?:i{AP}m|i\s+am|we{AP}re|we\s+are)\s+(?:not|no\s+longer)\s+(?:going\s+to|gonna"
            rf"|going)\s+){_THING}(?i:\s+(?:anymore|any\s+more|after\s+all))"
        ),
    ),
    (
        Cue("", "取消|推迟|放弃"),
        re.compile(
            rf"我(?:们)?(?:已经|还是|只好|决定)?(?:取消了?|推迟了?|放弃了?){_ZH_THING}{_ZH_END}"
        ),
    ),
    (
        Cue("", "取消了|泡汤了|黄了|不去了|不办了"),
        re.compile(
            rf"(?:^|(?<=[，,。！!\s]))(?:我们?的?)?{_ZH_THING}(?:取消了|泡汤了|黄了|不去了|不办了)"
        ),
    ),
    (Cue("", "不"), re.compile(rf"我(?:们)?(?:不|不打算)(?:去|办|买|搞|做){_ZH_THING}了")),
)
_TIME_WORDS = frozenset(
    "next week month year tomorrow tonight today weekend monday tuesday wednesday thursday"
    " friday saturday sunday day".split()
)


def find_cancelled(sentence: str) -> list[tuple[int, int, str]]:
    """(start, end, what was called off) of each cancellation in ``sentence``: the quote
    is ``sentence[start:end]``, the value a verbatim piece of it."""
    found: list[tuple[int, int, str]] = []
    taken = Claimed(len(sentence))  # a cancellation never starts inside an earlier one
    low = sentence.lower()
    for cue, pattern in _PATTERNS:
        if cue.absent(sentence, low):
            continue
        for m in pattern.finditer(sentence):
            value = m.group("v").strip()
            if len(value) >= 2 and not taken.holds(m.start()):
                taken.take(m.start(), m.end())
                found.append((m.start(), m.end(), value))
    return found


def _content(text: str) -> set[str]:
    return {
        t
        for t in query_terms(text)
        if t not in _TIME_WORDS and (len(t) >= 3 if t.isascii() else len(t) == 2)
    }


def closes(plan: str, cancelled: str) -> bool:
    """Whether the stored plan ``plan`` is what ``cancelled`` calls off."""
    return bool(_content(plan) & _content(cancelled))

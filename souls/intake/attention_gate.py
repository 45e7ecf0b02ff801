"""The attention gate (DESIGN §3.2): rule-based salience, no LLM.

A score starts at ``base``; each rule that applies adds its delta once; the sum is
clamped to [0, 1] and rounded to 4 decimals. An event scoring below ``drop_below`` is
dropped before it is written; otherwise the score becomes its salience.

==================  ==========================================================  =======
rule                applies when                                                default
==================  ==========================================================  =======
direct              ``kind`` in direct_kinds, or ``mentioned`` is true          +0.4
soul_to_soul        ``kind`` in soul_kinds                                      +0.2
routine             ``kind`` in routine_kinds                                   -0.3
alarm               the text contains an alarm keyword                          +0.3
group_unmentioned   ``group`` is non-empty and ``mentioned`` is not true        -0.15
==================  ==========================================================  =======

The gate is pure and deterministic: same config and input, same score.
"""

from __future__ import annotations

import re

import msgspec

__all__ = ["AttentionConfig", "AttentionGate"]

# Keywords with a CJK character are matched as substrings (CJK has no spaces between
# words); all others as whole words, case-insensitively.
_CJK_CHAR = re.compile("[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]")


class AttentionConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Where every score starts.
    base: float = 0.5
    # Added when the event is addressed to the soul: a direct kind, or a mention.
    direct: float = 0.4
    # Added when another soul sent the event.
    soul_to_soul: float = 0.2
    # Added (negative) for machine-made routine events.
    routine: float = -0.3
    # Added when the text contains an alarm keyword.
    alarm: float = 0.3
    # Added (negative) when the event comes from a group and does not mention the soul.
    group_unmentioned: float = -0.15
    # Events scoring below this are dropped before they are written.
    drop_below: float = 0.25
    # Kinds that count as addressed to the soul.
    direct_kinds: list[str] = msgspec.field(default_factory=lambda: ["dm", "wakeup"])
    # Kinds sent by another soul.
    soul_kinds: list[str] = msgspec.field(default_factory=lambda: ["soul"])
    # Kinds produced by timers rather than by anyone speaking.
    routine_kinds: list[str] = msgspec.field(default_factory=lambda: ["heartbeat", "cron"])
    # Whole words or phrases (case-insensitive; a space matches any whitespace), or CJK
    # substrings. Inflections are listed because matching is exact: "terror" is no alarm.
    alarm_keywords: list[str] = msgspec.field(
        default_factory=lambda: [
            *("error", "errors", "fail", "fails", "failed", "failing", "failure", "failures"),
            *("exception", "exceptions", "crash", "crashes", "crashed", "crashing"),
            *("timeout", "timeouts", "timed out", "outage", "outages", "panic", "panicked"),
            *("traceback", "fatal", "broken", "is down", "went down", "segfault"),
            *("错误", "失败", "异常", "崩溃", "超时", "故障", "报错", "宕机"),
        ]
    )

    def __post_init__(self) -> None:
        if not 0.0 <= self.drop_below <= 1.0:
            raise ValueError("drop_below must be between 0 and 1")
        if any(not keyword.strip() for keyword in self.alarm_keywords):
            raise ValueError("alarm_keywords must not contain blank entries")


# A boundary is "no Latin letter or digit next to it": "error:", "db_error" and
# "error发生" match, "terror" and "errorless" do not.
_WORDISH = r"[a-z0-9\u00c0-\u024f]"


def _alarm_regex(keywords: list[str]) -> re.Pattern[str] | None:
    """One regex for all keywords, to search in lowered text (cheaper than re.IGNORECASE).

    Whole-word keywords are grouped by their first character, and the boundary before
    a keyword is checked once that character matched: every alternative then starts
    with a literal, so the regex engine skips ahead to where one of them could start.
    """
    keywords = [k.strip().lower() for k in keywords]
    parts = [re.escape(k) for k in keywords if _CJK_CHAR.search(k)]
    rests: dict[str, list[str]] = {}
    for word in (k for k in keywords if not _CJK_CHAR.search(k)):
        first = re.escape(word[0])
        rests.setdefault(first, []).append(r"\s+".join(map(re.escape, word.split()))[len(first) :])
    for first, alts in rests.items():
        parts.append(rf"{first}(?<!{_WORDISH}{first})(?:{'|'.join(alts)})(?!{_WORDISH})")
    return re.compile("|".join(parts)) if parts else None


def _alarm_hints(keywords: list[str]) -> tuple[str, ...]:
    """Substrings of which any text the alarm regex matches (lowered) holds one: each
    keyword's longest word, left out when it holds a shorter hint. Testing them costs
    about a tenth of the regex, which then runs only on the few texts that hold one."""
    longest = {max(k.strip().lower().split(), key=len) for k in keywords}
    return tuple(sorted(h for h in longest if not any(o != h and o in h for o in longest)))


class AttentionGate:
    """Scores events against one AttentionConfig; build once, call per event."""

    def __init__(self, config: AttentionConfig) -> None:
        self._config = config
        self._direct_kinds = frozenset(config.direct_kinds)
        self._soul_kinds = frozenset(config.soul_kinds)
        self._routine_kinds = frozenset(config.routine_kinds)
        self._alarm = _alarm_regex(config.alarm_keywords)
        self._alarm_hints = _alarm_hints(config.alarm_keywords)

    def explain(
        self, *, kind: str, text: str, group: str | None, mentioned: bool | None
    ) -> list[tuple[str, float]]:
        """The rules that fire for this event, as (rule, delta), in table order."""
        c = self._config
        fired: list[tuple[str, float]] = []
        if kind in self._direct_kinds or mentioned is True:
            fired.append(("direct", c.direct))
        if kind in self._soul_kinds:
            fired.append(("soul_to_soul", c.soul_to_soul))
        if kind in self._routine_kinds:
            fired.append(("routine", c.routine))
        if self._alarmed(text):
            fired.append(("alarm", c.alarm))
        if group and mentioned is not True:
            fired.append(("group_unmentioned", c.group_unmentioned))
        return fired

    def score(self, *, kind: str, text: str, group: str | None, mentioned: bool | None) -> float:
        """Salience in [0, 1], rounded to 4 decimals."""
        fired = self.explain(kind=kind, text=text, group=group, mentioned=mentioned)
        total = self._config.base + sum(delta for _, delta in fired)
        return round(min(1.0, max(0.0, total)), 4)

    def _alarmed(self, text: str) -> bool:
        """Whether ``text`` holds an alarm keyword."""
        if self._alarm is None:
            return False
        low = text.lower()
        for hint in self._alarm_hints:
            if hint in low:
                return self._alarm.search(low) is not None
        return False

    def admits(self, score: float) -> bool:
        """Whether an event with this score is kept (``score >= drop_below``)."""
        return score >= self._config.drop_below

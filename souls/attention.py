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


def _alarm_regex(keywords: list[str]) -> re.Pattern[str] | None:
    """One regex for all keywords, to search in lowered text (cheaper than re.IGNORECASE)."""
    keywords = [k.strip().lower() for k in keywords]
    parts = [re.escape(k) for k in keywords if _CJK_CHAR.search(k)]
    words = [k for k in keywords if not _CJK_CHAR.search(k)]
    if words:
        # A boundary is "no Latin letter or digit next to it": "error:", "db_error" and
        # "error发生" match, "terror" and "errorless" do not.
        alts = "|".join(r"\s+".join(map(re.escape, w.split())) for w in words)
        parts.append(rf"(?<![a-z0-9\u00c0-\u024f])(?:{alts})(?![a-z0-9\u00c0-\u024f])")
    return re.compile("|".join(parts)) if parts else None


class AttentionGate:
    """Scores events against one AttentionConfig; build once, call per event."""

    def __init__(self, config: AttentionConfig) -> None:
        self._config = config
        self._direct_kinds = frozenset(config.direct_kinds)
        self._soul_kinds = frozenset(config.soul_kinds)
        self._routine_kinds = frozenset(config.routine_kinds)
        self._alarm = _alarm_regex(config.alarm_keywords)

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
        if self._alarm is not None and self._alarm.search(text.lower()) is not None:
            fired.append(("alarm", c.alarm))
        if group and mentioned is not True:
            fired.append(("group_unmentioned", c.group_unmentioned))
        return fired

    def score(self, *, kind: str, text: str, group: str | None, mentioned: bool | None) -> float:
        """Salience in [0, 1], rounded to 4 decimals."""
        fired = self.explain(kind=kind, text=text, group=group, mentioned=mentioned)
        total = self._config.base + sum(delta for _, delta in fired)
        return round(min(1.0, max(0.0, total)), 4)

    def admits(self, score: float) -> bool:
        """Whether an event with this score is kept (``score >= drop_below``)."""
        return score >= self._config.drop_below

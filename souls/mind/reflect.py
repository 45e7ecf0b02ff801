"""Reflect (DESIGN §3.4): fold new observations into the consolidated summary.

A ``Reflector`` turns (previous summary, observations since the last reflect, budget)
into the next summary, a Markdown text of at most ``budget`` characters. Two exist: the
``ExtractiveReflector`` here (the default: no LLM, no I/O) and ``souls.llm.chat.LLMReflector``.

The extractive reflector's output has a fixed layout, non-empty sections only::

    ## Failures and alarms
    - deploy failed: database migration timeout [m1001]
    ## Open questions
    - when do we migrate the billing db? [m77]
    ## Notable
    - deploy ok (×1000) [m1, m1000]

Invariants a caller may rely on:

- Deterministic: same input, same bytes. Nothing depends on the clock or on hashing.
- ``len(result) <= budget``.
- With no observations the previous summary is returned unchanged if it fits the budget
  (so MEMORY.md and the prompt prefix stay byte-identical); any other non-empty result
  ends with a newline.
- A line is one observation or a group of near-duplicates (same text after NFKC,
  casefolding, digits → 0 and punctuation → space) shown once with its count and the
  first and last memory ids. Its section is the most urgent of its members': failure
  (an alarm keyword, as the attention gate matches them) → open question → notable.
- Sections rank strictly: a notable line never displaces a failure or an open question.
  Within a section, lines rank by 0.6·salience + 0.4·surprise; a line of the previous
  summary ranks by its position there, scaled down a little so the summary moves on.
- Any Markdown is accepted as ``previous``: each non-empty, non-heading line becomes a
  candidate line; list markers, a trailing ``(×N)`` and trailing ``[m1, m2]`` are parsed.
"""  # noqa: RUF002 (the multiplication sign is meant)

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

from souls.events import HEARD
from souls.intake.attention_gate import AttentionConfig, AttentionGate
from souls.store.inner import Observation
from supervisor.pace import Pacer, in_worker

__all__ = ["REFLECT_OFFLOAD_CHARS", "ExtractiveReflector", "Observation", "Reflector"]

# From this many characters of input on (the previous summary and the observations'
# texts), ``ExtractiveReflector.reflect`` summarises in a worker process. Measured: about
# 0.3 ms of CPU per thousand characters (a 4,000-character summary and 20 chat lines:
# 1.9 ms; 400 chat lines: 12 ms), against about 0.2 ms of the loop's time for the
# hand-over of such an input (pickling both ways, two pipe hops).
REFLECT_OFFLOAD_CHARS = 2048


class Reflector(Protocol):
    name: str  # "extractive" / "llm"

    async def reflect(
        self, previous: str, observations: Sequence[Observation], budget: int
    ) -> str: ...


_FAILURES, _QUESTIONS, _NOTABLE = 0, 1, 2
_HEADINGS = ("## Failures and alarms", "## Open questions", "## Notable")
# Headings an LLM (or a person) may have written instead of ours, by substring.
_HEADING_HINTS = (
    (_FAILURES, ("fail", "alarm", "error", "incident", "故障", "错误", "失败", "告警")),
    (_QUESTIONS, ("question", "open issue", "问题", "疑问")),
)

# Score of the previous summary's lines: from _PREVIOUS_TOP (first line of a section) down
# to _PREVIOUS_BOTTOM (last), times _PREVIOUS_DECAY. An ordinary message (0.5 salience,
# 0.5 surprise) lands in the middle; a DM or an alarm beats the top line; routine
# heartbeats (salience 0.2) never displace a previous line.
_PREVIOUS_TOP = 0.8
_PREVIOUS_BOTTOM = 0.4
_PREVIOUS_DECAY = 0.9
# Longest line text in characters; also at most a quarter of the budget, so one long
# message cannot take the whole summary.
_MAX_LINE_TEXT = 240
_MIN_LINE_TEXT = 16

_QUESTION_START = re.compile(
    r"(?:who|whom|whose|what|when|where|which|why|how)\b"
    r"|(?:什么|为什么|为何|怎么|怎样|如何|谁|哪|是否|是不是|何时|多少|几时|能否|可否)"
)
_QUESTION_END = ("?", "\uff1f", "吗", "吗。", "呢", "什么")
_DIGITS = re.compile(r"\d+")
_PUNCT = re.compile(r"[\W_]+")
_LIST_MARKER = re.compile(r"^(?:[-*+•]|\d+[.)])\s+")
_TRAILING_IDS = re.compile(r"\s*\[(m\d+(?:\s*,\s*m\d+)*)\]\s*$")
_TIMES = "\u00d7"  # MULTIPLICATION SIGN, as in a count: "deploy ok (<sign>3)"
_TRAILING_COUNT = re.compile(rf"\s*\(\s*[{_TIMES}x]\s*(\d+)\s*\)\s*$")


@dataclass(slots=True)
class _Line:
    """A candidate line: near-duplicate observations and/or one previous line."""

    key: str
    text: str
    section: int
    score: float
    count: int = 0
    ids: list[int] = field(default_factory=list)  # [first, last] or fewer
    latest: tuple[float, int] = (-math.inf, -1)  # (ts, id) of the text shown

    def add_ids(self, ids: Sequence[int]) -> None:
        if len(ids) == 1 and len(self.ids) == 2 and self.ids[0] <= ids[0] <= self.ids[1]:
            return  # already within [first, last]
        merged = sorted({*self.ids, *ids})
        self.ids = merged if len(merged) <= 2 else [merged[0], merged[-1]]

    def render(self) -> str:
        count = f" ({_TIMES}{self.count})" if self.count > 1 else ""
        ids = f" [{', '.join(f'm{i}' for i in self.ids)}]" if self.ids else ""
        return f"- {self.text}{count}{ids}"

    def order(self) -> tuple[int, float, int, str]:
        return (self.section, -self.score, -(self.ids[-1] if self.ids else -1), self.key)


class ExtractiveReflector:
    """Deterministic, LLM-free reflector; build once, call ``summarise`` or ``reflect``.

    ``alarm_keywords`` defaults to the attention gate's; pass a soul's own list so the
    two agree on what a failure is.
    """

    name: str = "extractive"

    def __init__(self, alarm_keywords: Sequence[str] | None = None) -> None:
        self._alarm_keywords = None if alarm_keywords is None else tuple(alarm_keywords)
        config = (
            AttentionConfig()
            if alarm_keywords is None
            else AttentionConfig(alarm_keywords=list(alarm_keywords))
        )
        self._gate = AttentionGate(config)

    async def reflect(self, previous: str, observations: Sequence[Observation], budget: int) -> str:
        """``summarise``, without holding up another soul's mail: from
        :data:`REFLECT_OFFLOAD_CHARS` of input on in a worker process, below it on the
        shared event loop, giving the loop back every slice. Cancelling it (or the worker
        process, which it kills) leaves nothing behind: the reflector keeps no state."""
        if budget <= 0 or (not observations and len(previous) <= budget):
            return self.summarise(previous, observations, budget)
        size = len(previous) + sum(len(obs.text) for obs in observations)
        if size >= REFLECT_OFFLOAD_CHARS:
            return await in_worker(
                _summarise, self._alarm_keywords, previous, list(observations), budget
            )
        pace = Pacer()
        lines, text_cap = self._begin(previous, budget)
        for obs in observations:
            await pace()
            self._add(lines, obs, text_cap)
        return _layout(sorted(lines.values(), key=_Line.order), budget)

    def summarise(self, previous: str, observations: Sequence[Observation], budget: int) -> str:
        """The next summary; pure CPU, a few milliseconds per thousand observations."""
        if budget <= 0:
            return ""
        if not observations and len(previous) <= budget:
            return previous
        lines, text_cap = self._begin(previous, budget)
        for obs in observations:
            self._add(lines, obs, text_cap)
        return _layout(sorted(lines.values(), key=_Line.order), budget)

    def _begin(self, previous: str, budget: int) -> tuple[dict[str, _Line], int]:
        """The previous summary's lines by key, and the longest a line's text may be."""
        text_cap = max(_MIN_LINE_TEXT, min(_MAX_LINE_TEXT, budget // 4))
        lines: dict[str, _Line] = {}
        for line in self._parse_previous(previous, text_cap):
            lines.setdefault(line.key, line)
        return lines, text_cap

    def _section(self, text: str) -> int:
        if any(rule == "alarm" for rule, _ in self._explain(text)):
            return _FAILURES
        return _QUESTIONS if _is_question(text) else _NOTABLE

    def _explain(self, text: str) -> list[tuple[str, float]]:
        return self._gate.explain(kind="", text=text, group=None, mentioned=None)

    def _add(self, lines: dict[str, _Line], obs: Observation, text_cap: int) -> None:
        text = _one_line(obs.text, text_cap)
        if not text:
            return
        if obs.kind == "voice":
            text = HEARD + text  # a summary line keeps the caveat a recalled item has
        key = _key(text)
        score = min(1.0, max(0.0, 0.6 * obs.salience + 0.4 * obs.surprise))
        line = lines.get(key)
        if line is None:
            section = self._section(obs.text)
            line = lines[key] = _Line(key=key, text=text, section=section, score=score)
        elif line.section == _NOTABLE and _is_question(obs.text):
            # Same key, same words (digits and punctuation aside): whether it is an
            # alarm was settled by the first of them; only a question mark can differ.
            line.section = _QUESTIONS
        line.score = max(line.score, score)
        line.count += 1
        line.add_ids([obs.id])
        if (obs.ts, obs.id) > line.latest:
            line.text, line.latest = text, (obs.ts, obs.id)

    def _parse_previous(self, previous: str, text_cap: int) -> list[_Line]:
        parsed: list[tuple[int | None, str, int, list[int]]] = []
        heading: int | None = None
        for raw in previous.splitlines():
            stripped = raw.strip()
            if not stripped:
                continue
            if stripped.startswith("#"):
                heading = _heading_section(stripped)
                continue
            text, count, ids = _parse_line(stripped)
            if text:
                parsed.append((heading, text, count, ids))
        per_section: dict[int, list[_Line]] = {}
        for heading, text, count, ids in parsed:
            section = self._section(text)
            if heading is not None:
                section = min(section, heading)
            text = _one_line(text, text_cap)
            line = _Line(key=_key(text), text=text, section=section, score=0.0, count=count)
            line.add_ids(ids)
            per_section.setdefault(section, []).append(line)
        result: list[_Line] = []
        for section_lines in per_section.values():
            span = max(1, len(section_lines) - 1)
            for rank, line in enumerate(section_lines):
                top, bottom = _PREVIOUS_TOP, _PREVIOUS_BOTTOM
                line.score = _PREVIOUS_DECAY * (top - (top - bottom) * rank / span)
                result.append(line)
        return result


def _summarise(
    alarm_keywords: tuple[str, ...] | None,
    previous: str,
    observations: list[Observation],
    budget: int,
) -> str:
    """In a worker process: ``summarise`` by a reflector with those alarm keywords."""
    return _reflector(alarm_keywords).summarise(previous, observations, budget)


@lru_cache(maxsize=16)
def _reflector(alarm_keywords: tuple[str, ...] | None) -> ExtractiveReflector:
    """One reflector per list of alarm keywords, kept for the worker's life (its gate
    compiles them)."""
    return ExtractiveReflector(alarm_keywords)


def _layout(ranked: list[_Line], budget: int) -> str:
    """Greedy fill in rank order; a line that does not fit is skipped, not cut."""
    chosen: list[list[str]] = [[], [], []]
    used = 0
    smallest = len("- x [m1]\n")
    for line in ranked:
        if budget - used < smallest:
            break
        rendered = line.render()
        cost = len(rendered) + 1
        if not chosen[line.section]:
            cost += len(_HEADINGS[line.section]) + 1
        if used + cost <= budget:
            chosen[line.section].append(rendered)
            used += cost
    out: list[str] = []
    for section, rendered_lines in enumerate(chosen):
        if rendered_lines:
            out.append(_HEADINGS[section])
            out.extend(rendered_lines)
    return "".join(f"{line}\n" for line in out)


def _parse_line(line: str) -> tuple[str, int, list[int]]:
    """(text, count, ids) of one summary line; count is 1 when none is written."""
    text = _LIST_MARKER.sub("", line)
    ids: list[int] = []
    while (found := _TRAILING_IDS.search(text)) is not None:
        ids.extend(int(part.strip()[1:]) for part in found.group(1).split(","))
        text = text[: found.start()]
    count = 1
    if (found := _TRAILING_COUNT.search(text)) is not None:
        count = max(1, int(found.group(1)))
        text = text[: found.start()]
    return text.strip(), count, ids


def _heading_section(heading: str) -> int | None:
    title = heading.lstrip("#").strip().casefold()
    for section, hints in _HEADING_HINTS:
        if any(hint in title for hint in hints):
            return section
    return None


def _is_question(text: str) -> bool:
    stripped = text.strip()
    if stripped.endswith(_QUESTION_END):
        return True
    return _QUESTION_START.match(stripped.casefold()) is not None


def _one_line(text: str, cap: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= cap else flat[: cap - 1].rstrip() + "…"


def _key(text: str) -> str:
    # NFKC changes nothing in ASCII text, and most text is: skip it there.
    folded = (text if text.isascii() else unicodedata.normalize("NFKC", text)).casefold()
    key = " ".join(_PUNCT.split(_DIGITS.sub("0", folded))).strip()
    return key or folded

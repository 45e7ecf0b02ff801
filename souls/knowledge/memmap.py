"""Memory map: a four-axis index of what a soul holds (DESIGN §3.11, from linghun's map.js).

The map is navigation, not content: it says where things are, by id, so that an agent
finds its way and drills down (a memory, a goal, a claim, a day of the journal) instead
of being handed candidates. Axes, in this order::

    SITUATIONS   recent topics, each with the memories that hold it (m<id>)
    GOALS        id, state, priority, domain, statement, bridge triggers (g<id>)
    ARCHIVE      facts (c<id>), rules (r<id>), summaries (s<id>)
    EVIDENCE     days of the event journal with their event ids (e<first>-e<last>)

Invariants a caller may rely on:

- Pure and deterministic; one entry per line, whitespace inside texts collapsed.
- ``len(render(...)) <= budget``, for any input and any budget >= 0.
- Ids are printed whole or not at all: lines lose text (cut with "…") and trailing
  memory ids (replaced by "+n"), never part of an id.
- Fair shares: each axis may use an equal part of the budget, and what an axis does
  not need is shared among the others. An axis that does not fit shortens its lines,
  then drops lines from the end and says how many: ``(+7 more)``. An axis with nothing
  in it is left out; when the budget cannot hold every axis's header and count, the
  last axes are left out.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import msgspec

from souls.knowledge.goals import Goal, GoalState
from souls.mind.topics import is_topic
from souls.text.tokenize import tokens

__all__ = [
    "ArchiveKind",
    "ArchiveLine",
    "EvidenceDay",
    "GoalLine",
    "Situation",
    "render",
    "topics",
]

ArchiveKind = Literal["fact", "rule", "summary"]

_ARCHIVE_PREFIX: dict[ArchiveKind, str] = {"fact": "c", "rule": "r", "summary": "s"}
_GOAL_ORDER: dict[GoalState, int] = {"active": 0, "paused": 1, "achieved": 2, "abandoned": 3}
# Shortening levels, tried in order: (most characters of text, most memory ids) per line.
_LEVELS: tuple[tuple[int | None, int | None], ...] = (
    (None, None),
    (100, 10),
    (60, 6),
    (40, 4),
    (24, 3),
)
_LABEL_TERMS = 3  # most terms in one topic label
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


class Situation(msgspec.Struct, frozen=True):
    topic: str
    memory_ids: tuple[int, ...]  # the memories to drill into, most recent first


class GoalLine(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    state: GoalState
    priority: int
    statement: str
    domain: str = ""
    triggers: tuple[str, ...] = ()

    @classmethod
    def of(cls, goal: Goal) -> GoalLine:
        return cls(
            id=goal.id,
            state=goal.state,
            priority=goal.priority,
            statement=goal.statement,
            domain=goal.domain,
            triggers=goal.triggers,
        )


class ArchiveLine(msgspec.Struct, frozen=True):
    id: int
    kind: ArchiveKind
    text: str  # for a fact, "slot=value"


class EvidenceDay(msgspec.Struct, frozen=True):
    day: str  # "2026-11-28"
    count: int  # events that day
    first_id: int
    last_id: int


def render(
    situations: Sequence[Situation],
    goals: Sequence[GoalLine],
    archive: Sequence[ArchiveLine],
    evidence: Sequence[EvidenceDay],
    *,
    budget: int = 2000,
) -> str:
    """The map, at most ``budget`` characters ("" when there is nothing to show).

    Situations and archive lines keep the caller's order (archive grouped fact, rule,
    summary); goals go active, paused, achieved, abandoned, then priority high to low;
    days go newest first. Lines are dropped from the end of an axis.
    """
    if budget < 0:
        raise ValueError("budget must be >= 0")
    axes = [
        ("SITUATIONS", [_situation(s) for s in situations]),
        ("GOALS", [_goal(g) for g in sorted(goals, key=_goal_key)]),
        ("ARCHIVE", [_archive(a) for a in sorted(archive, key=_archive_key)]),
        ("EVIDENCE", [_day(d) for d in sorted(evidence, key=lambda d: d.day, reverse=True)]),
    ]
    blocks = _layout([(header, entries) for header, entries in axes if entries], budget + 1)
    return "\n".join(line for block in blocks for line in block)


def topics(texts: Sequence[tuple[int, str]], limit: int = 8) -> list[Situation]:
    """Recent topics of ``(memory id, text)`` pairs, most widespread first.

    A topic is a content word (:func:`souls.mind.topics.is_topic`: no function word,
    light verb, generic word, filler or number, no one-character term; a Chinese one is a
    real two-character word, 排练 in 今天排练, never 天排) and the memories whose text
    holds it; terms held by exactly the
    same memories make one topic, labelled with up to three of them in order of first
    appearance ("deploy pipeline"). Labels use each term's most frequent spelling, not
    its stem. Order: more memories first, then the one with the newest memory, then
    label. Memory ids go newest (highest) first. Deterministic.
    """
    if limit < 0:
        raise ValueError("limit must be >= 0")
    holders: dict[str, set[int]] = defaultdict(set)
    spellings: dict[str, Counter[str]] = defaultdict(Counter)
    stems: dict[str, list[str]] = {}
    for memory_id, text in texts:
        for term in _content_terms(text):
            holders[term].add(memory_id)  # dicts keep first-seen order: the label order
        for word in _WORD.findall(text.lower()):
            stem = stems.get(word)
            if stem is None:
                stem = stems[word] = tokens(word)
            if len(stem) == 1 and stem[0] in holders:
                spellings[stem[0]][word] += 1
    groups: dict[frozenset[int], list[str]] = defaultdict(list)
    for term, ids in holders.items():
        groups[frozenset(ids)].append(term)
    found = [
        Situation(_label(terms, spellings), tuple(sorted(ids, reverse=True)))
        for ids, terms in groups.items()
    ]
    found.sort(key=lambda s: (-len(s.memory_ids), -s.memory_ids[0], s.topic))
    return found[:limit]


@dataclass(frozen=True, slots=True)
class _Entry:
    head: str  # never cut: holds the id
    text: str = ""  # may be cut short
    refs: tuple[str, ...] = ()  # whole ids after the text; the tail may become "+n"

    def render(self, width: int | None, max_refs: int | None) -> str:
        line = self.head
        if self.text:
            line += " " + _clip(self.text, width) + (":" if self.refs else "")
        if self.refs:
            refs = self.refs
            if max_refs is not None and len(refs) > max_refs:
                refs = (*refs[:max_refs], f"+{len(refs) - max_refs}")
            line += " " + " ".join(refs)
        return line


def _layout(axes: Sequence[tuple[str, Sequence[_Entry]]], total: int) -> list[list[str]]:
    """The lines of each axis that is shown; their costs add up to at most ``total``.

    Every line costs its length plus a newline (the map has one newline fewer, hence
    ``budget + 1``). Axes get fair shares of ``total``; while one cannot fit even its
    header and count, the last axis is left out and the shares are made again. Then
    what the axes left unused goes to those still short of their need, in axis order.
    """
    needs = [_cost([header, *(e.render(None, None) for e in entries)]) for header, entries in axes]
    kept = list(range(len(axes)))
    while True:
        shares = _shares([needs[i] for i in kept], total)
        blocks = {i: _fit(*axes[i], share) for i, share in zip(kept, shares, strict=True)}
        if all(blocks.values()):
            break
        kept.pop()
    left = total - sum(_cost(block) for block in blocks.values())
    for i in kept:
        used = _cost(blocks[i])
        if left > 0 and used < needs[i]:
            # At least the cost already reached, so the axis cannot come back empty.
            blocks[i] = _fit(*axes[i], used + left)
            left -= _cost(blocks[i]) - used
    return [blocks[i] for i in kept]


def _fit(header: str, entries: Sequence[_Entry], share: int) -> list[str]:
    """Header and lines costing at most ``share``: shortened, then cut from the end."""
    for width, max_refs in _LEVELS:
        lines = [header, *(e.render(width, max_refs) for e in entries)]
        if _cost(lines) <= share:
            return lines
    lines = [e.render(*_LEVELS[-1]) for e in entries]
    used = [len(header) + 1]  # cost of the header and the first n lines
    for line in lines:
        used.append(used[-1] + len(line) + 1)
    for kept in range(len(lines) - 1, -1, -1):
        more = f"(+{len(lines) - kept} more)"
        if used[kept] + len(more) + 1 <= share:
            return [header, *lines[:kept], more]
    return []


def _shares(needs: Sequence[int], total: int) -> list[int]:
    """Max-min fair split of ``total``: the smallest needs are met first, the rest split."""
    shares = [0] * len(needs)
    left = total
    by_need = sorted(range(len(needs)), key=lambda i: (needs[i], i))
    for served, i in enumerate(by_need):
        shares[i] = min(needs[i], left // (len(needs) - served))
        left -= shares[i]
    return shares


def _cost(lines: Iterable[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _clip(text: str, width: int | None) -> str:
    if width is None or len(text) <= width:
        return text
    return text[: width - 1].rstrip() + "…"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _situation(s: Situation) -> _Entry:
    return _Entry("-", _flat(s.topic), tuple(f"m{i}" for i in s.memory_ids))


def _goal(g: GoalLine) -> _Entry:
    text = f"{_flat(g.domain)}: {_flat(g.statement)}" if g.domain else _flat(g.statement)
    if g.triggers:
        text += " (when: " + "; ".join(_flat(t) for t in g.triggers) + ")"
    return _Entry(f"- g{g.id} {g.state} p{g.priority}", text)


def _goal_key(g: GoalLine) -> tuple[int, int, int]:
    return (_GOAL_ORDER[g.state], -g.priority, g.id)


def _archive(a: ArchiveLine) -> _Entry:
    return _Entry(f"- {_ARCHIVE_PREFIX[a.kind]}{a.id}", _flat(a.text))


def _archive_key(a: ArchiveLine) -> int:
    return list(_ARCHIVE_PREFIX).index(a.kind)


def _day(d: EvidenceDay) -> _Entry:
    events = "1 event" if d.count == 1 else f"{d.count} events"
    span = f"e{d.first_id}" if d.first_id == d.last_id else f"e{d.first_id}-e{d.last_id}"
    return _Entry(f"- {_flat(d.day)}: {events} ({span})")


def _content_terms(text: str) -> list[str]:
    """Distinct terms worth a topic, in order: content words (no fillers, light verbs
    or numbers), real Chinese words, never a single character."""
    return list(dict.fromkeys(t for t in tokens(text) if len(t) > 1 and is_topic(t)))


def _label(terms: Sequence[str], spellings: dict[str, Counter[str]]) -> str:
    """Up to three words; CJK words join without a space (数据 迁移 -> 数据迁移), and
    bigrams that overlap in text order join up again (数据 + 据库 -> 数据库)."""
    words: list[str] = []
    for term in terms:
        if words and not term.isascii() and len(term) == 2 and words[-1][-1] == term[0]:
            words[-1] += term[1]
        elif words and not term.isascii() and not words[-1].isascii():
            words[-1] += term
        elif len(words) == _LABEL_TERMS:
            break
        else:
            words.append(_spelling(term, spellings[term]))
    return " ".join(words)


def _spelling(term: str, seen: Counter[str]) -> str:
    """The most frequent spelling of ``term`` (then the shortest, then A-Z); CJK: itself."""
    if not seen:
        return term
    return min(seen.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))[0]

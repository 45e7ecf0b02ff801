"""Crystallising a reflect into a card: what that reflect concluded, and nothing else.

A card (primordial-soup's amino acid) is one reflect's *own* conclusions: one strong
conclusion per line, its open questions, its connection points. :func:`crystallise`
reads them off a new summary. Invariants a caller may rely on:

* Only what this reflect brought: a summary line the previous summary already held is
  not this reflect's, and a line any earlier card holds (``known``, by :func:`key`) is
  never written again. So no line ever appears on two cards.
* One conclusion per line: summary lines are cut into sentences, and a sentence needs
  ``min_terms`` content terms (:mod:`souls.collision.lines`) to conclude anything;
  "Thanks, Mel!" or "That's so cool!" never does. At most ``conclusions`` of them, the
  most specific first (alarms before all), shown in the summary's order.
* An open question asks about ``min_question_terms`` content terms and is not answered
  by a conclusion of the same reflect ("How have you been?" asks about nothing).
* Tags are real topics: content terms of the chosen lines, as a person wrote them
  ("schedule", "Berlin", not "schedul"), never a name of the people talking and none
  common to much of the soul's memory ("kids" in a family chat), most lines first,
  then the ones that recur in it.
* Pure and deterministic: the soul's term statistics come in as ``rarity``.
* ``crystallise`` is :func:`read_summary` (all of the text work, which needs neither
  ``rarity`` nor ``known``; its :class:`Reading` pickles, so a worker process can do it)
  then :func:`conclude`, with the same card.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Sequence, Set
from dataclasses import dataclass
from typing import Protocol

import msgspec

from souls.collision.lines import Line, covers, key, read, sentences
from souls.text.tokenize import tokens

__all__ = [
    "CardConfig",
    "Counts",
    "Draft",
    "Rarity",
    "Reading",
    "conclude",
    "crystallise",
    "read_summary",
    "summary_lines",
    "terms",
]

_CITATION = re.compile(r"\s*\[m\d+(?:,\s*m\d+)*\]")
_COUNT = re.compile(r"\s*\(\s*[\u00d7x]\s*\d+\s*\)")
_ITEM = re.compile(r"^(?:[-*+\u2022]|\d+[.)])\s+")
_MEMORY = re.compile(r"m(\d+)")
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
_ALARM_HEADING = ("fail", "alarm", "error", "incident", "故障", "错误", "失败", "告警")
# A term in fewer memories than this is never common, however small the soul is.
_COMMON_FLOOR = 10
# Labels that are seldom topics: adverbs ("obviously") and past forms ("finished").
_NOT_A_TOPIC = re.compile(r"^[a-z]{3,}(?:ly|ed)$")


class CardConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Most conclusion lines, open questions and tags on a reflect's card.
    conclusions: int = 6
    questions: int = 2
    tags: int = 4
    # Content terms a sentence needs to be a conclusion; a question to be an open one.
    min_terms: int = 3
    min_question_terms: int = 2
    # A term in more than this share of the soul's memories is no connection point.
    common_share: float = 0.08
    # Share of an open question's terms a conclusion must hold to answer it.
    answer_overlap: float = 0.5


class Rarity(Protocol):
    """How common a term is in the soul's memory: in how many of how many memories."""

    @property
    def documents(self) -> int: ...

    def df(self, term: str) -> int: ...


@dataclass(frozen=True, slots=True)
class Counts:
    """A :class:`Rarity` from counts looked up beforehand (see :func:`terms`)."""

    documents: int
    frequencies: dict[str, int]

    def df(self, term: str) -> int:
        return self.frequencies.get(term, 0)


@dataclass(frozen=True, slots=True)
class Draft:
    conclusions: list[str]
    questions: list[str]
    tags: list[str]
    memories: list[int]  # the memories the chosen lines cite: the card's sources


@dataclass(frozen=True, slots=True)
class _Sentence:
    order: int
    text: str
    line: Line
    alarm: bool
    memories: tuple[int, ...]


def summary_lines(summary: str) -> list[tuple[str, bool, tuple[int, ...]]]:
    """The listed lines of a summary: (text without citations or counts, under an
    alarm heading, the memory ids it cites)."""
    found: list[tuple[str, bool, tuple[int, ...]]] = []
    alarm = False
    for raw in summary.splitlines():
        stripped = raw.strip()
        if stripped.startswith("#"):
            alarm = any(hint in stripped.casefold() for hint in _ALARM_HEADING)
            continue
        if not _ITEM.match(stripped):
            continue
        cited = tuple(int(n) for c in _CITATION.findall(stripped) for n in _MEMORY.findall(c))
        text = _COUNT.sub("", _CITATION.sub("", _ITEM.sub("", stripped))).strip()
        if text:
            found.append((text, alarm, cited))
    return found


def terms(summary: str) -> set[str]:
    """Every content term of the summary's lines: what ``crystallise`` asks a
    :class:`Rarity` about."""
    return {t for text, _, _ in summary_lines(summary) for t in read(text).terms}


@dataclass(frozen=True, slots=True)
class _Said:
    """A sentence a new summary line says, read."""

    key: str
    text: str
    line: Line
    alarm: bool
    memories: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Reading:
    """What :func:`read_summary` reads off a new summary: all of ``crystallise``'s text
    work, which needs neither the soul's term statistics nor its earlier cards (so it
    can be done away from them, in a worker process; it pickles)."""

    terms: frozenset[str]  # :func:`terms` of the summary
    said: tuple[_Said, ...]  # its new lines' sentences, the first of each key, in order


def read_summary(summary: str, previous: str) -> Reading:
    """The reading of ``summary``, a reflect's new summary over ``previous``."""
    carried = {key(text) for text, _, _ in summary_lines(previous)}
    lines = summary_lines(summary)
    seen: set[str] = set()
    said: list[_Said] = []
    for text, alarm, memories in lines:
        if key(text) in carried:
            continue
        for sentence in sentences(text):
            # A bracketed aside (an image caption, a stage direction) concludes nothing.
            if sentence.startswith("[") or (sentence_key := key(sentence)) in seen:
                continue
            seen.add(sentence_key)
            said.append(_Said(sentence_key, sentence, read(sentence), alarm, memories))
    return Reading(frozenset(t for text, _, _ in lines for t in read(text).terms), tuple(said))


def crystallise(
    summary: str,
    previous: str,
    known: Collection[str],
    rarity: Rarity,
    config: CardConfig,
    people: frozenset[str] = frozenset(),
) -> Draft:
    """The card a reflect that wrote ``summary`` over ``previous`` crystallises, given
    the keys of every line earlier cards hold (``known``) and the terms of the names of
    the people talking (``people``, never a tag). Empty when it concluded nothing new."""
    return conclude(read_summary(summary, previous), known, rarity, config, people)


def conclude(
    reading: Reading,
    known: Collection[str],
    rarity: Rarity,
    config: CardConfig,
    people: frozenset[str] = frozenset(),
) -> Draft:
    """``crystallise`` of the summary ``reading`` was read from."""
    keys = known if isinstance(known, Set) else frozenset(known)
    fresh = (said for said in reading.said if said.key not in keys)
    candidates = [
        _Sentence(order, said.text, said.line, said.alarm, said.memories)
        for order, said in enumerate(fresh)
    ]
    statements = [c for c in candidates if not c.line.asks]
    conclusions = _strongest(
        [c for c in statements if len(c.line.terms) >= config.min_terms],
        config.conclusions,
        rarity,
    )
    questions = _strongest(
        [
            c
            for c in candidates
            if c.line.asks
            and len(c.line.terms) >= config.min_question_terms
            and not any(covers(c.line, s.line, config.answer_overlap) for s in statements)
        ],
        config.questions,
        rarity,
    )
    chosen = conclusions + questions
    if not conclusions:
        return Draft([], [], [], [])
    return Draft(
        [c.text for c in conclusions],
        [c.text for c in questions],
        _tags(chosen, rarity, config, people),
        sorted({m for c in chosen for m in c.memories}),
    )


def _idf(term: str, rarity: Rarity) -> float:
    return math.log(1 + (rarity.documents + 1) / (rarity.df(term) + 1))


def _strongest(found: list[_Sentence], most: int, rarity: Rarity) -> list[_Sentence]:
    """The ``most`` most specific sentences (alarms first), in their summary order.

    Specific: the rarer its content terms, the more; and the less of it is small talk
    ("Woah, it sounds like you're doing some impressive work" is mostly reaction), the
    more: the sum of its terms' IDF times the share of content terms among its words.
    """

    def strength(s: _Sentence) -> tuple[bool, float, int]:
        density = len(s.line.terms) / max(1, len(s.line.words))
        return (s.alarm, density * sum(_idf(t, rarity) for t in s.line.terms), -s.order)

    best = sorted(found, key=strength, reverse=True)[: max(0, most)]
    return sorted(best, key=lambda s: s.order)


def _common(term: str, rarity: Rarity, config: CardConfig) -> bool:
    return rarity.df(term) > max(_COMMON_FLOOR, config.common_share * rarity.documents)


def _tags(
    chosen: Sequence[_Sentence], rarity: Rarity, config: CardConfig, people: frozenset[str]
) -> list[str]:
    """Connection points: the chosen lines' content terms that are not common, in most
    lines first, then the most recurring ones, each shown as the word its lines use most
    (shortest on a tie)."""
    lines: Counter[str] = Counter(t for s in chosen for t in s.line.terms)
    first = {t: i for i, s in reversed(list(enumerate(chosen))) for t in s.line.terms}
    # A topic recurs in the soul's memory: terms of two memories or more first, the more
    # recurrent the better (below ``common``, past which it would link everything).
    ranked = sorted(
        (t for t in lines if not _common(t, rarity, config) and len(t) > 2 and t not in people),
        key=lambda t: (-lines[t], rarity.df(t) < 2, -rarity.df(t), first[t], t),
    )
    labels: list[str] = []
    written = _written([s.text for s in chosen])
    for term in ranked:
        shown = written.get(term, Counter())
        label = min(shown, key=lambda w: (-shown[w], len(w), w)) if shown else term
        if label not in labels and not _NOT_A_TOPIC.match(label):
            labels.append(label)
    return labels[: max(0, config.tags)]


def _written(texts: Sequence[str]) -> dict[str, Counter[str]]:
    """How each one-token word of ``texts`` is written, by its token: lowercase, unless a
    capital in it is meant (inside the word, "iOS"; or first, mid-sentence: a name)."""
    found: dict[str, Counter[str]] = {}
    for text in texts:
        for match in _WORD.finditer(text):
            word = match.group().removesuffix("'s").removesuffix("\u2019s")
            stems = tokens(word)
            if len(stems) != 1:
                continue  # a CJK run: its terms are bigrams, shown as they are
            before = text[: match.start()].rstrip(" \t\"'([")
            opens = not before or before[-1] in ".!?\u2026\n"
            meant = word[1:] != word[1:].lower() or (word[:1].isupper() and not opens)
            found.setdefault(stems[0], Counter())[word if meant else word.lower()] += 1
    return found

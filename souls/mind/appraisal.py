"""Appraisal (DESIGN §3.7): the feeling a text carries, what it is about, how much.

``appraise`` counts the text's lexicon hits (``souls.mind.lexicon``) for a valence, but
not those that state the speaker's own stance or value (``souls.mind.stance``), takes the
first topic terms (``souls.mind.topics``) that are not part of the lexicon and their labels,
and weighs it by the event's salience; ``with_person`` adds the person an event is
attributed to, keyed like any other topic (``souls.mind.topics.person_topic``). The result
feeds ``souls.mind.markers.Markers.add``.

Invariants a caller may rely on:

- Everything is pure and deterministic: no clock, no I/O; same inputs, same output.
- ``appraise`` with the text's tokens (``words``) gives what it gives without them.
- An appraisal's ``labels`` are empty or one per topic, in the order of ``topics``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import msgspec

from souls.mind.lexicon import Lexicon, Valence, build_lexicon, entry_key
from souls.mind.somatic import SomaticConfig
from souls.mind.stance import Stances
from souls.mind.topics import iter_topic_terms, normalise, person_topic, topic_labels
from souls.text.tokenize import tokens

__all__ = ["Appraisal", "appraise", "with_person"]


class Appraisal(msgspec.Struct, frozen=True, kw_only=True):
    """How an event felt: its valence, what it was about, and how much it mattered.

    ``labels``: the word shown for each topic, in the order of ``topics``; empty when
    unknown."""

    valence: Valence
    topics: tuple[str, ...]
    weight: float
    labels: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.labels and len(self.labels) != len(self.topics):
            raise ValueError("labels must be empty or one per topic")


def with_person(appraisal: Appraisal, person: str | None) -> Appraisal:
    """The appraisal of an event attributed to ``person``: the feeling is about the
    person too, whichever account they wrote from.

    The person's topic is ``person_topic(person)``, the stem of their first name, keyed
    like every other topic so that a turn naming them touches it ("how is Melanie?"
    touches melani); its label is the name as given ("Melanie", "Ann Lee"). When the
    text already has that topic (it names the person) the name becomes its label
    rather than a second topic. Labels stay empty when the appraisal has none."""
    if person is None:
        return appraisal
    topic = person_topic(person)
    if topic in appraisal.topics:
        if not appraisal.labels:
            return appraisal
        labels = tuple(
            person if t == topic else label
            for t, label in zip(appraisal.topics, appraisal.labels, strict=True)
        )
        return msgspec.structs.replace(appraisal, labels=labels)
    labels = (*appraisal.labels, person) if appraisal.labels or not appraisal.topics else ()
    return msgspec.structs.replace(appraisal, topics=(*appraisal.topics, topic), labels=labels)


# The lexicon and stances of the config in use, found by identity: building the key
# tuples for the lru_cache costs more than an appraisal itself.
_current: tuple[SomaticConfig, Lexicon, Stances] | None = None


def _compiled(config: SomaticConfig) -> tuple[Lexicon, Stances]:
    global _current
    if _current is None or _current[0] is not config:
        lexicon = build_lexicon(tuple(config.negative_words), tuple(config.positive_words))
        _current = (config, lexicon, Stances(config.stance_words, config.value_words))
    return _current[1], _current[2]


def appraise(
    text: str, salience: float, config: SomaticConfig, words: Sequence[str] | None = None
) -> Appraisal | None:
    """The feeling ``text`` carries, or None when it carries none. ``words``:
    ``tokens(text)`` when the caller has it already.

    The valence with more lexicon hits wins; a tie (including none) is None. A hit that
    states the speaker's stance or value ("I refuse to...", "I believe in...") is no hit.
    Topics are up to ``max_topics_per_event`` terms of ``topic_terms`` (content words
    and names) in order of first appearance, leaving out the valence words and any term
    that is part of a lexicon entry ("job" of "good job": "great job!" is praise, not a
    feeling about anyone's job). They may
    be empty ("thanks!"): such an appraisal adds no marker. The weight is the salience
    (>= 0); each topic's label is given by ``topic_labels``.
    """
    if not salience >= 0 or math.isinf(salience):
        raise ValueError("salience must be a finite number >= 0")
    lexicon, stances = _compiled(config)
    if lexicon.regex is None:
        return None
    low = normalise(text)
    if not lexicon.may_match(low, words):
        return None
    hits = {"positive": 0, "negative": 0}
    pieces: list[str] = []
    start = 0
    valence_of = lexicon.valence
    reading = None
    for match in lexicon.regex.finditer(low):
        found = match.group()
        key = found if found in valence_of else entry_key(found)
        reading = reading or stances.read(low)
        if not reading.is_stance(match.start(), key):
            hits[valence_of[key]] += 1
        pieces.append(low[start : match.start()])
        start = match.end()
    if hits["positive"] == hits["negative"]:
        return None
    valence: Valence = "positive" if hits["positive"] > hits["negative"] else "negative"
    topics = (t for t in iter_topic_terms(low, words) if t not in lexicon.terms)
    if not low.isascii():
        # Cutting the hits out keeps CJK bigrams that straddle them (库崩 in 数据库崩溃)
        # out. (In ASCII text a hit is whole words, all of them in lexicon.terms.)
        pieces.append(low[start:])
        remaining = set(tokens("\n".join(pieces)))
        topics = (t for t in topics if t in remaining)
    chosen = tuple(itertools.islice(topics, config.max_topics_per_event))
    labels = topic_labels(text, chosen, words)
    return Appraisal(valence=valence, topics=chosen, weight=salience, labels=labels)

"""Metacognition (DESIGN §3.7): knowing what it doesn't know.

``sense_confidence`` weighs three signals about a topic, each within [0, 1]:

========  ===========================================================  ============
signal    value                                                        weight
========  ===========================================================  ============
coverage  ``min(1, relevant memories / coverage_saturation)``           w_coverage
somatic   ``positive / (positive + negative)``; 0.5 when both are 0    w_somatic
gaps      ``1 - min(1, recorded gaps / gap_penalty_saturation)``        w_gaps
========  ===========================================================  ============

The weights sum to 1, so the score is within [0, 1]: ``confident`` from ``confident_at``,
``uncertain`` from ``uncertain_at``, ``low_confidence`` below. Gaps persist (the soul
actor stores them); the last ``inject_gaps`` go into every context as ``KNOWN GAPS``
after a fixed instruction to admit uncertainty or search before guessing.

Pure and deterministic: no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import msgspec

from souls.mind.topics import topic_terms
from souls.text.tokenize import query_terms

__all__ = [
    "GAPS_INSTRUCTION",
    "Confidence",
    "MetacognitionConfig",
    "State",
    "gap_for",
    "gap_matches",
    "known_gaps_section",
    "sense_confidence",
]

State = Literal["confident", "uncertain", "low_confidence"]

GAPS_INSTRUCTION = (
    "You have recorded gaps in your knowledge. On these topics, admit uncertainty or"
    " search before guessing:"
)


class MetacognitionConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Relevant memories that count as full coverage of a topic.
    coverage_saturation: int = 5
    # Weight of memory coverage in the score.
    w_coverage: float = 0.6
    # Weight of the somatic ratio (positive share of the topic's markers).
    w_somatic: float = 0.25
    # Weight of the absence of recorded gaps.
    w_gaps: float = 0.15
    # Scores from this up are confident.
    confident_at: float = 0.65
    # Scores from this up (and below confident_at) are uncertain; lower ones are low.
    uncertain_at: float = 0.4
    # Most recorded gaps shown in KNOWN GAPS (the latest ones).
    inject_gaps: int = 5
    # Recorded gaps on a topic that take the whole gaps weight away.
    gap_penalty_saturation: int = 3

    def __post_init__(self) -> None:
        if self.coverage_saturation < 1 or self.gap_penalty_saturation < 1:
            raise ValueError("coverage_saturation and gap_penalty_saturation must be >= 1")
        weights = (self.w_coverage, self.w_somatic, self.w_gaps)
        if min(weights) < 0 or not math.isclose(sum(weights), 1.0, abs_tol=1e-9):
            raise ValueError("w_coverage, w_somatic and w_gaps must be >= 0 and sum to 1")
        if not 0 <= self.uncertain_at <= self.confident_at <= 1:
            raise ValueError("need 0 <= uncertain_at <= confident_at <= 1")
        if self.inject_gaps < 0:
            raise ValueError("inject_gaps must be >= 0")


class Confidence(msgspec.Struct, frozen=True, kw_only=True):
    """What a soul knows about a topic; goes on the wire as the tool's answer."""

    # The topic asked about.
    topic: str
    state: State
    # The weighted score, within [0, 1], rounded to 4 decimals.
    score: float
    # The coverage and somatic signals, within [0, 1], rounded to 4 decimals.
    coverage: float
    somatic: float
    # The recorded gaps on the topic, as given, duplicates removed.
    gaps: list[str]


def sense_confidence(
    topic: str,
    relevant_memories: int,
    positive: float,
    negative: float,
    gaps: Sequence[str],
    config: MetacognitionConfig,
) -> Confidence:
    """How confident the soul may be about ``topic`` (see the module table).

    ``gaps`` are the recorded gaps on the topic: the caller selects them, for instance
    with ``gap_matches``. ``positive`` and ``negative`` are the topic's marker weights.
    """
    if relevant_memories < 0:
        raise ValueError("relevant_memories must be >= 0")
    if not (positive >= 0 and negative >= 0) or math.isinf(positive) or math.isinf(negative):
        raise ValueError("positive and negative must be finite numbers >= 0")
    matching = list(dict.fromkeys(gaps))
    coverage = min(1.0, relevant_memories / config.coverage_saturation)
    total = positive + negative
    somatic = positive / total if total > 0 else 0.5
    no_gaps = 1.0 - min(1.0, len(matching) / config.gap_penalty_saturation)
    raw = config.w_coverage * coverage + config.w_somatic * somatic + config.w_gaps * no_gaps
    score = round(min(1.0, max(0.0, raw)), 4)
    state: State
    if score >= config.confident_at:
        state = "confident"
    elif score >= config.uncertain_at:
        state = "uncertain"
    else:
        state = "low_confidence"
    return Confidence(
        topic=topic,
        state=state,
        score=score,
        coverage=round(coverage, 4),
        somatic=round(somatic, 4),
        gaps=matching,
    )


def gap_matches(topic: str, gap_topic: str) -> bool:
    """Whether a gap recorded under ``gap_topic`` is about ``topic``: they share a term
    of the shared tokenizer, so inflections that stem alike match (deploy, deploys,
    deployed, deployment) and others do not (deploy vs redeploy, analysis vs analyze).

    CJK compares by bigram: 数据库 matches 数据 but not 数学, although both contain 数.
    A side with no such term (a one-character word such as 猫) matches by its characters.
    """

    def content(text: str) -> set[str]:
        return set(topic_terms(text) or query_terms(text))

    a, b = content(topic), content(gap_topic)
    return bool(a & set(query_terms(gap_topic)) or b & set(query_terms(topic)))


def known_gaps_section(gaps: Sequence[str], config: MetacognitionConfig) -> str:
    """The body of the ``KNOWN GAPS`` section: ``GAPS_INSTRUCTION``, then the last
    ``inject_gaps`` non-blank gaps (given oldest first) as ``- <gap>`` lines, each on one
    line. Empty when there is none to show."""
    lines = [" ".join(gap.split()) for gap in gaps]
    shown = [line for line in lines if line][-config.inject_gaps :] if config.inject_gaps else []
    return "\n".join([GAPS_INSTRUCTION, *(f"- {gap}" for gap in shown)]) if shown else ""


def gap_for(topic: str, confidence: Confidence) -> str | None:
    """The gap to record when ``confidence`` is low, naming its weak signals; else None.

    For example ``deploy: no memories and no clear experience either way``.
    """
    if confidence.state != "low_confidence":
        return None
    weak: list[str] = []
    if confidence.coverage == 0:
        weak.append("no memories")
    elif confidence.coverage < 1:
        weak.append("few memories")
    if confidence.somatic < 0.5:
        weak.append("mostly bad experience")
    elif confidence.somatic == 0.5:
        weak.append("no clear experience either way")
    if confidence.gaps:
        weak.append(f"{len(confidence.gaps)} gap(s) recorded before")
    return f"{' '.join(topic.split())}: {' and '.join(weak) or 'low confidence'}"

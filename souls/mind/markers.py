"""Somatic markers in memory (DESIGN §3.7): weights per (topic, valence), and the
``GUT FEELINGS`` they make.

``Markers`` accumulates appraisals (``souls.mind.appraisal``), decays them nightly, prunes
the faint ones, and finds those a turn's terms touch; ``gut_feelings`` renders them.

Invariants a caller may rely on:

- Pure and deterministic: no clock, no I/O; orderings have a full tie break.
- A weight is never negative; a marker whose weight falls below ``prune_below`` on
  decay is gone, and with the last marker of a topic its label.
- A topic has one label whatever its valence (``souls.mind.topics.label_takes_over`` says
  when a later one replaces it); replaying the same appraisals in the same order gives
  the same labels.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import get_args

import msgspec

from souls.mind.appraisal import Appraisal
from souls.mind.lexicon import Valence
from souls.mind.somatic import SomaticConfig
from souls.mind.topics import label_takes_over
from souls.text.content import is_content

__all__ = ["Marker", "Markers", "gut_feelings"]

_VALENCES: tuple[str, ...] = get_args(Valence)


class Marker(msgspec.Struct, frozen=True):
    """One (topic, valence) feeling, its accumulated weight, and its topic's label (the
    word to show; None when unknown, as for rows stored before labels)."""

    topic: str
    valence: Valence
    weight: float
    label: str | None = None


def _strongest_first(marker: Marker) -> tuple[float, str, str]:
    return (-marker.weight, marker.topic, marker.valence)


class Markers:
    """A soul's somatic markers in memory: (topic, valence) → weight, and a label per
    topic.

    The soul actor loads them with ``from_rows``, persists ``rows()`` with ``label``
    (or the markers ``add`` returns), and calls ``decay`` once a night.
    """

    def __init__(self) -> None:
        self._weights: dict[tuple[str, Valence], float] = {}
        # Only topics with a marker have a label; a topic without one shows as itself.
        self._labels: dict[str, str] = {}

    @classmethod
    def from_rows(
        cls, rows: Iterable[tuple[str, str, float]], labels: Mapping[str, str] | None = None
    ) -> Markers:
        """Markers from stored ``(topic, valence, weight)`` rows (duplicate keys add up)
        and the stored ``labels`` by topic (those of topics without a row are dropped)."""
        markers = cls()
        for topic, valence, weight in rows:
            if valence not in _VALENCES:
                raise ValueError(f"valence must be positive or negative, not {valence!r}")
            if not weight >= 0 or math.isinf(weight):
                raise ValueError(f"weight of {topic!r} must be a finite number >= 0")
            checked: Valence = "positive" if valence == "positive" else "negative"
            key = (topic, checked)
            markers._weights[key] = markers._weights.get(key, 0.0) + weight
        topics = {topic for topic, _ in markers._weights}
        markers._labels = {t: label for t, label in (labels or {}).items() if t in topics}
        return markers

    def rows(self) -> list[tuple[str, Valence, float]]:
        """Every marker as ``(topic, valence, weight)``, sorted by topic then valence."""
        return [(t, v, w) for (t, v), w in sorted(self._weights.items())]

    def label(self, topic: str) -> str | None:
        """The word shown for ``topic``; None when unknown."""
        return self._labels.get(topic)

    def __len__(self) -> int:
        return len(self._weights)

    def add(self, appraisal: Appraisal) -> list[Marker]:
        """Add the appraisal's weight to each of its topics and take its labels (see
        ``appraise`` for when a label replaces one); return the changed markers, each
        with its topic's label."""
        changed: list[Marker] = []
        labels = appraisal.labels or (None,) * len(appraisal.topics)
        seen: set[str] = set()
        for topic, label in zip(appraisal.topics, labels, strict=True):
            if topic in seen:
                continue
            seen.add(topic)
            if label is not None and label_takes_over(label, self._labels.get(topic)):
                self._labels[topic] = label
            key = (topic, appraisal.valence)
            weight = self._weights[key] = self._weights.get(key, 0.0) + appraisal.weight
            changed.append(Marker(topic, appraisal.valence, weight, self._labels.get(topic)))
        return changed

    def decay(self, config: SomaticConfig, *, nights: int = 1) -> int:
        """Apply ``nights`` nightly decays (catching up after downtime); return how many
        markers fell below ``prune_below`` and were dropped (a topic's label goes with
        its last marker)."""
        if nights < 0:
            raise ValueError("nights must be >= 0")
        factor = config.nightly_decay**nights
        kept = {k: w * factor for k, w in self._weights.items() if w * factor >= config.prune_below}
        pruned = len(self._weights) - len(kept)
        self._weights = kept
        topics = {topic for topic, _ in kept}
        self._labels = {t: label for t, label in self._labels.items() if t in topics}
        return pruned

    def _marker(self, key: tuple[str, Valence], weight: float) -> Marker:
        return Marker(key[0], key[1], weight, self._labels.get(key[0]))

    def touching(self, terms: Iterable[str]) -> list[Marker]:
        """The markers whose topic is one of ``terms``, strongest first (ties by topic,
        then valence)."""
        wanted = set(terms)
        found = [self._marker(k, w) for k, w in self._weights.items() if k[0] in wanted]
        return sorted(found, key=_strongest_first)

    def items(self) -> list[Marker]:
        """Every marker, strongest first (ties by topic, then valence)."""
        return sorted((self._marker(k, w) for k, w in self._weights.items()), key=_strongest_first)

    def totals(self) -> tuple[float, float]:
        """The summed weights ``(positive, negative)``, independent of insertion order."""
        positive = math.fsum(w for (_, v), w in self._weights.items() if v == "positive")
        negative = math.fsum(w for (_, v), w in self._weights.items() if v == "negative")
        return positive, negative


_FELT = {"negative": "uneasy", "positive": "good"}
_GUT_LEAD = "Felt from past experience, not rules; let these weigh on your judgement:"


def gut_feelings(markers: Sequence[Marker], config: SomaticConfig) -> str:
    """The body of the ``GUT FEELINGS`` section: a lead line, then up to ``inject_limit``
    markers of weight >= ``min_weight_to_show``, strongest first, as
    ``- deploy: uneasy (negative, 3.2)`` with the topic's label (the topic itself when
    it has none). Empty when none qualifies. Topics stored before they were kept out
    (fillers, stop words, numbers: not ``is_content``) are never shown; ``soupd
    rebuild`` recomputes such rows away."""
    shown = sorted(
        (m for m in markers if m.weight >= config.min_weight_to_show and is_content(m.topic)),
        key=_strongest_first,
    )
    lines = [
        f"- {' '.join((m.label or m.topic).split())}: {_FELT[m.valence]}"
        f" ({m.valence}, {m.weight:.1f})"
        for m in shown[: config.inject_limit]
    ]
    return "\n".join([_GUT_LEAD, *lines]) if lines else ""

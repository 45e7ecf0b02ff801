"""Stances (DESIGN §3.7): what a speaker states as their own position, which is no
feeling from experience.

A somatic marker is a gut feeling *from experience*: an error, praise, a refusal met.
"I refuse to spread rumors" and "I believe in respecting people's privacy" are neither:
the speaker says where they stand. So a lexicon hit (``souls.mind.lexicon``) does not
count towards a valence when

- it is a *stance word* (``SomaticConfig.stance_words``: refuse, reject, 拒绝...) whose
  subject is the speaker: "I refuse", "we flatly rejected", "我坚决拒绝" (but "they
  refused my refund", "I was refused entry", "我被拒绝了" are refusals met, and count);
- it lies in a clause the speaker opens with a *value word* (``value_words``: "believe
  in", "stand for", 坚信...): "I believe in learning from every failure" states a value;
  the clause ends at punctuation or "but".

Invariants a caller may rely on: pure and deterministic; ``Stances`` reads the normalised
text (``souls.mind.topics.normalise``) the lexicon matched in, and says only whether a
match is a stance, never changing what matched.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from souls.mind.lexicon import entry_key
from souls.mind.topics import has_cjk, normalise

__all__ = ["Reading", "Stances"]

# The speaker as the subject, right before the stance or value word: I or we, then at
# most three adverbs or modals ("I'd", "I really", "we will never", "I just flatly").
_ADVERBS = (
    "really|truly|strongly|firmly|deeply|always|still|just|simply|flatly|absolutely"
    "|totally|completely|also|do|did|will|would|must|have to|had to|politely|kindly"
    "|respectfully|personally|definitely|certainly|now|never|even|hereby|so|too"
)
_SPEAKER_EN = re.compile(
    rf"(?<![a-z0-9'])(?:i|we)(?:'d|'ll|'m|'ve)?(?:\s+(?:{_ADVERBS})){{0,3}}\s+$"
)
_SPEAKER_ZH = re.compile(
    r"(?:我们|我)(?:坚决|一直|绝对|从来|必须|也|还是|就|都|只能|只好|当然|肯定|始终|一向|向来){0,3}\s*$"
)
# Where a clause ends: the stance or value is what its speaker says up to here. (In
# normalised text full-width punctuation is ASCII already; 。 and 、 stay as they are.)
_CLAUSE_END = re.compile(r"[,.;:!?\n\u2026\u3001\u3002]|\bbut\b|但是|可是|不过")


class Stances:
    """The stance and value words of one config, compiled; ``read`` a text to ask."""

    def __init__(self, stance_words: Sequence[str], value_words: Sequence[str]) -> None:
        self._stance = frozenset(map(entry_key, stance_words))
        values = {" ".join(normalise(w).split()) for w in value_words}
        parts = [_word(v) for v in sorted(values, key=lambda v: (-len(v), v))]
        self._value = re.compile("|".join(parts)) if parts else None

    def read(self, low: str) -> Reading:
        """``low`` (normalised text) read for stances: its clauses and value clauses."""
        return Reading(low, self._stance, self._value)


class Reading:
    """One text's clauses, and which of them state a value; linear in the text."""

    def __init__(self, low: str, stance: frozenset[str], value: re.Pattern[str] | None) -> None:
        self._low = low
        self._stance = stance
        self._ends = [m.end() for m in _CLAUSE_END.finditer(low)]
        self._values: list[tuple[int, int]] = []
        for found in value.finditer(low) if value is not None else ():
            if self._by_speaker(found.start()):
                at = bisect.bisect_right(self._ends, found.end())
                end = self._ends[at] - 1 if at < len(self._ends) else len(low)
                self._values.append((found.start(), end))

    def is_stance(self, start: int, entry: str) -> bool:
        """Whether the lexicon match of ``entry`` (its ``entry_key``) at ``start`` states
        the speaker's stance rather than a feeling."""
        if any(a <= start < b for a, b in self._values):
            return True
        return entry in self._stance and self._by_speaker(start)

    def _by_speaker(self, start: int) -> bool:
        """Whether the word at ``start`` has the speaker as its subject, in its clause."""
        at = bisect.bisect_right(self._ends, start)
        before = self._low[self._ends[at - 1] if at else 0 : start]
        return _SPEAKER_EN.search(before) is not None or _SPEAKER_ZH.search(before) is not None


def _word(value: str) -> str:
    if has_cjk(value):
        return re.escape(value)
    body = r"\s+".join(re.escape(part) for part in value.split())
    return rf"(?<![a-z0-9']){body}(?![a-z0-9'])"

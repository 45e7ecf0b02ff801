"""Surprise: prediction error as token-set arithmetic (Skynet's ``compute_surprise``).

novelty = |event tokens not in the world model's vocabulary| / |event tokens|, where
the world model is the consolidated summary in force. No LLM; the shared tokenizer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from souls.text.tokenize import tokens

__all__ = ["SurpriseConfig", "WorldModel"]


class SurpriseConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Novelty above this makes the soul reflect at once.
    threshold: float = 0.65
    # ... but at most once per this many observations: while the summary is young,
    # nearly everything is novel, and a reflect per event would help no one.
    cooldown: int = 5

    def __post_init__(self) -> None:
        if not 0 <= self.threshold <= 1 or self.cooldown < 0:
            raise ValueError("threshold must be within [0, 1] and cooldown >= 0")


# What a summary says about itself rather than about the world: headings, citations of
# memories ([m12], [m1, m40]) and repeat counts (a multiplication sign and a number).
# Not part of the vocabulary, or "late event 4" would look familiar because some line
# cites [m4].
_FURNITURE = re.compile(r"^\s*#.*$|\[m\d+(?:,\s*m\d+)*\]|\(\u00d7\d+\)", re.MULTILINE)


class WorldModel:
    """The vocabulary of the summary in force; rebuilt whenever the summary changes."""

    def __init__(self, summary: str) -> None:
        self.vocabulary = frozenset(tokens(_FURNITURE.sub(" ", summary)))

    def novelty(self, event_tokens: Sequence[str]) -> float:
        """Share of the event's tokens (with repeats) the world model has never used."""
        if not event_tokens:
            return 0.0
        known = sum(map(self.vocabulary.__contains__, event_tokens))
        return round((len(event_tokens) - known) / len(event_tokens), 4)

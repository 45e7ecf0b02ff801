"""Surprise: prediction error as token-set arithmetic (Skynet's ``compute_surprise``).

novelty = |event content words not in the world model's vocabulary| / |event content
words|, where the world model is the consolidated summary in force and content words
are :mod:`souls.text.content`'s: a "the", a "still" or a build number is no prediction
error, so "the deploy 31 to prod failed" is measured on deploy, prod, fail, not diluted
by the words every summary has. An event with no content word at all ("ok thanks") is
measured on all its tokens. No LLM; the shared tokenizer.

Novelty above ``threshold`` makes the soul reflect at once (DESIGN §3.3). The one
brake is a storm guard, and it is time-based: at most ``storm_reflects`` surprise
reflects in any ``storm_window`` seconds of the soul's clock (a flood of novel events,
such as a replayed log or a bot gone wild, reflects a few times rather than per event;
a conversation at human pace never meets it). A surprise the guard holds back is not
lost: the first event after the window allows reflects for it, and any reflect in
between folds it in. ``storm_reflects = 0`` turns the guard off.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from souls.text.content import content_tokens
from souls.text.tokenize import tokens

__all__ = ["MAX_NOVEL", "SurpriseConfig", "WorldModel"]

# Most novel tokens a reply lists (the first ones, distinct): enough to say what was new.
MAX_NOVEL = 20


class SurpriseConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Novelty above this makes the soul reflect at once.
    threshold: float = 0.65
    # Storm guard: at most storm_reflects surprise reflects within any storm_window
    # seconds; a surprise held back reflects with the first event the window allows.
    # 0 reflects: no guard.
    storm_reflects: int = 10
    storm_window: float = 60.0

    def __post_init__(self) -> None:
        if not 0 <= self.threshold <= 1:
            raise ValueError("threshold must be within [0, 1]")
        if self.storm_reflects < 0 or not self.storm_window >= 0:
            raise ValueError("storm_reflects and storm_window must be >= 0")


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
        """Share of the event's content words (with repeats; all its tokens when it has
        none) that the world model has never used."""
        measured = content_tokens(event_tokens) or event_tokens
        if not measured:
            return 0.0
        known = sum(map(self.vocabulary.__contains__, measured))
        return round((len(measured) - known) / len(measured), 4)

    def novel(self, event_tokens: Sequence[str], limit: int = MAX_NOVEL) -> list[str]:
        """The tokens that made the novelty: the measured ones the world model has never
        used, distinct, first seen first, at most ``limit``."""
        measured = content_tokens(event_tokens) or event_tokens
        vocabulary = self.vocabulary
        return [t for t in dict.fromkeys(measured) if t not in vocabulary][:limit]

"""A real conversation's cards, as a soul's deck makes them (for the collision tests)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from conversations import FRIENDS, Session, turns

from souls.collision.crystal import CardConfig, Counts, Draft, crystallise
from souls.collision.lines import key
from souls.mind.reflect import ExtractiveReflector, Observation
from souls.text.tokenize import tokens


def crystallised(
    sessions: list[Session] = FRIENDS, every: int = 8, budget: int = 4000
) -> list[tuple[float, Draft]]:
    """The conversation reflected every ``every`` turns (as surprise makes reflects early
    in a soul's life) by the extractive reflector, each reflect crystallised with the
    lines of the cards before it known: (when the reflect's last turn was said, card)."""
    reflector = ExtractiveReflector()
    people = frozenset(t for _, said in sessions for speaker, _ in said for t in tokens(speaker))
    summary, known, cards = "", set[str](), []
    said = turns(sessions)
    documents: Counter[str] = Counter()
    for start in range(0, len(said), every):
        batch = said[start : start + every]
        observations = [
            Observation(start + i + 1, text, 0.5, 0.6, "message", speaker, 0.0)
            for i, (_, _, speaker, text) in enumerate(batch)
        ]
        for _, _, _, text in batch:
            documents.update(set(tokens(text)))
        previous, summary = summary, reflector.summarise(summary, observations, budget)
        rarity = Counts(start + len(batch), dict(documents))
        draft = crystallise(summary, previous, known, rarity, CardConfig(), people)
        if draft.conclusions:
            when = datetime.fromisoformat(batch[-1][1] + "+00:00").timestamp()
            cards.append((when, draft))
            known |= {key(line) for line in draft.conclusions + draft.questions}
    return cards

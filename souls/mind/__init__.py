"""The mind's mechanisms: what a soul makes of what it stored (DESIGN §3.4-§3.7).

Reflect (:mod:`~souls.mind.reflect`, :mod:`~souls.mind.reflection`), Hebbian association
(:mod:`~souls.mind.hebbian`), forgetting (:mod:`~souls.mind.decay`), somatic markers
(:mod:`~souls.mind.somatic`, :mod:`~souls.mind.appraisal`, :mod:`~souls.mind.lexicon`,
:mod:`~souls.mind.topics`, :mod:`~souls.mind.markers`), homeostasis and metacognition,
as plain functions and small classes over data. Their state is the store's (read back
through :class:`~souls.store.interface.SoulStore`, written with a turn's Changes); the
actor's :class:`~souls.actor.cognition.Mind` holds it between turns.

May import :mod:`souls.intake`, :mod:`souls.store`, :mod:`souls.text` and the vocabulary
(events, messages, results); never recall, knowledge, collision, llm or the actor.
"""

# The modules other rooms may import; the rest are this room's own.
__all__ = [
    "appraisal",
    "decay",
    "hebbian",
    "homeostasis",
    "markers",
    "metacognition",
    "reflect",
    "reflection",
    "somatic",
    "topics",
]

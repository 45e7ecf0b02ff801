"""The mind's mechanisms: what a soul makes of what it stored (DESIGN §3.4-§3.7).

Reflect (:mod:`~souls.mind.reflect`, :mod:`~souls.mind.reflection`,
:mod:`~souls.mind.inner`), Hebbian association (:mod:`~souls.mind.hebbian`), forgetting
(:mod:`~souls.mind.decay`), somatic markers (:mod:`~souls.mind.somatic`,
:mod:`~souls.mind.appraisal`, :mod:`~souls.mind.lexicon`, :mod:`~souls.mind.topics`,
:mod:`~souls.mind.markers`), homeostasis and metacognition. Plain functions and small
classes over data: the actor's :class:`~souls.actor.mind.Mind` holds their state between
turns.

May import :mod:`souls.intake`, :mod:`souls.store`, :mod:`souls.text` and the
vocabulary modules; never recall, knowledge, collision, llm or the actor.
"""

# The modules other rooms may import; the rest are this room's own.
__all__ = [
    "appraisal",
    "decay",
    "hebbian",
    "homeostasis",
    "inner",
    "markers",
    "metacognition",
    "reflect",
    "reflection",
    "somatic",
]

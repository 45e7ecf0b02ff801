"""Knowledge: what a soul knows and wants, and whom it knows (DESIGN §3.9, §3.10).

Claims (:mod:`~souls.knowledge.claims`, extracted by the rules of
:mod:`~souls.knowledge.claim_rules` and its ``claim_*`` modules), typed entries on disk
(:mod:`~souls.knowledge.entries`), unanswered questions, goals, tasks, persons across
channels, and the memory map with reading by id (:mod:`~souls.knowledge.memmap`,
:mod:`~souls.knowledge.navigate`). :class:`~souls.knowledge.knowledge.Knowledge` is what
the actor holds of it.

May import :mod:`souls.llm`, :mod:`souls.recall` (the ranking a context uses),
:mod:`souls.mind`, :mod:`souls.intake`, :mod:`souls.store`, :mod:`souls.text`, the
vocabulary (events, messages, results) and :mod:`supervisor.errors`; never collision
(the two are independent) or the actor.
"""

# The modules other rooms may import; the rest are this room's own.
__all__ = [
    "claim_llm", "claims", "entries", "extracted", "goals", "knowledge", "navigate", "persons",
    "tasks",
]  # fmt: skip

"""Collision memory (primordial-soup, DESIGN §3.8): old conclusions against today's topic.

Cards (:mod:`~souls.collision.cards`) are one reflect's or conversation's conclusions,
crystallised from a reflect by :mod:`~souls.collision.crystal`; every part reads a card
line the same way (:mod:`~souls.collision.lines`: content terms, negated clauses,
questions); lightning (:mod:`~souls.collision.lightning`) draws some of them by weight; the
presentation gate (:mod:`~souls.collision.presentation_gate`) shows a draw only when it
brings an increment, judged by :mod:`~souls.collision.judge` (the built-in gate or a chat
model); :mod:`~souls.collision.collider` records every draw, shown or silenced. The weekly
tide (:mod:`~souls.collision.tide`) reconciles the deck, and
:mod:`~souls.collision.status_page` renders it as one HTML file.

May import :mod:`souls.llm`, :mod:`souls.recall`, :mod:`souls.mind`,
:mod:`souls.intake`, :mod:`souls.store`, :mod:`souls.text`, the vocabulary (events,
messages, results) and :mod:`supervisor.errors`; never knowledge (the two are
independent) or the actor.
"""

# The modules other rooms may import; the rest are this room's own.
__all__ = [
    "cards",
    "collider",
    "crystal",
    "judge",
    "lightning",
    "presentation_gate",
    "status_page",
    "tide",
]

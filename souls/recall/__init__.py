"""The recall path: memories ranked for a query, and the context block an agent gets.

:mod:`~souls.recall.recall` ranks a soul's visible memories (FTS5 candidates, exact BM25,
the cues of :mod:`~souls.recall.cues` and :mod:`~souls.recall.dates`, Hebbian
spreading). :mod:`~souls.recall.potential` holds the two ranking modes (DESIGN §3.5),
:mod:`~souls.recall.assembly` and :mod:`~souls.recall.shortlist` choose what goes into a
context, :mod:`~souls.recall.surfacing` keeps when each item last surfaced in one (what
rarity counts from), :mod:`~souls.recall.context` lays the block out (§3.11).

May import :mod:`souls.mind`, :mod:`souls.intake`, :mod:`souls.store`, :mod:`souls.text`
and the vocabulary (events, messages, results); never knowledge, collision, llm or the
actor.
"""

# The modules other rooms may import; the rest are this room's own.
__all__ = ["assembly", "context", "potential", "recall", "shortlist", "surfacing"]

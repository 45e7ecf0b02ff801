"""Recall: rank a soul's visible memories for a query.

Two stages, both deterministic. SQLite FTS5 fetches candidates using the query's
discriminating terms (see :mod:`souls.bm25`); every candidate is then scored by exact
BM25 over *all* the query's terms, and ties go to the older memory. With a small
index (no term in more than ``common_term_floor`` memories), or a query made only of
discriminating terms, the result is exactly the BM25 top k.
"""

from __future__ import annotations

import msgspec

from souls.bm25 import TermStats
from souls.results import RecallItem
from souls.store import Store
from souls.tokenize import fts_match, query_terms

__all__ = ["RecallConfig", "recall"]


class RecallConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # How many memories a recall returns when the caller does not say.
    k: int = 10
    # The most a caller may ask for in one recall.
    max_k: int = 200
    # Terms found in more than this share of memories only re-rank candidates; they
    # do not fetch them (they would make every memory a candidate).
    common_term_share: float = 0.05
    # ... but a term found in no more than this many memories always fetches: scoring a
    # few hundred candidates is cheap, and on a small soul recall stays exact BM25.
    common_term_floor: int = 500
    # Candidates fetched per memory returned (at least 50).
    candidates_per_result: int = 5

    def __post_init__(self) -> None:
        if not 1 <= self.k <= self.max_k:
            raise ValueError("k must be between 1 and max_k")
        if not 0 < self.common_term_share <= 1 or self.candidates_per_result < 1:
            raise ValueError("common_term_share must be in (0, 1], candidates_per_result >= 1")
        if self.common_term_floor < 0:
            raise ValueError("common_term_floor must be >= 0")


async def recall(
    store: Store, stats: TermStats, config: RecallConfig, query: str, k: int
) -> list[RecallItem]:
    """The ``k`` best visible memories for ``query``; empty when nothing matches."""
    terms = [term for term in query_terms(query) if stats.df(term)]
    if not terms:
        return []
    probe = stats.discriminating(terms, config.common_term_share, config.common_term_floor)
    hits = await store.search(fts_match(probe), max(k * config.candidates_per_result, 50))
    ranked = sorted(
        ((stats.score(terms, hit.doc.split()), hit) for hit in hits),
        key=lambda pair: (-pair[0], pair[1].memory_id),
    )
    return [
        RecallItem(
            id=hit.memory_id,
            kind=hit.kind,
            text=hit.text,
            score=round(score, 6),
            via="bm25",
            refs=[hit.ref] if hit.ref is not None else [],
        )
        for score, hit in ranked[:k]
    ]

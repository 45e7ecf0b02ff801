"""Recall: rank a soul's visible memories for a query.

When every query term is discriminating (see :mod:`souls.bm25`), SQLite FTS5 ranks
by BM25 directly. Otherwise two stages: FTS5 fetches candidates with the
discriminating terms only, and every candidate is scored by exact BM25 over *all* the
query's terms. Deterministic either way; ties go to the older memory. With a small
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
    common_term_share: float = 0.02
    # ... but a term found in no more than this many memories always fetches: scoring a
    # few hundred candidates is cheap, and on a small soul recall stays exact BM25.
    common_term_floor: int = 200
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
    if len(probe) == len(terms):
        # Every term fetches: FTS5's own ranking is already the exact BM25 order.
        hits = await store.search(fts_match(terms), k)
    else:
        found = await store.candidates(fts_match(probe), max(k * config.candidates_per_result, 50))
        # A candidate's FTS5 score already holds the probe terms' share of BM25 (same
        # formula, same statistics); only the common terms are left to add.
        common = [term for term in terms if term not in probe]
        rescored = sorted(
            ((c.memory_id, c.score + stats.score(common, c.doc.split())) for c in found),
            key=lambda pair: (-pair[1], pair[0]),
        )
        hits = await store.hits(rescored[:k])
    return [
        RecallItem(
            id=hit.memory_id,
            kind=hit.kind,
            text=hit.text,
            score=round(hit.score, 6),
            via="bm25",
            refs=[hit.ref] if hit.ref is not None else [],
        )
        for hit in hits
    ]

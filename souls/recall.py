"""Recall: rank a soul's visible memories for a query.

Plain functions over the store. Ranking is BM25 (SQLite FTS5) over the shared
tokenizer; the same input against the same database gives the same output.
"""

from __future__ import annotations

import msgspec

from souls.results import RecallItem
from souls.store import Store
from souls.tokenize import fts_match, query_terms

__all__ = ["RecallConfig", "recall"]


class RecallConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # How many memories a recall returns when the caller does not say.
    k: int = 10
    # The most a caller may ask for in one recall.
    max_k: int = 200

    def __post_init__(self) -> None:
        if not 1 <= self.k <= self.max_k:
            raise ValueError("k must be between 1 and max_k")


async def recall(store: Store, query: str, k: int) -> list[RecallItem]:
    """The ``k`` best visible memories for ``query``; empty when it has no terms."""
    match = fts_match(query_terms(query))
    if not match:
        return []
    hits = await store.search(match, k)
    return [
        RecallItem(
            id=hit.memory_id,
            kind=hit.kind,
            text=hit.text,
            score=round(hit.score, 4),
            via="bm25",
            refs=[hit.ref] if hit.ref is not None else [],
        )
        for hit in hits
    ]

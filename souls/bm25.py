"""Exact BM25 over the shared tokenizer, with the statistics of the visible index.

SQLite FTS5 finds candidates; this module scores them, with the same formula FTS5's
``bm25()`` uses (k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5)) floored at
1e-6), so a candidate's score does not depend on which query fetched it. That lets
recall fetch candidates with only the *discriminating* terms of a query — scoring
every document that contains a very common word is what makes plain OR queries
slow — and still rank them by the whole query.

:class:`TermStats` is derived state: rebuilt from the FTS5 vocabulary, kept up to
date as documents are indexed, dropped whenever the soul restarts or hibernates.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["TermStats"]

K1 = 1.2
B = 0.75
_IDF_FLOOR = 1e-6


class TermStats:
    """Document frequency per term, document count and total length of an index."""

    def __init__(self, df: Mapping[str, int], documents: int, tokens: int) -> None:
        self._df: Counter[str] = Counter(df)
        self.documents = documents
        self.tokens = tokens

    def df(self, term: str) -> int:
        return self._df.get(term, 0)

    def add(self, documents: Iterable[Sequence[str]]) -> None:
        """Account for newly indexed documents (each a token list)."""
        for tokens in documents:
            self._df.update(set(tokens))
            self.documents += 1
            self.tokens += len(tokens)

    def idf(self, term: str) -> float:
        n = self._df.get(term, 0)
        value = math.log((self.documents - n + 0.5) / (n + 0.5))
        return value if value > 0 else _IDF_FLOOR

    def discriminating(self, terms: Sequence[str], fraction: float, floor: int) -> list[str]:
        """The terms in at most ``fraction`` of the documents or ``floor`` documents,
        whichever is more; the rarest term when there is none."""
        limit = max(fraction * self.documents, floor)
        rare = [t for t in terms if self.df(t) <= limit]
        return rare or [min(terms, key=self.df)]

    def score(self, terms: Sequence[str], tokens: Sequence[str]) -> float:
        """BM25 of a document (its token list) for the query ``terms`` (distinct)."""
        if not tokens or not self.documents:
            return 0.0
        average = self.tokens / self.documents
        norm = K1 * (1 - B + B * len(tokens) / average)
        total = 0.0
        for term in terms:
            tf = tokens.count(term)
            if tf:
                total += self.idf(term) * tf * (K1 + 1) / (tf + norm)
        return total
